// Interpreter: loop forms (tile and grid over 1-3 dims, nesting, [begin, end) ranges,
// device-resident bounds) and tile attributes, checked against plain C++ loops.
#include <gtest/gtest.h>

#include "interp_test_util.hpp"

namespace ts = tessel;
using interp_test::blocks;
using interp_test::buffer;
using interp_test::ramp;

namespace {

int g_traces = 0;  // counts traces of the kernel of DeviceBoundChangeReusesSpecialization

}  // namespace

TEST(InterpLoops, Tile1dVisitsEveryElement) {
  auto k = ts::kernel("tile1d", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) * 2;
    return out;
  });
  ts::Buffer out = k(buffer(ramp(100), {100}));
  EXPECT_EQ(out.to_vector(), ramp(100, 0, 2));
}

TEST(InterpLoops, Tile1dRaggedEdgeWritesNothingPastTheEnd) {
  // 37 elements in blocks of 16: the last tile has 5 valid elements.
  auto k = ts::kernel(
      "ragged",
      [](ts::Tensor x, ts::Tensor out) {
        for (auto t : ts::tile(x.size(0))) out(t) = x(t) + 1;
      },
      blocks({16}));
  ts::Buffer out = ts::Buffer::full({48}, -1, ts::f32);
  k(buffer(ramp(37), {37}), out.narrow(0, 0, 37));
  std::vector<double> want = ramp(37, 1);
  want.resize(48, -1);
  EXPECT_EQ(out.to_vector(), want);
}

TEST(InterpLoops, Tile2dWithRaggedEdgesInBothDims) {
  auto k = ts::kernel(
      "tile2d",
      [](ts::Tensor x, ts::Tensor y) {
        ts::Tensor out = ts::empty_like(x);
        for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) out(tm, tn) = x(tm, tn) - y(tm, tn);
        return out;
      },
      blocks({4, 8}));
  ts::Buffer x = buffer(ramp(13 * 29, 0, 3), {13, 29}), y = buffer(ramp(13 * 29), {13, 29});
  EXPECT_EQ(k(x, y).to_vector(), ramp(13 * 29, 0, 2));
}

TEST(InterpLoops, Tile3dCoversAllCombinations) {
  auto k = ts::kernel(
      "tile3d",
      [](ts::Tensor x) {
        ts::Tensor out = ts::empty_like(x);
        for (auto [a, b, c] : ts::tile(x.size(0), x.size(1), x.size(2)))
          out(a, b, c) = x(a, b, c) + 0.5;
        return out;
      },
      blocks({2, 4, 4}));
  EXPECT_EQ(k(buffer(ramp(5 * 6 * 7), {5, 6, 7})).to_vector(), ramp(5 * 6 * 7, 0.5));
}

TEST(InterpLoops, Grid1dGivesOneIndexPerProgram) {
  auto k = ts::kernel("grid1d", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto i : ts::grid(x.size(0))) out(i) = x(i) * 3;
    return out;
  });
  EXPECT_EQ(k(buffer(ramp(9), {9})).to_vector(), ramp(9, 0, 3));
}

TEST(InterpLoops, Grid2dAndGrid3dIndexEveryElement) {
  auto k2 = ts::kernel("grid2d", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto [i, j] : ts::grid(x.size(0), x.size(1))) out(i, j) = x(i, j) - 1;
    return out;
  });
  auto k3 = ts::kernel("grid3d", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto [i, j, l] : ts::grid(x.size(0), x.size(1), x.size(2))) out(i, j, l) = x(i, j, l) - 1;
    return out;
  });
  EXPECT_EQ(k2(buffer(ramp(12), {3, 4})).to_vector(), ramp(12, -1));
  EXPECT_EQ(k3(buffer(ramp(24), {2, 3, 4})).to_vector(), ramp(24, -1));
}

TEST(InterpLoops, GridIndexIsAValue) {
  auto k = ts::kernel("grid_value", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto [i, j] : ts::grid(x.size(0), x.size(1))) out(i, j) = i * 10 + j;
    return out;
  });
  std::vector<double> want;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) want.push_back(i * 10 + j);
  EXPECT_EQ(k(ts::Buffer::zeros({3, 4}, ts::i64)).to_vector(), want);
}

TEST(InterpLoops, NestedLoopsToDepthThree) {
  auto k = ts::kernel(
      "nested3",
      [](ts::Tensor x) {
        ts::Tensor out = ts::empty_like(x);
        for (auto b : ts::grid(x.size(0)))
          for (auto tm : ts::tile(x.size(1)))
            for (auto tn : ts::tile(x.size(2))) out(b, tm, tn) = x(b, tm, tn) + b;
        return out;
      },
      blocks({4, 8}));
  const int B = 3, M = 6, N = 10;
  std::vector<double> x = ramp(B * M * N), want(x.size());
  for (int b = 0; b < B; ++b)
    for (int k2 = 0; k2 < M * N; ++k2) want[b * M * N + k2] = x[b * M * N + k2] + b;
  EXPECT_EQ(k(buffer(x, {B, M, N})).to_vector(), want);
}

TEST(InterpLoops, BeginEndRangeVisitsOnlyTheRange) {
  auto k = ts::kernel(
      "range",
      [](ts::Tensor x) {
        ts::Tensor out = ts::zeros_like(x);
        for (auto t : ts::tile({3, 10})) out(t) = x(t);
        return out;
      },
      blocks({4}));
  std::vector<double> want(16, 0);
  for (int i = 3; i < 10; ++i) want[i] = i + 1;
  EXPECT_EQ(k(buffer(ramp(16, 1), {16})).to_vector(), want);
}

TEST(InterpLoops, GridRangeStartsAtBegin) {
  auto k = ts::kernel("grid_range", [](ts::Tensor x) {
    ts::Tensor out = ts::zeros_like(x);
    for (auto i : ts::grid({2, 5})) out(i) = x(i) + 100;
    return out;
  });
  EXPECT_EQ(k(buffer(ramp(6), {6})).to_vector(), (std::vector<double>{0, 0, 102, 103, 104, 0}));
}

TEST(InterpLoops, InnerRangeFromOuterTileBeginAndEnd) {
  // The inner loop walks the outer tile's own [begin, end) in blocks of 2.
  auto k = ts::kernel("tile_range", [](ts::Tensor x) {
    ts::Tensor out = ts::zeros_like(x);
    for (auto t : ts::tile(x.size(0), ts::TileOptions{.block_size = 8}))
      for (auto s : ts::tile({t.begin(), t.end()}, ts::TileOptions{.block_size = 2}))
        out(s) = x(s) + 1;
    return out;
  });
  EXPECT_EQ(k(buffer(ramp(21), {21})).to_vector(), ramp(21, 1));
}

TEST(InterpLoops, EmptyRangeRunsZeroTimes) {
  auto k = ts::kernel("empty_range", [](ts::Tensor x) {
    ts::Tensor out = ts::zeros_like(x);
    for (auto t : ts::tile({5, 2})) out(t) = x(t) + 1;
    for (auto i : ts::grid({3, 3})) out(i) = 7;
    return out;
  });
  EXPECT_EQ(k(buffer(ramp(8), {8})).to_vector(), std::vector<double>(8, 0));
}

TEST(InterpLoops, DeviceBoundTensorLimitsTheLoop) {
  auto k = ts::kernel("dev_bound", [](ts::Tensor x, ts::Tensor n) {
    ts::Tensor out = ts::zeros_like(x);
    for (auto t : ts::tile(n)) out(t) = x(t) + 1;
    return out;
  });
  std::vector<double> want(20, 0);
  for (int i = 0; i < 5; ++i) want[i] = i + 1;
  EXPECT_EQ(k(buffer(ramp(20), {20}), ts::Buffer::scalar(5, ts::i32)).to_vector(), want);
}

TEST(InterpLoops, ItemAndLoadGiveDeviceBounds) {
  auto by_item = ts::kernel("by_item", [](ts::Tensor x, ts::Tensor n) {
    ts::Tensor out = ts::zeros_like(x);
    for (auto t : ts::tile(n.item())) out(t) = x(t) + 1;
    return out;
  });
  auto by_load = ts::kernel("by_load", [](ts::Tensor x, ts::Tensor n) {
    ts::Tensor out = ts::zeros_like(x);
    ts::Value d = ts::load(n);
    for (auto i : ts::grid(x.size(0)))
      for (auto t : ts::tile(d)) out(i, t) = x(i, t) + 1;
    return out;
  });
  std::vector<double> want1(20, 0), want2(12, 0);
  for (int i = 0; i < 7; ++i) want1[i] = i + 1;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 2; ++c) want2[r * 4 + c] = r * 4 + c + 1;
  EXPECT_EQ(by_item(buffer(ramp(20), {20}), ts::Buffer::scalar(7, ts::i64)).to_vector(), want1);
  EXPECT_EQ(by_load(buffer(ramp(12), {3, 4}), ts::Buffer::scalar(2, ts::i32)).to_vector(), want2);
}

TEST(InterpLoops, DeviceBoundChangeReusesSpecialization) {
  auto k = ts::kernel("dev_bound_change", [](ts::Tensor x, ts::Tensor n) {
    ++g_traces;
    ts::Tensor out = ts::zeros_like(x);
    for (auto t : ts::tile(n)) out(t) = x(t) + 1;
    return out;
  });
  ts::Buffer x = buffer(ramp(10), {10});
  ts::Buffer n = ts::Buffer::scalar(3, ts::i32);
  g_traces = 0;
  std::vector<double> first = k(x, n).to_vector();
  n.fill(8);  // same Buffer, new value: no retrace
  std::vector<double> second = k(x, n).to_vector();
  EXPECT_EQ(g_traces, 1);
  EXPECT_EQ(first, (std::vector<double>{1, 2, 3, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(second, (std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 0, 0}));
}

TEST(InterpLoops, NegativeDeviceBoundGivesEmptyLoop) {
  auto k = ts::kernel("neg_bound", [](ts::Tensor x, ts::Tensor n) {
    ts::Tensor out = ts::zeros_like(x);
    for (auto t : ts::tile(n)) out(t) = x(t) + 1;
    return out;
  });
  EXPECT_EQ(k(buffer(ramp(6), {6}), ts::Buffer::scalar(-4, ts::i32)).to_vector(),
            std::vector<double>(6, 0));
}

TEST(InterpLoops, DeviceBoundBeyondTheExtentIsClamped) {
  // A bound of 1000 over 10 elements: accesses past the tensor are masked.
  auto k = ts::kernel("big_bound", [](ts::Tensor x, ts::Tensor n) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(n)) out(t) = x(t) + 1;
    return out;
  });
  EXPECT_EQ(k(buffer(ramp(10), {10}), ts::Buffer::scalar(1000, ts::i32)).to_vector(), ramp(10, 1));
}

TEST(InterpLoops, TileAttributesDescribeEachTile) {
  // 37 elements in blocks of 16: tiles [0, 16), [16, 32), [32, 37).
  auto k = ts::kernel(
      "attrs",
      [](ts::Tensor x) {
        ts::Tensor info = ts::empty({3, 4}, ts::i64);
        ts::Tensor index = x.new_zeros({x.size(0)}, ts::i64);
        for (auto t : ts::tile(x.size(0))) {
          info(t.id(), 0) = t.begin();
          info(t.id(), 1) = t.end();
          info(t.id(), 2) = t.block_size();
          info(t.id(), 3) = t.id();
          index(t) = t.index() * 2;
        }
        return std::make_tuple(info, index);
      },
      blocks({16}));
  auto [info, index] = k(ts::Buffer::zeros({37}, ts::f32));
  EXPECT_EQ(info.to_vector(), (std::vector<double>{0, 16, 16, 0, 16, 32, 16, 1, 32, 37, 16, 2}));
  EXPECT_EQ(index.to_vector(), ramp(37, 0, 2));
}

TEST(InterpLoops, TileIdCountsFromTheRangeBegin) {
  auto k = ts::kernel(
      "range_id",
      [](ts::Tensor x) {
        ts::Tensor out = ts::zeros_like(x);
        for (auto t : ts::tile({5, 21})) out(t) = t.id() * 100 + t.index();
        return out;
      },
      blocks({8}));
  std::vector<double> want(24, 0);
  for (int i = 5; i < 21; ++i) want[i] = (i - 5) / 8 * 100 + i;
  EXPECT_EQ(k(ts::Buffer::zeros({24}, ts::i32)).to_vector(), want);
}

TEST(InterpLoops, FixedBlockSizeOptionOverridesTheConfig) {
  auto k = ts::kernel("fixed_block", [](ts::Tensor x) {
    ts::Tensor out = ts::zeros_like(x);
    for (auto t : ts::tile(x.size(0), ts::TileOptions{.block_size = 8})) out(t) = t.block_size();
    return out;
  });
  EXPECT_EQ(k(ts::Buffer::zeros({5}, ts::i32)).to_vector(), std::vector<double>(5, 8));
}

TEST(InterpLoops, BlockSizeDoesNotChangeTheResult) {
  auto make = [](std::vector<int64_t> b) {
    return ts::kernel(
        "any_block",
        [](ts::Tensor x) {
          ts::Tensor out = ts::empty_like(x);
          for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) out(tm, tn) = x(tm, tn) * x(tm, tn);
          return out;
        },
        blocks(std::move(b)));
  };
  ts::Buffer x = buffer(ramp(23 * 17, -50), {23, 17});
  std::vector<double> want = x.to_vector();
  for (double& v : want) v = v * v;
  for (auto b : std::vector<std::vector<int64_t>>{{1, 1}, {2, 32}, {32, 4}, {64, 64}})
    EXPECT_EQ(make(b)(x).to_vector(), want) << "blocks " << b[0] << "x" << b[1];
}

TEST(InterpLoops, SecondTopLevelLoopSeesTheFirstLoopsStores) {
  auto k = ts::kernel("two_loops", [](ts::Tensor x) {
    ts::Tensor tmp = ts::empty_like(x);
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) tmp(t) = x(t) + 1;
    for (auto t : ts::tile(x.size(0))) out(t) = tmp(t) * 2;
    return out;
  });
  EXPECT_EQ(k(buffer(ramp(50), {50})).to_vector(), ramp(50, 2, 2));
}

TEST(InterpLoops, Tile2dOverA256x1024Tensor) {
  auto k = ts::kernel("large", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) out(tm, tn) = x(tm, tn) + 1;
    return out;
  });
  ts::Buffer x = ts::Buffer::randn({256, 1024}, ts::f32);
  ts::Buffer out = k(x);
  std::vector<double> xv = x.to_vector(), ov = out.to_vector();
  for (size_t i = 0; i < xv.size(); ++i) ASSERT_EQ(ov[i], interp_test::f32(xv[i] + 1)) << i;
}

// A bound far past the tensors (2^33: 2^30 tiles of 8): the tiles past every store's tensor change
// nothing and are skipped, so the call returns at once with the clamped result. The tiles that run
// keep their extents: a reduction over a tile of x rows (x longer than out) still sees
// all of the tile's rows.
TEST(InterpLoops, TilesPastEveryStoreAreSkipped) {
  auto k = ts::kernel(
      "first_n",
      [](ts::Tensor x, ts::Value n) {
        ts::Tensor out = x.new_zeros({3});
        for (auto t : ts::tile(n)) out(t) = x(t) + ts::sum(x(t), 0);
        return out;
      },
      ts::Settings{.config = ts::Config{.block_sizes = std::vector<int64_t>{8}}});
  ts::Buffer x = buffer(ramp(10), {10});  // 0..9
  // Tile 0 covers rows 0..7 of x: its sum is 28; out keeps rows 0..2.
  EXPECT_EQ(k(x, int64_t{1} << 33).to_vector(),
            (std::vector<double>{28, 29, 30}));  // 2^30 programs
  EXPECT_EQ(k(x, 10).to_vector(), (std::vector<double>{28, 29, 30}));
}

// The same for a grid index: a device-resident bound of 2^40 over a 4-element tensor
// runs 4 programs, not 2^40 (which would take hours).
TEST(InterpLoops, GridIndicesPastEveryStoreAreSkipped) {
  auto k = ts::kernel("fill_first_n", [](ts::Tensor x, ts::Tensor n) {
    for (auto i : ts::grid(n)) x(i) = x(i) + 7.0;
  });
  ts::Buffer x = buffer({1, 2, 3, 4}, {4});
  k(x, ts::Buffer::scalar(static_cast<double>(int64_t{1} << 40), ts::i64));
  EXPECT_EQ(x.to_vector(), (std::vector<double>{8, 9, 10, 11}));
  k(x, ts::Buffer::scalar(2.0, ts::i64));
  EXPECT_EQ(x.to_vector(), (std::vector<double>{15, 16, 10, 11}));
}

// Where skipping would show, every tile runs: a loop-carried value counts them.
TEST(InterpLoops, CarriedValuesSeeEveryTile) {
  auto k = ts::kernel("count_tiles", [](ts::Tensor x, ts::Value n) {
    ts::Tensor out = x.new_zeros({1}, ts::i64);
    for (auto g : ts::grid(1)) {
      ts::Value tiles = ts::zeros({}, ts::i64);
      for (auto t : ts::tile(n, {.block_size = 4}))
        tiles = tiles + 1 + ts::sum(x(t), 0).to(ts::i64) * 0;
      out(g) = tiles;
    }
    return out;
  });
  EXPECT_EQ(k(buffer(ramp(4), {4}), 400).to_vector(), std::vector<double>{100});
}
