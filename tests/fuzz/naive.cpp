#include "fuzz/naive.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

namespace fuzz {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// The accumulator of an i64 minimum starts at the largest double below 2^63 (ts::full
// takes a double).
constexpr int64_t kI64Below2To63 = 9223372036854774784;

// One element: floats in f, integers and bools in i (u64 as its bits).
struct E {
  double f = 0;
  int64_t i = 0;
};

double bf16_round(float x) {
  if (std::isnan(x)) return x;
  uint32_t u;
  std::memcpy(&u, &x, 4);
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even on the upper 16 bits
  u &= 0xffff0000u;
  float r;
  std::memcpy(&r, &u, 4);
  return r;
}

int64_t wrap(DType t, int64_t v) {
  if (t == DType::i32) return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
  if (t == DType::boolean) return v != 0;
  return v;
}

double as_double(DType t, E e) {
  if (floating(t)) return e.f;
  if (t == DType::u64) return static_cast<double>(static_cast<uint64_t>(e.i));
  return static_cast<double>(e.i);
}

// Float to an integer dtype: truncation toward 0, clamped to the dtype's range, NaN -> 0;
// to bool: x != 0 (NaN is true, as in PyTorch).
int64_t float_to_int(DType t, double v) {
  if (t == DType::boolean) return v != 0;
  if (v != v) return 0;
  const double x = v < 0 ? std::ceil(v) : std::floor(v);
  switch (t) {
    case DType::i32:
      return x < -2147483648.0 ? INT32_MIN : x > 2147483647.0 ? INT32_MAX : static_cast<int64_t>(x);
    case DType::u64:
      if (x < 1) return 0;
      return x < 18446744073709551616.0 ? static_cast<int64_t>(static_cast<uint64_t>(x))
                                        : -1;  // all ones
    default:
      if (x < -9223372036854775808.0) return INT64_MIN;
      return x < 9223372036854775808.0 ? static_cast<int64_t>(x) : INT64_MAX;
  }
}

E convert(DType from, DType to, E e) {
  if (floating(to)) return E{round_to(to, as_double(from, e)), 0};
  if (floating(from)) return E{0, float_to_int(to, e.f)};
  return E{0, wrap(to, e.i)};
}

bool truth(DType t, E e) { return floating(t) ? e.f != 0 : e.i != 0; }

E make(DType t, double v) {
  if (floating(t)) return E{v, 0};
  if (t == DType::u64 && v >= 9223372036854775808.0)
    return E{0, static_cast<int64_t>(static_cast<uint64_t>(v))};
  return E{0, static_cast<int64_t>(v)};
}

// base ** e wrapping in 64 bits; a negative exponent gives trunc(1 / base ** -e) (tessel's
// choice where torch raises). Exponents here are small literals.
int64_t ipow(int64_t base, int64_t e) {
  if (e < 0) {
    if (base == 1) return 1;
    if (base == -1) return e % 2 == 0 ? 1 : -1;
    return 0;
  }
  uint64_t r = 1;
  for (int64_t k = 0; k < e; ++k) r *= static_cast<uint64_t>(base);
  return static_cast<int64_t>(r);
}

int64_t floordiv_int(int64_t x, int64_t y) {
  if (y == 0) return 0;
  if (y == -1) return static_cast<int64_t>(0 - static_cast<uint64_t>(x));
  int64_t q = x / y;
  if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
  return q;
}

int64_t mod_int(int64_t x, int64_t y) {
  if (y == 0 || y == -1) return 0;
  int64_t r = x % y;
  if (r != 0 && ((r < 0) != (y < 0))) r += y;
  return r;
}

double fmaximum(double x, double y) {
  return std::isnan(x) ? x : std::isnan(y) ? y : (x > y ? x : y);
}
double fminimum(double x, double y) {
  return std::isnan(x) ? x : std::isnan(y) ? y : (x < y ? x : y);
}

E unary(Op op, DType ta, E a, DType rt) {
  if (floating(rt)) {
    double x = as_double(ta, a);
    if (!floating(ta)) x = round_to(DType::f32, x);
    double r = 0;
    switch (op) {
      case Op::neg:
        r = -x;
        break;
      case Op::abs:
        r = std::fabs(x);
        break;
      case Op::exp:
        r = std::exp(x);
        break;
      case Op::exp2:
        r = std::exp2(x);
        break;
      case Op::log:
        r = std::log(x);
        break;
      case Op::log2:
        r = std::log2(x);
        break;
      case Op::sqrt:
        r = std::sqrt(x);
        break;
      case Op::rsqrt:
        r = 1.0 / std::sqrt(x);
        break;
      case Op::sin:
        r = std::sin(x);
        break;
      case Op::cos:
        r = std::cos(x);
        break;
      case Op::tanh:
        r = std::tanh(x);
        break;
      case Op::sigmoid:
        r = 1.0 / (1.0 + std::exp(-x));
        break;
      case Op::erf:
        r = std::erf(x);
        break;
      case Op::floor:
        r = std::floor(x);
        break;
      case Op::ceil:
        r = std::ceil(x);
        break;
      default:
        break;
    }
    return E{round_to(rt, r), 0};
  }
  if (op == Op::logical_not) return E{0, !truth(ta, a)};
  uint64_t x = static_cast<uint64_t>(a.i);
  switch (op) {
    case Op::neg:
      return E{0, wrap(rt, static_cast<int64_t>(0 - x))};
    case Op::abs:
      return E{0, wrap(rt, a.i < 0 && rt != DType::u64 ? static_cast<int64_t>(0 - x) : a.i)};
    case Op::bit_not:
      return E{0, rt == DType::boolean ? !a.i : wrap(rt, ~a.i)};
    default:
      return a;  // floor, ceil of integers
  }
}

E binary(Op op, DType ct, E a, E b, DType rt) {
  if (op == Op::logical_and) return E{0, truth(ct, a) && truth(ct, b)};
  if (op == Op::logical_or) return E{0, truth(ct, a) || truth(ct, b)};
  if (is_compare(op)) {
    int c;  // -1, 0, 1; 2 = unordered (NaN)
    if (floating(ct)) {
      c = std::isnan(a.f) || std::isnan(b.f) ? 2 : a.f < b.f ? -1 : a.f > b.f ? 1 : 0;
    } else if (ct == DType::u64) {
      uint64_t x = a.i, y = b.i;
      c = x < y ? -1 : x > y ? 1 : 0;
    } else {
      c = a.i < b.i ? -1 : a.i > b.i ? 1 : 0;
    }
    bool r = false;
    switch (op) {
      case Op::lt:
        r = c == -1;
        break;
      case Op::le:
        r = c == -1 || c == 0;
        break;
      case Op::gt:
        r = c == 1;
        break;
      case Op::ge:
        r = c == 1 || c == 0;
        break;
      case Op::eq:
        r = c == 0;
        break;
      default:
        r = c != 0;
        break;  // ne: NaN != x is true
    }
    return E{0, r};
  }
  if (op == Op::div && !floating(ct)) {
    a = convert(ct, DType::f32, a);
    b = convert(ct, DType::f32, b);
    ct = DType::f32;
  }
  if (floating(ct)) {
    double x = a.f, y = b.f, r = 0;
    switch (op) {
      case Op::add:
        r = x + y;
        break;
      case Op::sub:
        r = x - y;
        break;
      case Op::mul:
        r = x * y;
        break;
      case Op::div:
        r = x / y;
        break;
      case Op::floordiv:
        r = std::floor(x / y);
        break;
      case Op::mod:
        r = x - std::floor(x / y) * y;
        break;
      case Op::pow:
        r = std::pow(x, y);
        break;
      case Op::maximum:
        r = fmaximum(x, y);
        break;
      case Op::minimum:
        r = fminimum(x, y);
        break;
      default:
        break;
    }
    return E{round_to(rt, r), 0};
  }
  const bool u = ct == DType::u64;
  const uint64_t x = a.i, y = b.i;
  int64_t r = 0;
  switch (op) {
    case Op::add:
      r = static_cast<int64_t>(x + y);
      break;
    case Op::sub:
      r = static_cast<int64_t>(x - y);
      break;
    case Op::mul:
      r = static_cast<int64_t>(x * y);
      break;
    case Op::floordiv:
      r = u ? (y == 0 ? 0 : static_cast<int64_t>(x / y)) : floordiv_int(a.i, b.i);
      break;
    case Op::mod:
      r = u ? (y == 0 ? 0 : static_cast<int64_t>(x % y)) : mod_int(a.i, b.i);
      break;
    case Op::pow:
      r = ipow(a.i, b.i);
      break;
    case Op::maximum:
      r = (u ? x > y : a.i > b.i) ? a.i : b.i;
      break;
    case Op::minimum:
      r = (u ? x < y : a.i < b.i) ? a.i : b.i;
      break;
    case Op::bit_and:
      r = a.i & b.i;
      break;
    case Op::bit_or:
      r = a.i | b.i;
      break;
    case Op::bit_xor:
      r = a.i ^ b.i;
      break;
    default:
      break;
  }
  return E{0, wrap(rt, r)};
}

// The reduction of `v` (values of dtype t, already converted as the reduction reads them).
E reduce(Op op, DType t, const std::vector<E>& v, DType rt) {
  const bool f = floating(t);
  switch (op) {
    case Op::sum:
    case Op::mean:
    case Op::prod: {
      if (f) {
        double s = op == Op::prod ? 1 : 0;
        for (const E& e : v) s = op == Op::prod ? s * e.f : s + e.f;
        s = round_to(rt, s);
        if (op == Op::mean) s = round_to(rt, s / static_cast<double>(v.size()));
        return E{s, 0};
      }
      uint64_t s = op == Op::prod ? 1 : 0;
      for (const E& e : v)
        s = op == Op::prod ? s * static_cast<uint64_t>(e.i) : s + static_cast<uint64_t>(e.i);
      return E{0, static_cast<int64_t>(s)};
    }
    case Op::max:
    case Op::min:
    case Op::argmax:
    case Op::argmin: {
      const bool is_max = op == Op::max || op == Op::argmax;
      const bool arg = op == Op::argmax || op == Op::argmin;
      int64_t best = 0;
      if (f) {
        double bv = is_max ? -kInf : kInf;
        for (size_t c = 0; c < v.size(); ++c) {
          double x = v[c].f;
          if (std::isnan(bv)) break;
          if (c == 0 || std::isnan(x) || (is_max ? x > bv : x < bv)) {
            best = static_cast<int64_t>(c);
            bv = x;
          }
        }
        return arg ? E{0, best} : E{round_to(rt, bv), 0};
      }
      const bool u = t == DType::u64;
      auto better = [&](int64_t x, int64_t y) {
        if (u) return is_max ? uint64_t(x) > uint64_t(y) : uint64_t(x) < uint64_t(y);
        return is_max ? x > y : x < y;
      };
      int64_t bv = 0;
      if (u)
        bv = is_max ? 0 : -1;
      else if (t == DType::i32)
        bv = is_max ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int32_t>::max();
      else
        bv = is_max ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
      for (size_t c = 0; c < v.size(); ++c)
        if (c == 0 || better(v[c].i, bv)) {
          best = static_cast<int64_t>(c);
          bv = v[c].i;
        }
      return arg ? E{0, best} : E{0, bv};
    }
    case Op::any: {
      for (const E& e : v)
        if (e.i) return E{0, 1};
      return E{0, 0};
    }
    default: {  // all
      for (const E& e : v)
        if (!e.i) return E{0, 0};
      return E{0, 1};
    }
  }
}

// The dtype a reduction reads its operand as (sum/prod of integers: i64; any/all: bool).
DType reduce_input(Op op, DType t) {
  if ((op == Op::sum || op == Op::prod) && !floating(t)) return DType::i64;
  if (op == Op::any || op == Op::all) return DType::boolean;
  return t;
}

// The initial accumulator of a reduction accumulated over tiles, and its combine step.
E identity(Op op, DType t) {
  switch (op) {
    case Op::sum:
      return make(t, 0);
    case Op::prod:
      return make(t, 1);
    case Op::any:
      return E{0, 0};
    case Op::all:
      return E{0, 1};
    case Op::max:
      if (floating(t)) return E{-kInf, 0};
      return E{0, t == DType::i32 ? std::numeric_limits<int32_t>::min()
                                  : std::numeric_limits<int64_t>::min()};
    default:  // min
      if (floating(t)) return E{kInf, 0};
      return E{0, t == DType::i32 ? std::numeric_limits<int32_t>::max() : kI64Below2To63};
  }
}

Op combine_op(Op op) {
  switch (op) {
    case Op::sum:
      return Op::add;
    case Op::prod:
      return Op::mul;
    case Op::max:
      return Op::maximum;
    case Op::min:
      return Op::minimum;
    case Op::any:
      return Op::logical_or;
    default:
      return Op::logical_and;
  }
}

struct Eval {
  const Program& p;
  const HostData& data;
  int64_t RB = 0, RE = 0, CB = 0, CE = 0;
  std::vector<std::vector<E>> vals;
  std::vector<std::vector<E>> outs;

  int64_t idx(Shape s, int64_t r, int64_t c) const {
    if (s == Shape::tile) return (r - RB) / row_block(p);
    return s == Shape::row ? r : s == Shape::col ? c : r * CE + c;
  }
  size_t count(Shape s) const {
    return static_cast<size_t>(s == Shape::row || s == Shape::tile ? RE
                               : s == Shape::col                   ? CE
                                                                   : RE * CE);
  }

  // Element (r, c) of a tensor of logical shape s (M rows, N columns): 0 past its extent.
  E read(const std::vector<double>& v, DType t, Shape s, int64_t r, int64_t c) const {
    if ((s != Shape::col && r >= p.M) || (s != Shape::row && c >= p.N)) return E{};
    int64_t k = s == Shape::row ? r : s == Shape::col ? c : r * p.N + c;
    return make(t, v[static_cast<size_t>(k)]);
  }

  // Operand o of a node at (r, c), converted to dtype t (literals included).
  E operand(int o, DType t, int64_t r, int64_t c) const {
    const Node& n = p.nodes[o];
    if (n.op == Op::literal) return convert(n.dtype, t, make(n.dtype, n.lit));
    return convert(n.dtype, t, vals[o][static_cast<size_t>(idx(n.shape, r, c))]);
  }

  E element(int i, int64_t r, int64_t c) {
    const Node& n = p.nodes[i];
    switch (n.op) {
      case Op::load: {
        const Input& in = p.inputs[n.input];
        return read(data.inputs[n.input], in.dtype, in.shape, r, c);
      }
      case Op::row_index:
        return E{0, wrap(n.dtype, r)};
      case Op::extent:
        return E{0, n.lit == 0 ? p.M : p.N};
      case Op::tile_attr: {
        const int64_t B = row_block(p), begin = RB + (r - RB) / B * B;
        const int64_t v[] = {begin, std::min(begin + B, RE), (r - RB) / B, B};
        return E{0, wrap(n.dtype, v[static_cast<int>(n.lit)])};
      }
      case Op::col_index:
        return E{0, wrap(n.dtype, c)};
      case Op::gather: {
        const Node& ix = p.nodes[n.a];
        E k = vals[n.a][static_cast<size_t>(idx(ix.shape, r, c))];
        int64_t col = ix.dtype == DType::u64 && k.i < 0 ? p.N : k.i;
        if (col < 0 || col >= p.N) return E{};
        return read(data.inputs[n.input], n.dtype, Shape::full, r, col);
      }
      case Op::reload: {
        int64_t k = out_index(p.outputs[n.input], r, c);
        return k < 0 ? E{} : outs[n.input][static_cast<size_t>(k)];
      }
      case Op::cast:
        return operand(n.a, n.dtype, r, c);
      case Op::where: {
        const Node& cn = p.nodes[n.a];
        bool cond = truth(cn.dtype, vals[n.a][static_cast<size_t>(idx(cn.shape, r, c))]);
        return operand(cond ? n.b : n.c, n.dtype, r, c);
      }
      default:
        break;
    }
    if (is_unary(n.op))
      return unary(n.op, p.nodes[n.a].dtype, operand(n.a, p.nodes[n.a].dtype, r, c), n.dtype);
    DType ct = promote_operands(p.nodes[n.a], p.nodes[n.b]);
    // True division of integers converts each operand to f32 from its own dtype (torch's
    // promote_integer_inputs_to_float), not through the promoted integer dtype.
    if (n.op == Op::div && !floating(ct)) ct = DType::f32;
    // An f16 or bf16 value with a literal or a size (a host scalar): arithmetic and
    // comparisons in f32, the result rounded once (torch's opmath).
    const bool arithmetic = n.op >= Op::add && n.op <= Op::pow;
    auto host_scalar = [&](int o) { return p.nodes[o].weak || p.nodes[o].op == Op::extent; };
    if ((ct == DType::f16 || ct == DType::bf16) && (arithmetic || is_compare(n.op)) &&
        (host_scalar(n.a) || host_scalar(n.b))) {
      const DType f = DType::f32;
      E v = binary(n.op, f, operand(n.a, f, r, c), operand(n.b, f, r, c), arithmetic ? f : n.dtype);
      return arithmetic ? convert(f, n.dtype, v) : v;
    }
    return binary(n.op, ct, operand(n.a, ct, r, c), operand(n.b, ct, r, c), n.dtype);
  }

  // Reduction node i at row r: over [0, N) at once, or over the inner loop's tiles; of a
  // row value: over the rows of r's tile.
  E reduction(int i, int64_t r) {
    const Node& n = p.nodes[i];
    const DType t = reduce_input(n.op, p.nodes[n.a].dtype);
    if (n.shape == Shape::tile) {
      const int64_t B = row_block(p), r0 = RB + (r - RB) / B * B;
      std::vector<E> v;
      for (int64_t q = r0; q < std::min(r0 + B, RE); ++q) v.push_back(operand(n.a, t, q, 0));
      return reduce(n.op, t, v, n.dtype);
    }
    auto lane = [&](int64_t c0, int64_t c1) {
      std::vector<E> v;
      for (int64_t c = c0; c < c1; ++c) v.push_back(operand(n.a, t, r, c));
      return reduce(n.op, t, v, n.dtype);
    };
    if (!nested(p.form)) return lane(0, p.N);
    const int64_t B = inner_block(p);
    E acc = identity(n.op, n.dtype);
    for (int64_t c0 = CB; c0 < CE; c0 += B)
      acc = binary(combine_op(n.op), n.dtype, acc, lane(c0, std::min(c0 + B, CE)), n.dtype);
    return acc;
  }

  // Element of output o at (r, c): its index, or -1 past the tensor's extent.
  int64_t out_index(const Output& o, int64_t r, int64_t c) const {
    if (o.shape == Shape::tile) {
      int64_t t = (r - RB) / row_block(p);
      return t < p.M ? t : -1;
    }
    if (r >= p.M || (o.shape == Shape::full && c >= p.N)) return -1;
    return o.shape == Shape::row ? r : r * p.N + c;
  }

  void store(const Node& n, int64_t r, int64_t c) {
    const Output& o = p.outputs[n.input];
    int64_t k = out_index(o, r, c);
    if (k < 0 || (o.shape == Shape::tile && (r - RB) % row_block(p) != 0)) return;  // once per tile
    E& dst = outs[n.input][static_cast<size_t>(k)];
    if (n.lit != 0) {  // out op= a: computed in the promoted dtype, stored converted
      const DType ct = promote_types(o.dtype, p.nodes[n.a].dtype);
      const Op op = n.lit == 1 ? Op::add : n.lit == 2 ? Op::sub : Op::mul;
      dst = convert(ct, o.dtype,
                    binary(op, ct, convert(o.dtype, ct, dst), operand(n.a, ct, r, c), ct));
    } else {
      dst = operand(n.a, o.dtype, r, c);
    }
  }

  void run() {
    RB = p.rows.kind == BoundKind::range ? p.rows.begin : 0;
    RE = p.rows.end;
    CB = looped_cols(p.form) && p.cols.kind == BoundKind::range ? p.cols.begin : 0;
    CE = looped_cols(p.form) ? p.cols.end : p.N;
    for (size_t o = 0; o < p.outputs.size(); ++o) {
      outs.emplace_back();
      for (double x : data.outputs[o]) outs.back().push_back(make(p.outputs[o].dtype, x));
    }
    vals.resize(p.nodes.size());
    // The 2-D forms run one program per (row, column) tile: none without columns.
    const bool stores = !(p.form == Form::tile_2d || p.form == Form::grid_2d) || CB < CE;
    for (size_t i = 0; i < p.nodes.size(); ++i) {
      const Node& n = p.nodes[i];
      if (n.op == Op::literal) continue;
      vals[i].assign(count(n.shape), E{});
      for (int64_t r = RB; r < RE; ++r) {
        if (is_reduce(n.op)) {
          vals[i][static_cast<size_t>(idx(n.shape, r, 0))] = reduction(static_cast<int>(i), r);
          continue;
        }
        const bool by_row = n.shape == Shape::row || n.shape == Shape::tile;
        for (int64_t c = CB; c < (by_row ? CB + 1 : CE); ++c) {
          if (n.shape == Shape::col && r != RB) break;  // the same for every row
          if (n.op == Op::store) {
            if (stores) store(n, r, c);
          } else {
            vals[i][static_cast<size_t>(idx(n.shape, r, c))] = element(static_cast<int>(i), r, c);
          }
        }
      }
    }
  }
};

}  // namespace

double round_to(DType t, double x) {
  switch (t) {
    case DType::f64:
      return x;
    case DType::f32:
      return static_cast<float>(x);
    case DType::f16:
      return static_cast<double>(static_cast<_Float16>(static_cast<float>(x)));
    case DType::bf16:
      return bf16_round(static_cast<float>(x));
    default:
      return static_cast<double>(wrap(t, static_cast<int64_t>(x)));
  }
}

HostData make_data(const Program& p) {
  std::mt19937_64 rng(p.seed ^ 0xD1B54A32D192ED03ull);
  std::normal_distribution<double> normal(0, 1);
  auto uni = [&](int64_t lo, int64_t hi) {
    return static_cast<double>(std::uniform_int_distribution<int64_t>(lo, hi)(rng));
  };
  HostData d;
  for (const Input& in : p.inputs) {
    if (in.alias >= 0) {
      d.inputs.push_back(d.inputs[in.alias]);
      continue;
    }
    size_t n = static_cast<size_t>(in.shape == Shape::full  ? p.M * p.N
                                   : in.shape == Shape::row ? p.M
                                                            : p.N);
    std::vector<double> v(n);
    for (double& x : v) {
      if (in.dtype == DType::boolean) {
        x = uni(0, 1);
      } else if (floating(in.dtype)) {
        if (in.fill == Fill::ties) {
          x = uni(-4, 4) * 0.5;
        } else {
          x = round_to(in.dtype, 2 * normal(rng));
          if (in.fill == Fill::special) {
            int64_t s = static_cast<int64_t>(uni(0, 19));
            if (s < 2)
              x = std::numeric_limits<double>::quiet_NaN();
            else if (s == 2)
              x = kInf;
            else if (s == 3)
              x = -kInf;
            else if (s < 6)
              x = 0;
          }
        }
      } else if (in.fill == Fill::special && uni(0, 4) == 0) {
        const double i32[] = {-2147483648.0, 2147483647.0, -1, 0};
        const double i64[] = {-9223372036854775808.0, 4611686018427387904.0, -1, 0};
        const double u64[] = {9223372036854775808.0, 18446744073709549568.0, 1, 0};
        const double* e = in.dtype == DType::i32 ? i32 : in.dtype == DType::i64 ? i64 : u64;
        x = e[static_cast<int>(uni(0, 3))];
      } else {
        int64_t lo = in.fill == Fill::ties ? -2 : in.fill == Fill::index ? -2 : -20;
        int64_t hi = in.fill == Fill::ties ? 2 : in.fill == Fill::index ? p.N + 1 : 20;
        if (in.dtype == DType::u64) lo = 0;
        x = uni(lo, hi);
      }
    }
    d.inputs.push_back(std::move(v));
  }
  for (const Output& o : p.outputs) {
    if (o.inplace >= 0) {
      d.outputs.push_back(d.inputs[o.inplace]);
    } else {
      d.outputs.emplace_back(static_cast<size_t>(o.shape == Shape::full ? p.M * p.N : p.M), 0.0);
    }
  }
  return d;
}

std::vector<std::vector<double>> evaluate(const Program& p, const HostData& data) {
  Eval e{p, data};
  e.run();
  if (p.relaunch_src >= 0) {
    const DType from = p.outputs[p.relaunch_src].dtype, to = p.outputs[p.relaunch_dst].dtype;
    const std::vector<E>& src = e.outs[p.relaunch_src];
    std::vector<E>& dst = e.outs[p.relaunch_dst];
    for (size_t k = 0; k < src.size(); ++k) dst[k] = convert(from, to, src[k]);
  }
  std::vector<std::vector<double>> out;
  for (size_t o = 0; o < p.outputs.size(); ++o) {
    out.emplace_back();
    for (const E& x : e.outs[o]) out.back().push_back(as_double(p.outputs[o].dtype, x));
  }
  return out;
}

}  // namespace fuzz
