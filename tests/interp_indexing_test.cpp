// Interpreter: indexed loads and stores: scalar, tile, ts::all and newaxis indices,
// gathers and scatters with integer tile values, masking of out-of-range indices, and
// strided (transposed, narrowed) tensors.
#include <gtest/gtest.h>

#include "interp_test_util.hpp"
#include "user_error_util.hpp"

namespace ts = tessel;
using interp_test::blocks;
using interp_test::buffer;
using interp_test::ramp;

TEST(InterpIndexing, NewaxisBroadcastsABiasOverRows) {
  auto k = ts::kernel(
      "bias",
      [](ts::Tensor x, ts::Tensor bias) {
        ts::Tensor out = ts::empty_like(x);
        for (auto [tm, tn] : ts::tile(x.size(0), x.size(1)))
          out(tm, tn) = x(tm, tn) + bias(ts::newaxis, tn);
        return out;
      },
      blocks({4, 4}));
  const int M = 5, N = 7;
  std::vector<double> x = ramp(M * N), b = ramp(N, 100, 10), want(M * N);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) want[i * N + j] = x[i * N + j] + b[j];
  EXPECT_EQ(k(buffer(x, {M, N}), buffer(b, {N})).to_vector(), want);
}

namespace {
// k(a, b) = a[:, None] * b[None, :] for a [3], b [5].
template <class K>
void expect_outer_product(const K& k) {
  std::vector<double> a = ramp(3, 1), b = ramp(5, -2), want;
  for (double x : a)
    for (double y : b) want.push_back(x * y);
  EXPECT_EQ(k(buffer(a, {3}), buffer(b, {5})).to_vector(), want);
}
}  // namespace

TEST(InterpIndexing, ValueViewsMakeAnOuterProduct) {
  auto k = ts::kernel(
      "outer",
      [](ts::Tensor a, ts::Tensor b) {
        ts::Tensor out = ts::empty({a.size(0), b.size(0)}, ts::f32);
        for (auto [tm, tn] : ts::tile(a.size(0), b.size(0))) {
          ts::Value col = a(tm), row = b(tn);
          out(tm, tn) = col(ts::all, ts::newaxis) * row(ts::newaxis, ts::all);
        }
        return out;
      },
      blocks({2, 4}));
  expect_outer_product(k);
}

// A load can be viewed directly: a(tm)(ts::all, ts::newaxis) is a(tm, ts::newaxis).
TEST(InterpIndexing, LoadsTakeViewsLikeValues) {
  auto k = ts::kernel(
      "outer_of_loads",
      [](ts::Tensor a, ts::Tensor b) {
        ts::Tensor out = ts::empty({a.size(0), b.size(0)}, ts::f32);
        for (auto [tm, tn] : ts::tile(a.size(0), b.size(0)))
          out(tm, tn) = a(tm)(ts::all, ts::newaxis) * b(tn)(ts::newaxis, ts::all);
        return out;
      },
      blocks({2, 4}));
  expect_outer_product(k);
}

TEST(InterpIndexing, AllLoadsAndStoresWholeRows) {
  // Rows of 5 are padded to 8 in the tile value and masked.
  auto k = ts::kernel("rows", [](ts::Tensor x) {
    ts::Tensor out = ts::full_like(x, -1);
    for (auto i : ts::grid(x.size(0))) out(i, ts::all) = x(i, ts::all) * 2;
    return out;
  });
  EXPECT_EQ(k(buffer(ramp(15), {3, 5})).to_vector(), ramp(15, 0, 2));
}

TEST(InterpIndexing, FewerIndicesThanRankMeansAll) {
  auto k = ts::kernel("implicit_all", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto i : ts::grid(x.size(0))) out(i) = x(i) + 1;
    return out;
  });
  EXPECT_EQ(k(buffer(ramp(12), {3, 4})).to_vector(), ramp(12, 1));
}

TEST(InterpIndexing, ConstantScalarIndexPicksARow) {
  auto k = ts::kernel("row2", [](ts::Tensor x) {
    ts::Tensor out = ts::empty({x.size(1)}, ts::f32);
    for (auto t : ts::tile(x.size(1))) out(t) = x(2, t);
    return out;
  });
  EXPECT_EQ(k(buffer(ramp(12), {3, 4})).to_vector(), ramp(4, 8));
}

TEST(InterpIndexing, OutOfRangeScalarIndexLoadsZeroAndSkipsStores) {
  auto k = ts::kernel("shifted", [](ts::Tensor x) {
    ts::Tensor out = ts::full_like(x, -1);
    for (auto i : ts::grid(x.size(0))) {
      out(i) = x(i + 3);   // reads past the end give 0
      out(i - 10) = x(i);  // negative indices are not written
    }
    return out;
  });
  EXPECT_EQ(k(buffer(ramp(5, 1), {5})).to_vector(), (std::vector<double>{4, 5, 0, 0, 0}));
}

TEST(InterpIndexing, GatherWithAnIntegerTileIndex) {
  auto k = ts::kernel(
      "gather",
      [](ts::Tensor x, ts::Tensor idx) {
        ts::Tensor out = ts::empty({idx.size(0)}, ts::f32);
        for (auto t : ts::tile(idx.size(0))) out(t) = x(idx(t));
        return out;
      },
      blocks({4}));
  std::vector<double> x = ramp(10, 0.5), idx = {9, 0, 3, 3, 7, 1};
  std::vector<double> want;
  for (double i : idx) want.push_back(x[static_cast<int>(i)]);
  EXPECT_EQ(k(buffer(x, {10}), buffer(idx, {6}, ts::i64)).to_vector(), want);
}

TEST(InterpIndexing, GatherOutOfRangeIndicesReadZero) {
  auto k = ts::kernel("gather_oob", [](ts::Tensor x, ts::Tensor idx) {
    ts::Tensor out = ts::empty({idx.size(0)}, ts::f32);
    for (auto t : ts::tile(idx.size(0))) out(t) = x(idx(t));
    return out;
  });
  EXPECT_EQ(k(buffer(ramp(4, 1), {4}), buffer({-1, 2, 4, 100}, {4}, ts::i32)).to_vector(),
            (std::vector<double>{0, 3, 0, 0}));
}

TEST(InterpIndexing, ScatterWithAnIntegerTileIndex) {
  auto k = ts::kernel("scatter", [](ts::Tensor x, ts::Tensor idx) {
    ts::Tensor out = x.new_zeros({8});
    for (auto t : ts::tile(x.size(0))) out(idx(t)) = x(t);
    return out;
  });
  EXPECT_EQ(k(buffer({10, 20, 30}, {3}), buffer({7, 0, 9}, {3}, ts::i64)).to_vector(),
            (std::vector<double>{20, 0, 0, 0, 0, 0, 0, 10}));
}

TEST(InterpIndexing, GatherRowsKeepsTheAllDimension) {
  // x(rows, ts::all): shape [tile, row length], rows picked by an index tensor.
  auto k = ts::kernel("gather_rows", [](ts::Tensor x, ts::Tensor rows) {
    ts::Tensor out = ts::empty({rows.size(0), x.size(1)}, ts::f32);
    for (auto t : ts::tile(rows.size(0))) out(t, ts::all) = x(rows(t), ts::all);
    return out;
  });
  std::vector<double> x = ramp(12), want;
  for (int r : {2, 0, 2})
    for (int c = 0; c < 4; ++c) want.push_back(x[r * 4 + c]);
  EXPECT_EQ(k(buffer(x, {3, 4}), buffer({2, 0, 2}, {3}, ts::i32)).to_vector(), want);
}

TEST(InterpIndexing, GatherInASecondPositionKeepsItsPlace) {
  // x(ts::all, cols(t)): the gathered dim stays second, as PyTorch's x[:, cols].
  auto k = ts::kernel("gather_cols", [](ts::Tensor x, ts::Tensor cols) {
    ts::Tensor out = ts::empty({x.size(0), cols.size(0)}, ts::f32);
    for (auto t : ts::tile(cols.size(0))) out(ts::all, t) = x(ts::all, cols(t));
    return out;
  });
  std::vector<double> x = ramp(12), want;
  for (int r = 0; r < 3; ++r)
    for (int c : {3, 1}) want.push_back(x[r * 4 + c]);
  EXPECT_EQ(k(buffer(x, {3, 4}), buffer({3, 1}, {2}, ts::i64)).to_vector(), want);
}

TEST(InterpIndexing, TwoGatherIndicesBroadcastTogether) {
  // x(r[:, None], c[None, :]) with r, c from tile indices reads the tile itself; the
  // gathered dims are masked at the ragged edges of their tiles.
  auto k = ts::kernel(
      "gather_2d",
      [](ts::Tensor x) {
        ts::Tensor out = ts::full_like(x, -1);
        for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) {
          ts::Value r = tm.index(), c = tn.index();
          out(tm, tn) = x(r(ts::all, ts::newaxis), c(ts::newaxis, ts::all)) * 10;
        }
        return out;
      },
      blocks({4, 4}));
  EXPECT_EQ(k(buffer(ramp(30), {5, 6})).to_vector(), ramp(30, 0, 10));
}

TEST(InterpIndexing, GatherIndexPastTheTileEdgeIsMasked) {
  // rows = t.index() + 2 stays inside the tensor past the tile's end; those lanes are
  // not stored.
  auto k = ts::kernel(
      "gather_edge",
      [](ts::Tensor x, ts::Tensor n) {
        ts::Tensor out = ts::zeros_like(x);
        for (auto t : ts::tile(n.item())) out(t.index() + 2) = x(t.index() + 2);
        return out;
      },
      blocks({8}));
  EXPECT_EQ(k(buffer(ramp(10, 1), {10}), ts::Buffer::scalar(3, ts::i32)).to_vector(),
            (std::vector<double>{0, 0, 3, 4, 5, 0, 0, 0, 0, 0}));
}

TEST(InterpIndexing, TransposedInputIsReadThroughItsStrides) {
  auto k = ts::kernel("transposed", [](ts::Tensor x) {
    ts::Tensor out = ts::empty({x.size(0), x.size(1)}, ts::f32);
    for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) out(tm, tn) = x(tm, tn) + 0;
    return out;
  });
  ts::Buffer x = buffer(ramp(12), {3, 4}).transpose(0, 1);  // shape [4, 3], strides [1, 4]
  std::vector<double> want;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j) want.push_back(i + 4 * j);
  EXPECT_EQ(k(x).to_vector(), want);
}

TEST(InterpIndexing, NarrowedInputAndOutputUseTheirOffsets) {
  auto k = ts::kernel("narrowed", [](ts::Tensor x, ts::Tensor out) {
    for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) out(tm, tn) = x(tm, tn) * 2;
  });
  ts::Buffer base = buffer(ramp(30), {5, 6});
  ts::Buffer x = base.narrow(0, 1, 3).narrow(1, 2, 3);  // rows 1..3, cols 2..4
  ts::Buffer out_base = ts::Buffer::zeros({4, 4}, ts::f32);
  k(x, out_base.narrow(0, 1, 3).narrow(1, 1, 3));
  std::vector<double> want(16, 0);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) want[(i + 1) * 4 + (j + 1)] = 2 * ((i + 1) * 6 + (j + 2));
  EXPECT_EQ(out_base.to_vector(), want);
}

TEST(InterpIndexing, StoreIntoATransposedOutput) {
  auto k = ts::kernel("store_t", [](ts::Tensor x, ts::Tensor out) {
    for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) out(tm, tn) = x(tm, tn);
  });
  ts::Buffer out = ts::Buffer::zeros({3, 2}, ts::f32);
  k(buffer(ramp(6), {2, 3}), out.transpose(0, 1));  // the kernel sees [2, 3], strides [1, 2]
  EXPECT_EQ(out.to_vector(), (std::vector<double>{0, 3, 1, 4, 2, 5}));
}

TEST(InterpIndexing, ScalarValueStoreBroadcastsOverATile) {
  auto k = ts::kernel("fill_tile", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto i : ts::grid(x.size(0)))
      for (auto t : ts::tile(x.size(1))) out(i, t) = i;
    return out;
  });
  EXPECT_EQ(k(ts::Buffer::zeros({2, 3}, ts::i64)).to_vector(),
            (std::vector<double>{0, 0, 0, 1, 1, 1}));
}

TEST(InterpIndexing, BoolTensorsLoadAndStore) {
  auto k = ts::kernel("bools", [](ts::Tensor m, ts::Tensor x) {
    ts::Tensor out = ts::empty_like(m);
    for (auto t : ts::tile(m.size(0))) out(t) = m(t) && (x(t) > 0);
    return out;
  });
  EXPECT_EQ(k(buffer({1, 1, 0, 0}, {4}, ts::boolean), buffer({1, -1, 1, -1}, {4})).to_vector(),
            (std::vector<double>{1, 0, 0, 0}));
}

TEST(InterpIndexing, DeviceScalarElementAsAValue) {
  // A host-code element read `s(1)` used inside the loop as a scale.
  auto k = ts::kernel("dev_scale", [](ts::Tensor x, ts::Tensor s) {
    ts::Tensor out = ts::empty_like(x);
    ts::Value scale = s(1);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) * scale;
    return out;
  });
  EXPECT_EQ(k(buffer(ramp(4), {4}), buffer({5, 3}, {2})).to_vector(), ramp(4, 0, 3));
}

TEST(InterpIndexing, GatherSharingATileDimensionZips) {
  auto k = ts::kernel("diag_gather", [](ts::Tensor x, ts::Tensor idx) {
    ts::Tensor out = ts::empty({x.size(0)}, ts::f32);
    for (auto tm : ts::tile(x.size(0))) out(tm) = x(tm, idx(tm));
    return out;
  });
  ts::Buffer out = k(ts::Buffer::from_vector({0, 1, 2, 10, 11, 12, 20, 21, 22}, {3, 3}, ts::f32),
                     ts::Buffer::from_vector({2, 0, 1}, {3}, ts::i64));
  EXPECT_EQ(out.to_vector(), (std::vector<double>{2, 10, 21}));
}

// A negative constant index counts from the end, as in PyTorch and Helion: x(tm, -1) is
// the last column, x(tm, -4) of 4 columns the first; one past the start (-5) is out of
// range and masked (reads 0), as any index outside [0, size).
TEST(InterpIndexing, NegativeConstantIndicesCountFromTheEnd) {
  auto k = ts::kernel("from_end", [](ts::Tensor x) {
    ts::Tensor out = ts::empty({x.size(0), 3}, x.dtype());
    for (auto tm : ts::tile(x.size(0))) {
      out(tm, 0) = x(tm, -1);
      out(tm, -2) = x(tm, -4);
      out(tm, 2) = x(tm, 0) * 0;
    }
    return out;
  });
  const int M = 5, N = 4;
  std::vector<double> x = ramp(M * N, 1), want;
  for (int i = 0; i < M; ++i) want.insert(want.end(), {x[i * N + N - 1], x[i * N], 0});
  EXPECT_EQ(k(buffer(x, {M, N})).to_vector(), want);
  // Past the start (-5 of 4 columns): refused, as torch raises IndexError.
  auto past = ts::kernel("past_start", [](ts::Tensor x) {
    ts::Tensor out = x.new_empty({x.size(0)});
    for (auto tm : ts::tile(x.size(0))) out(tm) = x(tm, -5);
    return out;
  });
  const std::string msg = user_error_test::user_error([&] { past(buffer(x, {M, N})); });
  EXPECT_NE(msg.find("a load's index -1 (the constant -5 counted from the end) is out of range"),
            std::string::npos)
      << msg;
  auto ks = ts::kernel(
      "from_end_static",
      [](ts::Tensor x) {
        ts::Tensor out = x.new_empty({x.size(0)});
        for (auto tm : ts::tile(x.size(0))) out(tm) = x(tm, -2);
        return out;
      },
      ts::Settings{.static_shapes = true});
  std::vector<double> w2;
  for (int i = 0; i < M; ++i) w2.push_back(x[i * N + N - 2]);
  EXPECT_EQ(ks(buffer(x, {M, N})).to_vector(), w2);
}
