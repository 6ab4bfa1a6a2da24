// Contractions on wgmma (passes/tensor_cores.hpp, Contraction::Mma::wgmma): the factors'
// tiles of K are copied by the TMA into a ring of S buffers, S tiles ahead, and summed by
// wgmma.mma_async into the sum's registers, which (the nest being in the wgmma accumulator's
// placement) hold each warpgroup's m64nN fragments in order: its i-th 64 rows are registers
// i N / 2 .. (i + 1) N / 2. For the transposed product (Mma::swap_ab) wgmma's rows are the
// tile's N and its columns M, its A operand the factor of N: the same code with the factors'
// roles and the tile's dims swapped.
//
//   unsigned ring_ld = 0, ring_use = 0;              // program start: tiles loaded, summed
//   long long ring_pid = first, ring_k = 0;          // across programs: the load cursor
//   ...
//   long long ring_k = 0;                            // else, before the loop over K
//   auto ring_load = [&](int kb, tile begins) {...};  // thread 0's: wait until every warp
//     has read buffer ld % S (its `read` mbarrier), arm its `filled` mbarrier with the
//     tile's bytes, one TMA copy per 128-byte chunk of each factor's box
//   auto ring_fill = [&]() {...};                    // thread 0's: while a buffer is free
//     (ld < use + S) and a tile is left, ring_load the cursor's tile and advance it: along
//     K, and across programs on to the program's next tile (its begins from its program id)
//   if (tid == 0) ring_fill();
//   for (tiles of K) {
//     ...
//     wait for buffer use % S (`filled`); a partial last tile: zero its elements past K's end
//     wgmma.fence; for (ks < BK / 16) for (i < 64-row tiles of the warpgroup) wgmma m64nNk16
//     (TF32: BK / 8, m64nNk8)
//     commit; wait for the previous tile's products (this tile's stay in flight); after
//     the first tile: each warp's lane 0 arrives on the previous buffer's `read` mbarrier,
//     thread 0 refills it (ring_fill)
//   }
//   wait for the last tile's products; each warp arrives on its buffer's `read` mbarrier;
//   across programs, thread 0 refills it with the next program's tile before the epilogue
//
// Config::warp_specialize (Mma::producer_warp): a producer warpgroup past the consumers'
// TS_T threads walks the program's tiles; its first thread calls ring_load for each (the
// consumers never fill the ring). A transposed factor (Mma::transposed: TF32 or 8-bit, M- or
// N-major) is copied K-major by the consumers, between barriers of their own (a copy by the
// producer's other warps, waited for on an mbarrier, ran at half the speed on the H200:
// docs/DECISIONS.md).
#include <fmt/format.h>

#include <string_view>

#include "codegen/emitter_state.hpp"
#include "common/pow2.hpp"
#include "passes/tensor_cores.hpp"

namespace tessel::codegen {

using ir::Node;

namespace {

// Registers per thread of a producer warpgroup (Config::warp_specialize): its one working
// thread loops over tiles and issues copies.
constexpr int kProducerRegisters = 40;

// The unsigned type of an element of `bytes` bytes (4, 2 or 1), to move its bits.
std::string_view word_type(int64_t bytes) {
  return bytes == 4 ? "unsigned" : bytes == 2 ? "unsigned short" : "unsigned char";
}

std::string ring_name(const passes::Contraction& c) {
  return fmt::format("ring{}", c.match.sum->id);
}

// The wgmma instruction for n columns of operand type `t` (f16, bf16, tf32, e4m3, e5m2 or s8:
// Mma::ptx_operand) with A and B transposed (M- and N-major) or not, as a device function of
// the kernel's source: d += a b over the warpgroup's 64 x n accumulator d[0 .. n / 2), f32
// (s32 for s8 operands, whose adds wrap modulo 2^32). TF32 and 8-bit operands are K-major
// (no transpose operands: PTX ISA); the tensor cores read TF32 operands' f32 bits truncated.
// Integer wgmma takes no scale-a, scale-b operands either.
std::string wgmma_function(int64_t n, const std::string& t, int64_t k, bool ta, bool tb) {
  const bool integer = t == "s8";
  std::string regs, outs;
  for (int64_t r = 0; r < n / 2; ++r) {
    regs += fmt::format("{}%{}", r ? ", " : "", r);
    outs += fmt::format("{}\"+{}\"(d[{}])", r ? ", " : "", integer ? "r" : "f", r);
  }
  const std::string scales = integer   ? std::string()
                             : k != 16 ? std::string(", 1, 1")
                                       : fmt::format(", 1, 1, {}, {}", ta ? 1 : 0, tb ? 1 : 0);
  return fmt::format(
      "// d += a b, a 64 x {n} x {k} product of {t} operands in shared memory (wgmma descriptors;\n"
      "// A {am}-major, B {bm}-major) into the warpgroup's {dt} accumulator fragments d; with\n"
      "// scale_d 0, d = a b.\n"
      "__device__ __forceinline__ void ts_wgmma_{n}_{t}_{ta}{tb}({ct}* d, unsigned long long a, "
      "unsigned long long b, int scale_d) {{\n"
      "  asm volatile(\"{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{pi}, 0;\\n\"\n"
      "               \"wgmma.mma_async.sync.aligned.m64n{n}k{k}.{dt}.{t}.{t} {{{regs}}}, %{ai}, "
      "%{bi}, p{scales};\\n}}\\n\"\n"
      "               : {outs}\n"
      "               : \"l\"(a), \"l\"(b), \"r\"(scale_d));\n"
      "}}\n",
      fmt::arg("n", n), fmt::arg("k", k), fmt::arg("t", t), fmt::arg("am", ta ? "M" : "K"),
      fmt::arg("bm", tb ? "N" : "K"), fmt::arg("ta", ta ? 1 : 0), fmt::arg("tb", tb ? 1 : 0),
      fmt::arg("scales", scales), fmt::arg("regs", regs), fmt::arg("outs", outs),
      fmt::arg("dt", integer ? "s32" : "f32"), fmt::arg("ct", integer ? "int" : "float"),
      fmt::arg("ai", n / 2), fmt::arg("bi", n / 2 + 1), fmt::arg("pi", n / 2 + 2));
}

}  // namespace

std::vector<const passes::Contraction*> Emitter::rings_of(const Node* loop) const {
  std::vector<const passes::Contraction*> out;
  for (const passes::Contraction& c : nest_.contractions)
    if (c.mma && c.mma->wgmma && c.match.k->loop == loop && live_.count(c.match.sum))
      out.push_back(&c);
  return out;
}

void Emitter::declare_rings(std::ostringstream& src) const {
  for (const passes::Contraction& c : nest_.contractions) {
    if (!c.mma || !c.mma->wgmma || !live_.count(c.match.sum)) continue;
    const SharedUse& st = shared_use(c.match.sum);
    const int s = c.mma->stages;
    src << fmt::format(
        "  // %{}'s ring of {} buffers: `filled` mbarriers at {}, `read` ones (one arrival per "
        "warp) at {}\n",
        c.match.sum->id, s, st.mbarrier, st.mbarrier + 8 * s);
    src << fmt::format("  if (tid == 0) {{\n    for (int s = 0; s < {}; ++s) {{\n", s);
    src << fmt::format("      ts::mbarrier_init_count(ts_smem + {} + 8 * s, 1u);\n", st.mbarrier);
    src << fmt::format("      ts::mbarrier_init_count(ts_smem + {} + 8 * s, {}u);\n",
                       st.mbarrier + 8 * s, L_->threads / 32);
    src << "    }\n    ts::fence_mbarrier_init();\n  }\n  __syncthreads();\n";
    src << fmt::format("  unsigned {0}_ld = 0, {0}_use = 0;  // tiles loaded into it, summed\n",
                       ring_name(c));
  }
}

void Emitter::declare_ring_cursor(const passes::Contraction& c) {
  const std::string ring = ring_name(c);
  line(
      fmt::format("long long {0}_pid = {1}, {0}_k = 0;  // the next tile {0} loads: its program "
                  "id, its tile of K",
                  ring, program_walk_.first));
  std::vector<std::string> begins;
  for (size_t d = 0; d < top_->dims.size(); ++d)
    begins.push_back(fmt::format("{}_tb{} = 0", ring, d));
  line(fmt::format("{} {};  // that program's tile begins (set at its first tile of K)", idx_t_,
                   fmt::join(begins, ", ")));
}

void Emitter::declare_ring_cursors() {
  for (const passes::Contraction& c : nest_.contractions) {
    if (!c.mma || !c.mma->wgmma || !c.mma->across_programs || c.mma->producer_warp ||
        !live_.count(c.match.sum))
      continue;
    declare_ring_cursor(c);
  }
}

void Emitter::emit_ring_load(const passes::Contraction& c, bool across) {
  const passes::Contraction::Mma& mma = *c.mma;
  const std::string ring = ring_name(c);
  const SharedUse& st = shared_use(c.match.sum);
  const int s = mma.stages;
  // Across programs the tile's begins are the loading program's: parameters that shadow
  // the running program's.
  std::string begins;
  for (size_t d = 0; across && d < top_->dims.size(); ++d)
    begins += fmt::format(", {} {}", idx_t_, dim_vars(top_, static_cast<int>(d)).tb);
  open(fmt::format("auto {}_load = [&](int kb{})", ring, begins));
  line(fmt::format("const unsigned s = {}_ld % {};", ring, s));
  line(fmt::format("ts::mbarrier_wait(ts_smem + {} + 8 * s, (({}_ld / {}) & 1u) ^ 1u);  // read",
                   st.mbarrier + 8 * s, ring, s));
  line(fmt::format("unsigned char* const filled = ts_smem + {} + 8 * s;", st.mbarrier));
  line(
      fmt::format("unsigned char* const buf = ts_smem + {} + s * {};", st.offset, mma.stage_bytes));
  line(fmt::format("ts::mbarrier_arm(filled, {}u);", mma.stage_bytes));
  int64_t at = 0;
  for (int i = 0; i < 2; ++i) {
    const Node* n = c.match.factor[i].load();
    const passes::TmaBox& box = mma.box[i];
    // Per tensor dim: the coordinate of the tile's first element.
    std::vector<std::string> by_dim;
    size_t op = ir::first_index(n);
    for (const ir::IndexInfo& info : n->access) {
      if (info.kind == ir::IndexKind::newaxis) continue;
      const Node* operand = n->args[op++];
      if (info.kind == ir::IndexKind::tile)
        by_dim.push_back(info.sym == c.match.k ? std::string("kb")
                                               : dims.at({operand, info.sym->loop_dim}).tb);
      else if (operand->op == ir::Op::TileBegin && operand->args[0] == top_)
        // The loading program's tile begin (a producer's, or across programs the next
        // program's: the lambda's parameters shadow the running program's).
        by_dim.push_back(dims.at({top_, static_cast<int>(operand->ival)}).tb);
      else if (dtype_size(operand->dtype) > 4)
        by_dim.push_back(fmt::format("ts::tma_coord({})", scalar(operand)));
      else
        by_dim.push_back(fmt::format("(int)({})", scalar(operand)));
    }
    const std::string map = tensor_map_param(n);
    const int64_t chunk = box.bytes / box.chunks;
    for (int k = 0; k < box.chunks; ++k) {
      std::vector<std::string> coords;
      for (size_t j = 0; j < box.dims.size(); ++j) {
        const std::string& x = by_dim[static_cast<size_t>(box.dims[j])];
        coords.push_back(j == 0 && k ? fmt::format("{} + {}", x, k * box.box[0]) : x);
      }
      line(fmt::format("ts::tma_copy<{}>({}, buf + {}, filled, {{{}}});  // %{}, chunk {}",
                       box.dims.size(), map, at + k * chunk, fmt::join(coords, ", "), n->id, k));
    }
    at += box.bytes;
  }
  line(fmt::format("++{}_ld;", ring));
  --indent_;
  line("};");
}

void Emitter::emit_ring_walk(const passes::Contraction& c, const std::string& condition) {
  const std::string ring = ring_name(c);
  const Node* loop = c.match.k->loop;
  const DimVars dv = dim_vars(loop, 0);
  const std::string le = fmt::format("le{}_0", loop->id);
  const std::string kb = fmt::format("(int)({} + {}_k * {})", dv.lb, ring, dv.block);
  open(fmt::format("while ({}{}_pid < {} && {} > {})", condition, ring, program_walk_.end, le,
                   dv.lb));
  // A program's tile begins come from its id once, at its first tile of K.
  open(fmt::format("if ({}_k == 0)", ring));
  line(fmt::format("const long long pid = {}_pid;", ring));
  emit_program_tiles(plan_.knobs(top_), program_counts_, false);
  std::string args;
  for (size_t d = 0; d < top_->dims.size(); ++d) {
    line(fmt::format("{}_tb{} = {};", ring, d, dim_vars(top_, static_cast<int>(d)).tb));
    args += fmt::format(", {}_tb{}", ring, d);
  }
  close();
  line(fmt::format("{}_load({}{});", ring, kb, args));
  open(fmt::format("if ({} + ++{}_k * {} >= {})", dv.lb, ring, dv.block, le));
  line(fmt::format("{0}_k = 0;  // on to the program's next tile", ring));
  line(fmt::format("{}_pid += {};", ring, program_walk_.step));
  close();
  close();
  // Back in the running program's scope: its tile variables again.
  for (size_t d = 0; d < top_->dims.size(); ++d)
    dims[{top_, static_cast<int>(d)}] = dim_vars(top_, static_cast<int>(d));
}

void Emitter::emit_producer_warp(const passes::Contraction& c) {
  const std::string ring = ring_name(c);
  const Node* loop = c.match.k->loop;
  const DimVars dv = dim_vars(loop, 0);
  // Registers move from the producer warpgroup to the consumers: 40 each for the producer,
  // the rest of the program's for the consumers.
  const int producer_regs = kProducerRegisters;
  // setmaxnreg.inc waits until the program's pool holds the registers asked for, and the pool
  // is what the program launched with: every thread's share of the 65536 under
  // __launch_bounds__ (a multiple of 8, at most 255; 168 for 384 threads, 96 for 640). The
  // consumers take what the producer gives up, at most 240 each; more would never come.
  const int threads = L_->threads + passes::kProducerThreads;
  const int at_launch = std::min(255, 65536 / threads) / 8 * 8;
  const int consumer_regs = std::min(
      240, (threads * at_launch - passes::kProducerThreads * producer_regs) / L_->threads / 8 * 8);
  // Where the launch already gives the consumers as many (4 consumer warps: 248 each), no
  // register moves (setmaxnreg.inc cannot lower a count; ptxas ignores it: C7508).
  const bool moves = consumer_regs > at_launch;
  if (moves) launch_registers_ = at_launch;
  open("if (tid >= TS_T)");
  line(
      fmt::format("// the producer warpgroup: %{}'s TMA copies for the program's tiles (its "
                  "first thread), then it exits",
                  c.match.sum->id));
  if (moves) line(fmt::format("ts::registers_down<{}>();", producer_regs));
  open("if (tid == TS_T)");
  // The loop over K's bounds are values from outside the program (plan_producer_warp).
  line(fmt::format("const long long {} = {}, le{}_0 = {};", dv.lb, scalar(loop->dims[0].begin),
                   loop->id, scalar(loop->dims[0].end)));
  declare_ring_cursor(c);
  for (size_t d = 0; d < top_->dims.size(); ++d)
    dims[{top_, static_cast<int>(d)}] = dim_vars(top_, static_cast<int>(d));
  emit_ring_load(c, true);
  emit_ring_walk(c, "");
  close();
  line("return;");
  close();
  line("__builtin_assume(tid < TS_T);  // the consumers");
  if (moves) line(fmt::format("ts::registers_up<{}>();", consumer_regs));
  consumers_only_ = true;
}

void Emitter::emit_ring_first(const Node* loop, const passes::Contraction& c) {
  const passes::Contraction::Mma& mma = *c.mma;
  const std::string ring = ring_name(c);
  const SharedUse& st = shared_use(c.match.sum);
  const int s = mma.stages;
  const DimVars dv = dim_vars(loop, 0);
  line(fmt::format("// %{}'s factors by TMA into its ring: {} buffers of {} bytes at {}, {} tiles "
                   "of K ahead{}",
                   c.match.sum->id, s, mma.stage_bytes, st.offset, s,
                   mma.producer_warp ? ", copied by the producer warpgroup" : ""),
       c.match.sum);
  if (mma.producer_warp) return;
  const bool across = mma.across_programs;
  if (!across) line(fmt::format("long long {}_k = 0;  // the next tile of K it loads", ring));
  emit_ring_load(c, across);
  const std::string le = fmt::format("le{}_0", loop->id);
  const std::string kb = fmt::format("(int)({} + {}_k * {})", dv.lb, ring, dv.block);
  open(fmt::format("auto {}_fill = [&]()", ring));
  if (across) {
    emit_ring_walk(c, fmt::format("{0}_ld < {0}_use + {1} && ", ring, s));
  } else {
    line(
        fmt::format("while ({0}_ld < {0}_use + {1} && {2} + {0}_k * {3} < {4}) {0}_load({5}), "
                    "++{0}_k;",
                    ring, s, dv.lb, dv.block, le, kb));
  }
  --indent_;
  line("};");
  line(fmt::format("if (tid == 0) {}_fill();", ring));
}

void Emitter::emit_wgmma_contraction(const passes::Contraction& c) {
  const passes::Contraction::Mma& mma = *c.mma;
  const Node* n = c.match.sum;
  const std::string ring = ring_name(c);
  const SharedUse& st = shared_use(n);
  const int s = mma.stages;
  // wgmma's rows and columns: the tile's M and N, or N and M for the transposed product
  // (swap_ab: its A the factor of N, its B the factor of M).
  const int r = mma.swap_ab ? 1 : 0;
  const int64_t bk = plan_.block(c.match.k);
  const int wm = mma.warps_m / 4, wn = mma.warps_n;          // warpgroups along rows, columns
  const int64_t reps = nest_.slot_block[r] / (64 * wm);      // 64-row tiles per warpgroup
  const int64_t cols = nest_.slot_block[1 - r] / wn;         // columns per warpgroup
  const int a = mma.swap_ab ? 1 - mma.a : mma.a, b = 1 - a;  // wgmma's A and B factors
  const std::string tile = mma.swap_ab ? "the transposed tile" : "the tile";
  const Node* loop = c.match.k->loop;
  const DimVars dv = dims.at({loop, 0});
  // From zeros, each tile's products stay in flight while the next tile's are issued
  // (wgmma.wait_group 1); from another accumulator, whose initialization would serialize
  // them anyway (ptxas C7515), each tile waits for its own.
  const bool pipelined = starts_from_zeros(loop, accumulation_of(n).acc);
  uses_wgmma_ = true;
  uses_mma_ = true;  // ts::smem_addr
  // wgmma reads a transposed factor's K-major copy.
  const bool ka = mma.k_inner[a] || mma.transposed[a], kb = mma.k_inner[b] || mma.transposed[b];
  // The instruction's columns: the warpgroup's, or a part of them whose 8-bit products are
  // summed into f32 a tile of K at a time (Mma::promote_n).
  const int64_t width = mma.promote_n ? mma.promote_n : cols;
  const std::string fn =
      fmt::format("ts_wgmma_{}_{}_{}{}", width, mma.ptx_operand(), ka ? 0 : 1, kb ? 0 : 1);
  if (!wgmma_functions_.count(fn))
    wgmma_functions_[fn] = wgmma_function(width, mma.ptx_operand(), mma.wgmma_k(), !ka, !kb);
  const ContractionSum sum = declare_contraction_sum(
      n, fmt::format("sum over {} of products on tensor cores (wgmma m64n{}k{} {}{}, {} buffers "
                     "filled by TMA)",
                     ir::sym_name(c.match.k), cols, mma.wgmma_k(), mma.ptx_operand(),
                     mma.swap_ab ? " of the transposed product: A and B swapped" : "", s));
  open("");
  line(fmt::format("const unsigned s = {}_use % {};", ring, s));
  line(fmt::format("ts::mbarrier_wait(ts_smem + {} + 8 * s, ({}_use / {}) & 1u);  // filled",
                   st.mbarrier, ring, s));
  line(
      fmt::format("unsigned char* const buf = ts_smem + {} + s * {};", st.offset, mma.stage_bytes));
  // Factor i's box at buf + offset[i]: chunks of 128-byte rows.
  int64_t offset[2] = {0, mma.box[0].bytes};
  int64_t chunk[2], rows[2];
  for (int i = 0; i < 2; ++i) {
    chunk[i] = mma.box[i].bytes / mma.box[i].chunks;
    rows[i] = mma.box[i].box[1];
  }
  // A partial tile of K: elements past K's end hold whatever the tensor has there (or
  // zeros past its end); they are zeroed in both factors.
  open(fmt::format("if ({} - {} < {})", dv.te, dv.tb, bk));
  line(fmt::format("const int kn = {} - {};", dv.te, dv.tb));
  const int64_t elem = dtype_size(mma.operand), per_chunk = 128 / elem;  // elements per row
  const std::string_view word = word_type(elem);
  for (int i = 0; i < 2; ++i) {
    // K-major: row = M or N, column = k; else row = k, column = M or N.
    const std::string k = mma.k_inner[i]
                              ? "(e % " + std::to_string(bk) + ")"
                              : "(e / " + std::to_string(per_chunk * mma.box[i].chunks) + ")";
    const std::string row = mma.k_inner[i] ? fmt::format("(e / {})", bk) : k;
    const std::string col =
        mma.k_inner[i] ? k : fmt::format("(e % {})", per_chunk * mma.box[i].chunks);
    const int64_t elems = mma.k_inner[i] ? rows[i] * bk : bk * per_chunk * mma.box[i].chunks;
    open(fmt::format("for (int e = tid; e < {}; e += TS_T)", elems));
    line(
        fmt::format("if ({} >= kn) *reinterpret_cast<{}*>(buf + {} + ({} / {}) * {} + "
                    "ts::swizzled_128({}, {} % {} * {})) = 0;",
                    k, word, offset[i], col, per_chunk, chunk[i], row, col, per_chunk, elem));
    close();
  }
  line("ts::fence_proxy_async_shared();");
  line("__syncthreads();");
  close();
  if (!sum.init.empty()) line(fmt::format("TS_FOR(r) {}[r] = {};", sum.name, sum.init));
  // Transposed factors (Mma::transposed): the tile, M- or N-major in the ring, copied
  // K-major into copy ring_use % 2 past the ring, 16 bytes of K (V elements) per thread and
  // step: a warp reads V rows of 32 consecutive columns and writes 32 rows' 16 bytes.
  int64_t tr_offset[2] = {0, mma.transpose_bytes[0]};
  if (mma.transposed[0] || mma.transposed[1]) {
    line("__syncthreads();  // every warpgroup's products of the tile before last are done");
    line(fmt::format(
        "unsigned char* const tr = ts_smem + {} + ({}_use & 1) * {};  // K-major copies",
        st.offset + s * mma.stage_bytes, ring, mma.transpose_total() / 2));
    const int64_t v = 16 / elem;
    for (int i = 0; i < 2; ++i) {
      if (!mma.transposed[i]) continue;
      const int64_t cols = per_chunk * mma.box[i].chunks;  // M or N
      // Unrolled: every load of a thread's steps issued before the first store waits.
      open(fmt::format("_Pragma(\"unroll\") for (int e = tid; e < {}; e += TS_T)", cols * bk / v));
      line(fmt::format("const int c = e % {}, k = e / {} * {};", cols, cols, v));
      line(fmt::format("alignas(16) {} v[{}];", word, v));
      line(fmt::format(
          "_Pragma(\"unroll\") for (int j = 0; j < {}; ++j) v[j] = *reinterpret_cast<const "
          "{}*>(buf + {} + (c / {}) * {} + ts::swizzled_128(k + j, c % {} * {}));",
          v, word, offset[i], per_chunk, chunk[i], per_chunk, elem));
      line(fmt::format(
          "*reinterpret_cast<uint4*>(tr + {} + (k / {}) * {} + ts::swizzled_128(c, k % {} * {})) "
          "= *reinterpret_cast<const uint4*>(v);",
          tr_offset[i], per_chunk, cols * 128, per_chunk, elem));
      close();
      // wgmma reads the copy as a K-major box: 128-byte chunks of K of `cols` rows.
      offset[i] = tr_offset[i];
      chunk[i] = cols * 128;
    }
    line("ts::fence_proxy_async_shared();  // the copies, to wgmma (the async proxy)");
    line("__syncthreads();");
  }
  line("ts::wgmma_fence();");
  line(fmt::format("const unsigned at = ts::smem_addr(buf);"));
  if (mma.transposed[0] || mma.transposed[1]) line("const unsigned at_tr = ts::smem_addr(tr);");
  // Warpgroup wg: rows 64 (wg % wm + wm i) of the tile, columns cols (wg / wm).
  const std::string wg_n = wm == 1 ? "wg" : fmt::format("wg / {}", wm);
  if (wn == 1)
    line(
        fmt::format("const int wg = tid >> 7;  // warpgroup: rows 64 (wg + {} i) of {}", wm, tile));
  else if (wm == 1)
    line(fmt::format("const int wg = tid >> 7;  // warpgroup: columns {} wg of {}", cols, tile));
  else
    line(
        fmt::format("const int wg = tid >> 7;  // warpgroup: rows 64 (wg % {0} + {0} i), columns "
                    "{1} ({2}) of {3}",
                    wm, cols, wg_n, tile));
  // Descriptor of factor f's operand at k = wgmma_k ks (32 bytes), rows (M or N) from `first`.
  // (The rows' term is left out when they start at 0.)
  auto desc = [&](int f, const std::string& first) {
    if (mma.k_inner[f] || mma.transposed[f])  // chunk ks / 4 of K, 32 bytes per wgmma_k
      return fmt::format("ts::wgmma_desc({} + {} + (ks >> 2) * {}{} + (ks & 3) * 32, 16, 1024)",
                         mma.transposed[f] ? "at_tr" : "at", offset[f], chunk[f],
                         first == "0" ? "" : fmt::format(" + ({}) * 128", first));
    // rows of k: 2048 bytes per 16; chunks of 64 along M or N, `chunk` bytes apart
    return fmt::format("ts::wgmma_desc(at + {}{} + ks * 2048, {}, 1024)", offset[f],
                       first == "0" ? "" : fmt::format(" + (({}) >> 6) * {}", first, chunk[f]),
                       chunk[f]);
  };
  const std::string b_rows = wn == 1 ? "0" : fmt::format("{} * ({})", cols, wg_n);
  const std::string a_rows = wn == 1   ? fmt::format("64 * (wg + {} * i)", wm)
                             : wm == 1 ? std::string("64 * i")
                                       : fmt::format("64 * (wg % {0} + {0} * i)", wm);
  const std::string k_steps =
      fmt::format("_Pragma(\"unroll\") for (int ks = 0; ks < {}; ++ks)", bk / mma.wgmma_k());
  // This tile's products waited for: its buffer is released and refilled.
  auto release = [&] {
    line(fmt::format("if ((tid & 31) == 0) ts::mbarrier_arrive(ts_smem + {} + 8 * s);  // read",
                     st.mbarrier + 8 * s));
    line(fmt::format("++{}_use;", ring));
    if (!mma.producer_warp) line(fmt::format("if (tid == 0) {}_fill();", ring));
    close();
  };
  if (mma.promote_n) {
    emit_promoted_products(
        c, sum.name, fn, desc(a, a_rows),
        desc(b, fmt::format("{}{} * h", b_rows == "0" ? "" : b_rows + " + ", width)), reps, cols,
        k_steps);
    return release();
  }
  open_unrolled(k_steps);
  line(fmt::format("const unsigned long long b_desc = {};", desc(b, b_rows)));
  line(fmt::format(
      "_Pragma(\"unroll\") for (int i = 0; i < {}; ++i) {}(&{}[i * {}], {}, b_desc, {});", reps, fn,
      sum.name, cols / 2, desc(a, a_rows),
      pipelined ? fmt::format("ks > 0 || {}_ > {}", dv.tb, dv.lb) : "1"));
  close();
  line("ts::wgmma_commit();");
  if (!pipelined) {
    line("ts::wgmma_wait<0>();");
    return release();
  }
  // This tile's products stay in flight; the previous tile's are done and its buffer read:
  // released, and refilled with the tile S - 1 past this one.
  line("ts::wgmma_wait<1>();");
  open(fmt::format("if ({}_ > {})", dv.tb, dv.lb));
  line(fmt::format("const unsigned p = ({}_use + {}) % {};", ring, s - 1, s));
  line(fmt::format("if ((tid & 31) == 0) ts::mbarrier_arrive(ts_smem + {} + 8 * p);  // read",
                   st.mbarrier + 8 * s));
  if (!mma.producer_warp) line(fmt::format("if (tid == 0) {}_fill();", ring));
  close();
  line(fmt::format("++{}_use;", ring));
  close();
}

void Emitter::emit_promoted_products(const passes::Contraction& c, const std::string& sum,
                                     const std::string& fn, const std::string& a_desc,
                                     const std::string& b_desc, int64_t reps, int64_t cols,
                                     const std::string& k_steps) {
  const passes::Contraction::Mma& mma = *c.mma;
  const int64_t width = mma.promote_n;
  line(fmt::format(
      "// 8-bit products: each tile of K summed from zero by the tensor cores, {} columns at a "
      "time, then added into f32 (Settings::fast_accum unset)",
      width));
  open_unrolled(fmt::format("_Pragma(\"unroll\") for (int i = 0; i < {}; ++i)", reps));
  open_unrolled(fmt::format("_Pragma(\"unroll\") for (int h = 0; h < {}; ++h)", cols / width));
  line(
      fmt::format("float part[{}];  // the columns {} h of the tile's products", width / 2, width));
  line("ts::wgmma_fence();  // part's registers, read by the previous part's additions");
  open_unrolled(k_steps);
  line(fmt::format("{}(part, {}, {}, ks > 0);", fn, a_desc, b_desc));
  close();
  line("ts::wgmma_commit();");
  line("ts::wgmma_wait<0>();");
  const std::string at = fmt::format("{}[i * {} + h * {} + r]", sum, cols / 2, width / 2);
  // (An accumulator from zeros is zeroed before the loop: promoted_from_zeros.)
  line(fmt::format("_Pragma(\"unroll\") for (int r = 0; r < {}; ++r) {} += part[r];", width / 2,
                   at));
  close();
  close();
}

void Emitter::emit_ring_last(const Node* loop, const passes::Contraction& c) {
  const SharedUse& st = shared_use(c.match.sum);
  const int s = c.mma->stages;
  const DimVars dv = dim_vars(loop, 0);
  const Accumulation acc = accumulation_of(c.match.sum);
  if (!starts_from_zeros(loop, acc.acc)) return;  // each tile waited for its products
  if (!c.mma->promote_n) {  // (promoted sums: each tile waited for its products)
    // Every thread waits, whether or not the loop ran (a wait in a branch would serialize
    // the loop's wgmma: ptxas C7518).
    line("ts::wgmma_wait<0>();  // the last tile's products, then its buffer read");
    line(fmt::format("if (le{}_0 > {} && (tid & 31) == 0)", loop->id, dv.lb));
    line(fmt::format("  ts::mbarrier_arrive(ts_smem + {} + 8 * (({}_use + {}) % {}));",
                     st.mbarrier + 8 * s, ring_name(c), s - 1, s));
  }
  line(fmt::format("if (le{}_0 <= {}) TS_FOR(r) {}[r] = {};  // no tile of K: zeros", loop->id,
                   dv.lb, names_.at(acc.acc), literal(c.match.sum->dtype, 0, 0)));
  if (c.mma->across_programs && !c.mma->producer_warp)
    line(fmt::format("if (tid == 0) {}_fill();  // the next program's tile, before the epilogue",
                     ring_name(c)));
}

}  // namespace tessel::codegen
