// Allocations like an argument (ts::empty_like, zeros_like, full_like) take its layout on
// each call, as torch's preserve_format does: the argument's strides when it is dense and
// non-overlapping (a transposed argument gives a transposed result), else dense strides
// in its order of dims (at::infer_dense_strides).
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <tessel/tessel.hpp>
#include <vector>

#include "common/preserve_format.hpp"
#include "interp_test_util.hpp"
#include "nvrtc_test_util.hpp"
#include "per_call_kernels.hpp"

namespace ts = tessel;
using Ints = std::vector<int64_t>;

namespace {

using per_call_kernels::make_double;

/// a = full_like(x, 7) with row 0 set to x; b = zeros_like(a) with column 0 set to 1;
/// c = empty_like(x) holding a's stride(0) at every element.
auto make_filled() {
  return ts::kernel("filled_like", [](ts::Tensor x) {
    ts::Tensor a = ts::full_like(x, 7.0);
    ts::Tensor b = ts::zeros_like(a);
    ts::Tensor c = ts::empty_like(x);
    ts::Value a_stride0 = a.stride(0);
    for (auto tn : ts::tile(x.size(1))) a(0, tn) = x(0, tn);
    for (auto tm : ts::tile(x.size(0))) b(tm, 0) = ts::full({tm}, 1.0);
    for (auto [tm, tn] : ts::tile(x.size(0), x.size(1)))
      c(tm, tn) = ts::full({tm, tn}, 0.0) + a_stride0;
    return std::make_tuple(a, b, c);
  });
}

/// A [rows, cols] argument stored transposed: strides (1, rows).
ts::Buffer transposed(int64_t rows, int64_t cols) {
  return interp_test::buffer(interp_test::ramp(rows * cols), {cols, rows}).transpose(0, 1);
}

std::vector<double> times(const std::vector<double>& v, double k) {
  std::vector<double> out;
  for (double x : v) out.push_back(x * k);
  return out;
}

TEST(AllocLayout, PreserveFormatStridesFollowTorch) {
  // Dense and non-overlapping: the strides themselves (size-1 dims keep theirs).
  EXPECT_EQ(ts::preserve_format_strides({4, 6}, {1, 4}), (Ints{1, 4}));
  EXPECT_EQ(ts::preserve_format_strides({2, 3, 4}, {12, 1, 3}), (Ints{12, 1, 3}));
  EXPECT_EQ(ts::preserve_format_strides({4, 1, 6}, {6, 5, 1}), (Ints{6, 5, 1}));
  // Not dense: dense strides in the same order (a column slice, a transposed one).
  EXPECT_EQ(ts::preserve_format_strides({6, 4}, {8, 1}), (Ints{4, 1}));
  EXPECT_EQ(ts::preserve_format_strides({4, 6}, {1, 8}), (Ints{1, 4}));
  // Overlapping: a broadcast (stride-0) dim keeps its place; equal strides put the
  // smaller size inside (at::infer_dense_strides' example and tie rule).
  EXPECT_EQ(ts::preserve_format_strides({6, 5, 4, 3, 2}, {6, 0, 120, 0, 1}),
            (Ints{6, 36, 180, 2, 1}));
  EXPECT_EQ(ts::preserve_format_strides({3, 8}, {1, 1}), (Ints{1, 3}));
  EXPECT_EQ(ts::preserve_format_strides({5, 7}, {0, 1}), (Ints{7, 1}));
  EXPECT_TRUE(ts::non_overlapping_and_dense({4, 6}, {1, 4}));
  EXPECT_FALSE(ts::non_overlapping_and_dense({6, 4}, {8, 1}));
  EXPECT_FALSE(ts::non_overlapping_and_dense({3, 8}, {1, 1}));
}

TEST(AllocLayout, EmptyLikeOfATransposedArgumentIsTransposed) {
  ts::Buffer x = transposed(5, 3);
  ASSERT_EQ(x.strides(), (Ints{1, 5}));
  ts::Buffer out = make_double()(x);
  EXPECT_EQ(out.shape(), (Ints{5, 3}));
  EXPECT_EQ(out.strides(), (Ints{1, 5}));
  EXPECT_EQ(out.to_vector(), times(x.to_vector(), 2));
}

TEST(AllocLayout, EmptyLikeOfAContiguousArgumentStaysContiguousAcrossLayouts) {
  // One kernel called with a contiguous, a transposed and again a contiguous argument of
  // one key: each call's allocation follows its argument.
  auto k = make_double();
  ts::Buffer row_major = interp_test::buffer(interp_test::ramp(15), {5, 3});
  ts::Buffer t = transposed(5, 3);
  for (const ts::Buffer& x : {row_major, t, row_major}) {
    ts::Buffer out = k(x);
    EXPECT_EQ(out.strides(), x.strides());
    EXPECT_EQ(out.to_vector(), times(x.to_vector(), 2));
  }
}

TEST(AllocLayout, ANonDenseArgumentGivesDenseStridesInItsOrder) {
  // Columns 0..3 of a transposed [8, 6]: shape [4, 6], strides (1, 8).
  ts::Buffer x = interp_test::buffer(interp_test::ramp(48), {6, 8}).transpose(0, 1).narrow(0, 0, 4);
  ASSERT_EQ(x.strides(), (Ints{1, 8}));
  ts::Buffer out = make_double()(x);
  EXPECT_EQ(out.strides(), (Ints{1, 4}));
  EXPECT_EQ(out.to_vector(), times(x.to_vector(), 2));
}

TEST(AllocLayout, FillsAndStridesOfAllocationsLikeATransposedArgument) {
  ts::Buffer x = transposed(4, 3);  // [4, 3], strides (1, 4)
  auto [a, b, c] = make_filled()(x);
  EXPECT_EQ(a.strides(), (Ints{1, 4}));
  EXPECT_EQ(b.strides(), (Ints{1, 4}));  // like `a`, an allocation like x
  EXPECT_EQ(c.strides(), (Ints{1, 4}));
  std::vector<double> xs = x.to_vector(), av = a.to_vector(), bv = b.to_vector(),
                      cv = c.to_vector();
  for (int64_t m = 0; m < 4; ++m)
    for (int64_t n = 0; n < 3; ++n) {
      size_t i = static_cast<size_t>(m * 3 + n);
      EXPECT_EQ(av[i], m == 0 ? xs[i] : 7.0) << m << "," << n;
      EXPECT_EQ(bv[i], n == 0 ? 1.0 : 0.0) << m << "," << n;
      EXPECT_EQ(cv[i], 1.0) << m << "," << n;  // a.stride(0) read in host code
    }
}

TEST(AllocLayout, GeneratedCodeReadsTheStridesOfATransposedAllocation) {
  REQUIRE_NVRTC();
  auto k = make_double();
  std::string row_major = nvrtc_test::compile(k, ts::Buffer::zeros({64, 32}, ts::f32));
  std::string t = nvrtc_test::compile(k, ts::Buffer::zeros({32, 64}, ts::f32).transpose(0, 1));
  // The output's innermost stride: 1 in row-major code, a parameter in the other.
  EXPECT_EQ(row_major.find("_stride1"), std::string::npos) << row_major;
  EXPECT_TRUE(std::regex_search(t, std::regex("buf[0-9]+_stride1"))) << t;
}

TEST(AllocLayout, AnArgumentOfTheSameKeyWithAnotherLayoutGetsItsOwnCode) {
  // Both [4, 6] f32 with innermost stride not 1 and unaligned outer strides (one key): a
  // strided view with steps (13, 2), not dense (its allocation is row-major), and a
  // transposed [6, 4] (its allocation is transposed). The per-call guard tells them apart.
  REQUIRE_NVRTC();
  ts::Buffer base = ts::Buffer::zeros({64}, ts::f32);
  ts::Buffer stepped = base.view_as_strided({4, 6}, {13, 2}, 0);
  ts::Buffer t = ts::Buffer::zeros({6, 4}, ts::f32).transpose(0, 1);
  std::regex buf_stride1("buf[0-9]+_stride1");
  for (bool stepped_first : {true, false}) {
    auto k = make_double();
    std::string first = nvrtc_test::compile(k, stepped_first ? stepped : t);
    std::string second = nvrtc_test::compile(k, stepped_first ? t : stepped);
    const std::string& s = stepped_first ? first : second;
    const std::string& tt = stepped_first ? second : first;
    EXPECT_FALSE(std::regex_search(s, buf_stride1)) << s;
    EXPECT_TRUE(std::regex_search(tt, buf_stride1)) << tt;
  }
  EXPECT_EQ(make_double()(t).strides(), (Ints{1, 4}));
  EXPECT_EQ(make_double()(stepped).strides(), (Ints{6, 1}));
}

// The host program moves a returned allocation out (its last use); one returned twice is
// the same tensor twice, an argument returned is the argument.
TEST(AllocLayout, AnAllocationReturnedTwiceIsOneTensorTwice) {
  auto k = ts::kernel("twice", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) * 2.0;
    return std::make_tuple(out, x, out);
  });
  ts::Buffer x = interp_test::buffer(interp_test::ramp(10), {10});
  auto [a, b, c] = k(x);
  EXPECT_EQ(a.to_vector(), times(interp_test::ramp(10), 2.0));
  EXPECT_EQ(a.storage(), c.storage());
  EXPECT_EQ(b.storage(), x.storage());
  EXPECT_EQ(c.to_vector(), a.to_vector());
}

}  // namespace
