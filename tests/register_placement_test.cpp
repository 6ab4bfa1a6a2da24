// Register layouts beyond the blocked one: passes::Layout places each bit of a slot's
// coordinate in one bit of the flat element index (slot_bits), which is a linear layout
// (passes::linear_layout); with_placement gives a nest any such placement, e.g. the
// mma.sync accumulator fragment, and code generation reads the coordinates, vector lanes,
// reduction bits and copies from it (fold::gather_bits). The GPU test runs such code
// against the interpreter (tests/gpu/register_placement_gpu_test.cpp).
#include <gtest/gtest.h>

#include <tessel/tessel.hpp>

#include "codegen/compile_pipeline.hpp"
#include "codegen/fold.hpp"
#include "driver/code_override.hpp"
#include "layout/mma_layouts.hpp"
#include "passes/layout.hpp"
#include "tests/autotune_test_util.hpp"
#include "tests/nvrtc_test_util.hpp"
#include "tests/placement_kernels.hpp"

namespace ts = tessel;
namespace cg = tessel::codegen;
namespace fold = tessel::codegen::fold;
namespace ly = tessel::layout;
namespace passes = tessel::passes;

namespace {

TEST(FoldBits, GatherAndScatterRunsOfBits) {
  EXPECT_EQ(fold::gather_bits("f", {}), "0");
  EXPECT_EQ(fold::gather_bits("f", {6, 7}), "((f >> 6) & 3)");
  EXPECT_EQ(fold::gather_bits("f", {0, 1, 2}), "(f & 7)");
  EXPECT_EQ(fold::gather_bits("f", {2, 6, 7}), "(((f >> 2) & 1) | (((f >> 6) & 3) << 1))");
  EXPECT_EQ(fold::scatter_bits("c", {4, 5}), "(c << 4)");
  EXPECT_EQ(fold::scatter_bits("c", {2, 6, 7}), "(((c & 1) << 2) | (((c >> 1) & 3) << 6))");
  // Several runs bind as one operand: an owner test compares the whole coordinate.
  EXPECT_EQ(fold::cmp(fold::gather_bits("f", {2, 6, 7}), "==", "0"),
            "(((f >> 2) & 1) | (((f >> 6) & 3) << 1)) == 0");
}

// The layout of tile_mix's nest at 64 x 64 on 4 warps.
passes::Layout mix_layout() {
  static ts::Buffer x = ts::Buffer::ones({128, 128}, ts::f32);
  static auto k = placement_test::make_tile_mix();
  const ts::ir::Graph& g = autotune_test::graph_of(k, x, x);
  cg::CompiledStages s = cg::compile_pipeline(g, placement_test::mix_config(),
                                              {.emit = cg::PipelineOptions::Emit::none});
  return s.loops.at(0).layout;
}

// Slot coordinates of register r of thread (lane, warp), read from slot_bits as the
// generated code reads them from TS_FLAT(r).
std::vector<int32_t> coords_of(const passes::Layout& L, int r, int lane, int warp) {
  const int64_t f = ((r / L.vec) * L.threads + warp * 32 + lane) * L.vec + r % L.vec;
  std::vector<int32_t> c(L.slot_bits.size(), 0);
  for (size_t k = 0; k < c.size(); ++k)
    for (size_t j = 0; j < L.slot_bits[k].size(); ++j)
      c[k] |= static_cast<int32_t>((f >> L.slot_bits[k][j]) & 1) << j;
  return c;
}

void expect_placed_as(const passes::Layout& L, const ly::LinearLayout& want) {
  for (int r = 0; r < L.regs(); ++r)
    for (int lane = 0; lane < 32; ++lane)
      for (int warp = 0; warp < L.threads / 32; ++warp) {
        ly::Coords out = want.apply({{ly::kRegister, r}, {ly::kLane, lane}, {ly::kWarp, warp}});
        std::vector<int32_t> c = coords_of(L, r, lane, warp);
        for (size_t k = 0; k < c.size(); ++k)
          ASSERT_EQ(c[k], out[k].second)
              << "register " << r << " lane " << lane << " warp " << warp;
      }
}

TEST(RegisterPlacement, ABlockedLayoutIsTheLinearLayoutOfItsFlatIndex) {
  passes::Layout L = mix_layout();
  ASSERT_EQ(L.slot_block, (std::vector<int64_t>{64, 64}));
  EXPECT_EQ(L.vec, 4);
  EXPECT_EQ(L.groups, 8);
  // Blocked: slot 1 (tn) in bits 0..5 of f, slot 0 (tm) in bits 6..11.
  EXPECT_EQ(L.slot_bits, (std::vector<std::vector<int>>{{6, 7, 8, 9, 10, 11}, {0, 1, 2, 3, 4, 5}}));
  EXPECT_EQ(L.contiguous_shift(0), 6);
  EXPECT_EQ(L.vector_slot(), 1);
  ly::LinearLayout ll = passes::linear_layout(L);
  EXPECT_EQ(ll.in_dim_size(ly::kRegister), 32);
  EXPECT_EQ(ll.in_dim_size(ly::kLane), 32);
  EXPECT_EQ(ll.in_dim_size(ly::kWarp), 4);
  EXPECT_EQ(ll.out_dims()[0].name, "t0");
  EXPECT_EQ(ll.out_dims()[1].name, "t1");
  expect_placed_as(L, ll);
  // Placing a layout as it is changes nothing.
  passes::Layout same = passes::with_placement(L, ll);
  EXPECT_EQ(same.slot_bits, L.slot_bits);
  EXPECT_EQ(same.vec, L.vec);
  EXPECT_EQ(same.groups, L.groups);
}

TEST(RegisterPlacement, TheMmaSyncAccumulatorFragmentAsANestsLayout) {
  passes::Layout L = mix_layout();
  ly::LinearLayout mma = ly::mma_sync_accumulator({64, 64}, {2, 2});
  passes::Layout P = passes::with_placement(L, mma);
  // Register bit 0 holds column bit 0 (pairs of columns), register bit 1 a row bit: vectors
  // of 2, 16 groups.
  EXPECT_EQ(P.vec, 2);
  EXPECT_EQ(P.groups, 16);
  EXPECT_EQ(P.regs(), L.regs());
  EXPECT_EQ(P.vector_slot(), 1);
  EXPECT_EQ(P.contiguous_shift(0), -1);  // rows scattered over lanes, registers and warps
  expect_placed_as(P, mma);
  EXPECT_EQ(passes::linear_layout(P).in_dims()[0].bases.size(), 5u);
}

TEST(RegisterPlacement, RefusesPlacementsThatAreNotAPermutationOfBits) {
  passes::Layout L = mix_layout();
  // The wrong number of registers: 64 x 64 on 8 warps.
  EXPECT_THROW(passes::with_placement(L, ly::mma_sync_accumulator({64, 64}, {4, 2})),
               ts::InternalError);
  // A lane holding the XOR of two column bits.
  ly::LinearLayout ll = passes::linear_layout(L);
  std::vector<ly::LinearLayout::InDim> ins = ll.in_dims();
  ins[1].bases[0] = {0, 3};
  EXPECT_THROW(passes::with_placement(L, ly::LinearLayout(ins, ll.out_dims())), ts::InternalError);
}

// The CUDA of tile_mix with its nest in the mma.sync accumulator layout compiles; its
// coordinates gather the scattered bits of TS_FLAT(r).
TEST(RegisterPlacement, CodeInAnMmaFragmentLayoutCompiles) {
  REQUIRE_NVRTC();
  ts::Buffer x = ts::Buffer::ones({128, 128}, ts::f32);
  auto k = placement_test::make_tile_mix();
  const ts::ir::Graph& g = autotune_test::graph_of(k, x, x);
  cg::CompiledStages s = cg::compile_pipeline(g, placement_test::mix_config(),
                                              {.emit = cg::PipelineOptions::Emit::none});
  cg::LoopStages& l = s.loops.at(0);
  l.layout = passes::with_placement(l.layout, ly::mma_sync_accumulator({64, 64}, {2, 2}));
  cg::CudaKernel cuda = cg::generate_cuda(s.program(), l.plan, l.layout);
  EXPECT_NE(cuda.source.find("#define TS_V 2"), std::string::npos) << cuda.source;
  EXPECT_NE(cuda.source.find("(((TS_FLAT(r) >> 8) & 1) << 3)"), std::string::npos) << cuda.source;
  EXPECT_NO_THROW(ts::rt::compile_kernel("tile_mix", {}, cuda, "", 90, false)) << cuda.source;
}

}  // namespace
