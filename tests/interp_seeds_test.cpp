// Interpreter: the seed programs of DESIGN.md section 6 at small sizes, with their
// expected outputs.
#include <gtest/gtest.h>

#include "interp_test_util.hpp"

namespace ts = tessel;
using interp_test::buffer;
using interp_test::f32;

namespace {

constexpr int B = 16, D = 48, B_BOUND = 8, D_BOUND = 24;

// out[:8, :24] must equal x + 1; the rest must keep the fill value of `out`.
void expect_seed000(const ts::Buffer& x, const ts::Buffer& out, bool check_rest) {
  std::vector<double> xv = x.to_vector(), ov = out.to_vector();
  for (int i = 0; i < B; ++i)
    for (int j = 0; j < D; ++j) {
      bool in = i < B_BOUND && j < D_BOUND;
      if (in) {
        ASSERT_EQ(ov[i * D + j], f32(xv[i * D + j] + 1)) << i << ", " << j;
      } else if (check_rest) {
        ASSERT_EQ(ov[i * D + j], 0) << i << ", " << j;
      }
    }
}

ts::Buffer bound(int v) { return ts::Buffer::scalar(v, ts::i32); }

}  // namespace

TEST(InterpSeeds, Seed000F1TwoDimTileOverDeviceBounds) {
  auto f1 = ts::kernel(
      "f1",
      [](ts::Tensor x, ts::Tensor batch_shape, ts::Tensor dim_shape) {
        ts::Tensor out = x.new_empty({x.size(0), x.size(1)});
        for (auto [b, t] : ts::tile(batch_shape, dim_shape)) out(b, t) = x(b, t) + 1;
        return out;
      },
      ts::Settings{.index_dtype = ts::i64});
  ts::Buffer x = ts::Buffer::randn({B, D}, ts::f32);
  expect_seed000(x, f1(x, bound(B_BOUND), bound(D_BOUND)), false);
}

TEST(InterpSeeds, Seed000F2GridAroundNestedDeviceTile) {
  auto f2 = ts::kernel(
      "f2",
      [](ts::Tensor x, ts::Tensor batch_shape, ts::Tensor dim_shape) {
        ts::Tensor out = ts::zeros_like(x);
        for (auto b : ts::grid(batch_shape))
          for (auto t : ts::tile(dim_shape)) out(b, t) = x(b, t) + 1;
        return out;
      },
      ts::Settings{.index_dtype = ts::i64});
  ts::Buffer x = ts::Buffer::randn({B, D}, ts::f32, ts::cpu(), 1);
  expect_seed000(x, f2(x, bound(B_BOUND), bound(D_BOUND)), true);
}

TEST(InterpSeeds, Seed000F2FixedLoadsTheBoundInHostCode) {
  auto f2_fixed = ts::kernel(
      "f2_fixed",
      [](ts::Tensor x, ts::Tensor batch_shape, ts::Tensor dim_shape) {
        ts::Tensor out = ts::zeros_like(x);
        ts::Value dim_shape_val = ts::load(dim_shape);
        for (auto b : ts::grid(batch_shape))
          for (auto t : ts::tile(dim_shape_val)) out(b, t) = x(b, t) + 1;
        return out;
      },
      ts::Settings{.index_dtype = ts::i64});
  ts::Buffer x = ts::Buffer::randn({B, D}, ts::f32, ts::cpu(), 2);
  expect_seed000(x, f2_fixed(x, bound(B_BOUND), bound(D_BOUND)), true);
}

TEST(InterpSeeds, Seed000F2WithSmallBlocksHasRaggedInnerTiles) {
  auto f2 = ts::kernel(
      "f2_small_blocks",
      [](ts::Tensor x, ts::Tensor batch_shape, ts::Tensor dim_shape) {
        ts::Tensor out = ts::zeros_like(x);
        for (auto b : ts::grid(batch_shape))
          for (auto t : ts::tile(dim_shape)) out(b, t) = x(b, t) + 1;
        return out;
      },
      ts::Settings{.index_dtype = ts::i64,
                   .config = ts::Config{.block_sizes = std::vector<int64_t>{16}}});
  ts::Buffer x = ts::Buffer::randn({B, D}, ts::f32, ts::cpu(), 3);
  expect_seed000(x, f2(x, bound(B_BOUND), bound(D_BOUND)), true);  // 24 = 16 + 8
}

namespace {

// x = ones(100, 100), size = [80]: out[:80] == 100, out[80:] == 0.
void expect_padded_sum(const ts::Buffer& out) {
  std::vector<double> want(100, 0);
  for (int i = 0; i < 80; ++i) want[i] = 100;
  EXPECT_EQ(out.to_vector(), want);
}

ts::Buffer ones() { return ts::Buffer::ones({100, 100}, ts::f32); }
ts::Buffer size80() { return ts::Buffer::from_vector({80}, {1}, ts::i32); }

}  // namespace

TEST(InterpSeeds, Seed002PaddedSumTileOfSizeTensor) {
  auto padded_sum = ts::kernel("padded_sum", [](ts::Tensor x, ts::Tensor size) {
    ts::Tensor out = x.new_zeros({x.size(0)});
    for (auto tn : ts::tile(size)) out(tn) = ts::sum(x(tn, ts::all), 1);
    return out;
  });
  expect_padded_sum(padded_sum(ones(), size80()));
}

TEST(InterpSeeds, Seed002PaddedSumTileOfSizeElement) {
  auto padded_sum = ts::kernel("padded_sum_elem", [](ts::Tensor x, ts::Tensor size) {
    ts::Tensor out = x.new_zeros({x.size(0)});
    for (auto tn : ts::tile(size(0))) out(tn) = ts::sum(x(tn, ts::all), 1);
    return out;
  });
  expect_padded_sum(padded_sum(ones(), size80()));
}

TEST(InterpSeeds, Seed002PaddedSumTileOfSizeItem) {
  auto padded_sum = ts::kernel("padded_sum_item", [](ts::Tensor x, ts::Tensor size) {
    ts::Tensor out = x.new_zeros({x.size(0)});
    for (auto tn : ts::tile(size.item())) out(tn) = ts::sum(x(tn, ts::all), 1);
    return out;
  });
  expect_padded_sum(padded_sum(ones(), size80()));
}

TEST(InterpSeeds, Seed002PaddedSumWithRaggedRowTiles) {
  auto padded_sum = ts::kernel(
      "padded_sum_blocks",
      [](ts::Tensor x, ts::Tensor size) {
        ts::Tensor out = x.new_zeros({x.size(0)});
        for (auto tn : ts::tile(size)) out(tn) = ts::sum(x(tn, ts::all), 1);
        return out;
      },
      interp_test::blocks({32}));  // 80 = 32 + 32 + 16
  expect_padded_sum(padded_sum(ones(), size80()));
}

TEST(InterpSeeds, Seed002ManualPersistentForm) {
  auto padded_sum = ts::kernel("padded_sum_persistent", [](ts::Tensor x, ts::Tensor size) {
    ts::Tensor out = x.new_zeros({x.size(0)});
    for (auto pid : ts::grid(5))
      for (auto tn : ts::tile(ts::floordiv(size(0), 5))) {
        ts::Value rows = tn.index() * 5 + pid;
        out(rows) = ts::sum(x(rows, ts::all), 1);
      }
    return out;
  });
  expect_padded_sum(padded_sum(ones(), size80()));
}

TEST(InterpSeeds, Seed002SumsRealRowValues) {
  // Distinct row sums: row i of x holds i + j / 100 for column j.
  auto padded_sum = ts::kernel("padded_sum_values", [](ts::Tensor x, ts::Tensor size) {
    ts::Tensor out = x.new_zeros({x.size(0)});
    for (auto tn : ts::tile(size)) out(tn) = ts::sum(x(tn, ts::all), 1);
    return out;
  });
  std::vector<double> xv(100 * 100);
  for (int i = 0; i < 100; ++i)
    for (int j = 0; j < 100; ++j) xv[i * 100 + j] = f32(i + j / 100.0);
  std::vector<double> got = padded_sum(buffer(xv, {100, 100}), size80()).to_vector();
  for (int i = 0; i < 100; ++i) {
    double s = 0;
    for (int j = 0; j < 100 && i < 80; ++j) s += xv[i * 100 + j];
    EXPECT_EQ(got[i], f32(s)) << i;
  }
}
