// Interpreter: reductions (sum, mean, max, min, prod, argmax, argmin, any, all_of) over
// ts::all extents (padded to a power of two) and over tile dimensions (ragged at the
// edge): only valid elements take part.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "examples/kernels/basic.hpp"
#include "interp_test_util.hpp"

namespace ts = tessel;
using interp_test::blocks;
using interp_test::buffer;
using interp_test::f32;
using interp_test::ramp;

namespace {

// 3 x 5 rows of negative values: padding (read as 0) would win max and argmax.
const std::vector<double> kNeg = {-5, -3, -9, -3, -7, -1, -2, -8, -6, -4, -2, -2, -2, -9, -2};

}  // namespace

TEST(InterpReduce, SumOverAnAllDimension) {
  auto k = ts::kernel("row_sum", [](ts::Tensor x) {
    ts::Tensor out = ts::empty({x.size(0)}, ts::f32);
    for (auto t : ts::tile(x.size(0))) out(t) = ts::sum(x(t, ts::all), 1);
    return out;
  });
  EXPECT_EQ(k(buffer(kNeg, {3, 5})).to_vector(), (std::vector<double>{-27, -21, -17}));
}

TEST(InterpReduce, MaxMinProdOverAPaddedAllDimension) {
  auto k = ts::kernel("row_stats", [](ts::Tensor x) {
    ts::Tensor out = ts::empty({3, x.size(0)}, ts::f32);
    for (auto i : ts::grid(x.size(0))) {
      out(0, i) = ts::max(x(i, ts::all), 0);
      out(1, i) = ts::min(ts::abs(x(i, ts::all)), 0);
      out(2, i) = ts::prod(x(i, ts::all), 0);
    }
    return out;
  });
  std::vector<double> want = {-3, -1, -2, 3, 1, 2, -2835, -384, -144};
  EXPECT_EQ(k(buffer(kNeg, {3, 5})).to_vector(), want);
}

TEST(InterpReduce, ArgmaxArgminGiveTheFirstExtremeIndex) {
  auto k = ts::kernel("row_arg", [](ts::Tensor x) {
    ts::Tensor out = ts::empty({2, x.size(0)}, ts::i64);
    for (auto t : ts::tile(x.size(0))) {
      out(0, t) = ts::argmax(x(t, ts::all), 1);
      out(1, t) = ts::argmin(-x(t, ts::all), 1);
    }
    return out;
  });
  EXPECT_EQ(k(buffer(kNeg, {3, 5})).to_vector(), (std::vector<double>{1, 0, 0, 1, 0, 0}));
}

TEST(InterpReduce, SumOverARaggedTileDimension) {
  // Blocks of 4 over 6 elements; x + 10 is 10 in the masked lanes, which must not count.
  auto k = ts::kernel(
      "tile_sum",
      [](ts::Tensor x) {
        ts::Tensor out = x.new_zeros({2}, ts::f32);
        for (auto t : ts::tile(x.size(0))) out(t.id()) = ts::sum(x(t) + 10, 0);
        return out;
      },
      blocks({4}));
  EXPECT_EQ(k(buffer(ramp(6, 1), {6})).to_vector(), (std::vector<double>{50, 31}));
}

TEST(InterpReduce, MaxAndArgmaxOverARaggedTileDimension) {
  auto k = ts::kernel(
      "tile_max",
      [](ts::Tensor x) {
        ts::Tensor out = x.new_zeros({2, 2}, ts::f32);
        for (auto t : ts::tile(x.size(0))) {
          out(0, t.id()) = ts::max(x(t), 0);
          out(1, t.id()) = ts::argmax(x(t), 0).to(ts::f32);
        }
        return out;
      },
      blocks({4}));
  EXPECT_EQ(k(buffer({-4, -1, -3, -2, -7, -5}, {6})).to_vector(),
            (std::vector<double>{-1, -5, 1, 1}));
}

TEST(InterpReduce, MeanOverAllAndOverARaggedTile) {
  auto k = ts::kernel(
      "means",
      [](ts::Tensor x) {
        ts::Tensor rows = ts::empty({x.size(0)}, ts::f32);
        ts::Tensor tiles = x.new_zeros({2, x.size(1)}, ts::f32);
        for (auto tm : ts::tile(x.size(0))) rows(tm) = ts::mean(x(tm, ts::all), 1);
        for (auto tm : ts::tile(x.size(0))) tiles(tm.id(), ts::all) = ts::mean(x(tm, ts::all), 0);
        return std::make_tuple(rows, tiles);
      },
      blocks({4, 4}));
  const int M = 6, N = 3;
  std::vector<double> x = ramp(M * N, 1);
  auto [rows, tiles] = k(buffer(x, {M, N}));
  std::vector<double> want_rows, want_tiles(2 * N, 0);
  for (int i = 0; i < M; ++i)
    want_rows.push_back(f32((x[i * N] + x[i * N + 1] + x[i * N + 2]) / 3));
  for (int j = 0; j < N; ++j) {
    want_tiles[j] = f32((x[j] + x[N + j] + x[2 * N + j] + x[3 * N + j]) / 4);
    want_tiles[N + j] = f32((x[4 * N + j] + x[5 * N + j]) / 2);  // 2 valid rows
  }
  EXPECT_EQ(rows.to_vector(), want_rows);
  EXPECT_EQ(tiles.to_vector(), want_tiles);
}

TEST(InterpReduce, AnyAndAllOfIgnoreMaskedLanes) {
  auto k = ts::kernel(
      "any_all",
      [](ts::Tensor x) {
        ts::Tensor out = x.new_zeros({2, 2}, ts::boolean);
        for (auto t : ts::tile(x.size(0))) {
          out(0, t.id()) = ts::any(x(t) == 0, 0);     // masked lanes read 0
          out(1, t.id()) = ts::all_of(x(t) != 0, 0);  // and would make this false
        }
        return out;
      },
      blocks({4}));
  EXPECT_EQ(k(buffer({1, 2, 0, 3, 5, 6}, {6})).to_vector(), (std::vector<double>{1, 0, 0, 1}));
}

TEST(InterpReduce, KeepdimKeepsASizeOneDimForBroadcasting) {
  // A row softmax: x - max(x, keepdim) broadcasts the [tile, 1] maximum over the row.
  auto k = examples::make_softmax_basic();
  const int M = 3, N = 5;
  std::vector<double> x = ramp(M * N, -3, 0.5), want(M * N);
  for (int i = 0; i < M; ++i) {
    double m = *std::max_element(x.begin() + i * N, x.begin() + (i + 1) * N), s = 0;
    for (int j = 0; j < N; ++j) s += want[i * N + j] = f32(std::exp(f32(x[i * N + j] - m)));
    for (int j = 0; j < N; ++j) want[i * N + j] = f32(want[i * N + j] / f32(s));
  }
  EXPECT_EQ(k(buffer(x, {M, N})).to_vector(), want);
}

TEST(InterpReduce, NegativeDimCountsFromTheEnd) {
  auto k = ts::kernel("neg_dim", [](ts::Tensor x) {
    ts::Tensor out = ts::empty({x.size(0)}, ts::f32);
    for (auto t : ts::tile(x.size(0))) out(t) = ts::sum(x(t, ts::all), -1);
    return out;
  });
  EXPECT_EQ(k(buffer(kNeg, {3, 5})).to_vector(), (std::vector<double>{-27, -21, -17}));
}

TEST(InterpReduce, ReductionOverTheFirstOfTwoDims) {
  auto k = ts::kernel(
      "col_sum",
      [](ts::Tensor x) {
        ts::Tensor out = ts::empty({x.size(1)}, ts::f32);
        for (auto tn : ts::tile(x.size(1))) out(tn) = ts::sum(x(ts::all, tn), 0);
        return out;
      },
      blocks({2}));
  EXPECT_EQ(k(buffer(kNeg, {3, 5})).to_vector(), (std::vector<double>{-8, -7, -19, -18, -13}));
}

TEST(InterpReduce, IntegerSumAccumulatesInI64) {
  auto k = ts::kernel("int_sum", [](ts::Tensor x) {
    ts::Tensor out = ts::empty({x.size(0)}, ts::i64);
    for (auto t : ts::tile(x.size(0))) out(t) = ts::sum(x(t, ts::all), 1);
    return out;
  });
  double big = 1 << 30;
  EXPECT_EQ(k(buffer({big, big, big, big, -1, -2, -3, -4}, {2, 4}, ts::i32)).to_vector(),
            (std::vector<double>{4 * big, -10}));
}

TEST(InterpReduce, F16SumRoundsOnlyAtTheEnd) {
  // 2048 + 16 * 1: adding 1 to 2048 in f16 rounds back to 2048 each time; the sum,
  // accumulated at higher precision, is 2064 (exact in f16).
  auto k = ts::kernel("f16_sum", [](ts::Tensor x) {
    ts::Tensor out = ts::empty({x.size(0)}, ts::f16);
    for (auto t : ts::tile(x.size(0))) out(t) = ts::sum(x(t, ts::all), 1);
    return out;
  });
  std::vector<double> x(17, 1);
  x[0] = 2048;
  EXPECT_EQ(k(buffer(x, {1, 17}, ts::f16)).to_vector(), (std::vector<double>{2064}));
}

TEST(InterpReduce, ReduceALoopCarriedAccumulator) {
  // Row sums of a [M, K] matrix: a tile loop over K accumulates per-row partial sums.
  auto k = ts::kernel(
      "acc_rows",
      [](ts::Tensor x) {
        ts::Tensor out = ts::empty({x.size(0)}, ts::f32);
        for (auto tm : ts::tile(x.size(0))) {
          ts::Value acc = ts::zeros({tm}, ts::f32);
          for (auto tk : ts::tile(x.size(1))) acc = acc + ts::sum(x(tm, tk), 1);
          out(tm) = acc;
        }
        return out;
      },
      blocks({2, 4}));
  const int M = 3, K = 10;
  std::vector<double> x = ramp(M * K, 0, 0.5), want(M, 0);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < K; ++j) want[i] += x[i * K + j];
  EXPECT_EQ(k(buffer(x, {M, K})).to_vector(), want);
}

TEST(InterpReduce, KeepdimOverARaggedTileDimension) {
  // Per-tile column sums over row tiles of 4 (the last tile has 2 rows), broadcast back
  // over the tile's rows.
  auto k = ts::kernel(
      "tile_keepdim",
      [](ts::Tensor x) {
        ts::Tensor out = ts::empty_like(x);
        for (auto [tm, tn] : ts::tile(x.size(0), x.size(1)))
          out(tm, tn) = x(tm, tn) - ts::sum(x(tm, tn), 0, true);
        return out;
      },
      blocks({4, 8}));
  const int M = 6, N = 3;
  std::vector<double> x = ramp(M * N, 1), want(M * N);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      int first = i < 4 ? 0 : 4, last = i < 4 ? 4 : M;
      double s = 0;
      for (int r = first; r < last; ++r) s += x[r * N + j];
      want[i * N + j] = x[i * N + j] - s;
    }
  EXPECT_EQ(k(buffer(x, {M, N})).to_vector(), want);
}

TEST(InterpReduce, ArangeSumCountsOnlyItsExtent) {
  // arange(5) is padded to 8 lanes; the padding must not be summed.
  auto k = ts::kernel("arange_sum", [](ts::Tensor x) {
    ts::Tensor out = ts::empty({1}, ts::i64);
    for (auto i : ts::grid(1)) out(i) = ts::sum(ts::arange(x.size(0)), 0);
    return out;
  });
  EXPECT_EQ(k(ts::Buffer::zeros({5}, ts::f32)).to_vector(), (std::vector<double>{10}));
}

TEST(InterpReduce, MaxAndMinOfAnEmptyI32DimensionAreTheI32Extremes) {
  // The identity of the reduction in the value's dtype (as the generated code and looped
  // reductions use), not the i64 extremes truncated to 32 bits (which gave 0 and -1).
  auto k = ts::kernel("empty_extremes", [](ts::Tensor x) {
    ts::Tensor out = ts::empty({2, x.size(0)}, ts::i32);
    for (auto i : ts::grid(x.size(0))) {
      out(0, i) = ts::max(x(i, ts::all), 0);
      out(1, i) = ts::min(x(i, ts::all), 0);
    }
    return out;
  });
  EXPECT_EQ(k(ts::Buffer::zeros({1, 0}, ts::i32)).to_vector(),
            (std::vector<double>{-2147483648.0, 2147483647.0}));
}
