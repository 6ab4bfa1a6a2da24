// Tile constructors with a ts::register_block_size dimension (`ts::zeros({tm, bs})`,
// Helion's `hl.zeros([tile_m, block_size_n])`): such a value lines up with the tiles of
// every loop using the BlockSize, is carried across them, and is reduced after the loop.
// Values on the interpreter against a plain reference; the generated CUDA compiles with
// NVRTC for sm_90; misuse is a UserError naming the line. (GPU results:
// NormGpu.SoftmaxOnlineMatchesInterpreter, examples/kernels/norms.hpp make_softmax_online.)
#include <gtest/gtest.h>

#include <string>
#include <tessel/tessel.hpp>
#include <tessel/testing.hpp>

#include "nvrtc_test_util.hpp"
#include "user_error_util.hpp"

namespace ts = tessel;

namespace {

using user_error_test::user_error;

/// Helion examples/long_sum.py `long_sum_manual`: out[m] = sum(x[m, :]), accumulated per
/// position of a [rows, block_n] block over the row's chunks, summed once after the loop.
/// x: [M, N] f32; out: [M] f32.
auto make_blocked_row_sum(ts::Settings s = {}) {
  return ts::kernel(
      "blocked_row_sum",
      [](ts::Tensor x) {
        ts::Tensor out = x.new_empty({x.size(0)});
        ts::BlockSize bn = ts::register_block_size();
        for (auto tm : ts::tile(x.size(0))) {
          ts::Value acc = ts::zeros({tm, bn}, ts::f32);
          for (auto tn : ts::tile(x.size(1), {.block_size = bn})) acc = acc + x(tm, tn);
          out(tm) = ts::sum(acc, 1);
        }
        return out;
      },
      s);
}

std::vector<double> row_sums(const ts::Buffer& x) {
  std::vector<double> v = x.to_vector(), out(x.shape()[0], 0.0);
  int64_t n = x.shape()[1];
  for (size_t i = 0; i < v.size(); ++i) out[i / n] += v[i];
  return out;
}

TEST(BlockDim, CarriedBlockAccumulatorSumsEveryChunk) {
  ts::Buffer x = ts::Buffer::randn({37, 1000}, ts::f32, ts::cpu(), 5);
  // Chunks that do not divide the row (masked loads past the end read 0), one column,
  // longer than the row.
  for (auto [bm, bn] : {std::pair<int64_t, int64_t>{4, 64}, {1, 256}, {8, 1}, {2, 2048}}) {
    // block_sizes: the BlockSize (declared first), then the row tile.
    auto k =
        make_blocked_row_sum({.config = ts::Config{.block_sizes = std::vector<int64_t>{bn, bm}}});
    EXPECT_EQ(
        ts::count_mismatches(k(x), ts::Buffer::from_vector(row_sums(x), {37}, ts::f64), 1e-4, 1e-5),
        0)
        << bm << " x " << bn;
  }
}

TEST(BlockDim, GeneratedCodeCompilesAndLinesUpTheBlockWithTheTile) {
  REQUIRE_NVRTC();
  ts::Buffer x = ts::Buffer::zeros({37, 1000}, ts::f32);
  auto k = make_blocked_row_sum({.config = ts::Config{.block_sizes = std::vector<int64_t>{64, 4}}});
  std::string src;
  for (const std::string& s : k.cuda(true, x)) src += s;
  // The accumulator and the loaded chunk index the same columns: one slot, one mask-free
  // sum over the block (every lane of the block is valid).
  EXPECT_NE(src.find("sum over b"), std::string::npos) << src;
  EXPECT_GE(nvrtc_test::count(src, "(TS_FLAT(r) & 63)"), 1) << src;
  EXPECT_EQ(nvrtc_test::count(src, "(TS_FLAT(r) & 63)"), nvrtc_test::count(src, "& 63)")) << src;
}

TEST(BlockDim, ABlockValueStoresThroughItsLoopsTile) {
  REQUIRE_NVRTC();
  // Running sums per position of the block, stored after each chunk: out(tm, tn) = acc.
  auto k = ts::kernel("store_acc",
                      [](ts::Tensor x) {
                        ts::Tensor out = ts::empty_like(x);
                        ts::BlockSize bn = ts::register_block_size();
                        for (auto tm : ts::tile(x.size(0))) {
                          ts::Value acc = ts::zeros({tm, bn}, ts::f32);
                          for (auto tn : ts::tile(x.size(1), {.block_size = bn})) {
                            acc = acc + x(tm, tn);
                            out(tm, tn) = acc;
                          }
                        }
                        return out;
                      },
                      {.config = ts::Config{.block_sizes = std::vector<int64_t>{4, 2}}});
  ts::Buffer x = ts::Buffer::from_vector({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {2, 5}, ts::f32);
  // Column 4 is position 0 of the second chunk: 1 + 5 and 6 + 10.
  EXPECT_EQ(k(x).to_vector(), (std::vector<double>{1, 2, 3, 4, 6, 6, 7, 8, 9, 16}));
  EXPECT_FALSE(k.cuda(true, x).empty());
}

TEST(BlockDim, TwoDimensionsInOneRegisterSlotAreRefusedByTheCudaBackend) {
  // An outer product of a tile with itself: the interpreter computes it; the CUDA backend
  // would hold only its diagonal, so it refuses, naming the line.
  int line = 0;
  auto outer = ts::kernel("tile_outer",
                          [&line](ts::Tensor y) {
                            ts::Tensor out = ts::empty_like(y);
                            for (auto tm : ts::tile(y.size(0))) {
                              ts::Value row = y(tm)(ts::newaxis, ts::all);
                              line = __LINE__ + 1;
                              out(tm) = ts::max(row - y(tm)(ts::all, ts::newaxis), 1);
                            }
                            return out;
                          },
                          {.config = ts::Config{.block_sizes = std::vector<int64_t>{4}}});
  ts::Buffer y = ts::Buffer::from_vector({0, 1, 2, 3, 4, 5, 6, 7}, {8}, ts::f32);
  EXPECT_EQ(outer(y).to_vector(), (std::vector<double>{3, 2, 1, 0, 3, 2, 1, 0}));
  std::string msg = user_error([&] { outer.cuda(false, y); });
  EXPECT_NE(msg.find("kernel 'tile_outer'"), std::string::npos) << msg;
  EXPECT_NE(msg.find(":" + std::to_string(line)), std::string::npos) << msg;
  EXPECT_NE(msg.find("in one register slot"), std::string::npos) << msg;
  // One BlockSize for the rows and the chunks: ts::zeros({tm, bs}) has two lined-up dims.
  auto square = ts::kernel("square_block", [&line](ts::Tensor x) {
    ts::Tensor out = x.new_empty({x.size(0)});
    ts::BlockSize bs = ts::register_block_size();
    for (auto tm : ts::tile(x.size(0), {.block_size = bs})) {
      line = __LINE__ + 1;
      ts::Value acc = ts::zeros({tm, bs}, ts::f32);
      for (auto tn : ts::tile(x.size(1), {.block_size = bs})) acc = acc + x(tm, tn);
      out(tm) = ts::sum(acc, 1);
    }
    return out;
  });
  msg = user_error([&] { square.cuda(false, ts::Buffer::zeros({8, 100}, ts::f32)); });
  EXPECT_NE(msg.find("kernel 'square_block'"), std::string::npos) << msg;
  EXPECT_NE(msg.find(":" + std::to_string(line)), std::string::npos) << msg;
  EXPECT_NE(msg.find("in one register slot"), std::string::npos) << msg;
}

TEST(BlockDim, MisuseIsAUserErrorNamingTheLine) {
  ts::Buffer x = ts::Buffer::zeros({8, 100}, ts::f32);
  // A tile of a loop that does not use the BlockSize does not line up with it.
  int line = 0;
  auto other = ts::kernel("other_block", [&line](ts::Tensor x) {
    ts::Tensor out = x.new_empty({x.size(0)});
    ts::BlockSize bn = ts::register_block_size();
    for (auto tm : ts::tile(x.size(0))) {
      ts::Value acc = ts::zeros({tm, bn}, ts::f32);
      for (auto tn : ts::tile(x.size(1))) {
        line = __LINE__ + 1;
        acc = acc + x(tm, tn);
      }
      out(tm) = ts::sum(acc, 1);
    }
    return out;
  });
  std::string msg = user_error([&] { other(x); });
  EXPECT_NE(msg.find("do not broadcast"), std::string::npos) << msg;
  EXPECT_NE(msg.find(":" + std::to_string(line)), std::string::npos) << msg;
  EXPECT_NE(msg.find("lines up with the tiles of every loop using bs"), std::string::npos) << msg;
  // mean over a block dimension would divide by lanes that may be past the row's end.
  auto mean = ts::kernel("block_mean", [&line](ts::Tensor x) {
    ts::Tensor out = x.new_empty({x.size(0)});
    ts::BlockSize bn = ts::register_block_size();
    for (auto tm : ts::tile(x.size(0))) {
      ts::Value acc = ts::zeros({tm, bn}, ts::f32);
      line = __LINE__ + 1;
      out(tm) = ts::mean(acc, 1);
    }
    return out;
  });
  msg = user_error([&] { mean(x); });
  EXPECT_NE(msg.find("mean over a BlockSize dimension"), std::string::npos) << msg;
  EXPECT_NE(msg.find(":" + std::to_string(line)), std::string::npos) << msg;
  // A BlockSize of another kernel (or made up).
  auto foreign = ts::kernel("foreign_block", [&line](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto tm : ts::tile(x.size(0))) {
      line = __LINE__ + 1;
      ts::Value acc = ts::zeros({tm, ts::BlockSize{3}}, ts::f32);
      out(tm, 0) = ts::sum(acc, 1);
    }
    return out;
  });
  msg = user_error([&] { foreign(x); });
  EXPECT_NE(msg.find("not made by ts::register_block_size"), std::string::npos) << msg;
  EXPECT_NE(msg.find(":" + std::to_string(line)), std::string::npos) << msg;
}

}  // namespace

TEST(BlockDim, BlockSizesAreNumberedInTheOrderTheyAreCreated) {
  // Config::block_sizes {16, 4}: entry 0 is the BlockSize (registered before the row
  // loop), entry 1 the row loop's own: the chunk loop steps by 16, the row tile has 4 rows.
  auto k = make_blocked_row_sum({.config = ts::Config{.block_sizes = std::vector<int64_t>{16, 4}}});
  std::string src = k.cuda(false, ts::Buffer::zeros({37, 1000}, ts::f32)).at(0);
  EXPECT_NE(src.find("+= 16)"), std::string::npos) << src;
  EXPECT_EQ(src.find("+= 4)"), std::string::npos) << src;
  EXPECT_NE(src.find("i0 * 4"), std::string::npos) << src;
}
