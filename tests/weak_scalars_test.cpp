// Float scalar arguments (ts::Value parameters passed a double) are weakly typed, like
// Python floats in PyTorch and Helion: they take the dtype of the tensor values they meet
// and keep their full double value, so an f64 kernel computes with it exactly while f32
// and bf16 kernels are unchanged (docs/DECISIONS.md).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tessel/tessel.hpp>

#include "interp_test_util.hpp"
#include "nvrtc_test_util.hpp"
#include "per_call_kernels.hpp"

namespace ts = tessel;

namespace {

using per_call_kernels::make_by_size_and_n;
using per_call_kernels::make_loss_scale;
using per_call_kernels::make_scale;
using per_call_kernels::make_tenth;

// 1e-12 and a difference f32 cannot hold (2^-30 relative: below f32's 2^-24 spacing).
const double kEps = 1e-12 * (1 + std::ldexp(1.0, -30));

/// out[i] = x[i] * 1e-5, a C++ literal: the oracle of a weak argument's rounding.
auto make_scale_by_literal() {
  return ts::kernel("scale_by_literal", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) * 1e-5;
    return out;
  });
}

/// out[i] = x[i] + (eps * 2 + 1) / 4, with eps's arithmetic in host code.
auto make_scaled_eps(ts::DType* dtype_seen = nullptr) {
  return ts::kernel("add_scaled_eps", [dtype_seen](ts::Tensor x, ts::Value eps) {
    ts::Tensor out = ts::empty_like(x);
    ts::Value e = (eps * 2 + 1) / 4;
    if (dtype_seen) *dtype_seen = e.dtype();
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) + e;
    return out;
  });
}

ts::Buffer ones(ts::DType t) { return ts::Buffer::ones({5}, t); }

TEST(WeakScalars, AnF64KernelUsesTheArgumentsFullValue) {
  ASSERT_NE(static_cast<double>(static_cast<float>(kEps)), kEps);
  ts::DType seen = ts::f32;
  std::vector<double> out = make_scale(&seen)(ones(ts::f64), kEps).to_vector();
  EXPECT_EQ(seen, ts::f64);
  for (double v : out) EXPECT_EQ(v, kEps);
}

TEST(WeakScalars, AnF32KernelStaysF32) {
  ts::DType seen = ts::f64;
  ts::Buffer x = interp_test::buffer({1, 3, 1.0 / 3, 7, 1e30}, {5}, ts::f32);
  ts::Buffer out = make_scale(&seen)(x, kEps);
  EXPECT_EQ(seen, ts::f32);
  EXPECT_EQ(out.dtype(), ts::f32);
  std::vector<double> xs = x.to_vector(), got = out.to_vector();
  for (size_t i = 0; i < xs.size(); ++i)
    EXPECT_EQ(got[i], static_cast<float>(static_cast<float>(xs[i]) * static_cast<float>(kEps)));
}

TEST(WeakScalars, ABf16KernelStaysBf16AndTakesTheArgumentAsALiteral) {
  ts::DType seen = ts::f32;
  ts::Buffer x = interp_test::buffer({1, 3, 0.3, 7, -250}, {5}, ts::bf16);
  std::vector<double> got = make_scale(&seen)(x, 1e-5).to_vector();
  EXPECT_EQ(seen, ts::bf16);
  EXPECT_EQ(got, make_scale_by_literal()(x).to_vector());
}

TEST(WeakScalars, HostArithmeticOfAWeakArgumentStaysWeakAndExact) {
  ts::DType seen = ts::f64;
  std::vector<double> out =
      make_scaled_eps(&seen)(ts::Buffer::zeros({5}, ts::f64), kEps).to_vector();
  EXPECT_EQ(seen, ts::f32);  // a weak float's own dtype is the default one
  for (double v : out) EXPECT_EQ(v, (kEps * 2 + 1) / 4);
  // In an f32 kernel the same expression is an f32 value.
  std::vector<double> f32_out =
      make_scaled_eps()(ts::Buffer::zeros({5}, ts::f32), kEps).to_vector();
  for (double v : f32_out) EXPECT_EQ(v, static_cast<float>((kEps * 2 + 1) / 4));
}

TEST(WeakScalars, HostArithmeticIsRoundedToF32OnceAfterItsLastStep) {
  // 1e39 is past f32's range, 1e38 is not: Python's (s / 10) is 1e38, a float.
  std::vector<double> out = make_tenth()(ts::Buffer::ones({5}, ts::f32), 1e39).to_vector();
  for (double v : out) EXPECT_EQ(v, static_cast<float>(1e38));
  // Also where the quotient is read in a loop nested in the one that reads s.
  auto nested = ts::kernel("nested_tenth", [](ts::Tensor x, ts::Value s) {
    ts::Tensor out = ts::empty_like(x);
    for (auto tm : ts::tile(x.size(0))) {
      ts::Value tenth = s / 10.0;
      for (auto tn : ts::tile(x.size(1))) out(tm, tn) = x(tm, tn) * tenth;
    }
    return out;
  });
  for (double v : nested(ts::Buffer::ones({2, 3}, ts::f32), -1e39).to_vector())
    EXPECT_EQ(v, static_cast<float>(-1e38));
}

TEST(WeakScalars, AStoreOfAWeakArgumentIntoAnF64TensorKeepsItsValue) {
  auto k = ts::kernel("store_eps", [](ts::Tensor x, ts::Value eps) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = eps;
    return out;
  });
  for (double v : k(ones(ts::f64), kEps).to_vector()) EXPECT_EQ(v, kEps);
}

TEST(WeakScalars, AWeakValueReadInANestedLoopKeepsItsFullValue) {
  // eps read in a device loop nested in the top-level one, and eps * 2 computed in the
  // top-level loop and read in the nested one.
  auto k = ts::kernel("nested_eps", [](ts::Tensor x, ts::Value eps) {
    ts::Tensor out = ts::empty_like(x);
    for (auto tm : ts::tile(x.size(0))) {
      ts::Value twice = eps * 2;
      for (auto tn : ts::tile(x.size(1))) out(tm, tn) = x(tm, tn) * eps + twice;
    }
    return out;
  });
  for (double v : k(ts::Buffer::ones({3, 40}, ts::f64), kEps).to_vector())
    EXPECT_EQ(v, kEps + kEps * 2);
  REQUIRE_NVRTC();
  std::string src = nvrtc_test::compile(k, ts::Buffer::ones({3, 40}, ts::f64), kEps);
  EXPECT_NE(src.find("double s"), std::string::npos) << src;
  EXPECT_EQ(src.find("float s"), std::string::npos) << src;
}

TEST(WeakScalars, AnF64KernelTakesTheArgumentAsADouble) {
  REQUIRE_NVRTC();
  std::string f64 = nvrtc_test::compile(make_scale(), ones(ts::f64), kEps);
  EXPECT_NE(f64.find("double s"), std::string::npos) << f64;
  EXPECT_EQ(f64.find("float s"), std::string::npos) << f64;
  std::string f32 = nvrtc_test::compile(make_scale(), ones(ts::f32), kEps);
  EXPECT_NE(f32.find("float s"), std::string::npos) << f32;
  EXPECT_EQ(f32.find("double"), std::string::npos) << f32;
  std::string host_math = nvrtc_test::compile(make_scaled_eps(), ones(ts::f64), kEps);
  EXPECT_NE(host_math.find("double s"), std::string::npos) << host_math;
}

/// v rounded to dtype t, through a Buffer's element write (the oracle of a rounding).
double rounded(double v, ts::DType t) { return interp_test::buffer({v}, {1}, t).to_vector()[0]; }

// torch's opmath: an f16 or bf16 value times a Python number is computed in f32 and
// rounded once. 65536 (a loss scale) does not fit f16; rounded to f16 first it would give
// inf for every x and NaN for x = 0.
TEST(WeakScalars, A16BitFloatTimesANumberIsComputedInF32AndRoundedOnce) {
  for (ts::DType t : {ts::f16, ts::bf16}) {
    ts::Buffer x = interp_test::buffer({0, 0.001, 0.5, -0.125, 1.0 / 16384}, {5}, t);
    auto [by_arg, by_literal, by_int] = make_loss_scale()(x, 65536.0);
    std::vector<double> xs = x.to_vector();
    for (size_t i = 0; i < xs.size(); ++i) {
      const double want = rounded(static_cast<float>(xs[i]) * 65536.0f, t);
      EXPECT_TRUE(std::isfinite(want)) << i;
      EXPECT_EQ(by_arg.to_vector()[i], want) << ts::dtype_name(t) << " " << i;
      EXPECT_EQ(by_literal.to_vector()[i], want) << ts::dtype_name(t) << " " << i;
      EXPECT_EQ(by_int.to_vector()[i], rounded(static_cast<float>(xs[i]) * 100000.0f, t))
          << ts::dtype_name(t) << " " << i;
    }
  }
  // f16(0.001) = 1049 / 2^20: times 65536 it is 65.5625 exactly.
  ts::Buffer x = interp_test::buffer({0.001}, {1}, ts::f16);
  EXPECT_EQ(std::get<0>(make_loss_scale()(x, 65536.0)).to_vector()[0], 65.5625);
  // bf16 times a number past bf16's largest value (3.39e38), as torch computes it.
  ts::Buffer y = interp_test::buffer({0.25}, {1}, ts::bf16);
  EXPECT_EQ(std::get<0>(make_loss_scale()(y, 3.4e38)).to_vector()[0],
            rounded(0.25f * 3.4e38f, ts::bf16));
}

// A size or an integer argument is a host scalar (torch: a CPU scalar, Helion: a Python
// int): it takes part in f32 with its own value, as a C++ number does.
TEST(WeakScalars, A16BitFloatWithASizeOrAnIntegerArgumentIsComputedInF32) {
  auto k = make_by_size_and_n();
  // bf16: 257 rounds to 256; f16: 100000 and 70000 round to infinity, 2049 to 2048.
  ts::Buffer ones = ts::Buffer::ones({257}, ts::bf16);
  auto [by_size, by_n, equal] = k(ones, int64_t{2049});
  EXPECT_EQ(by_size.to_vector()[0], rounded(1.0f / 257.0f, ts::bf16));
  EXPECT_NE(by_size.to_vector()[0], rounded(1.0 / 256, ts::bf16));
  ts::Buffer x = interp_test::buffer({0.001, 2048}, {2}, ts::f16);
  auto [f16_by_size, f16_by_n, f16_equal] = k(x, int64_t{100000});
  const double x0 = x.to_vector()[0];
  EXPECT_EQ(f16_by_n.to_vector()[0], rounded(static_cast<float>(x0) * 100000.0f, ts::f16));
  EXPECT_TRUE(std::isfinite(f16_by_n.to_vector()[0]));
  EXPECT_EQ(std::get<2>(k(x, int64_t{2049})).to_vector(), (std::vector<double>{0, 0}));
  EXPECT_EQ(std::get<2>(k(x, int64_t{2048})).to_vector(), (std::vector<double>{0, 1}));
}

// The same for host arithmetic of an integer argument written inside the loop, which
// reads the argument through the loop's placeholder.
TEST(WeakScalars, IntegerHostArithmeticInTheLoopIsAHostScalar) {
  auto k = ts::kernel("times_3n", [](ts::Tensor x, ts::Value n) {
    ts::Tensor out = ts::empty_like(x), diff = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) {
      out(t) = x(t) * (n * 3);
      diff(t) = x(t) - (n - 1);
    }
    return std::make_tuple(out, diff);
  });
  auto [out, diff] = k(interp_test::buffer({0.5, 2048}, {2}, ts::f16), int64_t{30000});
  EXPECT_EQ(out.to_vector()[0], rounded(45000, ts::f16));  // 44992, not inf
  auto [out2, diff2] = k(interp_test::buffer({0.5, 2048}, {2}, ts::f16), int64_t{2050});
  EXPECT_EQ(diff2.to_vector()[1], -1);  // 2048 - 2049 in f32, not 2048 - 2048
}

TEST(WeakScalars, A16BitFloatComparesWithANumberInF32) {
  auto k = ts::kernel("equals_a_tenth", [](ts::Tensor x) {
    ts::Tensor out = ts::empty({x.size(0)}, ts::boolean);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) == 0.1;
    return out;
  });
  // No f16 is 0.1f: the f16 nearest to 0.1 is 0.0999755859375.
  EXPECT_EQ(k(interp_test::buffer({0.1, 0.5}, {2}, ts::f16)).to_vector(),
            (std::vector<double>{0, 0}));
  REQUIRE_NVRTC();
  std::string src = nvrtc_test::compile(make_loss_scale(), ones(ts::f16), 65536.0);
  // The literal is the f32 65536, and the products are rounded by their f16 stores.
  EXPECT_NE(src.find("* 65536.0f;"), std::string::npos) << src;
}

}  // namespace
