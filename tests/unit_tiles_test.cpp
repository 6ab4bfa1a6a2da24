// The unit_tiles stage (passes/unit_tiles.hpp): tile dims of block size 1 leave the values'
// shapes, so that a batched ts::dot with a batch tile of one is each program's 2-D dot on
// tensor cores. Values on the interpreter (which runs the rewritten program) against plain
// references; the rewritten IR and the tensor-core plan from the stage dumps; CUDA compiled
// with NVRTC. GPU values: tests/gpu/dot_gpu_test.cpp (DotGpu.BatchedDots*).
#include "passes/unit_tiles.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <tessel/tessel.hpp>

#include "nvrtc_test_util.hpp"
#include "passes/default_config.hpp"
#include "passes/layout.hpp"
#include "stage_test_util.hpp"
#include "tests/autotune_test_util.hpp"
#include "tests/dot_test_util.hpp"
#include "tests/run_program_util.hpp"

namespace ts = tessel;
namespace ir = tessel::ir;

namespace {

// The Syms of the first top-level loop's dims.
std::vector<const ir::Sym*> loop_syms(const ir::Graph& g) {
  for (const ir::Node* n : g.host)
    if (n->op == ir::Op::Loop) {
      std::vector<const ir::Sym*> out;
      for (const ir::LoopDim& d : n->dims) out.push_back(d.sym);
      return out;
    }
  return {};
}

// Nodes of g whose shape holds Sym s.
int values_spanning(const ir::Graph& g, const ir::Sym* s) {
  int count = 0;
  ir::walk(g.host, [&](const ir::Node* n) {
    for (const ir::Sym* x : n->shape) count += x == s;
  });
  return count;
}

const ts::Config kBlocks16{.block_sizes = std::vector<int64_t>{16, 16, 16}};

void expect_near(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-4 * (1 + std::abs(want[i]))) << i;
}

}  // namespace

TEST(UnitTiles, ABatchedDotWithABatchTileOfOneIsEachProgramsTwoDimensionalDot) {
  ts::Buffer x = ts::Buffer::randn({3, 100, 72}, ts::bf16, ts::cpu(), 11);
  ts::Buffer y = ts::Buffer::randn({3, 72, 40}, ts::bf16, ts::cpu(), 12);
  ts::Buffer bias = ts::Buffer::randn({40}, ts::f32, ts::cpu(), 13);
  ts::Config c = dot_test::blocks(64, 64, 64, 4);
  c.num_stages = 3;
  auto k = dot_test::make_batched_dot(ts::Settings{.config = c});
  expect_near(k(x, y, bias).to_vector(), dot_test::batched_reference(x, y, bias));

  stage_test::Staged s = stage_test::staged("unit_tiles", false, k, c, x, y, bias);
  const ir::Graph& g = s.stages.program();
  const std::vector<const ir::Sym*> syms = loop_syms(g);
  ASSERT_EQ(syms.size(), 3u);
  EXPECT_EQ(values_spanning(g, syms[0]), 0) << s.text;  // the batch: in no shape
  EXPECT_GT(values_spanning(g, syms[1]), 0);
  EXPECT_NE(s.text.find("tile_begin"), std::string::npos) << s.text;
  // The traced program keeps it: the stage rewrites a copy.
  EXPECT_GT(values_spanning(*s.stages.traced, loop_syms(*s.stages.traced)[0]), 0);

  const tessel::passes::Layout& L = s.stages.loops.at(0).layout;
  ASSERT_EQ(L.contractions.size(), 1u);
  ASSERT_TRUE(L.contractions[0].mma && L.contractions[0].mma->wgmma) << s.text;
  stage_test::Staged s80 = stage_test::staged_for(80, "layout", false, k, c, x, y, bias);
  const tessel::passes::Layout& L80 = s80.stages.loops.at(0).layout;
  ASSERT_TRUE(L80.contractions.at(0).mma) << s80.text;  // mma.sync
  EXPECT_FALSE(L80.contractions[0].mma->wgmma);

  REQUIRE_NVRTC();
  const std::string cu = nvrtc_test::compile(k, x, y, bias);
  EXPECT_NE(cu.find("wgmma"), std::string::npos) << cu;
}

TEST(UnitTiles, ADimReducedOverKeepsItsPlaceInTheShapes) {
  // acc - its sum over the batch tile (of one element) + 1: ones, the batch kept in the shapes.
  auto k = ts::kernel(
      "centered",
      [](ts::Tensor x, ts::Tensor y) {
        ts::Tensor out = ts::empty({x.size(0), x.size(1), y.size(2)}, ts::f32);
        for (auto [tb, tm, tn] :
             ts::tile(x.size(0), x.size(1), y.size(2), ts::TileOptions{.block_size = {1, 0, 0}})) {
          ts::Value acc = ts::zeros({tb, tm, tn});
          for (auto tk : ts::tile(x.size(2))) acc = ts::dot(x(tb, tm, tk), y(tb, tk, tn), acc);
          out(tb, tm, tn) = acc - ts::sum(acc, 0, true) + 1;
        }
        return out;
      },
      ts::Settings{.config = kBlocks16});
  ts::Buffer x = ts::Buffer::randn({2, 20, 16}, ts::bf16, ts::cpu(), 3);
  ts::Buffer y = ts::Buffer::randn({2, 16, 24}, ts::bf16, ts::cpu(), 4);
  expect_near(k(x, y).to_vector(), std::vector<double>(2 * 20 * 24, 1.0));
  stage_test::Staged s = stage_test::staged("unit_tiles", false, k, kBlocks16, x, y);
  const ir::Graph& g = s.stages.program();
  EXPECT_GT(values_spanning(g, loop_syms(g)[0]), 0) << s.text;
}

TEST(UnitTiles, PermutesReductionsAndTileIndicesCountDimsWithoutTheUnitTile) {
  // One program per batch: its whole [M, N] product, stored transposed, summed over N, and
  // the batch's index.
  auto k = ts::kernel("moves", [](ts::Tensor x, ts::Tensor y) {
    ts::Tensor moved = ts::empty({x.size(0), y.size(2), x.size(1)}, ts::f32);
    ts::Tensor rows = ts::empty({x.size(0), x.size(1)}, ts::f32);
    ts::Tensor index = ts::empty({x.size(0)}, ts::f32);
    for (auto tb : ts::tile(x.size(0), ts::TileOptions{.block_size = {1}})) {
      ts::Value acc = ts::dot(x(tb, ts::all, ts::all), y(tb, ts::all, ts::all));
      moved(tb, ts::all, ts::all) = acc.permute({0, 2, 1});
      rows(tb, ts::all) = ts::sum(acc, 2);
      index(tb) = tb.index().to(ts::f32) + 0.5;
    }
    return std::make_tuple(moved, rows, index);
  });
  const int64_t nb = 3, m = 20, kk = 16, n = 24;
  ts::Buffer x = ts::Buffer::randn({nb, m, kk}, ts::bf16, ts::cpu(), 5);
  ts::Buffer y = ts::Buffer::randn({nb, kk, n}, ts::bf16, ts::cpu(), 6);
  auto [moved, rows, index] = k(x, y);
  const std::vector<double> prod =
      dot_test::batched_reference(x, y, ts::Buffer::zeros({n}, ts::f32));
  std::vector<double> want_moved(static_cast<size_t>(nb * n * m)),
      want_rows(static_cast<size_t>(nb * m), 0.0), want_index;
  for (int64_t b = 0; b < nb; ++b) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const double v = prod[static_cast<size_t>((b * m + i) * n + j)];
        want_moved[static_cast<size_t>((b * n + j) * m + i)] = v;
        want_rows[static_cast<size_t>(b * m + i)] += v;
      }
    want_index.push_back(static_cast<double>(b) + 0.5);
  }
  expect_near(moved.to_vector(), want_moved);
  expect_near(rows.to_vector(), want_rows);
  expect_near(index.to_vector(), want_index);

  stage_test::Staged s = stage_test::staged("unit_tiles", false, k, ts::Config{}, x, y);
  const ir::Graph& g = s.stages.program();
  EXPECT_EQ(values_spanning(g, loop_syms(g)[0]), 0) << s.text;
  EXPECT_NE(s.text.find("permute"), std::string::npos) << s.text;
  REQUIRE_NVRTC();
  EXPECT_FALSE(nvrtc_test::compile(k, x, y).empty());
}

TEST(UnitTiles, AConfigsBlockOfOneDropsTheDimToo) {
  // A batch tile of tuned block size: 1 in this config, so on tensor cores.
  ts::Buffer x = ts::Buffer::randn({3, 40, 32}, ts::f16, ts::cpu(), 7);
  ts::Buffer y = ts::Buffer::randn({3, 32, 24}, ts::f16, ts::cpu(), 8);
  const ts::Config one{.block_sizes = std::vector<int64_t>{1, 32, 16, 16}, .num_warps = 4};
  const ts::Config two{.block_sizes = std::vector<int64_t>{2, 32, 16, 16}, .num_warps = 4};
  auto k = dot_test::make_tiled_batched_dot();
  for (const ts::Config* c : {&one, &two}) {
    stage_test::Staged s = stage_test::staged("layout", false, k, *c, x, y);
    const tessel::passes::Layout& L = s.stages.loops.at(0).layout;
    ASSERT_EQ(L.contractions.size(), 1u);
    EXPECT_EQ(L.contractions[0].mma.has_value(), c == &one) << c->to_json() << "\n" << s.text;
  }
  auto tuned = dot_test::make_tiled_batched_dot(ts::Settings{.config = one});
  expect_near(tuned(x, y).to_vector(),
              dot_test::batched_reference(x, y, ts::Buffer::zeros({24}, ts::f32)));
}

// The stage's rewrite changes no value: each epilogue's program as traced and as rewritten,
// run side by side on the interpreter, agree.
TEST(UnitTiles, TracedAndRewrittenProgramsAgreeOnEveryEpilogue) {
  ts::Buffer x = ts::Buffer::randn({3, 20, 24}, ts::bf16, ts::cpu(), 21);
  ts::Buffer y = ts::Buffer::randn({3, 24, 12}, ts::bf16, ts::cpu(), 22);
  ts::Buffer v = ts::Buffer::randn({12}, ts::f32, ts::cpu(), 23);
  ts::Buffer v3 = ts::Buffer::randn({3}, ts::f32, ts::cpu(), 24);
  for (int epilogue = 0; epilogue <= 9; ++epilogue)
    for (bool tuned : {false, true}) {
      const std::string what = "epilogue " + std::to_string(epilogue) + (tuned ? " tuned" : "");
      auto k = dot_test::make_batched_epilogue(epilogue, tuned);
      const ts::Buffer& third = epilogue == 3 ? v3 : v;
      const ir::Graph& g = autotune_test::graph_of(k, x, y, third);
      const ts::Config c{.block_sizes = tuned ? std::vector<int64_t>{1, 16, 8, 8}
                                              : std::vector<int64_t>{16, 8, 8}};
      const ts::Config complete = ts::passes::complete_config(g, c, g.kernel_name);
      std::unique_ptr<ir::Graph> squeezed = ts::passes::squeeze_unit_tiles(g, complete);
      if (epilogue == 7) {  // a sum over the batch tile: the batch stays, nothing changes
        EXPECT_EQ(squeezed, nullptr) << what;
        continue;
      }
      ASSERT_NE(squeezed, nullptr) << what;
      const std::vector<double> want = run_program::run(g, c, {x, y, third}).at(0).to_vector();
      const std::vector<double> got =
          run_program::run(*squeezed, c, {x, y, third}).at(0).to_vector();
      ASSERT_EQ(got.size(), want.size()) << what;
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(got[i], want[i], 1e-6 * (1 + std::abs(want[i]))) << what << " at " << i;
      EXPECT_EQ(values_spanning(*squeezed, loop_syms(*squeezed)[0]), 0) << what;
    }
}

// Each epilogue's CUDA, its dot on wgmma, compiles.
TEST(UnitTiles, EveryEpiloguesCudaCompiles) {
  REQUIRE_NVRTC();
  ts::Buffer x = ts::Buffer::zeros({2, 128, 64}, ts::bf16),
             y = ts::Buffer::zeros({2, 64, 64}, ts::bf16);
  ts::Buffer v = ts::Buffer::zeros({64}, ts::f32), v3 = ts::Buffer::zeros({2}, ts::f32);
  ts::Config c = dot_test::blocks(64, 64, 64, 4);
  c.num_stages = 2;
  for (int epilogue = 0; epilogue <= 9; ++epilogue) {
    auto k = dot_test::make_batched_epilogue(epilogue, false, ts::Settings{.config = c});
    const std::string cu = nvrtc_test::compile(k, x, y, epilogue == 3 ? v3 : v);
    EXPECT_EQ(cu.find("wgmma") != std::string::npos, epilogue != 7) << epilogue << "\n" << cu;
  }
}

// A batch loop's fixed block sizes: one per dimension (or one for all), else a hint.
TEST(UnitTiles, TooFewBlockSizesForABatchLoopIsAnErrorWithAHint) {
  auto k = ts::kernel("short_blocks", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto [tb, tm, tn] :
         ts::tile(x.size(0), x.size(1), x.size(2), ts::TileOptions{.block_size = {1, 0}}))
      out(tb, tm, tn) = x(tb, tm, tn);
    return out;
  });
  try {
    k(ts::Buffer::zeros({2, 4, 4}, ts::f32));
    ADD_FAILURE() << "accepted";
  } catch (const ts::UserError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("2 block sizes given for a loop of 3 dimensions"), std::string::npos) << m;
    EXPECT_NE(m.find("give one block size per dimension (e.g. {.block_size = {1, 0, 0}}"),
              std::string::npos)
        << m;
  }
}
