// ts::dot on wgmma (src/passes/tensor_cores.hpp, Contraction::Mma::wgmma): which dots take
// it and which stay on mma.sync, the TMA boxes and ring of the plan, the kernel IR's ring
// stage and swizzled accesses read back, and the CUDA NVRTC compiles for sm_90a. GPU values:
// tests/gpu/dot_gpu_test.cpp (DotGpu.*Wgmma*).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <tessel/tessel.hpp>
#include <tessel/testing.hpp>

#include "examples/kernels/moe.hpp"
#include "layout/mma_layouts.hpp"
#include "nvrtc_test_util.hpp"
#include "passes/kernel_ir.hpp"
#include "passes/layout.hpp"
#include "passes/shared_plan.hpp"
#include "stage_test_util.hpp"
#include "tests/dot_test_util.hpp"
#include "tests/moe_dot_test_util.hpp"

namespace ts = tessel;
namespace passes = tessel::passes;

namespace {

using dot_test::blocks;
using dot_test::make_dot;

ts::Config staged_config(int64_t m, int64_t n, int64_t k, int warps, int stages) {
  ts::Config c = blocks(m, n, k, warps);
  c.num_stages = stages;
  return c;
}

}  // namespace

TEST(Wgmma, TakesTilesOf64RowsPerWarpgroupAndARingOfNumStagesBuffers) {
  ts::Buffer x = ts::Buffer::zeros({512, 512}, ts::bf16),
             y = ts::Buffer::zeros({512, 512}, ts::bf16);
  auto k = make_dot();
  struct Case {
    int64_t m, n, k;
    int warps, stages, ring;
  };
  // num_stages 1 still rings 2 buffers; 5 of 48 KiB do not fit in 227 KiB: 4.
  for (Case c :
       {Case{128, 128, 64, 4, 1, 2}, Case{128, 256, 64, 8, 4, 4}, Case{64, 64, 64, 4, 3, 3},
        Case{256, 128, 64, 8, 3, 3}, Case{128, 256, 64, 8, 5, 4}}) {
    stage_test::Staged s = stage_test::staged(
        "layout", false, k, staged_config(c.m, c.n, c.k, c.warps, c.stages), x, y);
    const passes::Layout& L = s.stages.loops.at(0).layout;
    ASSERT_EQ(L.contractions.size(), 1u);
    const passes::Contraction& con = L.contractions[0];
    ASSERT_TRUE(con.mma && con.mma->wgmma) << c.m << "x" << c.n << "x" << c.k << "\n" << s.text;
    EXPECT_EQ(con.mma->warps_m, c.warps);
    EXPECT_EQ(con.mma->stages, c.ring);
    const int a = con.mma->a;
    EXPECT_TRUE(con.mma->k_inner[a]);       // x is K-major
    EXPECT_FALSE(con.mma->k_inner[1 - a]);  // y is N-major
    // x's box: 64 elements of K (128 bytes) by BM rows, one chunk; y's: 64 of N by BK rows,
    // BN / 64 chunks; both 128-byte swizzled.
    EXPECT_EQ(con.mma->box[a].box, (std::vector<int64_t>{64, c.m}));
    EXPECT_EQ(con.mma->box[a].chunks, 1);
    EXPECT_EQ(con.mma->box[1 - a].box, (std::vector<int64_t>{64, c.k}));
    EXPECT_EQ(con.mma->box[1 - a].chunks, c.n / 64);
    EXPECT_EQ(con.mma->box[a].swizzle, 128);
    EXPECT_EQ(con.mma->stage_bytes, (c.m * c.k + c.k * c.n) * 2);
    EXPECT_EQ(con.shared_bytes, c.ring * con.mma->stage_bytes);
    const ts::layout::LinearLayout acc =
        ts::layout::wgmma_accumulator({static_cast<int32_t>(c.m), static_cast<int32_t>(c.n)},
                                      static_cast<int32_t>(c.n), {c.warps, 1});
    EXPECT_EQ(passes::with_placement(L, acc).slot_bits, L.slot_bits);
    EXPECT_NE(
        s.text.find(fmt::format("on tensor cores (wgmma m64n{}k16 bf16, {} warpgroups, a ring "
                                "of {} buffers filled by TMA)",
                                c.n, c.warps / 4, c.ring)),
        std::string::npos)
        << s.text;
  }
}

// Warpgroups beyond M's block (64 rows each) take columns of N: a 64 x 256 tile on 8 warps
// is two warpgroups of 64 x 128 (the grouped GEMM's 64-row tiles on two warpgroups), each
// issuing m64n128k16 from its own columns of B; in an N-major B those start at a 64-column
// chunk, so 32 columns each stay on mma.sync unless B is K-major.
TEST(Wgmma, WarpgroupsBeyondTheRowsOfMTakeColumnsOfN) {
  REQUIRE_NVRTC();
  ts::Buffer x = ts::Buffer::zeros({256, 256}, ts::bf16),
             y = ts::Buffer::zeros({256, 256}, ts::bf16);
  struct Case {
    int64_t m, n;
    int warps, warps_m, warps_n;
  };
  for (Case c : {Case{64, 256, 8, 4, 2}, Case{128, 256, 16, 8, 2}, Case{64, 128, 8, 4, 2}}) {
    auto k = make_dot(ts::Settings{.config = staged_config(c.m, c.n, 64, c.warps, 3)});
    stage_test::Staged s =
        stage_test::staged("layout", false, k, staged_config(c.m, c.n, 64, c.warps, 3), x, y);
    const passes::Layout& L = s.stages.loops.at(0).layout;
    const passes::Contraction& con = L.contractions.at(0);
    ASSERT_TRUE(con.mma && con.mma->wgmma) << s.text;
    EXPECT_EQ(con.mma->warps_m, c.warps_m);
    EXPECT_EQ(con.mma->warps_n, c.warps_n);
    const int32_t cols = static_cast<int32_t>(c.n / c.warps_n);
    const ts::layout::LinearLayout acc = ts::layout::wgmma_accumulator(
        {static_cast<int32_t>(c.m), static_cast<int32_t>(c.n)}, cols, {c.warps_m, c.warps_n});
    EXPECT_EQ(passes::with_placement(L, acc).slot_bits, L.slot_bits);
    EXPECT_NE(s.text.find(fmt::format("wgmma m64n{}k16 bf16, {} warpgroups (2 along N)", cols,
                                      c.warps / 4)),
              std::string::npos)
        << s.text;
    const std::string cu = nvrtc_test::compile(k, x, y);
    EXPECT_NE(cu.find(fmt::format("ts_wgmma_{}_bf16_01(", cols)), std::string::npos) << cu;
    // Each warpgroup's B descriptor starts at its columns' chunk.
    EXPECT_NE(
        cu.find(fmt::format("const unsigned long long b_desc = ts::wgmma_desc(at + {} + "
                            "(({} * ({})) >> 6) * {} + ks * 2048",
                            c.m * 64 * 2, cols, c.warps_m == 4 ? "wg" : "wg / 2", 64 * 64 * 2)),
        std::string::npos)
        << cu;
  }
  // 32 columns per warpgroup: within a chunk of an N-major B (mma.sync), or rows of a
  // K-major one (wgmma m64n32).
  auto k = make_dot(ts::Settings{.config = staged_config(64, 64, 64, 8, 3)});
  auto plan = [&](const ts::Buffer& b) {
    stage_test::Staged s =
        stage_test::staged("layout", false, k, staged_config(64, 64, 64, 8, 3), x, b);
    return s.stages.loops.at(0).layout.contractions.at(0).mma;
  };
  EXPECT_FALSE(plan(y)->wgmma);
  ts::Buffer yt = ts::Buffer::zeros({256, 256}, ts::bf16).transpose(0, 1);
  auto m = plan(yt);
  ASSERT_TRUE(m && m->wgmma);
  EXPECT_EQ(m->warps_n, 2);
  EXPECT_NE(nvrtc_test::compile(k, x, yt).find("ts_wgmma_32_bf16_00("), std::string::npos);
}

TEST(Wgmma, DotsItCannotTakeStayOnMmaSync) {
  auto k = make_dot();
  ts::Buffer x = ts::Buffer::zeros({256, 256}, ts::bf16),
             y = ts::Buffer::zeros({256, 256}, ts::bf16);
  auto plan = [&](const ts::Config& c, const ts::Buffer& a, const ts::Buffer& b, auto& kernel) {
    stage_test::Staged s = stage_test::staged("layout", false, kernel, c, a, b);
    const passes::Layout& L = s.stages.loops.at(0).layout;
    EXPECT_EQ(L.contractions.size(), 1u);
    return L.contractions.at(0).mma;
  };
  // K of 32: 64 bytes of a K-major row, less than the swizzle's 128.
  auto m = plan(blocks(128, 128, 32, 4), x, y, k);
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->wgmma);
  // Blocks of M and N of 32 rows (a warpgroup's instruction has 64, of either: ASkinnyM...);
  // 2 warps.
  EXPECT_FALSE(plan(blocks(32, 32, 64, 4), x, y, k)->wgmma);
  stage_test::Staged small = stage_test::staged("layout", false, k, blocks(32, 32, 64, 4), x, y);
  EXPECT_NE(small.text.find("neither M's block 32 nor N's block 32 is a multiple of 64"),
            std::string::npos)
      << small.text;
  EXPECT_FALSE(plan(blocks(64, 64, 64, 2), x, y, k)->wgmma);
  // Rows of x 100 bytes apart: no tensor descriptor.
  ts::Buffer xu = ts::Buffer::zeros({256, 50}, ts::bf16),
             yu = ts::Buffer::zeros({50, 256}, ts::bf16);
  EXPECT_FALSE(plan(blocks(128, 128, 64, 4), xu, yu, k)->wgmma);
  stage_test::Staged unaligned =
      stage_test::staged("layout", false, k, blocks(128, 128, 64, 4), xu, yu);
  EXPECT_NE(
      unaligned.stages.loops.at(0).layout.contractions.at(0).not_wgmma.find(
          " (a tile of tensor argument 0 ('x')): its tensor's data pointer or a stride is not "
          "a multiple of 16 bytes"),
      std::string::npos)
      << unaligned.text;
  // Settings::check_bounds checks each access where it runs, not a TMA box.
  auto checked = make_dot(ts::Settings{.check_bounds = true});
  EXPECT_FALSE(plan(blocks(128, 128, 64, 4), x, y, checked)->wgmma);
  // TF32 factors that are not K-major (x M-major, y row-major: N-major) are copied K-major
  // by the threads, whole 128-byte rows of K: at a K block of 16 (64 bytes) they stay on
  // mma.sync, and the layout stage says why.
  ts::Buffer xf = ts::Buffer::zeros({256, 256}, ts::f32),
             yf = ts::Buffer::zeros({256, 256}, ts::f32);
  const ts::Buffer xm = xf.transpose(0, 1).contiguous().transpose(0, 1);  // M-major
  auto t = plan(blocks(128, 128, 64, 4), xf, yf, k);
  ASSERT_TRUE(t && t->wgmma);
  EXPECT_FALSE(t->transposed[0]);
  EXPECT_TRUE(t->transposed[1]);
  EXPECT_EQ(t->transpose_total(), 2 * 64 * 128 * 4);
  EXPECT_FALSE(plan(blocks(128, 128, 16, 4), xm, yf, k)->wgmma);
  stage_test::Staged s = stage_test::staged("layout", false, k, blocks(128, 128, 16, 4), xm, yf);
  EXPECT_NE(s.text.find("is M-major: wgmma reads it K-major only, from a copy whose rows of K "
                        "are 128 bytes (32 elements; K's block is 16)"),
            std::string::npos)
      << s.text;
}

// A row-major TF32 y (N-major) and an M-major x on wgmma: each tile copied K-major from the
// ring into one of two buffers past it (16-byte stores of 4 values of K), fenced for the async
// proxy, and read by wgmma through K-major descriptors.
TEST(Wgmma, Tf32FactorsNotKMajorAreCopiedKMajor) {
  REQUIRE_NVRTC();
  ts::Buffer x = ts::Buffer::zeros({512, 256}, ts::f32), y = ts::Buffer::zeros({256, 512}, ts::f32);
  ts::Config c = blocks(128, 256, 32, 8);
  c.num_stages = 3;
  auto k = make_dot(ts::Settings{.config = c});
  stage_test::Staged s = stage_test::staged("layout", false, k, c, x, y);
  const passes::Contraction& con = s.stages.loops.at(0).layout.contractions.at(0);
  ASSERT_TRUE(con.mma && con.mma->wgmma) << s.text;
  EXPECT_EQ(con.shared_bytes, 3 * (128 + 256) * 32 * 4 + 2 * 256 * 32 * 4);
  EXPECT_NE(s.text.find("copied K-major by the threads"), std::string::npos) << s.text;
  const std::string cu = nvrtc_test::compile(k, x, y);
  EXPECT_NE(cu.find("wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32"), std::string::npos)
      << cu;
  EXPECT_NE(cu.find("alignas(16) unsigned v[4];"), std::string::npos) << cu;
  EXPECT_NE(cu.find("ts::wgmma_desc(at_tr + "), std::string::npos) << cu;
  // x M-major too: both copied.
  const std::string both =
      nvrtc_test::compile(k, x.transpose(0, 1).contiguous().transpose(0, 1), y);
  EXPECT_EQ(nvrtc_test::count_matches(both, R"(alignas\(16\) unsigned v\[4\];)"), 2) << both;
  // The layout dump names both copied factors.
  const ts::Buffer xm = x.transpose(0, 1).contiguous().transpose(0, 1);
  stage_test::Staged s2 = stage_test::staged("layout", false, k, c, xm, y);
  const passes::Contraction& c2 = s2.stages.loops.at(0).layout.contractions.at(0);
  ASSERT_TRUE(c2.mma && c2.mma->transposed[0] && c2.mma->transposed[1]) << s2.text;
  EXPECT_NE(
      s2.text.find(fmt::format("%{} and %{} copied K-major by the threads",
                               c2.match.factor[0].value()->id, c2.match.factor[1].value()->id)),
      std::string::npos)
      << s2.text;
}

// TF32 operands both K-major (x row-major, y the transpose of a [N, K] tensor: a Linear
// layer's x w^T) run on wgmma m64nNk8: boxes of 32 f32 (128 bytes) of K, BK / 8 instructions
// per tile, no transpose operands in the instruction.
TEST(Wgmma, Tf32OperandsBothKMajorTakeWgmmaK8) {
  REQUIRE_NVRTC();
  ts::Buffer x = ts::Buffer::zeros({512, 256}, ts::f32), w = ts::Buffer::zeros({512, 256}, ts::f32);
  const ts::Buffer wt = w.transpose(0, 1);
  const ts::Config c = staged_config(128, 256, 32, 8, 4);
  auto k = make_dot(ts::Settings{.config = c});
  stage_test::Staged s = stage_test::staged("layout", false, k, c, x, wt);
  const passes::Contraction& con = s.stages.loops.at(0).layout.contractions.at(0);
  ASSERT_TRUE(con.mma && con.mma->wgmma) << s.text;
  EXPECT_EQ(con.mma->operand, ts::f32);
  EXPECT_TRUE(con.mma->k_inner[0] && con.mma->k_inner[1]);
  EXPECT_EQ(con.mma->box[0].box, (std::vector<int64_t>{32, 128}));
  EXPECT_EQ(con.mma->box[1].box, (std::vector<int64_t>{32, 256}));
  EXPECT_EQ(con.mma->stage_bytes, (128 + 256) * 32 * 4);
  EXPECT_NE(s.text.find("wgmma m64n256k8 tf32, 2 warpgroups"), std::string::npos) << s.text;
  const std::string cu = nvrtc_test::compile(k, x, wt);
  EXPECT_NE(cu.find("wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32"), std::string::npos)
      << cu;
  EXPECT_NE(cu.find("p, 1, 1;"), std::string::npos) << cu;  // no transpose operands
  EXPECT_NE(cu.find("for (int ks = 0; ks < 4; ++ks)"), std::string::npos) << cu;
  EXPECT_EQ(cu.find("ts::truncate_tf32"), std::string::npos) << cu;  // the tensor cores do
  // A ragged K's partial tile is zeroed a 32-bit word at a time.
  ts::Buffer xr = ts::Buffer::zeros({200, 72}, ts::f32), wr = ts::Buffer::zeros({136, 72}, ts::f32);
  const std::string cur = nvrtc_test::compile(k, xr, wr.transpose(0, 1));
  EXPECT_NE(cur.find("*reinterpret_cast<unsigned*>(buf + "), std::string::npos) << cur;
}

// A weight tile transposed in the kernel (`w(tn, tk).t()`, w [N, K]) is a factor as a
// transposed view passed in is: both K-major on wgmma (bf16 and TF32), the same values.
TEST(Wgmma, AWeightTileTransposedInTheKernelIsAKMajorFactor) {
  REQUIRE_NVRTC();
  const ts::Config c = staged_config(128, 128, 64, 4, 3);
  auto k = dot_test::make_dot_wt(ts::Settings{.config = c});
  for (ts::DType t : {ts::bf16, ts::f32}) {
    ts::Buffer x = ts::Buffer::randn({200, 136}, t, ts::cpu(), 5),
               w = ts::Buffer::randn({72, 136}, t, ts::cpu(), 6);
    stage_test::Staged s = stage_test::staged("layout", false, k, c, x, w);
    const passes::Contraction& con = s.stages.loops.at(0).layout.contractions.at(0);
    ASSERT_TRUE(con.mma && con.mma->wgmma) << s.text;
    EXPECT_TRUE(con.mma->k_inner[0] && con.mma->k_inner[1]);
    EXPECT_EQ(nvrtc_test::count(nvrtc_test::compile(k, x, w), "wgmma.mma_async.sync"), 1);
    EXPECT_EQ(ts::count_mismatches(k(x, w), make_dot()(x, w.transpose(0, 1)), 1e-5, 1e-5), 0);
  }
}

TEST(Wgmma, TheKernelIrHasARingStageAndSwizzledBoxesAndReadsBack) {
  ts::Buffer x = ts::Buffer::zeros({512, 512}, ts::bf16),
             y = ts::Buffer::zeros({512, 512}, ts::bf16);
  auto k = make_dot();
  stage_test::Staged s =
      stage_test::staged("kernel_ir", true, k, staged_config(128, 256, 64, 8, 4), x, y);
  const ts::codegen::LoopStages& l = s.stages.loops.at(0);
  const passes::Contraction& c = l.layout.contractions.at(0);
  const passes::SharedStage* ring = l.nir.stage(c.match.sum);
  ASSERT_TRUE(ring);
  EXPECT_EQ(ring->kind, passes::SharedStage::Kind::ring);
  EXPECT_EQ(ring->offset, 0);
  EXPECT_EQ(ring->bytes, 4 * (128 * 64 + 64 * 256) * 2);
  EXPECT_FALSE(ring->barrier);
  // 8 mbarriers (filled, read) past the ring.
  EXPECT_EQ(ring->mbarrier, ring->bytes);
  EXPECT_EQ(l.nir.shared_bytes, ring->bytes + 4 * 16);
  for (int i = 0; i < 2; ++i) {
    const passes::Access& a = l.nir.access(c.match.factor[i].load());
    EXPECT_EQ(a.form, passes::Access::Form::tma);
    EXPECT_EQ(a.tma.swizzle, 128);
  }
  EXPECT_NE(s.text.find("shared stage ring of 4, TMA at 0, 196608 bytes, no barrier before"),
            std::string::npos)
      << s.text;
  EXPECT_NE(s.text.find("swizzle 128, chunks 4"), std::string::npos) << s.text;
  passes::NestIr nir = l.nir;
  passes::parse_kernel_ir(s.text, s.stages.program(), nir);
  EXPECT_EQ(passes::describe(nir), passes::describe(l.nir));
  EXPECT_EQ(passes::shared_plan_error(l.nir), "");
}

// NVRTC compiles the wgmma CUDA for sm_90a: K-major and M-major A, N-major and K-major B, a
// ragged K (its last tile zeroed past K's end), 2 warpgroups, persistent programs.
TEST(Wgmma, TheCudaCompilesForSm90aInEveryOperandOrder) {
  REQUIRE_NVRTC();
  ts::Buffer x = ts::Buffer::zeros({200, 72}, ts::bf16), y = ts::Buffer::zeros({72, 136}, ts::bf16);
  auto k = make_dot(ts::Settings{.config = staged_config(128, 128, 64, 4, 3)});
  const std::string cu = nvrtc_test::compile(k, x, y);
  EXPECT_NE(cu.find("#include \"tessel/wgmma.cuh\""), std::string::npos) << cu;
  EXPECT_NE(cu.find("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"), std::string::npos);
  EXPECT_NE(cu.find("ts_wgmma_128_bf16_01("), std::string::npos) << cu;  // K-major A, N-major B
  EXPECT_EQ(nvrtc_test::count(cu, "ts::tma_copy<2>("), 3) << cu;         // x: 1 chunk, y: 2
  EXPECT_NE(cu.find("__align__(1024) unsigned char ts_smem[]"), std::string::npos);
  EXPECT_NE(cu.find("ts::swizzled_128("), std::string::npos);  // the partial tile of K
  // Transposed views: x M-major, y K-major; f16.
  ts::Buffer xt = ts::Buffer::zeros({72, 200}, ts::f16), yt = ts::Buffer::zeros({136, 72}, ts::f16);
  const std::string cut = nvrtc_test::compile(k, xt.transpose(0, 1), yt.transpose(0, 1));
  EXPECT_NE(cut.find("ts_wgmma_128_f16_10("), std::string::npos) << cut;
  // 2 warpgroups of 64 x 256; a persistent program loop.
  ts::Config big = staged_config(128, 256, 64, 8, 4);
  big.pid_type = ts::PidType::persistent_interleaved;
  auto kb = make_dot(ts::Settings{.config = big});
  ts::Buffer xb = ts::Buffer::zeros({512, 256}, ts::bf16),
             yb = ts::Buffer::zeros({256, 512}, ts::bf16);
  const std::string cub = nvrtc_test::compile(kb, xb, yb);
  EXPECT_NE(cub.find("ts_wgmma_256_bf16_01("), std::string::npos) << cub;
}

// A block of M below 64 rows (a decode's 16 rows) with one of N of whole 64 rows: wgmma
// computes the transposed product out^T = y^T x^T (Mma::swap_ab), its 64-row tiles along N
// (y the A operand: M-major where y is row-major, K-major where it is w^T) and its columns
// M's block (x the B operand, K-major); the nest's placement is the wgmma accumulator of the
// [N, M] tile, transposed. Warpgroups beyond N's block take columns of M (rows of x).
TEST(Wgmma, ASkinnyMTakesWgmmaOnTheTransposedProduct) {
  REQUIRE_NVRTC();
  ts::Buffer x = ts::Buffer::zeros({16, 512}, ts::bf16),
             y = ts::Buffer::zeros({512, 512}, ts::bf16);
  const ts::Buffer wt = ts::Buffer::zeros({512, 512}, ts::bf16).transpose(0, 1);  // K-major
  struct Case {
    int64_t m, n;
    int warps, warps_m, warps_n;
  };
  for (Case c : {Case{16, 128, 4, 4, 1}, Case{32, 256, 8, 8, 1}, Case{32, 64, 8, 4, 2},
                 Case{16, 64, 4, 4, 1}}) {
    const ts::Config config = staged_config(c.m, c.n, 64, c.warps, 6);
    auto k = make_dot(ts::Settings{.config = config});
    stage_test::Staged s = stage_test::staged("layout", false, k, config, x, y);
    const passes::Layout& L = s.stages.loops.at(0).layout;
    const passes::Contraction& con = L.contractions.at(0);
    ASSERT_TRUE(con.mma && con.mma->wgmma) << s.text;
    EXPECT_TRUE(con.mma->swap_ab);
    EXPECT_EQ(con.mma->warps_m, c.warps_m);
    EXPECT_EQ(con.mma->warps_n, c.warps_n);
    EXPECT_EQ(con.mma->stages, 6);
    const int32_t cols = static_cast<int32_t>(c.m / c.warps_n);
    const ts::layout::LinearLayout acc =
        ts::layout::wgmma_accumulator({static_cast<int32_t>(c.n), static_cast<int32_t>(c.m)}, cols,
                                      {c.warps_m, c.warps_n})
            .transpose_outs({1, 0});
    EXPECT_EQ(passes::with_placement(L, acc).slot_bits, L.slot_bits);
    // Register 1 holds the next row of M (the next column of wgmma's transposed tile).
    EXPECT_EQ(acc.apply({{"register", 1}, {"lane", 0}, {"warp", 0}}),
              (ts::layout::Coords{{"dim0", 1}, {"dim1", 0}}));
    EXPECT_NE(s.text.find(fmt::format("wgmma m64n{}k16 bf16 of the transposed product, A and B "
                                      "swapped, {} warpgroups",
                                      cols, c.warps / 4)),
              std::string::npos)
        << s.text;
    // y row-major: A M-major (transposed), x: B K-major.
    const std::string cu = nvrtc_test::compile(k, x, y);
    EXPECT_NE(cu.find(fmt::format("ts_wgmma_{}_bf16_10(", cols)), std::string::npos) << cu;
    EXPECT_NE(cu.find(fmt::format("wgmma.mma_async.sync.aligned.m64n{}k16", cols)),
              std::string::npos);
    if (c.warps_n > 1)  // the second warpgroup's rows of x
      EXPECT_NE(cu.find(fmt::format("+ ({} * (wg)) * 128", cols)), std::string::npos) << cu;
    // y = w^T of a [N, K] weight: both K-major.
    const std::string cut = nvrtc_test::compile(k, x, wt);
    EXPECT_NE(cut.find(fmt::format("ts_wgmma_{}_bf16_00(", cols)), std::string::npos) << cut;
  }
  // TF32 with a row-major y (copied K-major by the threads), split-K, warp specialization,
  // a persistent program loop: each compiles on the transposed product.
  ts::Buffer xf = ts::Buffer::zeros({16, 512}, ts::f32),
             yf = ts::Buffer::zeros({512, 512}, ts::f32);
  const std::string tf32 = nvrtc_test::compile(
      make_dot(ts::Settings{.config = staged_config(16, 128, 32, 4, 4)}), xf, yf);
  EXPECT_NE(tf32.find("ts_wgmma_16_tf32_00("), std::string::npos) << tf32;
  ts::Config split = staged_config(16, 128, 64, 4, 8);
  split.split_k = 2;
  ts::Config ws = staged_config(16, 128, 64, 4, 8);
  ws.warp_specialize = true;
  ts::Config persistent = staged_config(16, 256, 64, 8, 8);
  persistent.pid_type = ts::PidType::persistent_interleaved;
  for (const ts::Config& c : {split, ws, persistent}) {
    const std::string cu = nvrtc_test::compile(make_dot(ts::Settings{.config = c}), x, y);
    EXPECT_NE(cu.find("of the transposed product: A and B swapped"), std::string::npos)
        << c.to_json() << "\n"
        << cu;
    EXPECT_EQ(cu.find("is not applied"), std::string::npos) << c.to_json() << "\n" << cu;
  }
}

// From zeros (ts::zeros), each tile's products stay in flight while the next tile's are issued
// (wait_group 1) and the accumulator is not initialized (the first products overwrite it:
// scale-d 0); from another value, each tile waits for its own (wait_group 0).
TEST(Wgmma, AnAccumulatorFromZerosKeepsATilesProductsInFlight) {
  REQUIRE_NVRTC();
  ts::Buffer x = ts::Buffer::zeros({256, 128}, ts::bf16),
             y = ts::Buffer::zeros({128, 256}, ts::bf16);
  const ts::Config c = staged_config(128, 128, 64, 4, 3);
  const std::string zeros = nvrtc_test::compile(make_dot(ts::Settings{.config = c}), x, y);
  EXPECT_EQ(nvrtc_test::count(zeros, "ts::wgmma_wait<1>();"), 1) << zeros;
  EXPECT_NE(zeros.find("zeros: the first products of the loop overwrite it"), std::string::npos);
  // The zeros it starts from are not made (only the zeros of a loop with no tile of K).
  EXPECT_EQ(nvrtc_test::count(zeros, "[r] = 0.0f;"), 1) << zeros;
  EXPECT_NE(zeros.find("b_desc, ks > 0 ||"), std::string::npos) << zeros;
  auto from_ones = dot_test::make_dot(ts::Settings{.config = c}, 1.0);
  const std::string ones = nvrtc_test::compile(from_ones, x, y);
  EXPECT_EQ(nvrtc_test::count(ones, "ts::wgmma_wait<1>();"), 0) << ones;
  EXPECT_EQ(nvrtc_test::count(ones, "ts::wgmma_wait<0>();"), 1) << ones;
  EXPECT_NE(ones.find("b_desc, 1);"), std::string::npos) << ones;
}

// The grouped GEMM's expert weights w[e, k, n]: a box of one expert (a scalar index loaded on
// the GPU) by BK x BN.
TEST(Wgmma, AGroupedMatmulLoadsEachTilesExpertByTensorDescriptor) {
  REQUIRE_NVRTC();
  moe_test::Routed r = moe_test::route({40, 100, 7}, 128, 128, 256, ts::bf16);
  ts::Config c = ts::Config{.block_sizes = std::vector<int64_t>{128, 64}, .num_warps = 4};
  auto k = examples::make_grouped_matmul(ts::Settings{.config = c});
  const std::string cu = nvrtc_test::compile(k, r.x, r.w, r.n_rows, r.block_expert);
  EXPECT_NE(cu.find("wgmma.mma_async"), std::string::npos) << cu;
  EXPECT_NE(cu.find("ts::tma_copy<3>("), std::string::npos) << cu;
}

// Two dots in one loop over K (a gate and an up projection): a ring each, their buffers
// counted together (at 128x256x64, 2 buffers each fit where 4 do not).
TEST(Wgmma, TwoDotsInOneLoopEachHaveARingAndShareTheBudget) {
  auto make = dot_test::make_gate_up;
  ts::Buffer x = ts::Buffer::zeros({256, 128}, ts::bf16),
             w = ts::Buffer::zeros({128, 256}, ts::bf16);
  for (auto [c, ring] : {std::pair{staged_config(64, 128, 64, 4, 4), 4},
                         std::pair{staged_config(128, 256, 64, 8, 4), 2}}) {
    auto k = make({});
    stage_test::Staged s = stage_test::staged("layout", false, k, c, x, w, w);
    const passes::Layout& L = s.stages.loops.at(0).layout;
    ASSERT_EQ(L.contractions.size(), 2u);
    for (const passes::Contraction& con : L.contractions) {
      ASSERT_TRUE(con.mma && con.mma->wgmma) << s.text;
      EXPECT_EQ(con.mma->stages, ring) << c.to_json();
    }
    REQUIRE_NVRTC();
    const std::string cu = nvrtc_test::compile(make(ts::Settings{.config = c}), x, w, w);
    EXPECT_EQ(nvrtc_test::count_matches(cu, R"(auto ring[0-9]+_load = )"), 2) << cu;
  }
}

// Shared memory the loop needs beyond its rings (a transposed store's conversion, a
// reduction) after the loop over K reuses the rings' bytes, a barrier before its writes
// (passes::ring_free_at); in a persistent program, whose next tile's copies may fill the
// ring meanwhile, it comes after them, and where it does not fit there it is the dot's
// error, with the num_stages hint.
TEST(Wgmma, TheEpiloguesSharedMemoryReusesTheRingUnlessTheProgramIsPersistent) {
  auto make = [](const ts::Config& c) {
    return ts::kernel(
        "dot_epilogue",
        [](ts::Tensor x, ts::Tensor y) {
          ts::Tensor out = ts::empty({y.size(1), x.size(0)}, ts::f32);
          ts::Tensor rs = ts::empty({x.size(0), y.size(1)}, ts::f32);
          for (auto [tm, tn] : ts::tile(x.size(0), y.size(1))) {
            ts::Value acc = ts::zeros({tm, tn});
            for (auto tk : ts::tile(x.size(1))) acc = ts::dot(x(tm, tk), y(tk, tn), acc);
            out(tn, tm) = acc.t();
            rs(tm, tn) = acc - ts::sum(acc, 1, true);
          }
          return std::make_tuple(out, rs);
        },
        ts::Settings{.config = c});
  };
  auto k = make(staged_config(128, 256, 64, 8, 4));
  ts::Buffer x = ts::Buffer::zeros({256, 128}, ts::bf16),
             y = ts::Buffer::zeros({128, 256}, ts::bf16);
  stage_test::Staged s =
      stage_test::staged("kernel_ir", true, k, staged_config(128, 256, 64, 8, 4), x, y);
  const passes::NestIr& nir = s.stages.loops.at(0).nir;
  int reusing = 0;
  for (const auto& [n, st] : nir.shared) {
    if (st.kind == passes::SharedStage::Kind::ring) {
      EXPECT_EQ(st.offset, 0);
      EXPECT_EQ(st.bytes, 4 * 48 * 1024);
      continue;
    }
    // The conversion (128.5 KiB), in the ring's first bytes (the row sums need none: each
    // row lies in one warp).
    EXPECT_LT(st.offset, 4 * 48 * 1024) << s.text;
    EXPECT_TRUE(st.barrier) << s.text;
    ++reusing;
  }
  EXPECT_EQ(reusing, 1) << s.text;
  EXPECT_LT(nir.shared_bytes, 4 * 48 * 1024 + 1024) << s.text;  // the ring and its mbarriers
  REQUIRE_NVRTC();
  EXPECT_NE(nvrtc_test::compile(k, x, y).find("wgmma.mma_async"), std::string::npos);
  // Persistent: the conversion past the ring, which gives up buffers until both fit (2).
  ts::Config persistent = staged_config(128, 256, 64, 8, 4);
  persistent.pid_type = ts::PidType::persistent_blocked;
  stage_test::Staged p = stage_test::staged("kernel_ir", true, k, persistent, x, y);
  for (const auto& [n, st] : p.stages.loops.at(0).nir.shared) {
    if (st.kind == passes::SharedStage::Kind::ring)
      EXPECT_EQ(st.stages, 2) << p.text;
    else
      EXPECT_GE(st.offset, 2 * 48 * 1024) << p.text;
  }
  EXPECT_NE(p.stages.loops.at(0).kernel.source.find("ring of 2 buffers"), std::string::npos);
  EXPECT_NE(nvrtc_test::compile(make(persistent), x, y).find("wgmma.mma_async"), std::string::npos);
  // Two buffers of 96 KiB (K blocks of 128) and the conversion do not fit: a UserError.
  ts::Config deep = staged_config(128, 256, 128, 8, 4);
  deep.pid_type = ts::PidType::persistent_blocked;
  try {
    stage_test::staged("kernel_ir", true, k, deep, x, y);
    ADD_FAILURE() << "no UserError";
  } catch (const ts::UserError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("dot_epilogue"), std::string::npos) << m;
    EXPECT_NE(m.find("ring of 2 buffers"), std::string::npos) << m;
    EXPECT_NE(m.find("use a smaller num_stages"), std::string::npos) << m;
  }
}

// Under a Config::maxnreg too small for the accumulator and wgmma's operands, mma.sync.
TEST(Wgmma, ASmallMaxnregKeepsTheDotOnMmaSync) {
  ts::Buffer x = ts::Buffer::zeros({256, 128}, ts::bf16),
             y = ts::Buffer::zeros({128, 256}, ts::bf16);
  ts::Config c = staged_config(128, 256, 64, 8, 4);
  c.maxnreg = 128;  // the accumulator alone is 128 registers per thread
  stage_test::Staged s = stage_test::staged("layout", false, make_dot(), c, x, y);
  const passes::Contraction& con = s.stages.loops.at(0).layout.contractions.at(0);
  ASSERT_TRUE(con.mma);
  EXPECT_FALSE(con.mma->wgmma);
}

// A 64-bit expert index reaches the TMA clamped to 32 bits (past every tensor's end), not
// wrapped.
TEST(Wgmma, A64BitScalarIndexIsClampedToATmaCoordinate) {
  REQUIRE_NVRTC();
  moe_test::Routed r = moe_test::route({64, 64}, 128, 128, 128, ts::bf16);
  ts::Buffer be = ts::Buffer::from_vector(r.block_expert.to_vector(), {2}, ts::i64);
  auto k = examples::make_grouped_matmul(ts::Settings{
      .config = ts::Config{.block_sizes = std::vector<int64_t>{128, 64}, .num_warps = 4}});
  const std::string cu = nvrtc_test::compile(k, r.x, r.w, r.n_rows, be);
  EXPECT_NE(cu.find("ts::tma_coord("), std::string::npos) << cu;
}

// In a persistent kernel the ring runs on into the program's next tile: its cursor (program
// id, tile of K) starts before the program loop, its fill computes the next program's tile
// begins from the program id, and the tile after the last one of K is loaded before the
// epilogue. Not where the factors' tiles depend on the program's values (a loop over K that
// ends at the tile's end), nor without a persistent pid_type.
TEST(Wgmma, APersistentProgramsRingRunsOnIntoItsNextTile) {
  REQUIRE_NVRTC();
  ts::Buffer x = ts::Buffer::zeros({512, 256}, ts::bf16),
             y = ts::Buffer::zeros({256, 512}, ts::bf16);
  auto across = [&](const ts::Config& c, auto& k) {
    stage_test::Staged s = stage_test::staged("layout", false, k, c, x, y);
    const passes::Contraction& con = s.stages.loops.at(0).layout.contractions.at(0);
    EXPECT_TRUE(con.mma && con.mma->wgmma) << s.text;
    EXPECT_EQ(s.text.find("across programs") != std::string::npos,
              con.mma && con.mma->across_programs);
    return con.mma && con.mma->across_programs;
  };
  auto k = make_dot();
  for (ts::PidType pid : {ts::PidType::persistent_interleaved, ts::PidType::persistent_blocked}) {
    ts::Config c = staged_config(128, 128, 64, 4, 3);
    c.pid_type = pid;
    EXPECT_TRUE(across(c, k)) << c.to_json();
    const std::string cu = nvrtc_test::compile(make_dot(ts::Settings{.config = c}), x, y);
    EXPECT_NE(cu.find("_pid = " + std::string(pid == ts::PidType::persistent_blocked
                                                  ? "pid_begin, "
                                                  : "(long long)blockIdx.x, ")),
              std::string::npos)
        << cu;
    EXPECT_NE(cu.find(pid == ts::PidType::persistent_blocked ? "_pid += 1;" : "_pid += gridDim.x;"),
              std::string::npos)
        << cu;
    EXPECT_NE(cu.find("_fill();  // the next program's tile, before the epilogue"),
              std::string::npos)
        << cu;
  }
  EXPECT_FALSE(across(staged_config(128, 128, 64, 4, 3), k));  // flat
  ts::Config p = staged_config(128, 128, 64, 4, 3);
  p.pid_type = ts::PidType::persistent_interleaved;
  // Over K up to the tile's end (a lower-triangular product): each tile's own K.
  auto make_triangle = [](ts::Settings settings) {
    return ts::kernel(
        "triangle",
        [](ts::Tensor a, ts::Tensor b) {
          ts::Tensor out = ts::empty({a.size(0), b.size(1)}, ts::f32);
          for (auto [tm, tn] : ts::tile(a.size(0), b.size(1))) {
            ts::Value acc = ts::zeros({tm, tn});
            for (auto tk : ts::tile(tm.end())) acc = ts::dot(a(tm, tk), b(tk, tn), acc);
            out(tm, tn) = acc;
          }
          return out;
        },
        settings);
  };
  ts::Buffer sq = ts::Buffer::zeros({512, 512}, ts::bf16);
  auto triangle = make_triangle({});
  stage_test::Staged s = stage_test::staged("layout", false, triangle, p, sq, sq);
  const passes::Contraction& con = s.stages.loops.at(0).layout.contractions.at(0);
  ASSERT_TRUE(con.mma && con.mma->wgmma) << s.text;
  EXPECT_FALSE(con.mma->across_programs) << s.text;
  const std::string cu = nvrtc_test::compile(make_triangle(ts::Settings{.config = p}), sq, sq);
  EXPECT_EQ(cu.find("_pid += "), std::string::npos) << cu;
  EXPECT_NE(cu.find("wgmma.mma_async"), std::string::npos) << cu;
}
