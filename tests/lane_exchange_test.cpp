// passes/lane_exchange.hpp: a store of a tensor-core accumulator takes 16-byte vectors with
// lanes exchanged for registers (warp shuffles, no shared memory). The exchanged layout is
// checked element by element against the accumulator's; the kernel IR and CUDA of the
// stores that take it (wgmma and mma.sync, bf16 and f32 outputs) and of those that do not.
// GPU values: tests/gpu/dot_gpu_test.cpp (DotGpu.AFusedEpilogueMatchesTheInterpreter and
// every other DotGpu test storing an accumulator).
#include "passes/lane_exchange.hpp"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <tessel/tessel.hpp>
#include <tuple>

#include "examples/kernels/matmul.hpp"
#include "nvrtc_test_util.hpp"
#include "passes/kernel_ir.hpp"
#include "passes/tensor_cores.hpp"
#include "stage_test_util.hpp"
#include "tests/dot_test_util.hpp"

namespace ts = tessel;
namespace passes = tessel::passes;
namespace layout = tessel::layout;

namespace {

ts::Config staged_config(int64_t m, int64_t n, int64_t k, int warps, int stages) {
  return dot_test::staged_blocks(m, n, k, warps, stages);
}

// (slot 0 coordinate, slot 1 coordinate) of every (register, lane, warp) of L.
std::map<std::tuple<int, int, int>, std::pair<int, int>> elements(const passes::Layout& L) {
  const layout::LinearLayout lin = passes::linear_layout(L);
  std::map<std::tuple<int, int, int>, std::pair<int, int>> out;
  for (int r = 0; r < L.regs(); ++r)
    for (int l = 0; l < 32; ++l)
      for (int w = 0; w < L.threads / 32; ++w) {
        const layout::Coords c =
            lin.apply({{layout::kRegister, r}, {layout::kLane, l}, {layout::kWarp, w}});
        out[{r, l, w}] = {c[0].second, c[1].second};
      }
  return out;
}

}  // namespace

// The wgmma accumulator of a 128 x 256 tile on 8 warps: each thread's registers 8 g .. 8 g
// + 7 hold 8 consecutive columns of one row; the same elements, each in the same warp.
TEST(LaneExchange, GivesEachThreadEightConsecutiveColumnsOfTheAccumulator) {
  ts::Buffer x = ts::Buffer::zeros({512, 512}, ts::bf16),
             y = ts::Buffer::zeros({512, 512}, ts::bf16);
  for (const ts::Config& c :
       {staged_config(128, 256, 64, 8, 4), staged_config(128, 128, 32, 4, 2)}) {
    auto k = examples::make_dot_matmul();
    stage_test::Staged s = stage_test::staged("layout", false, k, c, x, y);
    const passes::Layout& L = s.stages.loops.at(0).layout;
    ASSERT_TRUE(passes::tensor_core_placement(L)) << s.text;
    ASSERT_EQ(L.vec, 2) << s.text;  // column pairs
    std::optional<passes::Layout> R = passes::lanes_exchanged(L, 1, 8);
    ASSERT_TRUE(R) << s.text;
    EXPECT_EQ(R->vec, 8);
    const auto before = elements(L), after = elements(*R);
    std::set<std::pair<int, int>> seen;
    std::map<std::pair<int, int>, int> warp_of;
    for (const auto& [in, mn] : before) warp_of[mn] = std::get<2>(in);
    for (const auto& [in, mn] : after) {
      const auto [r, l, w] = in;
      seen.insert(mn);
      EXPECT_EQ(warp_of.at(mn), w);  // within a warp
      const auto first = after.at({r / 8 * 8, l, w});
      EXPECT_EQ(mn.first, first.first);            // one row
      EXPECT_EQ(mn.second, first.second + r % 8);  // consecutive columns
      EXPECT_EQ(first.second % 8, 0);
    }
    EXPECT_EQ(seen.size(), before.size());  // every element once
    const passes::LaneExchange xc = passes::lane_exchange(L, *R);
    ASSERT_EQ(xc.swaps.size(), 2u);  // the quad's two lane bits
    EXPECT_EQ(xc.swaps[0].first, 0);
    EXPECT_EQ(xc.swaps[1].first, 1);
    // 16 bytes of f32: one lane bit.
    ASSERT_TRUE(passes::lanes_exchanged(L, 1, 4));
    EXPECT_EQ(passes::lane_exchange(L, *passes::lanes_exchanged(L, 1, 4)).swaps.size(), 1u);
    // Past the slot's block, or more registers than a thread has: none.
    EXPECT_FALSE(passes::lanes_exchanged(L, 1, 512));
    EXPECT_FALSE(passes::lanes_exchanged(L, 1, 2 * L.regs()));
    // A layout that differs in more than exchanged lanes is a bug, named as one.
    EXPECT_THROW(passes::lane_exchange(L, L.reordered({1, 0})), ts::InternalError);
  }
}

// The store of a bf16 matmul on wgmma and on mma.sync: its own layout with lanes exchanged,
// no shared stage, warp shuffles and 8-wide vectors in the CUDA NVRTC compiles; an f32
// output takes 4-wide ones. A persistent wgmma kernel exchanges too, its accumulator zeroed
// at each tile (left undefined, ptxas keeps it live across the program loop beside the
// exchanged copy and spills: `ptxas -v` on the dumped PTX). None where rows are not
// 16-byte aligned.
TEST(LaneExchange, AnAccumulatorsStoreTakesSixteenByteVectors) {
  REQUIRE_NVRTC();
  ts::Buffer x = ts::Buffer::zeros({512, 512}, ts::bf16),
             y = ts::Buffer::zeros({512, 512}, ts::bf16);
  for (const ts::Config& c :
       {staged_config(128, 256, 64, 8, 4), staged_config(128, 128, 32, 4, 2)}) {
    auto k = examples::make_dot_matmul(ts::Settings{.config = c});
    stage_test::Staged s = stage_test::staged("kernel_ir", true, k, c, x, y);
    const passes::NestIr& nir = s.stages.loops.at(0).nir;
    ASSERT_EQ(nir.exchanged.size(), 1u) << s.text;
    const ts::ir::Node* store = *nir.exchanged.begin();
    EXPECT_EQ(nir.stage(store), nullptr) << s.text;
    EXPECT_NE(s.text.find("own (lanes exchanged for registers)"), std::string::npos) << s.text;
    const std::string cu = nvrtc_test::compile(k, x, y);
    EXPECT_NE(cu.find("2 lane bits exchanged for register bits by warp shuffles, 8-wide"),
              std::string::npos)
        << cu;
    EXPECT_EQ(nvrtc_test::count(cu, "__shfl_xor_sync("), 2) << cu;
    EXPECT_NE(cu.find("#define TS_V 8"), std::string::npos) << cu;
  }
  const std::string f32 = nvrtc_test::compile(
      dot_test::make_dot(ts::Settings{.config = staged_config(128, 128, 64, 4, 3)}), x, y);
  EXPECT_NE(f32.find("1 lane bit exchanged for register bits by warp shuffles, 4-wide"),
            std::string::npos)
      << f32;
  ts::Config p = staged_config(128, 256, 64, 8, 4);
  p.pid_type = ts::PidType::persistent_blocked;
  const std::string persistent =
      nvrtc_test::compile(examples::make_dot_matmul(ts::Settings{.config = p}), x, y);
  EXPECT_EQ(nvrtc_test::count(persistent, "__shfl_xor_sync("), 2) << persistent;
  EXPECT_NE(persistent.find("= 0.0f;  // the previous tile's accumulator ends"), std::string::npos)
      << persistent;
  ts::Buffer odd = ts::Buffer::zeros({512, 150}, ts::bf16);
  const std::string unaligned = nvrtc_test::compile(
      examples::make_dot_matmul(ts::Settings{.config = staged_config(128, 128, 32, 4, 2)}), x, odd);
  EXPECT_EQ(unaligned.find("__shfl_xor_sync("), std::string::npos) << unaligned;
}
