// Memory order inside a program on the GPU (codegen/emit_barriers.cpp): kernels that
// reload what their program stored (another layout of a row, a mirrored gather, a stashed
// scalar, an accumulator row in memory, a tensor passed twice) give the interpreter's
// values at several block sizes and warp counts. Without the barriers these read stale
// values (measured on the H200: a row stored and reloaded in one loop body).
#include <gtest/gtest.h>

#include <cstdint>
#include <tessel/testing.hpp>
#include <vector>

#include "gpu_test_util.hpp"
#include "tests/barrier_kernels.hpp"

namespace ts = tessel;

namespace {

ts::Settings config(std::vector<int64_t> blocks, int warps) {
  return ts::Settings{.config = ts::Config{.block_sizes = std::move(blocks), .num_warps = warps}};
}

ts::Buffer on_cpu(const ts::Buffer& b) { return b.to(ts::cpu()); }

/// k(x) on the GPU against k(x) on the interpreter.
template <class K>
void expect_matches_interpreter(const K& k, const ts::Buffer& x_gpu, double tol, const char* what) {
  ts::Buffer got = k(x_gpu);
  ts::Buffer want = k(on_cpu(x_gpu));
  ASSERT_EQ(got.shape(), want.shape()) << what;
  EXPECT_EQ(ts::count_mismatches(on_cpu(got), want, tol, tol), 0) << what;
}

const std::vector<int> kWarps = {1, 4, 8};

}  // namespace

TEST(BarriersGpu, ARowStoredInADeviceLoopAndReloadedWhole) {
  TESSEL_REQUIRE_GPU();
  ts::Buffer x = ts::Buffer::randn({256, 1000}, ts::f32, ts::cuda(0), 1);
  for (int w : kWarps)
    for (std::vector<int64_t> b : {std::vector<int64_t>{1, 128}, {2, 256}, {4, 64}, {8, 1024}})
      expect_matches_interpreter(barrier_test::make_store_then_row_sum(config(b, w)), x, 1e-4,
                                 "store_then_row_sum");
}

TEST(BarriersGpu, ARowStoredAndReloadedMirroredInTheSameBody) {
  TESSEL_REQUIRE_GPU();
  ts::Buffer x = ts::Buffer::randn({64, 3000}, ts::f32, ts::cuda(0), 2);
  for (int w : kWarps)
    for (int64_t b : {32, 128, 512, 2048})
      expect_matches_interpreter(barrier_test::make_mirror_in_tile(config({b}, w)), x, 0,
                                 "mirror_in_tile");
}

TEST(BarriersGpu, ARowStoredByOneLoopAndReadMirroredByTheNext) {
  TESSEL_REQUIRE_GPU();
  ts::Buffer x = ts::Buffer::randn({64, 3000}, ts::f32, ts::cuda(0), 6);
  for (int w : kWarps)
    for (int64_t b : {32, 256, 1024})
      expect_matches_interpreter(barrier_test::make_mirror_after_loop(config({b, b}, w)), x, 0,
                                 "mirror_after_loop");
}

TEST(BarriersGpu, AStashedScalarReloadedByEveryThread) {
  TESSEL_REQUIRE_GPU();
  ts::Buffer x = ts::Buffer::randn({128, 2000}, ts::f32, ts::cuda(0), 3);
  for (int w : kWarps)
    expect_matches_interpreter(barrier_test::make_stash_mean(config({}, w)), x, 1e-5, "stash_mean");
}

TEST(BarriersGpu, AnAccumulatorRowInMemory) {
  TESSEL_REQUIRE_GPU();
  ts::Buffer x = ts::Buffer::randn({64, 1000}, ts::f32, ts::cuda(0), 4);
  for (int w : kWarps)
    for (std::vector<int64_t> b : {std::vector<int64_t>{4, 64}, {1, 256}, {16, 32}, {128, 4}})
      expect_matches_interpreter(barrier_test::make_accumulate_rows(config(b, w)), x, 1e-4,
                                 "accumulate_rows");
}

TEST(BarriersGpu, OneTensorPassedTwiceWritesThenRereads) {
  TESSEL_REQUIRE_GPU();
  for (int w : kWarps)
    for (int64_t b : {64, 256, 1024}) {
      auto k = barrier_test::make_write_then_read_other(config({b}, w));
      ts::Buffer x = ts::Buffer::randn({32, 2500}, ts::f32, ts::cuda(0), 5);
      ts::Buffer x_cpu = on_cpu(x);
      ts::Buffer got = k(x, x);  // in place: x becomes x + 1, then its rows are summed
      ts::Buffer want = k(x_cpu, x_cpu);
      EXPECT_EQ(ts::count_mismatches(on_cpu(got), want, 1e-3, 1e-4), 0)
          << "warps " << w << " block " << b;
      EXPECT_EQ(ts::count_mismatches(on_cpu(x), x_cpu, 0, 0), 0);
    }
}
