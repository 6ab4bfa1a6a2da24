// Split-K (Config::split_k): S programs share each output tile of a dot on wgmma, program
// `split` summing its share of the loop over K's tiles. After the loop each writes its f32 (i32)
// partial sums to the call's workspace (laid out by thread: 16-byte vectors, whole warps
// contiguous), then counts itself in at the tile's counter; the last to arrive adds the S
// partial sums in split order (its own from registers: the same values), resets the
// counter for the next call, and runs the code after the loop. The others return. A
// program's writes are ordered before its count by __threadfence (release), the reads of
// the last one after it (acquire); the partials are read past L1 (__ldcg).
#include <fmt/format.h>

#include "codegen/cuda_emitter.hpp"
#include "codegen/emitter_state.hpp"
#include "codegen/fold.hpp"

namespace tessel::codegen {

using ir::Node;
using ir::Op;

const Node* Emitter::find_split_loop(std::string& why_not) const {
  const Node* found = nullptr;
  int loops = 0;
  ir::walk(top_->body, [&](const Node* m) {
    if (m->op == Op::Loop && live_.count(m) && !rings_of(m).empty()) found = m, ++loops;
  });
  if (!found) {
    why_not = "the program has no loop whose ts::dot runs on wgmma";
    for (const passes::Contraction& c : nest_.contractions)
      if (!c.not_wgmma.empty()) {
        why_not += " (not on wgmma: " + c.not_wgmma + ")";
        break;
      }
    return nullptr;
  }
  if (loops > 1) {
    why_not = "the program has two loops with dots on wgmma";
    return nullptr;
  }
  auto at = std::find(top_->body.begin(), top_->body.end(), found);
  if (at == top_->body.end()) {
    why_not = "the loop over K is nested in another loop of the program";
    return nullptr;
  }
  // Code before the loop runs in every program of the tile: a write there would repeat.
  for (auto it = top_->body.begin(); it != at; ++it)
    ir::walk({*it}, [&](const Node* m) {
      if (live_.count(m) && ir::writes_memory(m))
        why_not = "the program writes memory before the loop over K (each share would)";
    });
  for (const Node* c : found->carried)
    if (live_.count(c) && !starts_from_zeros(found, c))
      why_not = "the loop over K carries a value other than a dot's accumulator from ts::zeros";
  return why_not.empty() ? found : nullptr;
}

void Emitter::emit_split_program() {
  line(fmt::format("const long long pid = blockIdx.x / {};  // the output tile", plan_.split_k));
  line(fmt::format("const int split = (int)(blockIdx.x % {});  // its share of K (split_k)",
                   plan_.split_k));
  line("if (pid >= total) return;");
}

void Emitter::emit_split_bounds(const Node* loop) {
  const DimVars dv = dim_vars(loop, 0);
  const int s = plan_.split_k;
  const std::string lb = fmt::format("lbk{}", loop->id), le = fmt::format("lek{}", loop->id),
                    nk = fmt::format("nk{}", loop->id);
  line(fmt::format("const long long {} = {}, {} = {};  // the whole loop over K", lb,
                   scalar(loop->dims[0].begin), le, scalar(loop->dims[0].end)),
       loop);
  line(fmt::format("const long long {} = {} > {} ? ({} - {} + {} - 1) / {} : 0;  // its tiles", nk,
                   le, lb, le, lb, dv.block, dv.block));
  line(fmt::format(
      "const long long {} = {} + split * {} / {} * {}, le{}_0 = min({} + (split + 1) * {} / {} * "
      "{}, {});  // this program's share",
      dv.lb, lb, nk, s, dv.block, loop->id, lb, nk, s, dv.block, le));
}

void Emitter::emit_split_reduction(const Node* loop) {
  const int s = plan_.split_k;
  // Each accumulator's name and 4-wide vector type: float4 (f32 sums), int4 (i32 sums of i8
  // dots; their adds wrap as the accumulation does).
  std::vector<std::string> accs, vec;
  for (const passes::Contraction* c : rings_of(loop)) {
    accs.push_back(names_.at(accumulation_of(c->match.sum).acc));
    vec.push_back(reg_type(c->match.sum->dtype) + "4");
  }
  // A vector of registers r .. r + 3 all of whose elements lie past M or N (a ragged last
  // tile: M = 16 in a 64-row wgmma tile) is neither written nor read: no store keeps it.
  const ir::Shape& mn = rings_of(loop).front()->match.sum->shape;
  const std::string in_tensor = fold::land({sym_valid(mn.at(0), "r"), sym_valid(mn.at(1), "r")});
  const bool ragged = !fold::is_true(in_tensor);
  const std::string kept =
      "in_tensor(r) || in_tensor(r + 1) || in_tensor(r + 2) || in_tensor(r + 3)";
  const int64_t n = L_->regs(), per_split = static_cast<int64_t>(accs.size()) * n * L_->threads;
  line(fmt::format("// split-K: {} programs per tile; the last to arrive adds their partial sums",
                   s));
  line("{");
  line(fmt::format(
      "  float* const part = reinterpret_cast<float*>(ts_split) + pid * {};  // the tile's {} "
      "shares",
      s * per_split, s));
  line(fmt::format("  int* const count = reinterpret_cast<int*>(ts_split + total * {}LL) + pid;",
                   s * per_split * 4));
  if (ragged) {
    line(
        "  // whether register r's element lies in the tensor: a vector of registers none of "
        "which");
    line("  // does (past M or N in a ragged last tile) is neither written nor read");
    line(fmt::format("  auto in_tensor = [&](int r) {{ return {}; }};", in_tensor));
  }
  for (size_t a = 0; a < accs.size(); ++a)
    line(fmt::format(
        "  _Pragma(\"unroll\") for (int r = 0; r < TS_N; r += 4) {k}__stcg(reinterpret_cast<"
        "{v}*>(part + split * {} + {}) + (r / 4) * TS_T + tid, make_{v}({a}[r], {a}[r + 1], "
        "{a}[r + 2], {a}[r + 3]));",
        per_split, static_cast<int64_t>(a) * n * L_->threads, fmt::arg("v", vec[a]),
        fmt::arg("a", accs[a]), fmt::arg("k", ragged ? "if (" + kept + ") " : "")));
  line("  __threadfence();");
  line("  __syncthreads();");
  line("  int arrived = 0;  // programs of the tile before this one (thread 0)");
  line("  if (tid == 0) arrived = atomicAdd(count, 1);");
  line(fmt::format("  if (!__syncthreads_or(tid == 0 && arrived == {})) return;  // not the last",
                   s - 1));
  line("  __threadfence();");
  for (size_t a = 0; a < accs.size(); ++a) {
    line("  _Pragma(\"unroll\") for (int r = 0; r < TS_N; r += 4) {");
    line(fmt::format("    {v} sum = make_{v}(0, 0, 0, 0);", fmt::arg("v", vec[a])));
    line(fmt::format("    _Pragma(\"unroll\") for (int q = 0; q < {}; ++q) {{", s));
    line(fmt::format(
        "      const {v} v = q == split ? make_{v}({a}[r], {a}[r + 1], {a}[r + 2], {a}[r + 3]) : "
        "{k}__ldcg(reinterpret_cast<const {v}*>(part + q * {} + {}) + (r / 4) * TS_T + tid){z};",
        per_split, static_cast<int64_t>(a) * n * L_->threads, fmt::arg("v", vec[a]),
        fmt::arg("a", accs[a]), fmt::arg("k", ragged ? "(" + kept + ") ? " : ""),
        fmt::arg("z", ragged ? fmt::format(" : make_{}(0, 0, 0, 0)", vec[a]) : "")));
    line("      sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w;");
    line("    }");
    line(fmt::format("    {}[r] = sum.x, {}[r + 1] = sum.y, {}[r + 2] = sum.z, {}[r + 3] = sum.w;",
                     accs[a], accs[a], accs[a], accs[a]));
    line("  }");
  }
  line("  if (tid == 0) *count = 0;  // the next call's programs count from 0");
  line("}");
  out_.split_k = s;
  out_.split_bytes = s * per_split * 4;
  if (param_names_.emplace("K", "ts_split").second)
    out_.params.push_back(Param{Param::split_workspace, nullptr});
}

}  // namespace tessel::codegen
