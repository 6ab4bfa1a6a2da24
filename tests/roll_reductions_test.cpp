// Looped reductions (Config::reduction_loops): chunked results equal the persistent ones.
#include <gtest/gtest.h>

#include <cmath>
#include <tessel/tessel.hpp>
#include <tessel/testing.hpp>

#include "autotune_test_util.hpp"
#include "runtime/cuda_api.hpp"

namespace ts = tessel;

namespace {

// The whole-row softmax shared with the autotuner tests.
using autotune_test::make_softmax;

auto make_stats(ts::Settings s) {
  return ts::kernel(
      "row_stats",
      [](ts::Tensor x) {
        ts::Tensor idx = x.new_empty({x.size(0)}, ts::i64);
        ts::Tensor mean = x.new_empty({x.size(0)}, ts::f32);
        for (auto tm : ts::tile(x.size(0))) {
          idx(tm) = ts::argmax(x(tm, ts::all), 1) * 100000 + ts::argmin(x(tm, ts::all), 1);
          mean(tm) = ts::mean(x(tm, ts::all).to(ts::f32), 1);
        }
        return std::make_tuple(idx, mean);
      },
      s);
}

ts::Settings chunked(int64_t c) {
  return ts::Settings{.config = ts::Config{.reduction_loops = std::vector<std::optional<int64_t>>{c}}};
}

TEST(RollReductions, SoftmaxChunkedEqualsPersistent) {
  ts::Buffer x = ts::Buffer::randn({7, 300}, ts::f32, ts::cpu(), 3);
  ts::Buffer a = make_softmax({})(x);
  for (int64_t c : {16, 64, 256}) {
    ts::Buffer b = make_softmax(chunked(c))(x);
    EXPECT_EQ(ts::count_mismatches(b, a, 1e-6, 1e-5), 0) << "chunk " << c;
  }
}

TEST(RollReductions, ChunkedIrHasOneLoopPerReductionAndStore) {
  ts::Buffer x = ts::Buffer::randn({7, 300}, ts::f32, ts::cpu(), 3);
  std::string ir = make_softmax(chunked(64)).ir(x);
  size_t loops = 0;
  for (size_t p = ir.find("loop tile"); p != std::string::npos; p = ir.find("loop tile", p + 1)) ++loops;
  EXPECT_EQ(loops, 4u) << ir;  // the row loop, then max, sum and store over chunks
}

TEST(RollReductions, ArgmaxArgminAndMeanChunked) {
  ts::Buffer x = ts::Buffer::randn({9, 1000}, ts::bf16, ts::cpu(), 5);
  auto [i0, m0] = make_stats({})(x);
  auto [i1, m1] = make_stats(ts::Settings{.config = ts::Config{
                                              .reduction_loops = std::vector<std::optional<int64_t>>{128}}})(x);
  EXPECT_EQ(ts::count_mismatches(i1, i0, 0, 0), 0);
  EXPECT_EQ(ts::count_mismatches(m1, m0, 1e-6, 1e-5), 0);
}

TEST(RollReductions, RejectsMalformedChunk) {
  ts::Buffer x = ts::Buffer::randn({7, 300}, ts::f32, ts::cpu(), 3);
  try {
    make_softmax(chunked(48))(x);
    FAIL() << "expected a UserError";
  } catch (const ts::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("power of two"), std::string::npos) << e.what();
  }
}

TEST(RollReductions, ChunkedKernelCompilesWithNvrtc) {
  if (!ts::rt::nvrtc_available()) GTEST_SKIP() << "NVRTC not found";
  ts::Buffer x = ts::Buffer::randn({7, 300}, ts::f32, ts::cpu(), 3);
  auto src = make_softmax(chunked(64)).cuda(true, x);
  EXPECT_NE(src[0].find("+= 64"), std::string::npos) << src[0];
  make_stats(chunked(128)).cuda(true, ts::Buffer::randn({9, 1000}, ts::bf16, ts::cpu(), 5));
}

}  // namespace
