// Kernel lambdas with captures: traced on every call, so a captured variable that changes
// what the kernel does gets a specialization of its own (Helion specializes on a kernel's
// closure values); Settings::static_captures traces once.
#include <gtest/gtest.h>

#include <vector>

#include "interp_test_util.hpp"

namespace ts = tessel;
using interp_test::buffer;
using interp_test::ramp;

namespace {

std::vector<double> plus(const std::vector<double>& x, double c) {
  std::vector<double> y = x;
  for (double& v : y) v += c;
  return y;
}

TEST(Captures, AByReferenceCaptureStaysCurrent) {
  double offset = 1;
  auto k = ts::kernel("add_offset", [&offset](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) + offset;
    return out;
  });
  std::vector<double> x = ramp(10);
  EXPECT_EQ(k(buffer(x, {10})).to_vector(), plus(x, 1));
  offset = 5;
  EXPECT_EQ(k(buffer(x, {10})).to_vector(), plus(x, 5));
  offset = 1;  // back to a trace seen before: its specialization is reused
  EXPECT_EQ(k(buffer(x, {10})).to_vector(), plus(x, 1));
}

TEST(Captures, ACaptureChangingTheLoopStructureRetraces) {
  bool twice = false;
  auto k = ts::kernel("maybe_twice", [&twice](ts::Tensor x) {
    ts::Tensor out = ts::zeros_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t);
    if (twice)
      for (auto t : ts::tile(x.size(0))) out(t) = out(t) + x(t);
    return out;
  });
  std::vector<double> x = ramp(6, 1);
  EXPECT_EQ(k(buffer(x, {6})).to_vector(), x);
  twice = true;
  EXPECT_EQ(k(buffer(x, {6})).to_vector(), (std::vector<double>{2, 4, 6, 8, 10, 12}));
}

TEST(Captures, AByValueCaptureIsFrozenWhenTheKernelIsDefined) {
  double offset = 2;
  auto k = ts::kernel("add_copy", [offset](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) + offset;
    return out;
  });
  offset = 7;  // the lambda holds its own copy, as C++ says
  std::vector<double> x = ramp(4);
  EXPECT_EQ(k(buffer(x, {4})).to_vector(), plus(x, 2));
}

// static_captures promises the captures never change: the lambda is traced once per
// specialization, and a later change is not seen (the documented cost of the promise).
TEST(Captures, StaticCapturesTraceOnce) {
  double offset = 1;
  int traces = 0;
  auto k = ts::kernel(
      "static_offset",
      [&offset, &traces](ts::Tensor x) {
        ++traces;
        ts::Tensor out = ts::empty_like(x);
        for (auto t : ts::tile(x.size(0))) out(t) = x(t) + offset;
        return out;
      },
      ts::Settings{.static_captures = true});
  std::vector<double> x = ramp(4);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(k(buffer(x, {4})).to_vector(), plus(x, 1));
  EXPECT_EQ(traces, 1);
  offset = 3;
  EXPECT_EQ(k(buffer(x, {4})).to_vector(), plus(x, 1));
}

// Without static_captures each call traces (one more trace the first time, to trace the
// specialization itself); a lambda without captures traces once.
TEST(Captures, EveryCallTracesOnlyWhenTheLambdaCaptures) {
  int traces = 0;
  auto k = ts::kernel("counted", [&traces](ts::Tensor x) {
    ++traces;
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) * 2;
    return out;
  });
  std::vector<double> x = ramp(4);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(k(buffer(x, {4})).to_vector(), (std::vector<double>{0, 2, 4, 6}));
  EXPECT_EQ(traces, 4);
}

}  // namespace
