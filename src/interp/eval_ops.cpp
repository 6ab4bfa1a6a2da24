#include "interp/eval_ops.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "common/element.hpp"
#include "ir/host_eval.hpp"

namespace tessel::interp {

using ir::BinaryFn;
using ir::ReduceFn;
using ir::UnaryFn;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// ---- integer helpers (two's complement wrap, no undefined behaviour) ----

int64_t wadd(int64_t x, int64_t y) {
  return static_cast<int64_t>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y));
}
int64_t wsub(int64_t x, int64_t y) {
  return static_cast<int64_t>(static_cast<uint64_t>(x) - static_cast<uint64_t>(y));
}
int64_t wmul(int64_t x, int64_t y) {
  return static_cast<int64_t>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y));
}

int64_t ifloordiv(int64_t x, int64_t y) {
  if (y == -1) return wsub(0, x);  // INT64_MIN / -1 wraps instead of trapping
  return ir::floordiv_int(x, y);
}

int64_t imod(int64_t x, int64_t y) { return y == -1 ? 0 : ir::mod_int(x, y); }

// Integer power; negative exponents (an error in PyTorch) give 1 / x truncated.
int64_t ipow(int64_t base, int64_t e) {
  if (e < 0) return base == 1 ? 1 : base == -1 ? ((e & 1) ? -1 : 1) : 0;
  uint64_t r = 1, b = static_cast<uint64_t>(base);
  while (e) {
    if (e & 1) r *= b;
    b *= b;
    e >>= 1;
  }
  return static_cast<int64_t>(r);
}

int64_t ishl(int64_t x, int64_t y) {
  return (y < 0 || y >= 64) ? 0 : static_cast<int64_t>(static_cast<uint64_t>(x) << y);
}
int64_t ishr(int64_t x, int64_t y) {
  if (y < 0) return 0;
  return y >= 64 ? (x < 0 ? -1 : 0) : (x >> y);
}

// torch.maximum / torch.minimum: NaN in either operand gives NaN.
double fmaximum(double x, double y) {
  return std::isnan(x) ? x : std::isnan(y) ? y : (x > y ? x : y);
}
double fminimum(double x, double y) {
  return std::isnan(x) ? x : std::isnan(y) ? y : (x < y ? x : y);
}

// ---- broadcast loops ----

// o = f(a, b) under broadcasting; operands of out's extents or of one element take a
// plain strided loop (the common case), the others the general iteration.
template <class R, class A, class F>
void loop2(const std::vector<A>& a, const Dims& ad, const std::vector<A>& b, const Dims& bd,
           std::vector<R>& o, const Dims& od, F f) {
  const int64_t n = static_cast<int64_t>(o.size());
  const bool a1 = a.size() == 1, b1 = b.size() == 1;
  if ((a1 || ad == od) && (b1 || bd == od)) {
    const A* pa = a.data();
    const A* pb = b.data();
    R* po = o.data();
    const int64_t sa = a1 ? 0 : 1, sb = b1 ? 0 : 1;
    for (int64_t k = 0; k < n; ++k) po[k] = f(pa[k * sa], pb[k * sb]);
    return;
  }
  for_each_broadcast<2>(od, {&ad, &bd},
                        [&](int64_t k, int64_t x, int64_t y) { o[k] = f(a[x], b[y]); });
}

template <class R, class A, class F>
void loop1(const std::vector<A>& a, const Dims& ad, std::vector<R>& o, const Dims& od, F f) {
  if (ad == od) {
    const A* pa = a.data();
    R* po = o.data();
    const int64_t n = static_cast<int64_t>(o.size());
    for (int64_t k = 0; k < n; ++k) po[k] = f(pa[k]);
    return;
  }
  for_each_broadcast<1>(od, {&ad}, [&](int64_t k, int64_t x) { o[k] = f(a[x]); });
}

[[noreturn]] void bad(const char* what, const char* fn, DType t) {
  throw InternalError(fmt::format("interpreter: {} {} on {}", what, fn, dtype_name(t)));
}

void binary_float(BinaryFn fn, const TileValue& a, const TileValue& b, TileValue& out) {
  const auto& A = a.f;
  const auto& B = b.f;
  const Dims& ad = a.dims;
  const Dims& bd = b.dims;
  if (ir::binary_kind(fn) == 'c') {
    auto cmp = [&](auto f) { loop2(A, ad, B, bd, out.i, out.dims, f); };
    switch (fn) {
      case BinaryFn::lt:
        return cmp([](double x, double y) -> int64_t { return x < y; });
      case BinaryFn::le:
        return cmp([](double x, double y) -> int64_t { return x <= y; });
      case BinaryFn::gt:
        return cmp([](double x, double y) -> int64_t { return x > y; });
      case BinaryFn::ge:
        return cmp([](double x, double y) -> int64_t { return x >= y; });
      case BinaryFn::eq:
        return cmp([](double x, double y) -> int64_t { return x == y; });
      case BinaryFn::ne:
        return cmp([](double x, double y) -> int64_t { return x != y; });
      case BinaryFn::add:
      case BinaryFn::sub:
      case BinaryFn::mul:
      case BinaryFn::div:
      case BinaryFn::floordiv:
      case BinaryFn::mod:
      case BinaryFn::pow:
      case BinaryFn::maximum:
      case BinaryFn::minimum:
      case BinaryFn::logical_and:
      case BinaryFn::logical_or:
      case BinaryFn::bit_and:
      case BinaryFn::bit_or:
      case BinaryFn::bit_xor:
      case BinaryFn::shl:
      case BinaryFn::shr:
        break;
    }
  }
  if (!out.is_float()) bad("binary", ir::binary_name(fn), a.dtype);
  auto ar = [&](auto f) { loop2(A, ad, B, bd, out.f, out.dims, f); };
  switch (fn) {
    case BinaryFn::add:
      ar([](double x, double y) { return x + y; });
      break;
    case BinaryFn::sub:
      ar([](double x, double y) { return x - y; });
      break;
    case BinaryFn::mul:
      ar([](double x, double y) { return x * y; });
      break;
    case BinaryFn::div:
      ar([](double x, double y) { return x / y; });
      break;
    case BinaryFn::floordiv:
      ar([](double x, double y) { return std::floor(x / y); });
      break;
    case BinaryFn::mod:
      ar([](double x, double y) { return x - std::floor(x / y) * y; });
      break;
    case BinaryFn::pow:
      ar([](double x, double y) { return std::pow(x, y); });
      break;
    case BinaryFn::maximum:
      ar(fmaximum);
      break;
    case BinaryFn::minimum:
      ar(fminimum);
      break;
    case BinaryFn::lt:
    case BinaryFn::le:
    case BinaryFn::gt:
    case BinaryFn::ge:
    case BinaryFn::eq:
    case BinaryFn::ne:
    case BinaryFn::logical_and:
    case BinaryFn::logical_or:
    case BinaryFn::bit_and:
    case BinaryFn::bit_or:
    case BinaryFn::bit_xor:
    case BinaryFn::shl:
    case BinaryFn::shr:
      bad("binary", ir::binary_name(fn), a.dtype);
  }
  round_in_place(out);
}

void binary_int(BinaryFn fn, const TileValue& a, const TileValue& b, TileValue& out) {
  const auto& A = a.i;
  const auto& B = b.i;
  const Dims& ad = a.dims;
  const Dims& bd = b.dims;
  if (out.is_float()) bad("binary", ir::binary_name(fn), a.dtype);
  bool u = a.dtype == DType::u64;  // unsigned comparisons
  auto op = [&](auto f) { loop2(A, ad, B, bd, out.i, out.dims, f); };
  switch (fn) {
    case BinaryFn::add:
      op(wadd);
      break;
    case BinaryFn::sub:
      op(wsub);
      break;
    case BinaryFn::mul:
      op(wmul);
      break;
    case BinaryFn::div:  // integer true division never reaches the IR (it promotes to f32)
    case BinaryFn::floordiv:
      u ? op([](int64_t x, int64_t y) -> int64_t {
        return y == 0 ? 0 : int64_t(uint64_t(x) / uint64_t(y));
      })
        : op(ifloordiv);
      break;
    case BinaryFn::mod:
      u ? op([](int64_t x, int64_t y) -> int64_t {
        return y == 0 ? 0 : int64_t(uint64_t(x) % uint64_t(y));
      })
        : op(imod);
      break;
    case BinaryFn::pow:
      op(ipow);
      break;
    case BinaryFn::maximum:
      u ? op([](int64_t x, int64_t y) { return uint64_t(x) > uint64_t(y) ? x : y; })
        : op([](int64_t x, int64_t y) { return x > y ? x : y; });
      break;
    case BinaryFn::minimum:
      u ? op([](int64_t x, int64_t y) { return uint64_t(x) < uint64_t(y) ? x : y; })
        : op([](int64_t x, int64_t y) { return x < y ? x : y; });
      break;
    case BinaryFn::lt:
      u ? op([](int64_t x, int64_t y) -> int64_t { return uint64_t(x) < uint64_t(y); })
        : op([](int64_t x, int64_t y) -> int64_t { return x < y; });
      break;
    case BinaryFn::le:
      u ? op([](int64_t x, int64_t y) -> int64_t { return uint64_t(x) <= uint64_t(y); })
        : op([](int64_t x, int64_t y) -> int64_t { return x <= y; });
      break;
    case BinaryFn::gt:
      u ? op([](int64_t x, int64_t y) -> int64_t { return uint64_t(x) > uint64_t(y); })
        : op([](int64_t x, int64_t y) -> int64_t { return x > y; });
      break;
    case BinaryFn::ge:
      u ? op([](int64_t x, int64_t y) -> int64_t { return uint64_t(x) >= uint64_t(y); })
        : op([](int64_t x, int64_t y) -> int64_t { return x >= y; });
      break;
    case BinaryFn::eq:
      op([](int64_t x, int64_t y) -> int64_t { return x == y; });
      break;
    case BinaryFn::ne:
      op([](int64_t x, int64_t y) -> int64_t { return x != y; });
      break;
    case BinaryFn::logical_and:
      op([](int64_t x, int64_t y) -> int64_t { return x != 0 && y != 0; });
      break;
    case BinaryFn::logical_or:
      op([](int64_t x, int64_t y) -> int64_t { return x != 0 || y != 0; });
      break;
    case BinaryFn::bit_and:
      op([](int64_t x, int64_t y) { return x & y; });
      break;
    case BinaryFn::bit_or:
      op([](int64_t x, int64_t y) { return x | y; });
      break;
    case BinaryFn::bit_xor:
      op([](int64_t x, int64_t y) { return x ^ y; });
      break;
    case BinaryFn::shl:
      op(ishl);
      break;
    case BinaryFn::shr:
      op(ishr);
      break;
  }
  round_in_place(out);
}

double unary_float(UnaryFn fn, double x) {
  switch (fn) {
    case UnaryFn::neg:
      return -x;
    case UnaryFn::abs:
      return std::fabs(x);
    case UnaryFn::exp:
      return std::exp(x);
    case UnaryFn::log:
      return std::log(x);
    case UnaryFn::sqrt:
      return std::sqrt(x);
    case UnaryFn::rsqrt:
      return 1.0 / std::sqrt(x);
    case UnaryFn::sin:
      return std::sin(x);
    case UnaryFn::cos:
      return std::cos(x);
    case UnaryFn::tanh:
      return std::tanh(x);
    case UnaryFn::sigmoid:
      return 1.0 / (1.0 + std::exp(-x));
    case UnaryFn::exp2:
      return std::exp2(x);
    case UnaryFn::log2:
      return std::log2(x);
    case UnaryFn::floor:
      return std::floor(x);
    case UnaryFn::ceil:
      return std::ceil(x);
    case UnaryFn::erf:
      return std::erf(x);
    case UnaryFn::tf32:
      return truncate_tf32(to_f32(x));
    case UnaryFn::logical_not:
    case UnaryFn::bit_not:
      break;
  }
  bad("unary", ir::unary_name(fn), DType::f32);
}

}  // namespace

void eval_unary(UnaryFn fn, const TileValue& a, TileValue& out) {
  if (out.is_float()) {
    if (a.is_float()) {
      loop1(a.f, a.dims, out.f, out.dims, [fn](double x) { return unary_float(fn, x); });
    } else {  // an integer operand of a float function (the frontend normally casts first)
      for_each_broadcast<1>(out.dims, {&a.dims}, [&](int64_t k, int64_t x) {
        out.f[k] = unary_float(fn, a.as_double(x));
      });
    }
    round_in_place(out);
    return;
  }
  if (a.is_float()) bad("unary", ir::unary_name(fn), a.dtype);
  auto op = [&](auto f) { loop1(a.i, a.dims, out.i, out.dims, f); };
  switch (fn) {
    case UnaryFn::neg:
      op([](int64_t x) { return wsub(0, x); });
      break;
    case UnaryFn::abs:  // u64 values are never negative (those >= 2^63 are held as negative i64)
      if (a.dtype == DType::u64)
        op([](int64_t x) { return x; });
      else
        op([](int64_t x) { return x < 0 ? wsub(0, x) : x; });
      break;
    case UnaryFn::logical_not:
      op([](int64_t x) -> int64_t { return x == 0; });
      break;
    case UnaryFn::bit_not:
      op([](int64_t x) { return ~x; });
      break;
    case UnaryFn::floor:
    case UnaryFn::ceil:
      op([](int64_t x) { return x; });
      break;
    case UnaryFn::exp:
    case UnaryFn::log:
    case UnaryFn::sqrt:
    case UnaryFn::rsqrt:
    case UnaryFn::sin:
    case UnaryFn::cos:
    case UnaryFn::tanh:
    case UnaryFn::sigmoid:
    case UnaryFn::exp2:
    case UnaryFn::log2:
    case UnaryFn::erf:
    case UnaryFn::tf32:
      bad("unary", ir::unary_name(fn), a.dtype);
  }
  round_in_place(out);
}

void eval_binary(BinaryFn fn, const TileValue& a, const TileValue& b, TileValue& out) {
  if (a.is_float() != b.is_float())
    throw InternalError(fmt::format("interpreter: binary {} on {} and {}", ir::binary_name(fn),
                                    dtype_name(a.dtype), dtype_name(b.dtype)));
  if (a.is_float())
    binary_float(fn, a, b, out);
  else
    binary_int(fn, a, b, out);
}

void eval_where(const TileValue& cond, const TileValue& a, const TileValue& b, TileValue& out) {
  if (cond.is_float() || a.is_float() != out.is_float() || b.is_float() != out.is_float())
    throw InternalError("interpreter: where with mismatched dtypes");
  const auto& c = cond.i;
  if (out.is_float()) {
    for_each_broadcast<3>(out.dims, {&cond.dims, &a.dims, &b.dims},
                          [&](int64_t k, int64_t ic, int64_t ia, int64_t ib) {
                            out.f[k] = c[ic] ? a.f[ia] : b.f[ib];
                          });
  } else {
    for_each_broadcast<3>(out.dims, {&cond.dims, &a.dims, &b.dims},
                          [&](int64_t k, int64_t ic, int64_t ia, int64_t ib) {
                            out.i[k] = c[ic] ? a.i[ia] : b.i[ib];
                          });
  }
  round_in_place(out);
}

namespace {

// Float to integer dtype `t`: truncation toward zero, saturating at t's range, NaN -> 0;
// to bool: v != 0 (NaN is true, as in PyTorch and the generated code).
int64_t float_to_int(DType t, double v) {
  if (t == DType::boolean) return v != 0;
  if (std::isnan(v)) return 0;
  v = std::trunc(v);
  if (t == DType::i32)
    return static_cast<int64_t>(std::fmin(std::fmax(v, -2147483648.0), 2147483647.0));
  if (t == DType::i8) return static_cast<int64_t>(std::fmin(std::fmax(v, -128.0), 127.0));
  if (t == DType::u64) {
    if (v <= 0) return 0;
    if (v >= 18446744073709551615.0) return -1;  // all bits set
    return static_cast<int64_t>(static_cast<uint64_t>(v));
  }
  if (v >= 9.2233720368547758e18) return INT64_MAX;
  if (v <= -9.2233720368547758e18) return INT64_MIN;
  return static_cast<int64_t>(v);
}

}  // namespace

void eval_cast(const TileValue& a, TileValue& out) {
  const DType t = out.dtype;
  if (out.is_float()) {
    for_each_broadcast<1>(out.dims, {&a.dims},
                          [&](int64_t k, int64_t x) { out.f[k] = a.as_double(x); });
  } else if (a.is_float()) {
    for_each_broadcast<1>(out.dims, {&a.dims},
                          [&](int64_t k, int64_t x) { out.i[k] = float_to_int(t, a.f[x]); });
  } else {
    for_each_broadcast<1>(out.dims, {&a.dims}, [&](int64_t k, int64_t x) { out.i[k] = a.i[x]; });
  }
  round_in_place(out);
}

namespace {

// Reduction of `n` strided elements of one lane into `out` element `k`.
struct Lane {
  int64_t first;   // linear index of coordinate 0 along the axis
  int64_t stride;  // elements between coordinates along the axis
  int64_t n;       // valid coordinates
};

double reduce_float(ReduceFn fn, const std::vector<double>& v, Lane l) {
  switch (fn) {
    case ReduceFn::sum: {
      double s = 0;
      for (int64_t c = 0; c < l.n; ++c) s += v[l.first + c * l.stride];
      return s;
    }
    case ReduceFn::prod: {
      double s = 1;
      for (int64_t c = 0; c < l.n; ++c) s *= v[l.first + c * l.stride];
      return s;
    }
    case ReduceFn::max: {
      double s = -kInf;
      for (int64_t c = 0; c < l.n; ++c) s = fmaximum(s, v[l.first + c * l.stride]);
      return s;
    }
    case ReduceFn::min: {
      double s = kInf;
      for (int64_t c = 0; c < l.n; ++c) s = fminimum(s, v[l.first + c * l.stride]);
      return s;
    }
    case ReduceFn::argmax:
    case ReduceFn::argmin: {
      bool is_max = fn == ReduceFn::argmax;
      int64_t best = 0;
      double bv = is_max ? -kInf : kInf;
      for (int64_t c = 0; c < l.n; ++c) {
        double x = v[l.first + c * l.stride];
        if (std::isnan(bv)) break;
        if (c == 0 || std::isnan(x) || (is_max ? x > bv : x < bv)) {
          best = c;
          bv = x;
        }
      }
      return static_cast<double>(best);
    }
    case ReduceFn::any:
    case ReduceFn::all:
      break;
  }
  return kNaN;
}

int64_t reduce_int(ReduceFn fn, const std::vector<int64_t>& v, Lane l, DType t) {
  const bool u64 = t == DType::u64;
  switch (fn) {
    case ReduceFn::sum: {
      int64_t s = 0;
      for (int64_t c = 0; c < l.n; ++c) s = wadd(s, v[l.first + c * l.stride]);
      return s;
    }
    case ReduceFn::prod: {
      int64_t s = 1;
      for (int64_t c = 0; c < l.n; ++c) s = wmul(s, v[l.first + c * l.stride]);
      return s;
    }
    case ReduceFn::max:
    case ReduceFn::min:
    case ReduceFn::argmax:
    case ReduceFn::argmin: {
      bool is_max = fn == ReduceFn::max || fn == ReduceFn::argmax;
      auto better = [&](int64_t x, int64_t y) {
        if (u64) return is_max ? uint64_t(x) > uint64_t(y) : uint64_t(x) < uint64_t(y);
        return is_max ? x > y : x < y;
      };
      int64_t best = 0;
      // The identity of an empty lane: the dtype's lowest / highest value.
      const int64_t lo = t == DType::i32  ? INT32_MIN
                         : t == DType::i8 ? INT8_MIN
                                          : INT64_MIN,
                    hi = t == DType::i32  ? INT32_MAX
                         : t == DType::i8 ? INT8_MAX
                                          : INT64_MAX;
      int64_t bv = is_max ? (u64 ? 0 : lo) : (u64 ? -1 : hi);
      for (int64_t c = 0; c < l.n; ++c) {
        int64_t x = v[l.first + c * l.stride];
        if (c == 0 || better(x, bv)) {
          best = c;
          bv = x;
        }
      }
      return (fn == ReduceFn::argmax || fn == ReduceFn::argmin) ? best : bv;
    }
    case ReduceFn::any: {
      for (int64_t c = 0; c < l.n; ++c)
        if (v[l.first + c * l.stride]) return 1;
      return 0;
    }
    case ReduceFn::all: {
      for (int64_t c = 0; c < l.n; ++c)
        if (!v[l.first + c * l.stride]) return 0;
      return 1;
    }
  }
  return 0;
}

}  // namespace

void eval_reduce(ReduceFn fn, const TileValue& a, int axis, int64_t valid, TileValue& out) {
  const int rank = static_cast<int>(a.dims.size());
  if (axis < 0 || axis >= rank) throw InternalError("interpreter: reduction axis out of range");
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= a.dims[d];
  for (int d = axis + 1; d < rank; ++d) inner *= a.dims[d];
  const int64_t n = a.dims[axis];
  if (outer * inner != out.size())
    throw InternalError("interpreter: reduction output size mismatch");
  const int64_t nv = std::max<int64_t>(0, std::min(valid, n));
  const bool arg = fn == ReduceFn::argmax || fn == ReduceFn::argmin;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      Lane lane{o * n * inner + in, inner, nv};
      int64_t k = o * inner + in;
      if (a.is_float()) {
        double r = reduce_float(fn, a.f, lane);
        if (out.is_float())
          out.f[k] = r;
        else
          out.i[k] = arg ? static_cast<int64_t>(r) : (r != 0);  // argmax/argmin, or bool of any/all
      } else {
        int64_t r = reduce_int(fn, a.i, lane, a.dtype);
        if (out.is_float())
          out.f[k] = static_cast<double>(r);
        else
          out.i[k] = r;
      }
    }
  }
  round_in_place(out);
}

}  // namespace tessel::interp
