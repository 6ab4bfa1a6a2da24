// Interpreter: elementwise arithmetic, comparisons, logical and bitwise ops, where, casts,
// math functions, dtype promotion and rounding, checked against plain C++.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "cast_kernels.hpp"
#include "interp_test_util.hpp"
#include "nvrtc_test_util.hpp"

namespace ts = tessel;
using interp_test::buffer;
using interp_test::f32;

namespace {

// Runs `k(x, y)` on 1-D float inputs and returns the output values.
template <class K>
std::vector<double> run2(const K& k, const std::vector<double>& x, const std::vector<double>& y,
                         ts::DType t = ts::f32) {
  int64_t n = static_cast<int64_t>(x.size());
  return k(buffer(x, {n}, t), buffer(y, {n}, t)).to_vector();
}

// Rounds through a one-element Buffer of dtype `t` (the reference for f16 / bf16).
double round_as(ts::DType t, double v) { return buffer({v}, {1}, t).item(); }

const std::vector<double> kA = {-7.5, -2, -0.25, 0, 1.5, 3, 7.25, 100};
const std::vector<double> kB = {2, -3, 0.5, 1.5, -4, 3, 2.5, -0.75};

}  // namespace

TEST(InterpElementwise, ArithmeticOnF32RoundsEachResult) {
  auto k = ts::kernel("arith", [](ts::Tensor x, ts::Tensor y) {
    ts::Tensor out = ts::empty({4, x.size(0)}, ts::f32);
    for (auto t : ts::tile(x.size(0))) {
      out(0, t) = x(t) + y(t);
      out(1, t) = x(t) - y(t);
      out(2, t) = x(t) * y(t);
      out(3, t) = x(t) / y(t);
    }
    return out;
  });
  std::vector<double> got = k(buffer(kA, {8}), buffer(kB, {8})).to_vector();
  for (size_t i = 0; i < kA.size(); ++i) {
    EXPECT_EQ(got[i], f32(kA[i] + kB[i]));
    EXPECT_EQ(got[8 + i], f32(kA[i] - kB[i]));
    EXPECT_EQ(got[16 + i], f32(kA[i] * kB[i]));
    EXPECT_EQ(got[24 + i], f32(kA[i] / kB[i]));
  }
}

TEST(InterpElementwise, TrueDivisionOfIntegersGivesFloat) {
  auto k = ts::kernel("int_div", [](ts::Tensor x, ts::Tensor y) {
    ts::Tensor out = ts::empty({x.size(0)}, ts::f32);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) / y(t);
    return out;
  });
  EXPECT_EQ(run2(k, {7, -7, 1}, {2, 2, 3}, ts::i32),
            (std::vector<double>{3.5, -3.5, f32(1.0 / 3)}));
}

TEST(InterpElementwise, RemainderTakesTheSignOfTheDivisor) {
  auto k = ts::kernel("mod", [](ts::Tensor x, ts::Tensor y) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) % y(t);
    return out;
  });
  EXPECT_EQ(run2(k, {-7, 7, -7, 7, 6}, {3, 3, -3, -3, 3}, ts::i32),
            (std::vector<double>{2, 1, -1, -2, 0}));
  EXPECT_EQ(run2(k, {-7.5, 7.5, -7.5, 7.5}, {2, 2, -2, -2}),
            (std::vector<double>{0.5, 1.5, -1.5, -0.5}));
}

TEST(InterpElementwise, FloordivRoundsTowardNegativeInfinity) {
  auto k = ts::kernel("floordiv", [](ts::Tensor x, ts::Tensor y) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = ts::floordiv(x(t), y(t));
    return out;
  });
  EXPECT_EQ(run2(k, {-7, 7, -7, 7, -6}, {2, 2, -2, -2, 3}, ts::i64),
            (std::vector<double>{-4, 3, 3, -4, -2}));
  EXPECT_EQ(run2(k, {-7.5, 7.5}, {2, 2}), (std::vector<double>{-4, 3}));
}

TEST(InterpElementwise, IntegerDivisionByZeroGivesZero) {
  auto k = ts::kernel("div_zero", [](ts::Tensor x, ts::Tensor y) {
    ts::Tensor out = ts::empty({2, x.size(0)}, ts::i32);
    for (auto t : ts::tile(x.size(0))) {
      out(0, t) = ts::floordiv(x(t), y(t));
      out(1, t) = x(t) % y(t);
    }
    return out;
  });
  EXPECT_EQ(run2(k, {5, -5}, {0, 0}, ts::i32), std::vector<double>(4, 0));
}

TEST(InterpElementwise, ComparisonsGiveBool) {
  auto k = ts::kernel("cmp", [](ts::Tensor x, ts::Tensor y) {
    ts::Tensor out = ts::empty({6, x.size(0)}, ts::boolean);
    for (auto t : ts::tile(x.size(0))) {
      out(0, t) = x(t) < y(t);
      out(1, t) = x(t) <= y(t);
      out(2, t) = x(t) > y(t);
      out(3, t) = x(t) >= y(t);
      out(4, t) = x(t) == y(t);
      out(5, t) = x(t) != y(t);
    }
    return out;
  });
  std::vector<double> got = run2(k, {1, 2, 3}, {2, 2, 2});
  EXPECT_EQ(got, (std::vector<double>{1, 0, 0, 1, 1, 0, 0, 0, 1, 0, 1, 1, 0, 1, 0, 1, 0, 1}));
}

TEST(InterpElementwise, LogicalOpsOnComparisons) {
  auto k = ts::kernel("logical", [](ts::Tensor x, ts::Tensor y) {
    ts::Tensor out = ts::empty({3, x.size(0)}, ts::boolean);
    for (auto t : ts::tile(x.size(0))) {
      ts::Value a = x(t) > 0, b = y(t) > 0;
      out(0, t) = a && b;
      out(1, t) = a || b;
      out(2, t) = !a;
    }
    return out;
  });
  EXPECT_EQ(run2(k, {1, 1, -1, -1}, {1, -1, 1, -1}),
            (std::vector<double>{1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1}));
}

TEST(InterpElementwise, BitwiseOpsOnIntegers) {
  auto k = ts::kernel("bitwise", [](ts::Tensor x, ts::Tensor y) {
    ts::Tensor out = ts::empty({4, x.size(0)}, ts::i32);
    for (auto t : ts::tile(x.size(0))) {
      out(0, t) = x(t) & y(t);
      out(1, t) = x(t) | y(t);
      out(2, t) = x(t) ^ y(t);
      out(3, t) = ~x(t);
    }
    return out;
  });
  std::vector<double> x = {12, -1, 0, 5}, y = {10, 6, 7, -8};
  std::vector<double> want;
  for (int op = 0; op < 4; ++op)
    for (size_t i = 0; i < x.size(); ++i) {
      int a = static_cast<int>(x[i]), b = static_cast<int>(y[i]);
      want.push_back(op == 0 ? (a & b) : op == 1 ? (a | b) : op == 2 ? (a ^ b) : ~a);
    }
  EXPECT_EQ(run2(k, x, y, ts::i32), want);
}

TEST(InterpElementwise, BitwiseOpsOnBoolAreLogical) {
  auto k = ts::kernel("bool_bits", [](ts::Tensor x, ts::Tensor y) {
    ts::Tensor out = ts::empty({4, x.size(0)}, ts::boolean);
    for (auto t : ts::tile(x.size(0))) {
      out(0, t) = x(t) & y(t);
      out(1, t) = x(t) | y(t);
      out(2, t) = x(t) ^ y(t);
      out(3, t) = ~x(t);
    }
    return out;
  });
  EXPECT_EQ(run2(k, {0, 0, 1, 1}, {0, 1, 0, 1}, ts::boolean),
            (std::vector<double>{0, 0, 0, 1, 0, 1, 1, 1, 0, 1, 1, 0, 1, 1, 0, 0}));
}

TEST(InterpElementwise, WhereSelectsPerElement) {
  auto k = ts::kernel("where", [](ts::Tensor x, ts::Tensor y) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = ts::where(x(t) > y(t), x(t), y(t) * 10);
    return out;
  });
  EXPECT_EQ(run2(k, {5, 1, -2}, {3, 4, -2}), (std::vector<double>{5, 40, -20}));
}

TEST(InterpElementwise, WhereWithScalarBranches) {
  auto k = ts::kernel("where_scalar", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = ts::where(x(t) >= 0, 1, -1);
    return out;
  });
  EXPECT_EQ(k(buffer({3, -0.5, 0}, {3}, ts::i32)).to_vector(), (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(k(buffer({3, -0.5, -4}, {3})).to_vector(), (std::vector<double>{1, -1, -1}));
}

TEST(InterpElementwise, CastFloatToIntTruncatesTowardZero) {
  auto k = ts::kernel("cast_int", [](ts::Tensor x) {
    ts::Tensor out = ts::empty({x.size(0)}, ts::i64);
    for (auto t : ts::tile(x.size(0))) out(t) = ts::Value(x(t)).to(ts::i32);
    return out;
  });
  EXPECT_EQ(k(buffer({2.7, -2.7, 0.5, -0.5, 1e10, -1e10}, {6})).to_vector(),
            (std::vector<double>{2, -2, 0, 0, 2147483647, -2147483648.0}));
}

TEST(InterpElementwise, CastToBoolIsNonZero) {
  auto k = ts::kernel("cast_bool", [](ts::Tensor x) {
    ts::Tensor out = ts::empty({x.size(0)}, ts::i32);
    for (auto t : ts::tile(x.size(0))) out(t) = ts::Value(x(t)).to(ts::boolean).to(ts::i32);
    return out;
  });
  EXPECT_EQ(k(buffer({0, 0.25, -3, 0}, {4})).to_vector(), (std::vector<double>{0, 1, 1, 0}));
}

TEST(InterpElementwise, CastOfNaNToBoolIsTrue) {
  // PyTorch: bool(nan) is True (NaN != 0), as the generated code computes it; a NaN
  // condition of ts::where selects its first branch.
  auto k = ts::kernel("cast_nan_bool", [](ts::Tensor x) {
    ts::Tensor out = ts::empty({2, x.size(0)}, ts::i32);
    for (auto t : ts::tile(x.size(0))) {
      out(0, t) = ts::Value(x(t)).to(ts::boolean).to(ts::i32);
      out(1, t) = ts::where(ts::Value(x(t)).to(ts::boolean), 1, 2);
    }
    return out;
  });
  EXPECT_EQ(k(buffer({NAN, 0, -NAN}, {3})).to_vector(), (std::vector<double>{1, 0, 1, 1, 2, 1}));
}

TEST(InterpElementwise, CastOfAConstantToBoolIsOne) {
  // cast(2, bool) is true, i.e. 1 in arithmetic (the folded constant kept the value 2).
  auto k = ts::kernel("const_bool", [](ts::Tensor out) {
    for (auto t : ts::tile(out.size(0))) {
      out(t) = ts::zeros({t}, ts::f32) + ts::cast(ts::Value(2), ts::boolean);
      out(t) += ts::cast(ts::Value(int64_t{1} << 32), ts::i32);  // wraps to 0, as at run time
    }
  });
  ts::Buffer out = ts::Buffer::zeros({2}, ts::bf16);
  k(out);
  EXPECT_EQ(out.to_vector(), (std::vector<double>{1, 1}));
}

TEST(InterpElementwise, CastToF16AndBf16Rounds) {
  auto k = ts::kernel("cast_half", [](ts::Tensor x) {
    ts::Tensor out = ts::empty({2, x.size(0)}, ts::f32);
    for (auto t : ts::tile(x.size(0))) {
      ts::Value v = x(t);
      out(0, t) = v.to(ts::f16);
      out(1, t) = ts::cast(v, ts::bf16);
    }
    return out;
  });
  std::vector<double> x = {0.1, 1.0009765625, 3.14159265, 65504, 1e-3};
  std::vector<double> got = k(buffer(x, {5})).to_vector();
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(got[i], round_as(ts::f16, f32(x[i]))) << x[i];
    EXPECT_EQ(got[5 + i], round_as(ts::bf16, f32(x[i]))) << x[i];
  }
  EXPECT_NE(got[1], got[5 + 1]);  // 1 + 2^-10 is exact in f16, not in bf16
}

TEST(InterpElementwise, MathFunctionsMatchTheCLibrary) {
  using Fn = std::function<double(double)>;
  auto k = ts::kernel("math", [](ts::Tensor x) {
    ts::Tensor out = ts::empty({15, x.size(0)}, ts::f32);
    for (auto t : ts::tile(x.size(0))) {
      ts::Value v = x(t);
      out(0, t) = ts::exp(v);
      out(1, t) = ts::log(v);
      out(2, t) = ts::sqrt(v);
      out(3, t) = ts::rsqrt(v);
      out(4, t) = ts::abs(-v);
      out(5, t) = ts::sin(v);
      out(6, t) = ts::cos(v);
      out(7, t) = ts::tanh(v);
      out(8, t) = ts::sigmoid(v);
      out(9, t) = ts::exp2(v);
      out(10, t) = ts::log2(v);
      out(11, t) = ts::erf(v);
      out(12, t) = ts::floor(v);
      out(13, t) = ts::ceil(v);
      out(14, t) = -v;
    }
    return out;
  });
  std::vector<Fn> ref = {[](double v) { return std::exp(v); },
                         [](double v) { return std::log(v); },
                         [](double v) { return std::sqrt(v); },
                         [](double v) { return 1 / std::sqrt(v); },
                         [](double v) { return std::fabs(v); },
                         [](double v) { return std::sin(v); },
                         [](double v) { return std::cos(v); },
                         [](double v) { return std::tanh(v); },
                         [](double v) { return 1 / (1 + std::exp(-v)); },
                         [](double v) { return std::exp2(v); },
                         [](double v) { return std::log2(v); },
                         [](double v) { return std::erf(v); },
                         [](double v) { return std::floor(v); },
                         [](double v) { return std::ceil(v); },
                         [](double v) { return -v; }};
  std::vector<double> x = {0.25, 0.5, 1.5, 2.75, 9};
  std::vector<double> got = k(buffer(x, {5})).to_vector();
  for (size_t f = 0; f < ref.size(); ++f)
    for (size_t i = 0; i < x.size(); ++i)
      EXPECT_FLOAT_EQ(got[f * 5 + i], ref[f](x[i])) << "function " << f << " at " << x[i];
}

TEST(InterpElementwise, MathOnIntegersPromotesToF32) {
  auto k = ts::kernel("int_math", [](ts::Tensor x) {
    ts::Tensor out = ts::empty({x.size(0)}, ts::f32);
    for (auto t : ts::tile(x.size(0))) out(t) = ts::sqrt(x(t));
    return out;
  });
  EXPECT_EQ(k(buffer({4, 2}, {2}, ts::i32)).to_vector(),
            (std::vector<double>{2, f32(std::sqrt(2.0))}));
}

TEST(InterpElementwise, MaximumAndMinimumPropagateNaN) {
  auto k = ts::kernel("maxmin", [](ts::Tensor x, ts::Tensor y) {
    ts::Tensor out = ts::empty({2, x.size(0)}, ts::f32);
    for (auto t : ts::tile(x.size(0))) {
      out(0, t) = ts::maximum(x(t), y(t));
      out(1, t) = ts::minimum(x(t), y(t));
    }
    return out;
  });
  double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> got = run2(k, {1, -2, nan, 3}, {2, -3, 1, nan});
  EXPECT_EQ(got[0], 2);
  EXPECT_EQ(got[1], -2);
  EXPECT_TRUE(std::isnan(got[2]));
  EXPECT_TRUE(std::isnan(got[3]));
  EXPECT_EQ(got[4], 1);
  EXPECT_EQ(got[5], -3);
  EXPECT_TRUE(std::isnan(got[6]));
  EXPECT_TRUE(std::isnan(got[7]));
}

TEST(InterpElementwise, PowOnFloatsAndIntegers) {
  auto k = ts::kernel("pow", [](ts::Tensor x, ts::Tensor y) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = ts::pow(x(t), y(t));
    return out;
  });
  EXPECT_EQ(run2(k, {2, -3, 5, 7}, {10, 3, 0, 1}, ts::i64), (std::vector<double>{1024, -27, 1, 7}));
  EXPECT_EQ(run2(k, {2, 4, 9}, {0.5, -1, 1.5}),
            (std::vector<double>{f32(std::sqrt(2.0)), 0.25, 27}));
}

TEST(InterpElementwise, F16PlusBf16ComputesInF32) {
  // 1 + 2^-12 is exact in f32 but rounds to 1 in both f16 and bf16.
  auto k = ts::kernel("mixed_half", [](ts::Tensor a, ts::Tensor b) {
    ts::Tensor out = ts::empty({a.size(0)}, ts::f32);
    for (auto t : ts::tile(a.size(0))) out(t) = a(t) + b(t);
    return out;
  });
  ts::Buffer a = buffer({1, 2}, {2}, ts::f16), b = buffer({1.0 / 4096, 0.5}, {2}, ts::bf16);
  EXPECT_EQ(k(a, b).to_vector(), (std::vector<double>{1 + 1.0 / 4096, 2.5}));
}

TEST(InterpElementwise, IntPlusFloatPromotesToFloat) {
  auto k = ts::kernel("int_float", [](ts::Tensor a, ts::Tensor b) {
    ts::Tensor out = ts::empty({a.size(0)}, ts::f32);
    for (auto t : ts::tile(a.size(0))) out(t) = a(t) + b(t) + a(t) * 1.5;
    return out;
  });
  EXPECT_EQ(k(buffer({3, -2}, {2}, ts::i32), buffer({0.25, 0.5}, {2})).to_vector(),
            (std::vector<double>{7.75, -4.5}));
}

TEST(InterpElementwise, WeakFloatLiteralKeepsF16) {
  // 1024 + 0.5 is not representable in f16 (spacing 1 there): the sum rounds to 1024.
  auto k = ts::kernel("weak_f16", [](ts::Tensor x) {
    ts::Tensor out = ts::empty({x.size(0)}, ts::f32);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) + 0.5;
    return out;
  });
  EXPECT_EQ(k(buffer({1024, 1}, {2}, ts::f16)).to_vector(), (std::vector<double>{1024, 1.5}));
}

TEST(InterpElementwise, WeakIntLiteralKeepsI32AndWraps) {
  auto k = ts::kernel("weak_i32", [](ts::Tensor x) {
    ts::Tensor out = ts::empty({x.size(0)}, ts::i64);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) + 1;
    return out;
  });
  EXPECT_EQ(k(buffer({2147483647, -5}, {2}, ts::i32)).to_vector(),
            (std::vector<double>{-2147483648.0, -4}));
}

TEST(InterpElementwise, F16RoundsAfterEveryOp) {
  auto k = ts::kernel("f16_steps", [](ts::Tensor a, ts::Tensor b) {
    ts::Tensor out = ts::empty_like(a);
    for (auto t : ts::tile(a.size(0))) out(t) = a(t) * b(t) + a(t);
    return out;
  });
  std::vector<double> a = {0.1, 3.3, 100.7}, b = {0.3, 7.1, 0.01};
  std::vector<double> got = run2(k, a, b, ts::f16);
  for (size_t i = 0; i < a.size(); ++i) {
    double ah = round_as(ts::f16, a[i]), bh = round_as(ts::f16, b[i]);
    EXPECT_EQ(got[i], round_as(ts::f16, round_as(ts::f16, ah * bh) + ah)) << i;
  }
}

TEST(InterpElementwise, Bf16RoundsAfterEveryOp) {
  auto k = ts::kernel("bf16_steps", [](ts::Tensor a, ts::Tensor b) {
    ts::Tensor out = ts::empty_like(a);
    for (auto t : ts::tile(a.size(0))) out(t) = a(t) * b(t) - b(t);
    return out;
  });
  std::vector<double> a = {0.1, 3.3, 100.7}, b = {0.3, 7.1, 0.01};
  std::vector<double> got = run2(k, a, b, ts::bf16);
  for (size_t i = 0; i < a.size(); ++i) {
    double ah = round_as(ts::bf16, a[i]), bh = round_as(ts::bf16, b[i]);
    EXPECT_EQ(got[i], round_as(ts::bf16, round_as(ts::bf16, ah * bh) - bh)) << i;
  }
}

TEST(InterpElementwise, I64ArithmeticIsExactBeyond2To53) {
  auto k = ts::kernel("i64_exact", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) * 3 + 1;
    return out;
  });
  ts::Buffer x = ts::Buffer::empty({2}, ts::i64);
  auto* xp = static_cast<int64_t*>(x.data_ptr());
  xp[0] = (int64_t{1} << 53) + 1;
  xp[1] = -((int64_t{1} << 60) + 7);
  ts::Buffer out = k(x);
  auto* op = static_cast<const int64_t*>(out.data_ptr());
  EXPECT_EQ(op[0], xp[0] * 3 + 1);
  EXPECT_EQ(op[1], xp[1] * 3 + 1);
}

// u64 values at or above 2^63 compare and divide as unsigned (as the GPU's
// unsigned long long arithmetic does).
TEST(InterpElementwise, U64OpsAreUnsignedAbove2To63) {
  auto k = ts::kernel("u64_ops", [](ts::Tensor x, ts::Tensor y) {
    ts::Tensor mx = ts::empty_like(x), mn = ts::empty_like(x), q = ts::empty_like(x),
               r = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) {
      mx(t) = ts::maximum(x(t), y(t));
      mn(t) = ts::minimum(x(t), y(t));
      q(t) = ts::floordiv(x(t), y(t));
      r(t) = x(t) % y(t);
    }
    return std::make_tuple(mx, mn, q, r);
  });
  const uint64_t big = (uint64_t{1} << 63) + 2049, small = 10;
  ts::Buffer x = ts::Buffer::empty({2}, ts::u64), y = ts::Buffer::empty({2}, ts::u64);
  auto* xp = static_cast<uint64_t*>(x.data_ptr());
  auto* yp = static_cast<uint64_t*>(y.data_ptr());
  xp[0] = big, yp[0] = small;
  xp[1] = small, yp[1] = big;
  auto [mx, mn, q, r] = k(x, y);
  auto at = [](const ts::Buffer& b, int i) {
    return static_cast<const uint64_t*>(b.data_ptr())[i];
  };
  EXPECT_EQ(at(mx, 0), big);
  EXPECT_EQ(at(mx, 1), big);
  EXPECT_EQ(at(mn, 0), small);
  EXPECT_EQ(at(mn, 1), small);
  EXPECT_EQ(at(q, 0), big / small);
  EXPECT_EQ(at(q, 1), 0u);
  EXPECT_EQ(at(r, 0), big % small);
  EXPECT_EQ(at(r, 1), small);
}

TEST(InterpElementwise, NegAndAbsOnIntegers) {
  auto k = ts::kernel("int_neg_abs", [](ts::Tensor x) {
    ts::Tensor out = ts::empty({2, x.size(0)}, ts::i32);
    for (auto t : ts::tile(x.size(0))) {
      out(0, t) = -x(t);
      out(1, t) = ts::abs(x(t));
    }
    return out;
  });
  EXPECT_EQ(k(buffer({-3, 0, 9}, {3}, ts::i32)).to_vector(),
            (std::vector<double>{3, 0, -9, 3, 0, 9}));
}

TEST(InterpElementwise, AbsOfU64IsTheIdentity) {
  // torch.abs of an unsigned value, as the generated code computes it; values of 2^63 and
  // more were negated as if signed.
  auto k = ts::kernel("u64_abs", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = ts::abs(x(t));
    return out;
  });
  ts::Buffer x =
      ts::Buffer::from_vector({3, 9223372036854775808.0, 18446744073709549568.0}, {3}, ts::u64);
  EXPECT_EQ(k(x).to_vector(), x.to_vector());
}

TEST(InterpElementwise, StoreConvertsToTheTensorDtype) {
  auto k = ts::kernel("store_convert", [](ts::Tensor x) {
    ts::Tensor out = ts::empty({x.size(0)}, ts::i32);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) * 2;
    return out;
  });
  EXPECT_EQ(k(buffer({1.3, -1.3, 2.75}, {3})).to_vector(), (std::vector<double>{2, -2, 5}));
}

// Float to integer casts truncate toward zero, saturate at the dtype's range and give 0
// for NaN (and for negative values in u64), on the interpreter and in generated code,
// whose conversions go through ts::to_i32 / to_i64 / to_u64 (CUDA's own give the lowest
// value for NaN).
TEST(InterpElementwise, FloatToIntegerCastsSaturateAndMapNaNToZero) {
  auto k = cast_kernels::make_to_integers();
  auto [a, b, c] = k(cast_kernels::special_floats());
  EXPECT_EQ(a.to_vector(),
            (std::vector<double>{0, 2147483647, -2147483648.0, 2147483647, -2147483648.0,
                                 2147483647, -2147483648.0, 2, -2, 0}));
  const int64_t* bi = static_cast<const int64_t*>(b.data_ptr());
  const uint64_t* ci = static_cast<const uint64_t*>(c.data_ptr());
  const int64_t want_i64[] = {
      0, INT64_MAX, INT64_MIN, INT64_MAX, INT64_MIN, 3000000000LL, -3000000000LL, 2, -2, 0};
  const uint64_t want_u64[] = {0, UINT64_MAX, 0, UINT64_MAX, 0, 3000000000ULL, 0, 2, 0, 0};
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(bi[i], want_i64[i]) << i;
    EXPECT_EQ(ci[i], want_u64[i]) << i;
  }
  std::string code = nvrtc_test::compile(k, cast_kernels::special_floats());
  EXPECT_NE(code.find("ts::to_i64("), std::string::npos);
  EXPECT_NE(code.find("ts::to_u64("), std::string::npos);
  EXPECT_NE(code.find("ts::to_i32("), std::string::npos);
}
