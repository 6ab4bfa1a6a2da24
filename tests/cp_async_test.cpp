// mma.sync with cp.async (passes::Contraction::Mma::copy_stages): a pipelined loop over K
// (num_stages >= 2) copies the factors' tiles straight into a ring of shared-memory slots,
// tiles ahead, instead of through registers. The kernel IR's ring, the CUDA's copies, waits
// and barriers, and NVRTC compiles for sm_90 and sm_80. GPU values: DotGpu.Pipelined* and
// DotGpu.LoweredForSm80AndSm89MatchesTheInterpreter.
#include <gtest/gtest.h>

#include <cstdlib>
#include <tessel/tessel.hpp>

#include "examples/kernels/matmul.hpp"
#include "nvrtc_test_util.hpp"
#include "passes/kernel_ir.hpp"
#include "stage_test_util.hpp"
#include "tests/dot_test_util.hpp"

namespace ts = tessel;
namespace passes = tessel::passes;

namespace {

using dot_test::staged_blocks;

// The kernel IR's shared stage of the nest's only contraction.
const passes::SharedStage& contraction_stage(const stage_test::Staged& s) {
  const tessel::codegen::LoopStages& l = s.stages.loops.at(0);
  return l.nir.shared.at(l.nir.nest().contractions.at(0).match.sum);
}

}  // namespace

TEST(CpAsync, PipelinedMmaSyncFactorsAreCopiedIntoARing) {
  ts::Buffer x = ts::Buffer::zeros({300, 200}, ts::bf16),
             y = ts::Buffer::zeros({200, 150}, ts::bf16);
  for (int stages : {2, 3, 4}) {
    const ts::Config c = staged_blocks(64, 64, 32, 4, stages);
    auto k = dot_test::make_dot(ts::Settings{.config = c});
    stage_test::Staged s = stage_test::staged("kernel_ir", true, k, c, x, y);
    SCOPED_TRACE(c.to_json());
    const passes::Contraction& con = s.stages.loops.at(0).nir.nest().contractions.at(0);
    ASSERT_TRUE(con.mma && !con.mma->wgmma) << s.text;  // K's block 32: mma.sync
    EXPECT_EQ(con.mma->copy_stages, stages);
    const passes::SharedStage& st = contraction_stage(s);
    EXPECT_EQ(st.kind, passes::SharedStage::Kind::ring);
    EXPECT_TRUE(st.cp_async);
    EXPECT_EQ(st.stages, stages);
    EXPECT_EQ(st.bytes, stages * ((con.shared_bytes + 15) / 16 * 16));
    // The dump says what fills the ring, and parses back (a ring said to be TMA's does not).
    const std::string said = fmt::format("shared stage ring of {}, cp.async at", stages);
    EXPECT_NE(s.text.find(said), std::string::npos) << s.text;
    passes::NestIr nir = s.stages.loops.at(0).nir;
    passes::parse_kernel_ir(s.text, s.stages.program(), nir);
    EXPECT_EQ(passes::describe(nir), passes::describe(s.stages.loops.at(0).nir));
    std::string tma = s.text;
    tma.replace(tma.find(said), said.size(),
                fmt::format("shared stage ring of {}, TMA at", stages));
    EXPECT_NE(stage_test::parse_error(tma, s.stages.program(), nir).find("is filled by cp.async"),
              std::string::npos);
    const std::string& cu = s.stages.loops.at(0).kernel.source;
    // Tiles 0 .. S - 2 before the loop, one per iteration: both factors' copies each time.
    EXPECT_EQ(nvrtc_test::count(cu, "ts::cp_async_vec<"), 2 * stages) << cu;
    EXPECT_EQ(nvrtc_test::count(cu, "ts::cp_async_commit();"), stages) << cu;
    EXPECT_NE(cu.find(fmt::format("ts::cp_async_wait<{}>();", stages - 2)), std::string::npos)
        << cu;
    EXPECT_NE(cu.find(fmt::format("% {});  // this tile's slot", stages)), std::string::npos) << cu;
    // The factors are read in place: not staged from registers, no prefetch buffers.
    EXPECT_EQ(cu.find("ts::to_regs"), std::string::npos) << cu;
    EXPECT_EQ(cu.find("loaded one iteration early"), std::string::npos) << cu;
    EXPECT_EQ(nvrtc_test::count(cu, "copied by cp.async"), 2) << cu;
  }
  // num_stages 1: staged from registers at each tile, as before.
  const ts::Config one = staged_blocks(64, 64, 32, 4, 1);
  auto k1 = dot_test::make_dot(ts::Settings{.config = one});
  stage_test::Staged s1 = stage_test::staged("kernel_ir", true, k1, one, x, y);
  EXPECT_EQ(s1.stages.loops.at(0).nir.nest().contractions.at(0).mma->copy_stages, 0);
  EXPECT_EQ(contraction_stage(s1).kind, passes::SharedStage::Kind::contract);
  EXPECT_EQ(s1.stages.loops.at(0).kernel.source.find("cp_async"), std::string::npos);
}

TEST(CpAsync, AWeightTransposedInTheKernelIsCopiedToo) {
  // w(tn, tk).t(): a permute of the load moves no element of the staged tile.
  ts::Buffer x = ts::Buffer::zeros({300, 200}, ts::bf16),
             w = ts::Buffer::zeros({150, 200}, ts::bf16);
  const ts::Config c = staged_blocks(64, 64, 32, 4, 3);
  auto k = dot_test::make_dot_wt(ts::Settings{.config = c});
  stage_test::Staged s = stage_test::staged("kernel_ir", true, k, c, x, w);
  const passes::Contraction& con = s.stages.loops.at(0).nir.nest().contractions.at(0);
  ASSERT_TRUE(con.mma && !con.mma->wgmma) << s.text;
  EXPECT_EQ(con.mma->copy_stages, 3) << s.text;
}

TEST(CpAsync, ARingThatDoesNotFitBesideTheEpilogueGoesBackToRegisters) {
  // A persistent program's transposed store converts through shared memory beside the ring
  // (never free there): 4 slots of 128 x 256 x 32 and the conversion pass the limit, so the
  // factors are staged from registers, as without the ring.
  ts::Buffer x = ts::Buffer::zeros({300, 300}, ts::bf16),
             y = ts::Buffer::zeros({300, 300}, ts::bf16);
  ts::Config c = staged_blocks(128, 256, 32, 8, 4);
  c.pid_type = ts::PidType::persistent_interleaved;
  auto k = dot_test::make_dot_stored_transposed(ts::Settings{.config = c});
  stage_test::Staged s = stage_test::staged("kernel_ir", true, k, c, x, y);
  const tessel::codegen::LoopStages& l = s.stages.loops.at(0);
  EXPECT_EQ(l.nir.nest().contractions.at(0).mma->copy_stages, 0) << s.text;
  EXPECT_EQ(contraction_stage(s).kind, passes::SharedStage::Kind::contract);
  EXPECT_LE(l.nir.shared_bytes, l.nir.nest().shared_limit);
  EXPECT_EQ(l.kernel.source.find("cp_async"), std::string::npos);
  // 2 stages fit beside it: a ring.
  c.num_stages = 2;
  auto k2 = dot_test::make_dot_stored_transposed(ts::Settings{.config = c});
  stage_test::Staged s2 = stage_test::staged("kernel_ir", true, k2, c, x, y);
  EXPECT_EQ(s2.stages.loops.at(0).nir.nest().contractions.at(0).mma->copy_stages, 2) << s2.text;
}

TEST(CpAsync, Tf32FactorsAreStillStagedThroughRegisters) {
  // mma.sync reads TF32 values truncated in the staging (the kernel's tf32 op): no raw copies.
  ts::Buffer x = ts::Buffer::zeros({128, 64}, ts::f32), y = ts::Buffer::zeros({64, 128}, ts::f32);
  const ts::Config c = staged_blocks(64, 64, 16, 4, 3);
  auto k = dot_test::make_dot(ts::Settings{.config = c});
  stage_test::Staged s = stage_test::staged("kernel_ir", true, k, c, x, y);
  const passes::Contraction& con = s.stages.loops.at(0).nir.nest().contractions.at(0);
  ASSERT_TRUE(con.mma) << s.text;
  EXPECT_EQ(con.mma->copy_stages, 0);
  EXPECT_EQ(s.stages.loops.at(0).kernel.source.find("cp_async"), std::string::npos);
}

TEST(CpAsync, RingsCompileForSm90AndSm80) {
  REQUIRE_NVRTC();
  ts::Buffer x = ts::Buffer::zeros({300, 200}, ts::bf16),
             y = ts::Buffer::zeros({200, 150}, ts::bf16);
  ts::Buffer b = ts::Buffer::zeros({150}, ts::bf16);
  for (const char* arch : {"90", "80"}) {
    ::setenv("TESSEL_TARGET_ARCH", arch, 1);
    for (ts::PidType pid : {ts::PidType::flat, ts::PidType::persistent_interleaved}) {
      ts::Config c = staged_blocks(128, 128, 32, 8, 3);
      c.pid_type = pid;
      SCOPED_TRACE(std::string("sm_") + arch + " " + c.to_json());
      const std::string cu =
          nvrtc_test::compile(dot_test::make_dot(ts::Settings{.config = c}), x, y);
      EXPECT_NE(cu.find("ts::cp_async_vec<"), std::string::npos) << cu;
      // Two dots in one loop over K (a gated MLP): a ring each, one commit group per tile.
      const std::string two =
          nvrtc_test::compile(dot_test::make_gate_up(ts::Settings{.config = c}), x, y, y);
      EXPECT_EQ(nvrtc_test::count(two, "ts::cp_async_wait<1>();"), 1) << two;
      EXPECT_EQ(nvrtc_test::count(two, "ts::cp_async_vec<"), 4 * 3) << two;
      // A fused epilogue after the loop.
      EXPECT_NE(
          nvrtc_test::compile(examples::make_matmul_bias_gelu(ts::Settings{.config = c}), x, y, b)
              .find("ts::cp_async_vec<"),
          std::string::npos);
    }
  }
  ::unsetenv("TESSEL_TARGET_ARCH");
}
