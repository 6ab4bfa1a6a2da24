// Bounds-checking mode on the GPU: the kernel records the first out-of-range index in a
// device record the runtime reads back after the call; the UserError must be the
// interpreter's (the oracle), word for word. Calls without a violation give the
// interpreter's values, and lanes past a tile's end are not reported. (An index the host
// computes, make_column's and make_shifted_column's, is refused before either runs: the
// same message on both.)
#include <gtest/gtest.h>

#include <string>
#include <tessel/tessel.hpp>

#include "gpu_test_util.hpp"
#include "tests/check_bounds_kernels.hpp"
#include "tests/user_error_util.hpp"

namespace ts = tessel;
using namespace check_bounds_kernels;
using user_error_test::user_error;

namespace {

ts::Buffer gpu(const ts::Buffer& b) { return b.to(ts::cuda(0)); }

/// The UserError of `k` on the GPU copies of `args` equals the interpreter's on `args`.
template <class K, class... A>
void expect_same_report(const K& k, const A&... args) {
  std::string want = user_error([&] { k(args...); });
  ASSERT_NE(want, "<no error>");
  auto on_gpu = [](const auto& a) {
    if constexpr (std::is_same_v<std::decay_t<decltype(a)>, ts::Buffer>)
      return gpu(a);
    else
      return a;
  };
  std::string got = user_error([&] { k(on_gpu(args)...); });
  EXPECT_EQ(got, want);
}

}  // namespace

TEST(CheckBoundsGpu, TheGpuReportsWhatTheInterpreterReports) {
  TESSEL_REQUIRE_GPU();
  ts::Buffer x = grid_3x4();
  expect_same_report(make_column(kChecked), x, 7);
  expect_same_report(make_shifted_column(kChecked), x, int64_t{3});
  expect_same_report(make_shifted_column(kChecked), x, int64_t{-3});
  ts::Buffer v = ts::Buffer::from_vector({10, 20, 30, 40}, {4}, ts::f32);
  ts::Settings gather_checked{.config = ts::Config{.block_sizes = std::vector<int64_t>{8}},
                              .check_bounds = true};
  expect_same_report(make_gather(gather_checked), v,
                     ts::Buffer::from_vector({4, 3, 9, 1, 1}, {5}, ts::i32));
  expect_same_report(make_pick(kChecked), x, ts::Buffer::from_vector({3, -1, 2}, {3}, ts::i64));
  expect_same_report(make_grid(kChecked), ts::Buffer::from_vector({1, 2, 3}, {3}, ts::f32),
                     int64_t{4});
  expect_same_report(make_tile_copy(kChecked), ts::Buffer::from_vector({1, 2, 3}, {3}, ts::f32),
                     int64_t{4});
  expect_same_report(make_scatter(kChecked), ts::Buffer::from_vector({1, 2, 3}, {3}, ts::f32),
                     ts::Buffer::from_vector({2, 0, 3}, {3}, ts::i64),
                     ts::Buffer::zeros({3}, ts::f32));
}

// In range (and ragged lanes indexing -1, masked): values as on the interpreter, and a
// reported call leaves the next call clean (the record is per call).
TEST(CheckBoundsGpu, CallsInRangeRunAndTheRecordIsPerCall) {
  TESSEL_REQUIRE_GPU();
  ts::Buffer v = ts::Buffer::from_vector({10, 20, 30, 40}, {4}, ts::f32);
  ts::Buffer idx = ts::Buffer::from_vector({4, 3, 2, 1, 1}, {5}, ts::i32);
  auto k = make_gather(
      {.config = ts::Config{.block_sizes = std::vector<int64_t>{8}}, .check_bounds = true});
  EXPECT_EQ(k(gpu(v), gpu(idx)).to(ts::cpu()).to_vector(),
            (std::vector<double>{40, 30, 20, 10, 10}));
  EXPECT_NE(user_error([&] {
              k(gpu(v), gpu(ts::Buffer::from_vector({4, 3, 9, 1, 1}, {5}, ts::i32)));
            }),
            "<no error>");
  EXPECT_EQ(k(gpu(v), gpu(idx)).to(ts::cpu()).to_vector(),
            (std::vector<double>{40, 30, 20, 10, 10}));
}
