// Contractions on tensor cores (passes/tensor_cores.hpp): the factors staged in shared
// memory in their operand dtype, read into mma.sync fragments with ldmatrix and summed by
// mma.sync.m16n8k16 (16-bit), m16n8k32 (8-bit: the same fragments in bytes, 4 per register)
// or m16n8k8 (TF32) into the sum's registers, which (the nest being in the mma.sync
// accumulator's placement) hold the warp's accumulator fragments in order: fragment (i, j)
// of a warp's MR x NR is registers 4 (i NR + j) .. 4 (i NR + j) + 3 (c0 .. c3).
//
// With a cp.async ring (Contraction::Mma::copy_stages, emit_pipeline.cpp) the factors' tiles
// are already in the ring's slot for this tile of K, its copies waited for at the loop's top:
// no staging, no barriers here.
//
//   float acc[TS_N];                         // the sum, in the nest's layout
//   {
//     __syncthreads();                       // earlier readers of shared memory are done
//     <factor i in its own layout>           // 16-byte vectors along its contiguous dim
//     <its vectors to shared memory, rows of its contiguous dim + 16 bytes>
//     __syncthreads();
//     TS_FOR(r) acc[r] = 0.0f;                // or the accumulator of `acc + sum`
//                                           // (Emitter::declare_contraction_sum)
//     for (int ks = 0; ks < BK / 16; ++ks) {   // unrolled (BK / 32 for 8-bit, BK / 8 TF32)
//       unsigned a[MR][4], b[NR][2];           // the warp's fragments at k = 16 ks
//       ldmatrix (A: one .x4 per 16 rows; B: one .x4 per 16 columns, .trans where the rows
//                 of its staged tile run along K's other dim); TF32: element loads
//       mma.sync per fragment (i, j)
//     }
//   }
#include <fmt/format.h>

#include "codegen/emitter_state.hpp"
#include "common/pow2.hpp"

namespace tessel::codegen {

using ir::Node;

namespace {

// Row and column (in the staged tile's rows) of the element lane `lane` addresses for
// ldmatrix of a 16 x 16 A fragment (rows m: `m` + 0..15, k: 16 ks + 0..15); matrix
// j = lane / 8 is (m + 8 (j & 1), k + 8 (j >> 1)), as the A fragment's a0..a3. 8-bit
// (k_inner only): k = 32 ks + 0..31, each matrix 16 bytes of K wide.
std::pair<std::string, std::string> a_place(bool k_inner, const std::string& m, int bytes) {
  if (k_inner)
    return {m + " + (lane & 15)",
            fmt::format("ks * {} + (lane >> 4) * {}", 32 / bytes, 16 / bytes)};
  return {"ks * 16 + (lane & 7) + (lane >> 4) * 8", m + " + ((lane >> 3) & 1) * 8"};
}

// The same for two 16 x 8 B fragments, columns `n0` + 0..7 and `n1` + 0..7: matrix j is
// (k + 8 (j & 1), column block j >> 1), as b0, b1 of the first fragment then the second.
std::pair<std::string, std::string> b_place(bool k_inner, const std::string& n, int bytes) {
  if (k_inner)
    return {n + " + (lane & 7)",
            fmt::format("ks * {} + ((lane >> 3) & 1) * {}", 32 / bytes, 16 / bytes)};
  return {"ks * 16 + ((lane >> 3) & 1) * 8 + (lane & 7)", n};
}

// The shared-memory byte offset of element `e` of a tile of `bytes`-byte elements.
std::string byte_offset(int bytes, const std::string& e) {
  return bytes == 1 ? "(" + e + ")" : fmt::format("{} * ({})", bytes, e);
}

}  // namespace

void Emitter::emit_mma_contraction(const passes::Contraction& c) {
  const passes::Contraction::Mma& mma = *c.mma;
  const Node* n = c.match.sum;
  uses_mma_ = true;
  const ContractionSum sum = declare_contraction_sum(
      n, fmt::format("sum over {} of products, factors in shared memory, on tensor cores "
                     "(mma.sync {}{})",
                     ir::sym_name(c.match.k),
                     mma.operand == DType::f32      ? std::string("m16n8k8, tf32")
                     : dtype_size(mma.operand) == 1 ? "m16n8k32, " + dtype_name(mma.operand)
                                                    : "m16n8k16, " + dtype_name(mma.operand),
                     c.not_wgmma.empty() ? "" : "; not wgmma: " + c.not_wgmma) +
             (mma.copy_stages ? fmt::format(", factors by cp.async into a ring of {} tiles of K",
                                            mma.copy_stages)
                              : ""));
  const std::string& nm = sum.name;
  const SharedUse& use = shared_use(n);  // the kernel IR's stage (passes/shared_plan.hpp)
  const std::string elem = dtype_cuda_storage(mma.operand);
  open("");
  std::string tile[2];
  // The ring's slot for this tile of K (its bytes: both factors' staged tiles), or the stage.
  const std::string slot_at =
      mma.copy_stages ? fmt::format("{} + {} * {}", use.offset, ring_slot_.at(c.match.k->loop),
                                    (c.shared_bytes + 15) / 16 * 16)
                      : std::to_string(use.offset);
  for (int i = 0; i < 2; ++i) {
    const passes::Layout& F = c.factor_layout[i];
    tile[i] = fmt::format("f{}_{}", n->id, i);
    line(fmt::format("{}* {} = reinterpret_cast<{}*>(ts_smem + {} + {});  // [{}][{} + {}]{}", elem,
                     tile[i], elem, slot_at, c.shared_offset[i], F.slot_block.front(),
                     F.slot_block.back(), mma.pitch[i] - F.slot_block.back(),
                     mma.copy_stages ? " copied by cp.async" : ""));
  }
  if (use.barrier) line("__syncthreads();  // earlier readers of shared memory are done");
  for (int i = 0; i < 2 && !mma.copy_stages; ++i) {
    const passes::Layout& F = c.factor_layout[i];
    emit_factor(c, i, [&] {
      const int64_t inner = F.slot_block.back();
      open_unrolled("_Pragma(\"unroll\") for (int g = 0; g < TS_G; ++g)");
      line("const int f = TS_FLAT(g * TS_V);");
      line(fmt::format("{} s[TS_V];", reg_type(mma.operand)));
      line(fmt::format("_Pragma(\"unroll\") for (int v = 0; v < TS_V; ++v) s[v] = {};",
                       at(c.match.factor[i].value(), "g * TS_V + v")));
      line(fmt::format(
          "{}ts::st_vec<{}, TS_V, true, true>({} + (f >> {}) * {} + (f & {}), TS_V, s);",
          F.all_threads_active() ? "" : fmt::format("if (f < {}) ", F.elems), elem, tile[i],
          ceil_log2(inner), mma.pitch[i], inner - 1));
      close();
    });
  }
  if (!mma.copy_stages) line("__syncthreads();");
  if (!sum.init.empty()) line(fmt::format("TS_FOR(r) {}[r] = {};", nm, sum.init));
  const int a = mma.a, b = 1 - mma.a;
  const int64_t bm = nest_.slot_block[0], bn = nest_.slot_block[1];
  const int64_t mr = bm / (16 * mma.warps_m), nr = bn / (8 * mma.warps_n);
  const bool tf32 = mma.operand == DType::f32;
  const int bytes = dtype_size(mma.operand);
  const int64_t kstep = tf32 ? 8 : 32 / bytes;
  const int64_t steps = plan_.block(c.match.k) / kstep;
  open("");
  line(fmt::format("const int lane = tid & 31, wm = (tid >> 5) / {}, wn = (tid >> 5) % {};",
                   mma.warps_n, mma.warps_n));
  const std::string m0 = fmt::format("i * {} + wm * 16", 16 * mma.warps_m);
  const std::string n0 = fmt::format("j * {} + wn * 8", 8 * mma.warps_n);
  if (tf32) {
    // Element (row, col) of factor i's staged tile, as a 32-bit register.
    auto element = [&](int i, const std::string& mn, const std::string& k) {
      return fmt::format("__float_as_uint({}[{}])", tile[i],
                         mma.k_inner[i] ? fmt::format("({}) * {} + {}", mn, mma.pitch[i], k)
                                        : fmt::format("({}) * {} + {}", k, mma.pitch[i], mn));
    };
    open_unrolled(fmt::format("_Pragma(\"unroll\") for (int ks = 0; ks < {}; ++ks)", steps));
    line(fmt::format("unsigned a[{}][4], b[{}][2];  // the warp's fragments at k = 8 ks", mr, nr));
    line("const int g = lane >> 2, k = ks * 8 + (lane & 3);");
    open_unrolled(fmt::format("_Pragma(\"unroll\") for (int i = 0; i < {}; ++i)", mr));
    line(fmt::format("const int m = {} + g;", m0));
    line(
        fmt::format("a[i][0] = {}, a[i][1] = {};", element(a, "m", "k"), element(a, "m + 8", "k")));
    line(fmt::format("a[i][2] = {}, a[i][3] = {};", element(a, "m", "k + 4"),
                     element(a, "m + 8", "k + 4")));
    close();
    open_unrolled(fmt::format("_Pragma(\"unroll\") for (int j = 0; j < {}; ++j)", nr));
    line(fmt::format("const int n = {} + g;", n0));
    line(
        fmt::format("b[j][0] = {}, b[j][1] = {};", element(b, "n", "k"), element(b, "n", "k + 4")));
    close();
  } else {
    line(fmt::format("const unsigned a_at = ts::smem_addr({}), b_at = ts::smem_addr({});", tile[a],
                     tile[b]));
    open_unrolled(fmt::format("_Pragma(\"unroll\") for (int ks = 0; ks < {}; ++ks)", steps));
    line(fmt::format("unsigned a[{}][4], b[{}][2];  // the warp's fragments at k = {} ks", mr, nr,
                     kstep));
    auto [ar, ac] = a_place(mma.k_inner[a], m0, bytes);
    line(fmt::format(
        "_Pragma(\"unroll\") for (int i = 0; i < {}; ++i) ts::ldmatrix_x4<{}>(a[i], a_at + {});",
        mr, mma.k_inner[a] ? "false" : "true",
        byte_offset(bytes, fmt::format("({}) * {} + {}", ar, mma.pitch[a], ac))));
    const std::string trans_b = mma.k_inner[b] ? "false" : "true";
    if (nr == 1) {
      auto [br, bc] = b_place(mma.k_inner[b], "wn * 8", bytes);
      line(fmt::format("ts::ldmatrix_x2<{}>(b[0], b_at + {});", trans_b,
                       byte_offset(bytes, fmt::format("({}) * {} + {}", br, mma.pitch[b], bc))));
    } else {
      auto [br, bc] = b_place(
          mma.k_inner[b], fmt::format("(j + (lane >> 4)) * {} + wn * 8", 8 * mma.warps_n), bytes);
      open_unrolled(fmt::format("_Pragma(\"unroll\") for (int j = 0; j < {}; j += 2)", nr));
      line("unsigned q[4];");
      line(fmt::format("ts::ldmatrix_x4<{}>(q, b_at + {});", trans_b,
                       byte_offset(bytes, fmt::format("({}) * {} + {}", br, mma.pitch[b], bc))));
      line("b[j][0] = q[0], b[j][1] = q[1], b[j + 1][0] = q[2], b[j + 1][1] = q[3];");
      close();
    }
  }
  line(fmt::format(
      "_Pragma(\"unroll\") for (int i = 0; i < {}; ++i) _Pragma(\"unroll\") for (int j = 0; j < "
      "{}; ++j) ts::{}(&{}[4 * (i * {} + j)], a[i], b[j]);",
      mr, nr,
      tf32         ? std::string("mma_1688_tf32")
      : bytes == 1 ? "mma_16832_" + mma.ptx_operand()
                   : "mma_16816_" + dtype_name(mma.operand),
      nm, nr));
  close();
  close();
  close();
}

}  // namespace tessel::codegen
