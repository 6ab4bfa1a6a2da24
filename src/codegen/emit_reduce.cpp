// Reductions along one Sym of a tile value. The Sym's slot spans some bits of the flat
// element index (layout.hpp): register bits are combined in registers, lane bits with
// warp shuffles, warp bits through shared memory (one value per warp, combined across
// lanes with shuffles, when whole warps hold one value). Every element ends up holding the
// result (an all-reduce), which is the replicated form the layout expects.
#include <fmt/format.h>

#include <algorithm>

#include "codegen/emitter_state.hpp"
#include "codegen/fold.hpp"
#include "passes/default_config.hpp"

namespace tessel::codegen {

using ir::Node;

static const char* op_struct(ir::ReduceFn fn) {
  switch (fn) {
    case ir::ReduceFn::sum:
      return "ts::SumOp";
    case ir::ReduceFn::prod:
      return "ts::ProdOp";
    case ir::ReduceFn::max:
      return "ts::MaxOp";
    case ir::ReduceFn::min:
      return "ts::MinOp";
    case ir::ReduceFn::any:
      return "ts::AnyOp";
    case ir::ReduceFn::all:
      return "ts::AllOp";
    case ir::ReduceFn::argmax:
    case ir::ReduceFn::argmin:
      break;
  }
  return "";
}

static std::string identity(ir::ReduceFn fn, DType t) {
  ir::ConstValue v = ir::reduce_identity(fn, t);
  return literal(t, v.fval, v.ival);
}

void Emitter::emit_reduce(const Node* n) {
  const Node* x = n->args[0];
  ir::ReduceFn fn = n->rfn();
  bool arg = fn == ir::ReduceFn::argmax || fn == ir::ReduceFn::argmin;
  const ir::Sym* s = x->shape.at(n->ival);
  DType acc_t = x->dtype;
  std::string rt = reg_type(acc_t);
  std::string acc = fmt::format("a{}", n->id), ai = fmt::format("ai{}", n->id);
  if (!s) {  // a size-1 dimension: nothing to combine
    if (arg) {
      names_[n] = ids_.value(n);
      line(fmt::format("const long long {} = 0;", names_[n]), n);
      if (is_array(n)) unsupported(n, "argmax over a size-1 dimension of a tile");
    } else {
      names_[n] = is_array(n) ? names_.at(x) : scalar(x);
    }
    return;
  }
  if (!is_array(x)) unsupported(n, "a reduction of a scalar");
  const int lv = L_->log2_vec(), lt = L_->log2_threads();
  const passes::ReduceSteps st = passes::reduce_steps(*L_, n);

  line(fmt::format("{} {}[TS_N];  // {} over {}", rt, acc, ir::reduce_name(fn), ir::sym_name(s)),
       n);
  std::string valid = fold::land({active("r"), sym_valid(s, "r")});
  line(fmt::format("TS_FOR(r) {}[r] = {} ? {} : {};", acc,
                   fold::atomic(valid) ? valid : "(" + valid + ")", at(x, "r"),
                   identity(fn, acc_t)));
  if (arg) {
    line(fmt::format("long long {}[TS_N];", ai));
    line(fmt::format("TS_FOR(r) {}[r] = {};", ai, coord(s, "r")));
  }
  const char* is_max = fn == ir::ReduceFn::argmax ? "true" : "false";
  const unsigned lane_mask = st.lane_mask, warp_mask = st.warp_mask, reg_mask = st.reg_mask;
  for (int b : st.bits) {
    if (b < lv || b >= lv + lt) {  // a register bit
      int rb = b < lv ? b : b - lt;
      open_unrolled(fmt::format("_Pragma(\"unroll\") for (int r = 0; r < TS_N; ++r) if (!(r & {}))",
                                1 << rb));
      if (arg) {
        line(fmt::format("ts::arg_combine<{}>({}[r], {}[r], {}[r | {}], {}[r | {}]);", is_max, acc,
                         ai, acc, 1 << rb, ai, 1 << rb));
        line(fmt::format("{}[r | {}] = {}[r]; {}[r | {}] = {}[r];", acc, 1 << rb, acc, ai, 1 << rb,
                         ai));
      } else {
        line(fmt::format("{}[r] = {}[r | {}] = {}::combine({}[r], {}[r | {}]);", acc, acc, 1 << rb,
                         op_struct(fn), acc, acc, 1 << rb));
      }
      close();
    }
  }
  // After the register steps, registers that differ only in reg_mask bits hold the same
  // value: the lane and warp steps combine one of each (those with the bits clear).
  std::string distinct =
      reg_mask ? fmt::format("_Pragma(\"unroll\") for (int r = 0; r < TS_N; ++r) if (!(r & {}))",
                             reg_mask)
               : std::string("TS_FOR(r)");
  if (lane_mask) {
    if (arg)
      line(fmt::format("{} ts::warp_arg_allreduce<{}>({}[r], {}[r], {}u);", distinct, is_max, acc,
                       ai, lane_mask));
    else
      line(fmt::format("{} {}[r] = ts::warp_allreduce<{}>({}[r], {}u);", distinct, acc,
                       op_struct(fn), acc, lane_mask));
  }
  if (warp_mask) {
    // Shared memory: [distinct register][thread] values (and indices), then each thread
    // combines the warps that differ in the slot's warp bits, in a fixed order. Registers
    // are numbered densely among the distinct ones (those with the reg_mask bits clear).
    // Whole warps holding one value (per_warp): one value per warp, and the warps of a
    // group are combined across lanes (lane j reads warp j of the group, then a shuffle
    // all-reduce); otherwise one value per thread, and each thread combines its group's
    // warps in order. Where the bytes are and whether a barrier must come first: the
    // nest's shared memory plan (passes/shared_plan.hpp).
    const int nw = L_->threads / 32, low = st.low;
    const bool per_warp = st.per_warp, contiguous = st.contiguous;
    const int64_t values_bytes = st.values_bytes;
    const SharedUse& use = shared_use(n);
    const int64_t offset = use.offset;
    std::string dense = reg_mask == 0 ? "r"
                        : (reg_mask & (reg_mask + 1)) == 0
                            ? fmt::format("(r >> {})", __builtin_popcount(reg_mask))
                            : fmt::format("ts::squeeze_bits(r, {}u)", reg_mask);
    std::string sm = fmt::format("sm{}", n->id), smi = fmt::format("smi{}", n->id);
    line(fmt::format("{}* {} = reinterpret_cast<{}*>({});", rt, sm, rt,
                     fold::add("ts_smem", std::to_string(offset))));
    if (arg)
      line(fmt::format("long long* {} = reinterpret_cast<long long*>(ts_smem + {});", smi,
                       offset + values_bytes));
    if (use.barrier) line("__syncthreads();");
    std::string stride = per_warp ? std::to_string(nw) : std::string("TS_T");
    std::string me = per_warp ? "(tid >> 5)" : "tid";
    std::string writer = per_warp ? "if ((tid & 31) == 0) " : "";
    line(fmt::format("{} {}{}[{} * {} + {}] = {}[r];", distinct, writer, sm, dense, stride, me,
                     acc));
    if (arg)
      line(fmt::format("{} {}{}[{} * {} + {}] = {}[r];", distinct, writer, smi, dense, stride, me,
                       ai));
    line("__syncthreads();");
    std::string base =
        (nw - 1) & ~warp_mask ? fmt::format("((tid >> 5) & ~{}u)", warp_mask) : std::string("0");
    if (per_warp) {
      int count = (warp_mask >> low) + 1;
      open_unrolled(distinct);
      line(fmt::format("const int src = {};",
                       fold::bit_or(base, fold::shl(fmt::format("(tid & {})", count - 1), low))));
      line(fmt::format("{} v = {}[{} * {} + src];", rt, sm, dense, nw));
      if (arg) {
        line(fmt::format("long long vi = {}[{} * {} + src];", smi, dense, nw));
        line(fmt::format("ts::warp_arg_allreduce<{}>(v, vi, {}u);", is_max, count - 1));
        line(fmt::format("{}[r] = vi;", ai));
        line(fmt::format("{}[r] = v;", acc));
      } else {
        line(fmt::format("{}[r] = ts::warp_allreduce<{}>(v, {}u);", acc, op_struct(fn), count - 1));
      }
      close();
    } else {
      open_unrolled(distinct);
      line(fmt::format("{} v = {};", rt, identity(fn, acc_t)));
      if (arg) line("long long vi = 9223372036854775807LL;");
      if (contiguous) {
        // The group's warps are base | (j << low), j < 2^bits.
        int count = (warp_mask >> low) + 1;
        open_unrolled(fmt::format("_Pragma(\"unroll\") for (int j = 0; j < {}; ++j)", count));
        line(fmt::format("const int src = {} | (tid & 31);",
                         fold::shl(fold::bit_or(base, fold::shl("j", low)), 5)));
      } else {
        open_unrolled(fmt::format("for (int w = 0; w < {}; ++w)", nw));
        line(fmt::format("if ((w & ~{}u) != ((tid >> 5) & ~{}u)) continue;", warp_mask, warp_mask));
        line("const int src = (w << 5) | (tid & 31);");
      }
      if (arg)
        line(fmt::format("ts::arg_combine<{}>(v, vi, {}[{} * TS_T + src], {}[{} * TS_T + src]);",
                         is_max, sm, dense, smi, dense));
      else
        line(fmt::format("v = {}::combine(v, {}[{} * TS_T + src]);", op_struct(fn), sm, dense));
      close();
      line(fmt::format("{}[r] = v;", acc));
      if (arg) line(fmt::format("{}[r] = vi;", ai));
      close();
    }
  }
  if (reg_mask && (lane_mask || warp_mask)) {
    line(fmt::format("TS_FOR(r) {}[r] = {}[r & ~{}];", acc, acc, reg_mask));
    if (arg) line(fmt::format("TS_FOR(r) {}[r] = {}[r & ~{}];", ai, ai, reg_mask));
  }
  std::string res = arg ? ai : acc;
  DType res_t = arg ? DType::i64 : acc_t;
  std::string nm = ids_.value(n);
  names_[n] = nm;
  std::string cast = res_t == n->dtype ? "" : "(" + reg_type(n->dtype) + ")";
  if (is_array(n))
    line(fmt::format("{} {}[TS_N]; TS_FOR(r) {}[r] = {}{}[r];", reg_type(n->dtype), nm, nm, cast,
                     res));
  else
    line(fmt::format("const {} {} = {}{}[0];", reg_type(n->dtype), nm, cast, res));
}

}  // namespace tessel::codegen
