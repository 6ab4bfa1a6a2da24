// Persistent kernels on the GPU: CUDA graph capture and replay with a device-resident
// bound, SM caps, pid types, and the MoE example against the interpreter.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <tessel/testing.hpp>

#include "examples/kernels/moe.hpp"
#include "examples/kernels/seed002.hpp"
#include "gpu_test_util.hpp"
#include "persistent_test_kernels.hpp"

namespace ts = tessel;

namespace {

using persistent_test::make_who_ran;
using persistent_test::row_sums;

// Captured once with the bound at 80, replayed after the bound changes in device memory
// to 37 and 100; the capture runs in global mode, so a hidden host sync would fail it.
TEST(PersistentGpu, GraphReplayFollowsDeviceBound) {
  TESSEL_REQUIRE_GPU();
  auto k = examples::make_padded_sum_into();
  ts::Buffer x = ts::Buffer::randn({100, 100}, ts::f32, ts::cuda(0), 21);
  ts::Buffer size = ts::Buffer::scalar(80, ts::i32, ts::cuda(0));
  ts::Buffer out = ts::Buffer::zeros({100}, ts::f32, ts::cuda(0));
  ts::Stream s = ts::Stream::create();
  k(s, x, size, out);  // eager call: traces and compiles outside the capture
  s.synchronize();
  ts::CudaGraph g = ts::CudaGraph::capture(s, [&] { k(s, x, size, out); });
  for (int n : {80, 37, 100}) {
    size.fill(n);
    out.fill(-1);
    ts::rt::device_synchronize(0);
    g.replay(s);
    s.synchronize();
    ts::Buffer want = ts::Buffer::from_vector(row_sums(x, n, -1), {100}, ts::f32);
    EXPECT_EQ(ts::count_mismatches(out.to(ts::cpu()), want, 1e-4, 1e-5), 0) << "bound " << n;
  }
  s.destroy();
}

std::set<int64_t> programs_used(ts::Settings s) {
  ts::Buffer n = ts::Buffer::scalar(32 * 4096, ts::i32, ts::cuda(0));
  ts::Buffer out = ts::Buffer::full({32 * 4096}, -1, ts::i32, ts::cuda(0));
  make_who_ran(s)(n, out);
  std::set<int64_t> used;
  for (double v : out.to_vector()) used.insert(static_cast<int64_t>(v));
  return used;
}

TEST(PersistentGpu, GridRespectsMaxSms) {
  TESSEL_REQUIRE_GPU();
  std::set<int64_t> used = programs_used(ts::Settings{.max_sms = 16});
  EXPECT_EQ(used.size(), 16u);
  EXPECT_EQ(*used.rbegin(), 15);
  EXPECT_EQ(*used.begin(), 0);
}

TEST(PersistentGpu, GridRespectsReservedSms) {
  TESSEL_REQUIRE_GPU();
  int sms = ts::rt::sm_count(0);
  std::set<int64_t> used = programs_used(ts::Settings{.reserved_sms = 4});
  EXPECT_EQ(static_cast<int>(used.size()), sms - 4);
  used = programs_used(ts::Settings{.max_sms = 100, .reserved_sms = 40});
  EXPECT_EQ(static_cast<int>(used.size()), std::min(100, sms - 40));
}

TEST(PersistentGpu, UncappedGridIsSmsTimesMultiplier) {
  TESSEL_REQUIRE_GPU();
  int sms = ts::rt::sm_count(0);
  for (int m : {1, 2}) {
    for (ts::PidType p : {ts::PidType::persistent_interleaved, ts::PidType::persistent_blocked}) {
      std::set<int64_t> used =
          programs_used(ts::Settings{.config = ts::Config{.pid_type = p, .num_sm_multiplier = m}});
      // 4096 tiles: interleaved, every program gets some; blocked, ceil(4096 / programs)
      // consecutive tiles each, which may leave the last programs without work.
      int grid = sms * m, tiles = 4096, per = (tiles + grid - 1) / grid;
      int expect = p == ts::PidType::persistent_blocked ? (tiles + per - 1) / per : grid;
      EXPECT_EQ(static_cast<int>(used.size()), expect) << ts::pid_type_name(p);
      EXPECT_EQ(*used.rbegin(), expect - 1) << ts::pid_type_name(p);
    }
  }
}

TEST(PersistentGpu, CapsThatLeaveNoSmAreAnError) {
  TESSEL_REQUIRE_GPU();
  EXPECT_THROW(programs_used(ts::Settings{.reserved_sms = 100000}), ts::UserError);
}

template <class K, class... A>
void expect_matches_interpreter(const K& k, double tol, const A&... gpu_args) {
  ts::Buffer got = k(gpu_args...);
  ts::Buffer want = k(gpu_args.to(ts::cpu())...);
  EXPECT_EQ(ts::count_mismatches(got.to(ts::cpu()), want, tol, tol), 0);
}

TEST(PersistentGpu, MoeRoutedMatchesInterpreter) {
  TESSEL_REQUIRE_GPU();
  ts::Buffer x = ts::Buffer::randn({8, 300, 2 * 160}, ts::bf16, ts::cuda(0), 31);
  ts::Buffer counts =
      ts::Buffer::from_vector({0, 1, 300, 150, 17, 299, 64, 65}, {8}, ts::i32, ts::cuda(0));
  expect_matches_interpreter(examples::make_silu_and_mul_routed(), 1e-2, x, counts);
}

TEST(PersistentGpu, MoePackedMatchesInterpreter) {
  TESSEL_REQUIRE_GPU();
  ts::Buffer x = ts::Buffer::randn({1000, 2 * 96}, ts::f32, ts::cuda(0), 32);
  for (int n : {0, 999, 1000})
    expect_matches_interpreter(examples::make_silu_and_mul_packed(), 1e-5, x,
                               ts::Buffer::scalar(n, ts::i64, ts::cuda(0)));
}

TEST(PersistentGpu, PaddedSumLargeVaryingBound) {
  TESSEL_REQUIRE_GPU();
  ts::Buffer x = ts::Buffer::randn({1 << 20, 128}, ts::f32, ts::cuda(0), 33);
  auto k = examples::make_padded_sum();
  for (int64_t n : {int64_t{0}, int64_t{12345}, int64_t{1} << 20, (int64_t{1} << 20) + 7}) {
    ts::Buffer out = k(x, ts::Buffer::scalar(static_cast<double>(n), ts::i32, ts::cuda(0)));
    // Reference on the host for a sample of rows (first, last valid, first invalid).
    std::vector<double> o = out.to_vector();
    ts::Buffer head = x.narrow(0, 0, 4).to(ts::cpu());
    std::vector<double> h = head.to_vector();
    for (int64_t i = 0; i < 4; ++i) {
      double s = 0;
      for (int64_t j = 0; j < 128; ++j) s += h[i * 128 + j];
      EXPECT_NEAR(o[i], i < n ? s : 0.0, 1e-3) << i;
    }
    int64_t valid = 0;
    for (int64_t i = 0; i < (int64_t{1} << 20); ++i) valid += o[i] != 0;
    EXPECT_EQ(valid, std::min<int64_t>(n, int64_t{1} << 20));
  }
}

}  // namespace

namespace {
// A device bound at the top of the i32 range: tile counts must not overflow (computed in
// 64 bits), and rows past the tensor are clamped by the accesses' bounds masks.
TEST(PersistentGpu, BoundNearInt32MaxIsClampedToTheTensor) {
  TESSEL_REQUIRE_GPU();
  ts::Buffer x = ts::Buffer::randn({100, 100}, ts::f32, ts::cuda(0), 41);
  ts::Buffer out =
      examples::make_padded_sum()(x, ts::Buffer::scalar(2147483647.0, ts::i32, ts::cuda(0)));
  ts::Buffer want = ts::Buffer::from_vector(row_sums(x, 100, 0), {100}, ts::f32);
  EXPECT_EQ(ts::count_mismatches(out.to(ts::cpu()), want, 1e-4, 1e-5), 0);
}
}  // namespace
