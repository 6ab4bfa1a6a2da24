// Padded extents computed on the host from sizes (docs/DECISIONS.md, "Padded extents
// derived from sizes are guarded per call"): the specialization key holds each argument
// size's next power of two, so an extent such as x.size(0) * 3 may fall in another
// power-of-two bucket on a call of the same key; that call selects (traces) another
// specialization, on the interpreter and in generated code alike.
#include <gtest/gtest.h>

#include <tessel/tessel.hpp>

#include "interp_test_util.hpp"
#include "nvrtc_test_util.hpp"
#include "per_call_kernels.hpp"

namespace ts = tessel;

namespace {

using per_call_kernels::make_arange_times_three;
using per_call_kernels::make_sum_of_allocation;

/// out[i] = i for i < n, n a symbolic integer argument (the key holds no value of it).
auto make_arange_of_argument() {
  return ts::kernel("arange_of_argument", [](ts::Tensor x, ts::Value n) {
    ts::Tensor out = x.new_empty({n}, ts::i32);
    for (auto g : ts::grid(1)) {
      (void)g;
      out(ts::all) = ts::arange(n);
    }
    return out;
  });
}

// x.size(0) = 5 and 7 share the key's bucket (8); 15 and 21 do not share one (16, 32).
constexpr int64_t kSmall = 5, kLarge = 7;

std::vector<double> even_numbers(int64_t n) { return interp_test::ramp(n, 0, 2); }

TEST(ExtentGuards, AnArangeOfAComputedExtentIsRightInEveryBucket) {
  auto k = make_arange_times_three();
  for (int64_t n : {kSmall, kLarge, kSmall}) {
    ts::Buffer out = k(ts::Buffer::zeros({n}, ts::f32));
    EXPECT_EQ(out.shape(), std::vector<int64_t>{3 * n});
    EXPECT_EQ(out.to_vector(), even_numbers(3 * n)) << "x.size(0) = " << n;
  }
}

TEST(ExtentGuards, AnAllExtentOfAnAllocationSizedFromArgumentsIsRightInEveryBucket) {
  auto k = make_sum_of_allocation();
  for (int64_t n : {kSmall, kLarge, kSmall})
    EXPECT_EQ(k(ts::Buffer::zeros({n}, ts::f32)).to_vector(), std::vector<double>{6.0 * n})
        << "x.size(0) = " << n;
}

// The generated code masks the padded extent: lanes past 16 (15 elements) or 32 (21).
template <class K>
void expect_padded_extents(const K& k, bool large_first) {
  ts::Buffer x_small = ts::Buffer::zeros({kSmall}, ts::f32),
             x_large = ts::Buffer::zeros({kLarge}, ts::f32);
  std::string large = large_first ? nvrtc_test::compile(k, x_large) : "";
  std::string small = nvrtc_test::compile(k, x_small);
  if (!large_first) large = nvrtc_test::compile(k, x_large);
  EXPECT_NE(small.find("TS_FLAT(r) < 16"), std::string::npos) << small;
  EXPECT_EQ(small.find("TS_FLAT(r) < 32"), std::string::npos) << small;
  EXPECT_NE(large.find("TS_FLAT(r) < 32"), std::string::npos) << large;
  EXPECT_EQ(large.find("TS_FLAT(r) < 16"), std::string::npos) << large;
}

TEST(ExtentGuards, AnArangeOfAnIntegerArgumentIsRightInEveryBucket) {
  auto k = make_arange_of_argument();
  ts::Buffer x = ts::Buffer::zeros({1}, ts::f32);
  for (int64_t n : {15, 21, 3, 15})
    EXPECT_EQ(k(x, n).to_vector(), interp_test::ramp(n)) << "n = " << n;
}

int g_traces = 0;

TEST(ExtentGuards, EachBucketIsTracedOnce) {
  auto k = ts::kernel("counted_arange", [](ts::Tensor x) {
    ++g_traces;
    ts::Tensor out = ts::empty({x.size(0) * 3}, ts::i32);
    for (auto g : ts::grid(1)) {
      (void)g;
      out(ts::all) = ts::arange(x.size(0) * 3);
    }
    return out;
  });
  g_traces = 0;
  ts::Buffer x_small = ts::Buffer::zeros({kSmall}, ts::f32),
             x_large = ts::Buffer::zeros({kLarge}, ts::f32);
  for (const ts::Buffer& x : {x_small, x_small, x_large, x_large, x_small}) k(x);
  EXPECT_EQ(g_traces, 2);
}

TEST(ExtentGuards, GeneratedCodeOfAnArangeFollowsThePaddedExtentOfEachCall) {
  REQUIRE_NVRTC();
  for (bool large_first : {false, true})
    expect_padded_extents(make_arange_times_three(), large_first);
}

TEST(ExtentGuards, GeneratedCodeOfAnAllocationsAllExtentFollowsThePaddedExtentOfEachCall) {
  REQUIRE_NVRTC();
  for (bool large_first : {false, true})
    expect_padded_extents(make_sum_of_allocation(), large_first);
}

}  // namespace
