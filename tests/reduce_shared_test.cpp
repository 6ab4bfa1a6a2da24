// Cross-warp reductions through shared memory (codegen/emit_reduce.cpp): back-to-back
// reductions in straight-line code use disjoint bytes and one barrier each; shared memory
// holds only the registers that differ, one value per warp when whole warps hold one
// value (a row of 16384 elements in 8 warps needs 32 bytes, not 64 KiB); Config::maxnreg becomes
// __maxnreg__. The generated CUDA compiles with NVRTC for sm_90 (no GPU needed), and the
// interpreter's values match a plain reference. (GPU results against the interpreter:
// KernelsGpu.TileReductionsOverBothDims, NormGpu.*.)
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <string>
#include <tessel/tessel.hpp>
#include <tessel/testing.hpp>

#include "driver/cuda_api.hpp"
#include "examples/kernels/norms.hpp"
#include "nvrtc_test_util.hpp"
#include "tests/reduce_kernels.hpp"

namespace ts = tessel;

namespace {

using nvrtc_test::compile;
using nvrtc_test::count;

/// The byte offsets of the reductions' shared memory (ts_smem + offset), in order.
std::vector<int> smem_offsets(const std::string& src) {
  // (ts_smem + 32), or (ts_smem) at offset 0.
  static const std::regex re(R"(\(ts_smem(?: \+ (\d+))?\))");
  std::vector<int> out;
  for (auto it = std::sregex_iterator(src.begin(), src.end(), re); it != std::sregex_iterator();
       ++it)
    out.push_back((*it)[1].matched ? std::stoi((*it)[1]) : 0);
  return out;
}

/// make_tile_reductions on the host, tile by tile (blocks bm x bn; ragged edge tiles
/// reduce over their valid elements; argmax is the first maximum's offset in the tile).
std::vector<double> reference(const std::vector<double>& x, int64_t M, int64_t N, int64_t bm,
                              int64_t bn) {
  std::vector<double> out(x.size());
  for (int64_t m0 = 0; m0 < M; m0 += bm)
    for (int64_t n0 = 0; n0 < N; n0 += bn) {
      int64_t m1 = std::min(M, m0 + bm), n1 = std::min(N, n0 + bn);
      for (int64_t m = m0; m < m1; ++m)
        for (int64_t n = n0; n < n1; ++n) {
          double cmax = x[m0 * N + n], rsum = 0;
          int64_t arg = 0;
          for (int64_t i = m0; i < m1; ++i)
            if (x[i * N + n] > cmax) cmax = x[i * N + n], arg = i - m0;
          for (int64_t j = n0; j < n1; ++j) rsum += static_cast<float>(x[m * N + j]);
          out[m * N + n] = x[m * N + n] - cmax + rsum + static_cast<double>(arg);
        }
    }
  return out;
}

TEST(ReduceShared, TileReductionsMatchAPlainReference) {
  const int64_t M = 100, N = 300;  // ragged for every config's blocks
  ts::Buffer x = ts::Buffer::randn({M, N}, ts::f32, ts::cpu(), 7);
  for (const ts::Config& c : reduce_test::tile_reduction_configs()) {
    ts::Buffer got = reduce_test::make_tile_reductions({.config = c})(x);
    ts::Buffer want = ts::Buffer::from_vector(
        reference(x.to_vector(), M, N, (*c.block_sizes)[0], (*c.block_sizes)[1]), {M, N}, ts::f32);
    EXPECT_EQ(ts::count_mismatches(got, want, 1e-4, 1e-5), 0) << c.to_json();
  }
}

// The nest's shared memory plan (passes/shared_plan.hpp): the program's first reduction
// starts without a barrier (nothing read shared memory before it), and each later one uses
// bytes disjoint from its predecessor's, so it needs only its own barrier.
TEST(ReduceShared, BackToBackReductionsUseDisjointBytesAndOneBarrierEach) {
  REQUIRE_NVRTC();
  ts::Buffer x = ts::Buffer::zeros({100, 300}, ts::f32);
  for (const ts::Config& c : reduce_test::tile_reduction_configs()) {
    std::string src = compile(reduce_test::make_tile_reductions({.config = c}), x);
    // The reductions that cross warps (those over a dim spanning several warps; the
    // argmax also stores indices): one barrier each, between its writes and its reads.
    int crossing = count(src, "float*>(ts_smem");
    EXPECT_GE(crossing, 1) << c.to_json();
    EXPECT_EQ(count(src, "__syncthreads();"), crossing) << c.to_json() << "\n" << src;
    EXPECT_EQ(smem_offsets(src).front(), 0) << src;
    // Consecutive reductions' value buffers never start at the same byte.
    std::vector<int> values;
    static const std::regex re(R"(float\*>\(ts_smem \+ (\d+)\))");
    for (auto it = std::sregex_iterator(src.begin(), src.end(), re); it != std::sregex_iterator();
         ++it)
      values.push_back(std::stoi((*it)[1]));
    for (size_t i = 1; i < values.size(); ++i)
      EXPECT_NE(values[i], values[i - 1]) << c.to_json() << "\n" << src;
  }
}

TEST(ReduceShared, OnlyDistinctRegistersGoThroughSharedMemory) {
  REQUIRE_NVRTC();
  // A row of 16384 f32 in 8 warps: 64 registers per thread, one distinct after the
  // register steps, and one value per warp after the lane steps, so each reduction's
  // buffer is 8 warps x 4 bytes; the warps' values are combined with shuffles.
  ts::Settings s{.config = ts::Config{.block_sizes = std::vector<int64_t>{1}, .num_warps = 8}};
  ts::Buffer x = ts::Buffer::zeros({8, 16384}, ts::f32);
  std::string src = compile(examples::make_softmax(s), x);
  EXPECT_EQ(smem_offsets(src), (std::vector<int>{0, 32})) << src;
  EXPECT_EQ(count(src, "__syncthreads();"), 2) << src;  // one each: the first starts the program
  EXPECT_EQ(count(src, "if ((tid & 31) == 0) sm"), 2) << src;
  EXPECT_EQ(count(src, "(v, 7u)"), 2) << src;  // 8 warps: 3 shuffle steps
}

TEST(ReduceShared, ReductionsInALoopBodyOnDisjointBytesNeedNoLeadingBarrier) {
  REQUIRE_NVRTC();
  // The online softmax's first loop has two reductions per chunk, at bytes 0 and 32: the
  // first of an iteration follows the second of the previous one (the back edge), whose
  // bytes it does not overlap, so each needs only its own barrier (2 per iteration).
  ts::Settings s{.config =
                     ts::Config{.block_sizes = std::vector<int64_t>{1, 2048}, .num_warps = 8}};
  std::string src =
      compile(examples::make_softmax_two_pass(s), ts::Buffer::zeros({4, 10000}, ts::f32));
  EXPECT_EQ(count(src, "__syncthreads();"), 2) << src;
  EXPECT_EQ(smem_offsets(src), (std::vector<int>{0, 32})) << src;
}

TEST(ReduceShared, MaxnregReplacesLaunchBounds) {
  REQUIRE_NVRTC();
  ts::Buffer x = ts::Buffer::zeros({100, 300}, ts::f32);
  ts::Config c{.block_sizes = std::vector<int64_t>{32, 64}, .num_warps = 8, .maxnreg = 64};
  std::string src = compile(reduce_test::make_tile_reductions({.config = c}), x);
  EXPECT_EQ(count(src, "__maxnreg__(64)"), 1) << src;
  EXPECT_EQ(count(src, "__launch_bounds__"), 0) << src;
  c.maxnreg.reset();
  src = compile(reduce_test::make_tile_reductions({.config = c}), x);
  EXPECT_EQ(count(src, "__launch_bounds__(256)"), 1) << src;
}

}  // namespace
