// The random program generator and the typing rules every program satisfies.
//
// Fuzziness: a float value is fuzzy when evaluators may compute it differently in the
// last bits: transcendental functions (the GPU's approximations), products and quotients
// (the GPU contracts a * b + c into one FMA), float sums and products over a dimension
// (accumulation order). Discontinuous operations (comparisons, floor, casts to integers,
// floordiv, %, argmax, logical ops) never take a fuzzy operand, so a difference in the
// last bits cannot turn into a different branch, and functions that leave their domain
// or blow up near a point (log, sqrt, rsqrt, pow, a divisor) never take one either, so a
// value near 0 cannot turn into NaN or a pole on one side only. Outputs derived from
// fuzzy values are compared with a tolerance, the others exactly.
// (% of floats is fuzzy itself: the GPU computes x - floor(x / y) * y in f32.) Integer
// extremes (Fill::special) stay out of float arithmetic: a float sum of 2^31-sized values
// that cancels to a small one is fuzzy beyond any relative tolerance of the result.
// A float product reads only values of magnitude at most 1 (sigmoid, tanh, sin, cos, erf):
// over larger values a partial product overflows in one accumulation order and not in
// another (inf * 0 gives NaN where a 0 taken first gives 0).
#include "fuzz/generate.hpp"

#include <algorithm>
#include <random>

namespace fuzz {

namespace {

bool produces_fuzz(Op op) {
  switch (op) {
    case Op::exp:
    case Op::exp2:
    case Op::log:
    case Op::log2:
    case Op::rsqrt:
    case Op::sin:
    case Op::cos:
    case Op::tanh:
    case Op::sigmoid:
    case Op::erf:
    case Op::pow:
    case Op::mul:
    case Op::div:
    case Op::mod:
    case Op::sum:
    case Op::mean:
    case Op::prod:
      return true;
    default:
      return false;
  }
}

bool bounded_by_one(Op op) {
  return op == Op::sigmoid || op == Op::tanh || op == Op::sin || op == Op::cos || op == Op::erf;
}

bool discontinuous(Op op) {
  return op == Op::floor || op == Op::ceil || is_compare(op) || op == Op::logical_not ||
         op == Op::logical_and || op == Op::logical_or || op == Op::mod || op == Op::floordiv ||
         op == Op::argmax || op == Op::argmin || op == Op::any || op == Op::all;
}

// The index space a node's value lives in, from its operands (literals are neutral).
struct Place {
  bool ok = true;
  Shape shape = Shape::row;
  int phase = 0;
};

Place combine(const Program& p, std::initializer_list<int> operands) {
  Place r;
  bool has_row = false, has_col = false, has_full = false, any = false;
  int phase = 0;
  bool phase1 = false, phase2 = false;
  for (int o : operands) {
    if (o < 0) continue;
    const Node& n = p.nodes[o];
    if (n.op == Op::literal) continue;
    any = true;
    has_row |= n.shape == Shape::row;
    has_col |= n.shape == Shape::col;
    has_full |= n.shape == Shape::full;
    phase = std::max(phase, n.phase);
    phase1 |= n.phase == 1;
    phase2 |= n.phase == 2;
  }
  if (!any) return Place{false};
  bool has_tile = false;
  for (int o : operands)
    if (o >= 0 && p.nodes[o].op != Op::literal) has_tile |= p.nodes[o].shape == Shape::tile;
  // A tile value with columns only would be one row of columns per tile: no shape class.
  if (has_tile && has_col && !has_row && !has_full) return Place{false};
  r.shape = (has_full || (has_row && has_col)) ? Shape::full
            : has_col                          ? Shape::col
            : has_row                          ? Shape::row
            : has_tile                         ? Shape::tile
                                               : Shape::row;
  if (nested(p.form)) {
    if (r.shape == Shape::full || r.shape == Shape::col) phase = 1;
    if (phase == 1 && phase2) return Place{false};
    phase1 = phase == 1;
  }
  r.phase = phase;
  return r;
}

bool any_fuzzy(const Program& p, std::initializer_list<int> operands) {
  for (int o : operands)
    if (o >= 0 && p.nodes[o].fuzzy) return true;
  return false;
}

bool literal(const Program& p, int o) { return o >= 0 && p.nodes[o].op == Op::literal; }

// Whether node o reads nothing that varies by program or element (only literals and
// extents, and ops on them): tessel computes such an index on the host and refuses it
// outside [0, size) on every call instead of masking it (runtime/host_indices.hpp).
bool host_only(const Program& p, int o) {
  const Node& n = p.nodes[o];
  if (n.op == Op::literal || n.op == Op::extent) return true;
  if (n.op == Op::load || n.op == Op::gather || n.op == Op::reload || n.op == Op::row_index ||
      n.op == Op::col_index || n.op == Op::tile_attr)
    return false;
  for (int x : {n.a, n.b, n.c})
    if (x >= 0 && !host_only(p, x)) return false;
  return true;
}

// Types node i from its operands; false when the combination is not a valid program.
bool infer(Program& p, int i) {
  Node& n = p.nodes[i];
  const Form f = p.form;
  auto nd = [&](int o) -> const Node& { return p.nodes[o]; };
  for (int o : {n.a, n.b, n.c})
    if (o >= i) return false;
  n.weak = false;
  switch (n.op) {
    case Op::load: {
      if (n.input < 0 || n.input >= static_cast<int>(p.inputs.size())) return false;
      const Input& in = p.inputs[n.input];
      n.dtype = in.dtype;
      n.shape = in.shape;
      n.phase = nested(f) && in.shape != Shape::row ? 1 : 0;
      n.fuzzy = false;
      return true;
    }
    case Op::col_index:
    case Op::row_index:
      n.dtype = p.index_dtype.value_or(DType::i32);
      n.shape = n.op == Op::row_index ? Shape::row : Shape::col;
      n.phase = nested(f) && n.shape == Shape::col ? 1 : 0;
      n.fuzzy = false;
      return true;
    case Op::tile_attr:
      if (!(f == Form::tile_all || f == Form::tile_nested)) return false;
      n.dtype = p.index_dtype.value_or(DType::i32);
      n.shape = Shape::tile;
      n.phase = 0;
      n.fuzzy = false;
      return true;
    case Op::extent:  // uniform: a tile value where rows are tiles, else a row (scalar)
      if (f == Form::tile_2d) return false;
      n.dtype = DType::i64;
      n.shape = tiled_rows(f) ? Shape::tile : Shape::row;
      n.phase = 0;
      n.fuzzy = false;
      return true;
    case Op::literal:
      n.weak = true;
      n.dtype = n.lit == static_cast<double>(static_cast<int64_t>(n.lit)) && n.dtype != DType::f32
                    ? DType::i64
                    : DType::f32;
      n.shape = Shape::row;
      n.phase = 0;
      n.fuzzy = false;
      return true;
    case Op::store: {
      if (n.a < 0 || literal(p, n.a) || n.input < 0 ||
          n.input >= static_cast<int>(p.outputs.size()))
        return false;
      if (nd(n.a).shape != p.outputs[n.input].shape) return false;
      // Converting a fuzzy float to an integer is discontinuous.
      if (nd(n.a).fuzzy && floating(nd(n.a).dtype) && !floating(p.outputs[n.input].dtype))
        return false;
      const Output& out = p.outputs[n.input];
      if (out.inplace >= 0) {  // into an input read only before, by its own program
        const Input& in = p.inputs[out.inplace];
        if (in.shape != out.shape || in.dtype != out.dtype || in.alias >= 0) return false;
        if (out.shape == Shape::row && (f == Form::tile_2d || f == Form::grid_2d)) return false;
        for (const Input& other : p.inputs)
          if (other.alias == out.inplace) return false;
        for (int j = 0; j < static_cast<int>(p.nodes.size()); ++j) {
          const Node& m = p.nodes[j];
          if (m.op == Op::gather && m.input == out.inplace) return false;
          if (m.op == Op::load && m.input == out.inplace && j > i) return false;
        }
        for (size_t o = 0; o < p.outputs.size(); ++o)
          if (static_cast<int>(o) != n.input && p.outputs[o].inplace == out.inplace) return false;
      }
      if (n.lit != 0) {  // out op= a: each element updated by one program, not bool op bool
        if (out.shape == Shape::row && (f == Form::tile_2d || f == Form::grid_2d)) return false;
        if (promote_types(out.dtype, nd(n.a).dtype) == DType::boolean) return false;
        if (nd(n.a).fuzzy && floating(nd(n.a).dtype) && !floating(out.dtype)) return false;
      }
      n.dtype = out.dtype;
      n.shape = nd(n.a).shape;
      n.phase = nd(n.a).phase;
      n.fuzzy = nd(n.a).fuzzy;
      for (int j = 0; j < i; ++j)  // each output is stored once
        if (p.nodes[j].op == Op::store && p.nodes[j].input == n.input) return false;
      return true;
    }
    case Op::reload: {
      int store = -1;
      for (int j = 0; j < i; ++j)
        if (p.nodes[j].op == Op::store && p.nodes[j].input == n.input) store = j;
      if (store < 0) return false;
      n.dtype = p.outputs[n.input].dtype;
      n.shape = p.outputs[n.input].shape;
      n.phase = nd(store).phase;
      n.fuzzy = nd(store).fuzzy;
      return true;
    }
    case Op::gather: {
      if (n.a < 0 || host_only(p, n.a) || n.input < 0 ||
          n.input >= static_cast<int>(p.inputs.size()))
        return false;
      const Input& in = p.inputs[n.input];
      const Node& idx = nd(n.a);
      if (in.shape != Shape::full || idx.shape != Shape::row || !integral(idx.dtype) ||
          idx.phase == 2)
        return false;
      n.dtype = in.dtype;
      n.shape = Shape::row;
      n.phase = 0;
      n.fuzzy = false;
      return true;
    }
    default:
      break;
  }
  if (n.a < 0 || (is_binary(n.op) && n.b < 0) || (n.op == Op::where && (n.b < 0 || n.c < 0)))
    return false;
  if (literal(p, n.a) && !(is_binary(n.op) && !literal(p, n.b)))
    return false;  // a literal needs a value
  // A negative constant does not fit u64 (tessel refuses it: convert the value first).
  for (int o : {n.a, n.b, n.c})
    if (literal(p, o) && nd(o).lit < 0)
      for (int q : {n.a, n.b, n.c})
        if (q >= 0 && !literal(p, q) && nd(q).dtype == DType::u64) return false;
  Place pl = combine(p, {n.a, n.b, n.c});
  if (!pl.ok) return false;
  n.shape = pl.shape;
  n.phase = pl.phase;
  if (discontinuous(n.op) && any_fuzzy(p, {n.a, n.b})) return false;
  // (sin and cos too: their error is the operand's absolute error, large for large values)
  const bool poles = n.op == Op::log || n.op == Op::log2 || n.op == Op::sqrt || n.op == Op::rsqrt ||
                     n.op == Op::pow || n.op == Op::sin || n.op == Op::cos;
  if (poles && any_fuzzy(p, {n.a})) return false;
  if (n.op == Op::div && any_fuzzy(p, {n.b})) return false;
  n.fuzzy = any_fuzzy(p, {n.a, n.b, n.c});
  const DType ta = nd(n.a).dtype;
  if (is_unary(n.op)) {
    switch (n.op) {
      case Op::neg:
      case Op::abs:
      case Op::floor:
      case Op::ceil:
        if (ta == DType::boolean) return false;
        n.dtype = ta;
        break;
      case Op::logical_not:
        n.dtype = DType::boolean;
        break;
      case Op::bit_not:
        if (floating(ta)) return false;
        n.dtype = ta;
        break;
      default:
        n.dtype = floating(ta) ? ta : DType::f32;
        break;
    }
    n.fuzzy = n.fuzzy || (produces_fuzz(n.op) && floating(n.dtype));
    return true;
  }
  if (is_binary(n.op)) {
    if (n.b < 0 || (literal(p, n.a) && literal(p, n.b))) return false;
    DType t = promote_operands(nd(n.a), nd(n.b));
    switch (n.op) {
      case Op::div:
        n.dtype = floating(t) ? t : DType::f32;
        break;
      case Op::pow:
        if (!literal(p, n.b) || t == DType::boolean) return false;
        n.dtype = t;
        break;
      case Op::bit_and:
      case Op::bit_or:
      case Op::bit_xor:
        if (floating(nd(n.a).dtype) || floating(nd(n.b).dtype)) return false;
        n.dtype = t;
        break;
      case Op::logical_and:
      case Op::logical_or:
        n.dtype = DType::boolean;
        break;
      default:
        if (is_compare(n.op)) {
          n.dtype = DType::boolean;
        } else {
          if (t == DType::boolean) return false;
          n.dtype = t;
        }
    }
    n.fuzzy = n.fuzzy || (produces_fuzz(n.op) && floating(n.dtype));
    return true;
  }
  if (n.op == Op::where) {
    if (n.b < 0 || n.c < 0 || (literal(p, n.b) && literal(p, n.c))) return false;
    if (nd(n.a).fuzzy) return false;
    n.dtype = promote_operands(nd(n.b), nd(n.c));
    return true;
  }
  if (n.op == Op::cast) {
    if (floating(ta) && !floating(n.dtype) && nd(n.a).fuzzy) return false;
    return true;  // n.dtype is the target
  }
  if (is_reduce(n.op)) {
    const bool over_tile = nd(n.a).shape == Shape::row;  // over the rows of the row tile
    if (over_tile ? !(f == Form::tile_all || f == Form::tile_nested) || nd(n.a).phase == 1
                  : nd(n.a).shape != Shape::full || f == Form::tile_2d || f == Form::grid_2d)
      return false;
    if (!over_tile && nested(f) && (n.op == Op::mean || n.op == Op::argmax || n.op == Op::argmin))
      return false;
    // An accumulator over tiles starts at ts::full(identity): none for u64 extremes here.
    if (!over_tile && nested(f) && (n.op == Op::max || n.op == Op::min) && ta == DType::u64)
      return false;
    if (n.op == Op::prod && floating(ta) && !bounded_by_one(nd(n.a).op)) return false;
    n.shape = over_tile ? Shape::tile : Shape::row;
    n.phase = over_tile ? nd(n.a).phase : nested(f) ? 2 : 0;
    switch (n.op) {
      case Op::sum:
      case Op::prod:
        n.dtype = floating(ta) ? ta : DType::i64;
        break;
      case Op::mean:
        if (!floating(ta)) return false;
        n.dtype = ta;
        break;
      case Op::max:
      case Op::min:
        if (ta == DType::boolean) return false;
        n.dtype = ta;
        break;
      case Op::argmax:
      case Op::argmin:
        if (ta == DType::boolean) return false;
        n.dtype = DType::i64;
        break;
      default:
        n.dtype = DType::boolean;
        break;
    }
    n.fuzzy = n.fuzzy || (produces_fuzz(n.op) && floating(n.dtype));
    return true;
  }
  return false;
}

struct Gen {
  Program& p;
  std::mt19937_64& rng;

  int64_t uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  }
  bool chance(double q) { return std::uniform_real_distribution<double>(0, 1)(rng) < q; }
  template <class T>
  T pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(uniform(0, static_cast<int64_t>(v.size()) - 1))];
  }

  DType dtype() {
    static const std::vector<DType> all = {DType::f32,  DType::f32, DType::f32,    DType::f16,
                                           DType::bf16, DType::f64, DType::i32,    DType::i32,
                                           DType::i64,  DType::u64, DType::boolean};
    return pick(all);
  }

  int64_t size() {
    static const std::vector<int64_t> sizes = {0,   1,   1,   2,   3,   4,   5,   7,   8,
                                               13,  16,  17,  31,  32,  33,  64,  65,  100,
                                               127, 128, 129, 200, 256, 300, 513, 1000};
    return pick(sizes);
  }

  LoopBound bound(int64_t extent) {
    LoopBound b;
    int64_t r = uniform(0, 9);
    b.kind = r < 4   ? BoundKind::size
             : r < 5 ? BoundKind::literal
             : r < 6 ? BoundKind::symbolic
             : r < 8 ? BoundKind::device
                     : BoundKind::range;
    b.end = extent;
    if (b.kind == BoundKind::device) b.end = extent + pick(std::vector<int64_t>{0, 0, 1, 3, 17});
    if (b.kind == BoundKind::range) b.begin = uniform(0, extent);
    return b;
  }

  // Adds node n if it types; returns its index or -1.
  int add(Node n) {
    p.nodes.push_back(n);
    int i = static_cast<int>(p.nodes.size()) - 1;
    if (!infer(p, i)) {
      p.nodes.pop_back();
      return -1;
    }
    return i;
  }

  int literal_node(bool floaty) {
    Node n;
    n.op = Op::literal;
    n.lit = floaty ? pick(std::vector<double>{0.5, 2.0, -1.5, 3.0, 0.0, 1.0, 0.25})
                   : pick(std::vector<double>{0, 1, 2, -3, 5, 7});
    n.dtype = floaty ? DType::f32 : DType::i64;
    return add(n);
  }

  // A random earlier non-literal node satisfying `want`, later nodes more likely.
  template <class F>
  int operand(F want) {
    std::vector<int> c;
    for (int i = 0; i < static_cast<int>(p.nodes.size()); ++i)
      if (p.nodes[i].op != Op::literal && p.nodes[i].op != Op::store && want(p.nodes[i]))
        c.push_back(i);
    if (c.empty()) return -1;
    if (chance(0.5))
      return c[static_cast<size_t>(uniform(std::max<int64_t>(0, static_cast<int64_t>(c.size()) - 3),
                                           static_cast<int64_t>(c.size()) - 1))];
    return pick(c);
  }
  int operand() {
    return operand([](const Node&) { return true; });
  }

  static constexpr Op kUnary[] = {Op::neg,         Op::abs,     Op::exp,   Op::exp2,  Op::log,
                                  Op::log2,        Op::sqrt,    Op::rsqrt, Op::sin,   Op::cos,
                                  Op::tanh,        Op::sigmoid, Op::erf,   Op::floor, Op::ceil,
                                  Op::logical_not, Op::bit_not};
  static constexpr Op kBinary[] = {
      Op::add,      Op::add,     Op::sub,     Op::mul, Op::div,         Op::mod,
      Op::floordiv, Op::maximum, Op::minimum, Op::pow, Op::lt,          Op::le,
      Op::gt,       Op::ge,      Op::eq,      Op::ne,  Op::logical_and, Op::logical_or,
      Op::bit_and,  Op::bit_or,  Op::bit_xor};
  static constexpr Op kReduce[] = {Op::sum,  Op::sum,    Op::mean,   Op::max,    Op::max, Op::min,
                                   Op::prod, Op::argmax, Op::argmax, Op::argmin, Op::any, Op::all};

  void step() {
    int64_t r = uniform(0, 99);
    Node n;
    if (r < 20) {
      n.op = kUnary[uniform(0, std::size(kUnary) - 1)];
      n.a = operand();
    } else if (r < 55) {
      n.op = kBinary[uniform(0, std::size(kBinary) - 1)];
      n.a = operand();
      if (n.op == Op::pow) {
        n.b = chance(0.5) ? literal_node(false) : literal_node(true);
        if (n.b >= 0 && p.nodes[n.b].lit < 0.25) p.nodes[n.b].lit = 2;
      } else {
        n.b = chance(0.3) ? literal_node(chance(0.5)) : operand();
      }
      if (chance(0.15)) std::swap(n.a, n.b);
    } else if (r < 63) {
      n.op = Op::where;
      n.a = operand();
      n.b = operand();
      n.c = chance(0.3) ? literal_node(chance(0.5)) : operand();
    } else if (r < 73) {
      n.op = Op::cast;
      n.a = operand();
      n.dtype = dtype();
    } else if (r < 90) {
      n.op = kReduce[uniform(0, std::size(kReduce) - 1)];
      n.a = operand([&](const Node& x) {
        if (n.op == Op::prod && floating(x.dtype) && !bounded_by_one(x.op)) return false;
        return x.shape == Shape::full || (x.shape == Shape::row && chance(0.3));
      });
    } else if (r < 95) {
      std::vector<int> full;
      for (int i = 0; i < static_cast<int>(p.inputs.size()); ++i)
        if (p.inputs[i].shape == Shape::full) full.push_back(i);
      if (full.empty()) return;
      n.op = Op::gather;
      n.input = pick(full);
      // A bare grid index whose loop is bounded by a tensor's size is checked against every
      // tensor it indexes on each call (a smaller dim is an error, not masked): no gather
      // index here, whose values may leave the gathered dim by design.
      const bool grid =
          p.form == Form::grid_all || p.form == Form::grid_nested || p.form == Form::grid_2d;
      auto sized = [](const LoopBound& b) {
        return b.kind == BoundKind::size || b.kind == BoundKind::range;
      };
      n.a = operand([&](const Node& x) {
        if (grid && ((x.op == Op::row_index && sized(p.rows)) ||
                     (x.op == Op::col_index && p.form == Form::grid_2d && sized(p.cols))))
          return false;
        return x.shape == Shape::row && integral(x.dtype);
      });
    } else {
      int64_t k = uniform(0, 4);
      n.op = k == 0 ? Op::row_index : k == 1 ? Op::col_index : k == 2 ? Op::extent : Op::tile_attr;
      n.lit = static_cast<double>(uniform(0, n.op == Op::extent ? 1 : 3));
    }
    add(n);
  }

  void inputs() {
    int k = static_cast<int>(uniform(1, 4));
    for (int i = 0; i < k; ++i) {
      if (i > 0 && chance(0.1)) {
        int j = static_cast<int>(uniform(0, i - 1));
        while (p.inputs[j].alias >= 0) j = p.inputs[j].alias;
        Input in = p.inputs[j];
        in.alias = j;
        p.inputs.push_back(in);
        continue;
      }
      Input in;
      in.dtype = dtype();
      int64_t s = uniform(0, 9);
      in.shape = s < 6 ? Shape::full : s < 8 ? Shape::row : Shape::col;
      int64_t v = uniform(0, 9);
      in.view = v < 6                                ? View::contiguous
                : (v < 8 && in.shape == Shape::full) ? View::transposed
                                                     : View::strided;
      int64_t fl = uniform(0, 9);
      in.fill = fl < 5 ? Fill::normal : fl < 7 ? Fill::ties : Fill::special;
      if (integral(in.dtype) && in.shape == Shape::row && chance(0.5)) in.fill = Fill::index;
      if (in.dtype == DType::boolean && in.fill == Fill::special) in.fill = Fill::normal;
      p.inputs.push_back(in);
    }
  }

  void outputs() {
    int k = static_cast<int>(uniform(1, 3));
    for (int j = 0; j < k; ++j) {
      std::vector<int> c;
      for (int i = 0; i < static_cast<int>(p.nodes.size()); ++i) {
        const Node& n = p.nodes[i];
        if (n.op != Op::literal && n.op != Op::store && n.shape != Shape::col) c.push_back(i);
      }
      if (c.empty()) return;
      int v = chance(0.6) ? c.back() : pick(c);
      Output o;
      o.shape = p.nodes[v].shape;
      o.dtype = chance(0.7) ? p.nodes[v].dtype : dtype();
      if (chance(0.2)) {  // written in place of an input of its shape
        std::vector<int> c;
        for (int k = 0; k < static_cast<int>(p.inputs.size()); ++k)
          if (p.inputs[k].shape == o.shape) c.push_back(k);
        if (!c.empty()) {
          o.inplace = pick(c);
          o.dtype = p.inputs[o.inplace].dtype;
        }
      }
      p.outputs.push_back(o);
      Node s;
      s.op = Op::store;
      s.a = v;
      s.input = static_cast<int>(p.outputs.size()) - 1;
      s.lit = chance(0.25) ? static_cast<double>(uniform(1, 3))
                           : 0;  // out op= v where it types, else out = v
      bool stored = s.lit != 0 && add(s) >= 0;
      s.lit = 0;
      if (!stored && add(s) < 0) {
        p.outputs.pop_back();
        continue;
      }
      if (chance(0.2)) {  // read the stored tensor back and store something computed from it
        Node r;
        r.op = Op::reload;
        r.input = s.input;
        int ri = add(r);
        if (ri < 0) continue;
        Node m;
        m.op = Op::add;
        m.a = ri;
        m.b = literal_node(chance(0.5));
        int mi = add(m);
        if (mi < 0) continue;
        Output o2;
        o2.shape = p.nodes[mi].shape;
        o2.dtype = p.nodes[mi].dtype;
        p.outputs.push_back(o2);
        Node s2;
        s2.op = Op::store;
        s2.a = mi;
        s2.input = static_cast<int>(p.outputs.size()) - 1;
        if (add(s2) < 0) p.outputs.pop_back();
      }
    }
  }
};

}  // namespace

// Integer inputs of extreme values that reach a float value hold normal values instead.
void keep_extremes_integral(Program& p) {
  std::vector<std::vector<bool>> from(p.nodes.size(), std::vector<bool>(p.inputs.size(), false));
  std::vector<bool> floaty(p.inputs.size(), false);
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    const Node& n = p.nodes[i];
    if ((n.op == Op::load || n.op == Op::gather) && n.input >= 0) from[i][n.input] = true;
    for (int o : {n.a, n.b, n.c})
      if (o >= 0)
        for (size_t k = 0; k < p.inputs.size(); ++k) from[i][k] = from[i][k] || from[o][k];
    if (n.op == Op::reload)
      for (size_t j = 0; j < i; ++j)
        if (p.nodes[j].op == Op::store && p.nodes[j].input == n.input)
          for (size_t k = 0; k < p.inputs.size(); ++k) from[i][k] = from[i][k] || from[j][k];
    const bool f = floating(n.dtype) || (n.op == Op::store && floating(p.outputs[n.input].dtype));
    if (f)
      for (size_t k = 0; k < p.inputs.size(); ++k) floaty[k] = floaty[k] || from[i][k];
  }
  for (size_t k = 0; k < p.inputs.size(); ++k) {
    int root = p.inputs[k].alias >= 0 ? p.inputs[k].alias : static_cast<int>(k);
    if (floaty[k] && !floating(p.inputs[root].dtype) && p.inputs[root].fill == Fill::special)
      p.inputs[root].fill = Fill::normal;
  }
  for (Input& in : p.inputs)
    if (in.alias >= 0) in.fill = p.inputs[in.alias].fill;
}

bool retype(Program& p) {
  for (int i = 0; i < static_cast<int>(p.nodes.size()); ++i)
    if (!infer(p, i)) return false;
  for (size_t o = 0; o < p.outputs.size(); ++o) {
    int stores = 0;
    for (const Node& n : p.nodes) stores += n.op == Op::store && n.input == static_cast<int>(o);
    if (stores != (static_cast<int>(o) == p.relaunch_dst ? 0 : 1)) return false;
  }
  if (p.relaunch_src >= 0) {
    const Output &src = p.outputs.at(p.relaunch_src), &dst = p.outputs.at(p.relaunch_dst);
    if (src.shape != dst.shape || src.shape == Shape::tile || dst.inplace >= 0) return false;
    if (output_fuzzy(p, p.relaunch_src) && floating(src.dtype) && !floating(dst.dtype))
      return false;
  }
  return !p.outputs.empty() && p.outputs.size() <= kMaxOutputs && p.inputs.size() <= kMaxInputs;
}

Program generate(uint64_t seed, const GenOptions& opts) {
  std::mt19937_64 rng(seed);
  Program p;
  p.seed = seed;
  Gen g{p, rng};
  p.form = static_cast<Form>(g.uniform(0, 5));
  do {
    p.M = g.size();
    p.N = g.size();
  } while (p.M * p.N > opts.max_elements);
  p.rows = g.bound(p.M);
  p.cols = looped_cols(p.form) ? g.bound(p.N) : LoopBound{BoundKind::size, 0, p.N};
  int64_t ix = g.uniform(0, 4);
  if (ix == 3) p.index_dtype = DType::i32;
  if (ix == 4) p.index_dtype = DType::i64;
  g.inputs();
  for (int i = 0; i < static_cast<int>(p.inputs.size()); ++i) {
    Node n;
    n.op = Op::load;
    n.input = i;
    g.add(n);
  }
  int steps = static_cast<int>(g.uniform(2, 14));
  for (int s = 0; s < steps; ++s) g.step();
  g.outputs();
  if (!p.outputs.empty() && g.chance(0.15)) {  // a second launch reads an output back
    int src = static_cast<int>(g.uniform(0, static_cast<int64_t>(p.outputs.size()) - 1));
    if (p.outputs[src].shape != Shape::tile) {
      Output dst;
      dst.shape = p.outputs[src].shape;
      dst.dtype = g.chance(0.5) ? p.outputs[src].dtype : g.dtype();
      p.outputs.push_back(dst);
      p.relaunch_src = src;
      p.relaunch_dst = static_cast<int>(p.outputs.size()) - 1;
      if (!retype(p)) {
        p.outputs.pop_back();
        p.relaunch_src = p.relaunch_dst = -1;
      }
    }
  }
  keep_extremes_integral(p);
  if (!retype(p)) {  // no output typed: draw again from a derived seed
    Program q = generate(seed * 0x9E3779B97F4A7C15ull + 1, opts);
    q.seed = seed;
    return q;
  }
  return p;
}

}  // namespace fuzz
