// A thread's memo of its recent calls' specializations by their arguments' exact signature
// (KernelImpl::call, detail::write_exact_signature): a later call of the same dtypes,
// shapes, strides, alignment and numbers skips the key and the checks its signature
// decides, and everything the signature does not hold is still checked and used on every
// call: number values, overlaps, environment variables, guards that read numbers.
#include <gtest/gtest.h>

#include <string>
#include <tessel/tessel.hpp>
#include <tessel/testing.hpp>
#include <vector>

#include "runtime/call_key.hpp"
#include "user_error_util.hpp"

namespace ts = tessel;

namespace {

using namespace user_error_test;  // user_error, vec

auto make_plus_one() {
  return ts::kernel("plus_one", {"src", "dst"}, [](ts::Tensor src, ts::Tensor dst) {
    for (auto t : ts::tile(src.size(0))) dst(t) = src(t) + 1;
  });
}

std::vector<int64_t> signature(ts::detail::CallArgs args,
                               const std::vector<ts::detail::ParamKind>& params, bool& ok) {
  std::vector<int64_t> out;
  ok = ts::detail::write_exact_signature(args, params, 0, out);
  return out;
}

// Equal signatures for equal dtypes, shapes and strides on other memory; none where two
// tensors share memory (their alias groups depend on the addresses); numbers by value
// where specialized, else by whether they fit 32 bits.
TEST(CallMemo, TheSignatureHoldsWhatTheKeyReads) {
  using ts::detail::ParamKind;
  const std::vector<ParamKind> params{ParamKind::tensor, ParamKind::tensor, ParamKind::symbolic,
                                      ParamKind::specialized_int};
  ts::Buffer a = ts::Buffer::zeros({64}, ts::f32), b = ts::Buffer::zeros({64}, ts::f32);
  ts::Buffer c = ts::Buffer::zeros({64}, ts::f32), d = ts::Buffer::zeros({64}, ts::f32);
  bool ok1 = false, ok2 = false;
  auto s1 =
      signature(std::vector<ts::detail::CallArg>{&a, &b, int64_t{3}, int64_t{7}}, params, ok1);
  auto s2 =
      signature(std::vector<ts::detail::CallArg>{&c, &d, int64_t{5}, int64_t{7}}, params, ok2);
  ASSERT_TRUE(ok1 && ok2);
  EXPECT_EQ(s1, s2);  // other memory, another unspecialized number
  auto s3 =
      signature(std::vector<ts::detail::CallArg>{&c, &d, int64_t{5}, int64_t{8}}, params, ok2);
  EXPECT_NE(s1, s3);  // another specialized value
  auto s4 = signature(std::vector<ts::detail::CallArg>{&c, &d, int64_t{1} << 40, int64_t{7}},
                      params, ok2);
  EXPECT_NE(s1, s4);  // a number past 32 bits
  ts::Buffer wide = ts::Buffer::zeros({128}, ts::f32);
  auto s5 =
      signature(std::vector<ts::detail::CallArg>{&wide, &d, int64_t{3}, int64_t{7}}, params, ok2);
  EXPECT_NE(s1, s5);  // another shape
  auto s6 =
      signature(std::vector<ts::detail::CallArg>{&a, &b, int64_t{3}, int64_t{7}}, params, ok2);
  EXPECT_EQ(s1, s6);
  ts::Buffer h = ts::Buffer::zeros({65}, ts::f32);
  ts::Buffer lo = h.narrow(0, 0, 64), hi = h.narrow(0, 1, 64);
  (void)signature(std::vector<ts::detail::CallArg>{&lo, &hi, int64_t{3}, int64_t{7}}, params, ok2);
  EXPECT_FALSE(ok2);  // sharing memory
  ts::Buffer undefined;
  (void)signature(std::vector<ts::detail::CallArg>{&undefined, &b, int64_t{3}, int64_t{7}}, params,
                  ok2);
  EXPECT_FALSE(ok2);
}

// After calls that are memoized, a call of the same shapes whose tensors overlap in part,
// or whose written tensor has a zero stride, is still refused.
TEST(CallMemo, OverlapsAreCheckedAfterMemoizedCalls) {
  auto k = make_plus_one();
  ts::Buffer y = ts::Buffer::zeros({4001}, ts::f32);
  ts::Buffer src = ts::Buffer::zeros({4000}, ts::f32), dst = ts::Buffer::zeros({4000}, ts::f32);
  for (int i = 0; i < 3; ++i) k(src, dst);
  EXPECT_EQ(dst.to_vector(), std::vector<double>(4000, 1.0));
  EXPECT_NE(user_error([&] {
              k(y.narrow(0, 0, 4000), y.narrow(0, 1, 4000));
            }).find("overlaps tensor argument 0 ('src') in part"),
            std::string::npos);
  ts::Buffer one = ts::Buffer::zeros({1}, ts::f32).view_as_strided({4000}, {0}, 0);
  EXPECT_NE(user_error([&] { k(src, one); }).find("has stride 0"), std::string::npos);
  k(src, dst);  // and memoized calls go on
  EXPECT_EQ(dst.to_vector(), std::vector<double>(4000, 1.0));
}

// A number read by a guard (the padded extent of arange(n)) is not in the signature: each
// call of the same tensor with another n runs with its own extent.
TEST(CallMemo, NumbersThatGuardsReadChooseTheSpecialization) {
  auto k = ts::kernel("arange_of_argument", [](ts::Tensor x, ts::Value n) {
    ts::Tensor out = x.new_empty({n}, ts::i32);
    for (auto g : ts::grid(1)) {
      (void)g;
      out(ts::all) = ts::arange(n);
    }
    return out;
  });
  ts::Buffer x = ts::Buffer::zeros({4}, ts::f32);
  for (int64_t n : {5, 5, 40, 40, 3, 700, 5}) {
    std::vector<double> want(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) want[static_cast<size_t>(i)] = static_cast<double>(i);
    EXPECT_EQ(k(x, n).to_vector(), want) << n;
  }
}

// TESSEL_INTERPRET and TESSEL_CHECK_BOUNDS are read on every call, memoized or not: the
// same arguments run checked once the variable is set, and unchecked after.
TEST(CallMemo, EnvironmentVariablesAreReadOnEveryCall) {
  // A bound of the caller's own (not a tensor's size, which would be checked against x on
  // every call): the load past x's end is masked unless check_bounds reports it.
  auto k = ts::kernel("copy_past_x", [](ts::Tensor x, ts::Tensor out, ts::Value n) {
    for (auto g : ts::grid(n)) out(g) = x(g);
  });
  ts::Buffer x = ts::Buffer::from_vector({2, 3}, {2}, ts::f32);
  ts::Buffer out = ts::Buffer::zeros({3}, ts::f32);
  for (int i = 0; i < 3; ++i) k(x, out, 3);  // the load past x is masked: 0
  EXPECT_EQ(out.to_vector(), (std::vector<double>{2, 3, 0}));
  ::setenv("TESSEL_CHECK_BOUNDS", "1", 1);
  const std::string msg = user_error([&] { k(x, out, 3); });
  ::unsetenv("TESSEL_CHECK_BOUNDS");
  EXPECT_NE(msg.find("out of range"), std::string::npos) << msg;
  ::setenv("TESSEL_INTERPRET", "maybe", 1);
  const std::string bad = user_error([&] { k(x, out, 3); });
  ::unsetenv("TESSEL_INTERPRET");
  EXPECT_NE(bad.find("TESSEL_INTERPRET=maybe is not a boolean"), std::string::npos) << bad;
  k(x, out, 3);
  EXPECT_EQ(out.to_vector(), (std::vector<double>{2, 3, 0}));
}

// x + i + 100 round, as kernel "add_<i>" capturing both numbers.
auto make_adder(int i, int round) {
  return ts::kernel(
      "add_" + std::to_string(i),
      [i, round](ts::Tensor x) {
        ts::Tensor o = ts::empty_like(x);
        for (auto t : ts::tile(x.size(0))) o(t) = x(t) + static_cast<double>(i + round * 100);
        return o;
      },
      ts::Settings{.static_captures = true});
}

// More kernels than a thread's memo holds, called in turn, and kernels made again in the
// place of destroyed ones: each call runs its own kernel.
TEST(CallMemo, ManyKernelsAndRemadeKernelsEachRunTheirOwn) {
  ts::Buffer x = ts::Buffer::from_vector({1, 2}, {2}, ts::f32);
  for (int round = 0; round < 3; ++round) {
    std::vector<decltype(make_adder(0, 0))> kernels;
    for (int i = 0; i < 12; ++i) kernels.push_back(make_adder(i, round));
    for (int pass = 0; pass < 2; ++pass)
      for (int i = 0; i < 12; ++i) {
        const double add = i + round * 100;
        EXPECT_EQ(kernels[i](x).to_vector(), (std::vector<double>{1 + add, 2 + add}))
            << round << " " << i;
      }
  }
}

}  // namespace
