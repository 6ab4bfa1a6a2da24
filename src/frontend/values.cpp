// Value, Operand and the elementwise, math and reduction ops of the language.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "common/count_text.hpp"
#include "common/element.hpp"
#include "frontend/trace.hpp"
#include "ir/host_eval.hpp"

namespace tessel {

using frontend::TraceContext;
using ir::Node;
using ir::Op;

// ---- Operand ----

Operand::Operand(const Value& v, Loc loc) : loc_(SourceLoc::from(loc)) {
  node_ = v.node_at(loc_);
  if (!node_)
    TraceContext::current(loc_).fail(loc_, "an undefined ts::Value is used",
                                     "assign the variable before reading it");
  TraceContext* ctx = TraceContext::current_or_null();
  weak_ = ctx && ctx->weak_float(node_);
}

Operand::Operand(const TensorRef& r, Loc loc) : loc_(SourceLoc::from(loc)) { node_ = r.load(loc_); }

Operand::Operand(const Tensor& t, Loc loc) : loc_(SourceLoc::from(loc)) {
  TraceContext& ctx = TraceContext::current(loc_);
  std::string name = t.node()->name.empty() ? "a tensor" : "tensor '" + t.node()->name + "'";
  ctx.fail(loc_,
           fmt::format("{} is used as a value{}", name,
                       ctx.depth() > 0 ? " inside a device loop without loading it" : ""),
           "index it to load elements (`x(t)`, `x(i, ts::all)`), or for a one-element bound "
           "use ts::load(x) or x.item()");
}

Operand::Operand(DType literal_dtype, double f, int64_t i, Loc loc)
    : weak_(true), loc_(SourceLoc::from(loc)) {
  TraceContext& ctx = TraceContext::current(loc_);
  node_ = is_float(literal_dtype) ? ctx.constant_float(f, literal_dtype, loc_)
                                  : ctx.constant_int(i, literal_dtype, loc_);
}

// ---- Value ----

static int current_depth() {
  TraceContext* ctx = TraceContext::current_or_null();
  return ctx ? ctx->depth() : 0;
}

static uint64_t current_trace() {
  TraceContext* ctx = TraceContext::current_or_null();
  return ctx ? ctx->id() : 0;
}

Value::Value() : depth_(current_depth()), trace_(current_trace()) {}
Value::Value(const Value& o) : node_(o.node()), depth_(current_depth()), trace_(current_trace()) {}
Value::Value(const Operand& o)
    : node_(o.node()), depth_(current_depth()), trace_(current_trace()) {}
Value::Value(const TensorRef& r, Loc loc) : Value(Operand(r, loc)) {}

Value::~Value() {
  if (TraceContext* ctx = TraceContext::current_or_null()) ctx->forget(this);
}

Value Value::wrap(Node* n) {
  Value v;
  v.node_ = n;
  v.depth_ = current_depth();
  v.trace_ = current_trace();
  return v;
}

Node* Value::node_at(SourceLoc loc) const {
  TraceContext* ctx = TraceContext::current_or_null();
  if (!ctx || !node_) return node_;
  if (trace_ != ctx->id())
    ctx->fail(
        loc, "a ts::Value from another trace (an earlier call, or another kernel) is used",
        "declare ts::Value variables inside the kernel's lambda; a value cannot outlive the call "
        "that traced it");
  return ctx->resolve(this, node_, depth_, loc);
}

Value& Value::named(const std::string& name) {
  if (Node* n = node()) n->name = name;  // read by codegen (codegen/names.hpp) and the printer
  return *this;
}

Value& Value::assign(Node* n) {
  TraceContext* ctx = TraceContext::current_or_null();
  if (ctx && node_ && trace_ == ctx->id()) ctx->resolve(this, node_, depth_);
  if (ctx && trace_ != ctx->id()) {  // a variable kept from another trace starts over here
    trace_ = ctx->id();
    depth_ = current_depth();
  }
  node_ = n;
  return *this;
}

Value& Value::operator=(const Value& o) {
  if (this == &o) return *this;
  return assign(o.node());
}
// Compound assignments are attributed to the user's line, which the right operand carries.
Value& Value::operator=(const TensorRef& r) { return assign(r.load(SourceLoc{})); }
Value& Value::operator+=(const Operand& o) {
  return assign((Operand(*this).at(o.loc()) + o).node());
}
Value& Value::operator-=(const Operand& o) {
  return assign((Operand(*this).at(o.loc()) - o).node());
}
Value& Value::operator*=(const Operand& o) {
  return assign((Operand(*this).at(o.loc()) * o).node());
}
Value& Value::operator/=(const Operand& o) {
  return assign((Operand(*this).at(o.loc()) / o).node());
}

DType Value::dtype() const { return node()->dtype; }
int Value::dim() const { return static_cast<int>(node()->shape.size()); }
Value Value::to(DType dtype, Loc loc) const { return cast(Operand(*this, loc), dtype); }

Value Value::operator()(const Index& a) const { return view({a}, a.loc); }
Value Value::operator()(const Index& a, const Index& b) const { return view({a, b}, a.loc); }
Value Value::operator()(const Index& a, const Index& b, const Index& c) const {
  return view({a, b, c}, a.loc);
}
Value Value::operator()(const Index& a, const Index& b, const Index& c, const Index& d) const {
  return view({a, b, c, d}, a.loc);
}

Value Value::view(const std::vector<Index>& idx, SourceLoc loc) const {
  TraceContext& ctx = TraceContext::current(loc);
  Node* src = node();
  ir::Shape shape;
  size_t used = 0;
  for (const Index& i : idx) {
    if (i.kind == Index::newaxis_k) {
      shape.push_back(nullptr);
    } else if (i.kind == Index::all_k) {
      if (used >= src->shape.size())
        ctx.fail(loc, fmt::format("too many indices for a value of {}",
                                  count_of(static_cast<int64_t>(src->shape.size()), "dimension")));
      shape.push_back(src->shape[used++]);
    } else {
      ctx.fail(loc, "a tile value can only be indexed with ts::all and ts::newaxis",
               "index tensors, not values, with tiles and integers");
    }
  }
  while (used < src->shape.size()) shape.push_back(src->shape[used++]);
  return Value::wrap(ctx.add(Op::View, src->dtype, shape, {src}, loc));
}

Value Value::permute(const std::vector<int>& dims, Loc where) const {
  const SourceLoc loc = SourceLoc::from(where);
  TraceContext& ctx = TraceContext::current(loc);
  Node* src = node_at(loc);
  const int rank = static_cast<int>(src->shape.size());
  std::vector<int> perm;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int d : dims) {
    int k = d < 0 ? d + rank : d;
    if (k < 0 || k >= rank || seen[static_cast<size_t>(k)])
      ctx.fail(loc,
               fmt::format("permute({}) of a value of {}: not a permutation of its dims",
                           fmt::join(dims, ", "), count_of(rank, "dimension")),
               "give each dim 0..rank-1 once (negative dims count from the end)");
    seen[static_cast<size_t>(k)] = true;
    perm.push_back(k);
  }
  if (rank > 15)
    ctx.fail(loc,
             fmt::format("permute of a value of {} dimensions: at most 15 are supported", rank),
             "reshape to fewer dimensions first");
  if (static_cast<int>(perm.size()) != rank)
    ctx.fail(loc,
             fmt::format("permute({}) of a value of {}: not a permutation of its dims",
                         fmt::join(dims, ", "), count_of(rank, "dimension")),
             "give each dim 0..rank-1 once (negative dims count from the end)");
  ir::Shape shape;
  for (int k : perm) shape.push_back(src->shape[static_cast<size_t>(k)]);
  Node* n = ctx.add(Op::Permute, src->dtype, shape, {src}, loc);
  n->ival = ir::encode_permutation(perm);
  return Value::wrap(n);
}

Value Value::t(Loc where) const {
  const SourceLoc loc = SourceLoc::from(where);
  if (dim() < 2) return *this;  // PyTorch: 0-D and 1-D tensors are their own transpose
  if (dim() > 2)
    TraceContext::current(loc).fail(
        loc,
        fmt::format("t() of a value of {}: it transposes 2-D values", count_of(dim(), "dimension")),
        "use permute(dims) for other ranks");
  return permute({1, 0}, where);
}

// ---- elementwise ops ----

namespace {

/// `n` converted to dtype t. A weakly typed float converts from its full (double) value;
/// one computed from others (`eps / 10`, one Python float; also read through a loop's
/// placeholder) is rounded once after its arithmetic in double, even to its own dtype f32,
/// unless `keep_weak` (an operand of weak arithmetic, whose result stays weak).
Node* cast_node(Node* n, DType t, SourceLoc loc, bool keep_weak = false) {
  TraceContext& ctx = TraceContext::current(loc);
  const bool computed = n->op == Op::Binary || n->op == Op::Unary || n->op == Op::Carried;
  if (n->dtype == t && (keep_weak || !computed || !is_float(t) || !ctx.weak_float(n))) return n;
  if (ctx.weak_float(n)) {
    n = ctx.exact_float(n);
    if (n->dtype == t) return n;
  }
  // A scalar constant converts at trace time as a Cast would at run time: to bool as
  // x != 0, to i32 wrapping to 32 bits, u64 as unsigned; float to integer stays a Cast.
  if (n->op == Op::Const && n->shape.empty()) {
    const bool from_float = is_float(n->dtype);
    if (is_float(t)) {
      double v = from_float               ? n->fval
                 : n->dtype == DType::u64 ? static_cast<double>(static_cast<uint64_t>(n->ival))
                                          : static_cast<double>(n->ival);
      return ctx.constant_float(v, t, loc);
    }
    if (t == DType::boolean)
      return ctx.constant_int(from_float ? n->fval != 0 : n->ival != 0, t, loc);
    if (!from_float)
      return ctx.constant_int(t == DType::i32 ? static_cast<int32_t>(static_cast<uint32_t>(n->ival))
                              : t == DType::i8 ? static_cast<int8_t>(static_cast<uint8_t>(n->ival))
                                               : n->ival,
                              t, loc);
  }
  return ctx.add(Op::Cast, t, n->shape, {n}, loc);
}

SourceLoc pick_loc(const Operand& a, const Operand& b) { return a.loc().line ? a.loc() : b.loc(); }

static void check_weak_constants(DType common, const Operand& a, const Operand& b, SourceLoc loc) {
  frontend::check_weak_constant(common, a, "the other operand", loc);
  frontend::check_weak_constant(common, b, "the other operand", loc);
}

DType common_dtype(const Operand& a, const Operand& b) {
  DType da = a.node()->dtype, db = b.node()->dtype;
  if (a.weak() && !b.weak()) return promote_weak(db, da);
  if (b.weak() && !a.weak()) return promote_weak(da, db);
  return promote(da, db);
}

Value binary(ir::BinaryFn fn, const Operand& a, const Operand& b) {
  TraceContext& ctx = TraceContext::current(a.loc());
  SourceLoc loc = pick_loc(a, b);
  char kind = ir::binary_kind(fn);
  DType common = common_dtype(a, b);
  if (kind == 'l') common = DType::boolean;
  if (kind == 'b' && is_float(common))
    ctx.fail(loc,
             fmt::format("bitwise operator {} needs integer or bool operands, got {}",
                         fn == ir::BinaryFn::bit_and   ? "&"
                         : fn == ir::BinaryFn::bit_or  ? "|"
                         : fn == ir::BinaryFn::bit_xor ? "^"
                                                       : ir::binary_name(fn),
                         dtype_name(common)),
             "convert with .to(ts::i32) first, or use && / || on bool values");
  check_weak_constants(common, a, b, loc);
  if (fn == ir::BinaryFn::div && !is_float(common)) common = DType::f32;
  if (fn == ir::BinaryFn::pow && common == DType::boolean) common = DType::i64;
  ir::Shape shape = frontend::broadcast_shapes(a.node()->shape, b.node()->shape, loc);
  Node* x = a.node();
  Node* y = b.node();
  if (kind == 'l') {  // logical: compare with zero
    if (x->dtype != DType::boolean) x = binary(ir::BinaryFn::ne, Value::wrap(x), 0).node();
    if (y->dtype != DType::boolean) y = binary(ir::BinaryFn::ne, Value::wrap(y), 0).node();
  }
  if (kind == 'b' && common == DType::boolean) {
    fn = fn == ir::BinaryFn::bit_and  ? ir::BinaryFn::logical_and
         : fn == ir::BinaryFn::bit_or ? ir::BinaryFn::logical_or
                                      : ir::BinaryFn::ne;
  }
  // A host scalar of another dtype next to an f16, bf16 or 8-bit float value (a C++
  // number, a ts::Value argument, a size, host arithmetic of these) takes part in f32 with
  // its own value, and the result is rounded once to the value's dtype: torch's "opmath"
  // for ops with a wrapped number or a CPU scalar (x_f16 * 65536.0 is x * 65536 rounded,
  // not x times 65536 rounded to f16, infinity; x_f16 / x.size(0) divides by 70000). A
  // device scalar (a grid index, a loaded element) converts first, as a GPU tensor does.
  auto outside_loops = [&](const Node* x) { return ctx.value_outside_loops(const_cast<Node*>(x)); };
  auto host_scalar_of_another_dtype = [&](const Operand& o) {
    return o.weak() || (o.node()->shape.empty() && o.node()->dtype != common &&
                        ir::host_computable(o.node(), outside_loops));
  };
  const bool opmath = (kind == 'a' || kind == 'c') && is_narrow_float(common) &&
                      (host_scalar_of_another_dtype(a) || host_scalar_of_another_dtype(b));
  const DType compute = opmath ? DType::f32 : common;
  // Arithmetic of weak floats and C++ numbers stays weak (Python float arithmetic).
  const bool stays_weak = kind == 'a' && is_float(compute) && a.weak() && b.weak() &&
                          (ctx.weak_float(x) || ctx.weak_float(y));
  x = cast_node(x, compute, loc, stays_weak);
  y = cast_node(y, compute, loc, stays_weak);
  DType result = (kind == 'c' || kind == 'l') ? DType::boolean : compute;
  Node* n = ctx.add(Op::Binary, result, shape, {x, y}, loc);
  n->fn = static_cast<uint8_t>(fn);
  if (opmath && kind == 'a') n = cast_node(n, common, loc);
  if (stays_weak) ctx.mark_weak_float(n);
  return Value::wrap(n);
}

Value unary(ir::UnaryFn fn, const Operand& a) {
  TraceContext& ctx = TraceContext::current(a.loc());
  Node* x = a.node();
  DType t = x->dtype;
  if (ir::unary_float_only(fn) && !is_float(t)) t = DType::f32;
  if (fn == ir::UnaryFn::logical_not) {
    if (t != DType::boolean) x = binary(ir::BinaryFn::ne, Value::wrap(x), 0).node();
    t = DType::boolean;
  }
  if (fn == ir::UnaryFn::bit_not && t == DType::boolean) fn = ir::UnaryFn::logical_not;
  if (fn == ir::UnaryFn::bit_not && is_float(t))
    ctx.fail(a.loc(), "bitwise not (~) needs an integer or bool operand",
             "use ts::where or a comparison instead");
  if ((fn == ir::UnaryFn::floor || fn == ir::UnaryFn::ceil) && !is_float(t)) return Value::wrap(x);
  const bool stays_weak = (fn == ir::UnaryFn::neg || fn == ir::UnaryFn::abs) && ctx.weak_float(x);
  x = cast_node(x, t, a.loc(), stays_weak);
  Node* n = ctx.add(Op::Unary, t, x->shape, {x}, a.loc());
  n->fn = static_cast<uint8_t>(fn);
  if (stays_weak) ctx.mark_weak_float(n);
  return Value::wrap(n);
}

}  // namespace

Value operator+(const Operand& a, const Operand& b) { return binary(ir::BinaryFn::add, a, b); }
Value operator-(const Operand& a, const Operand& b) { return binary(ir::BinaryFn::sub, a, b); }
Value operator*(const Operand& a, const Operand& b) { return binary(ir::BinaryFn::mul, a, b); }
Value operator/(const Operand& a, const Operand& b) { return binary(ir::BinaryFn::div, a, b); }
Value operator%(const Operand& a, const Operand& b) { return binary(ir::BinaryFn::mod, a, b); }
Value operator-(const Operand& a) { return unary(ir::UnaryFn::neg, a); }
Value operator<(const Operand& a, const Operand& b) { return binary(ir::BinaryFn::lt, a, b); }
Value operator<=(const Operand& a, const Operand& b) { return binary(ir::BinaryFn::le, a, b); }
Value operator>(const Operand& a, const Operand& b) { return binary(ir::BinaryFn::gt, a, b); }
Value operator>=(const Operand& a, const Operand& b) { return binary(ir::BinaryFn::ge, a, b); }
Value operator==(const Operand& a, const Operand& b) { return binary(ir::BinaryFn::eq, a, b); }
Value operator!=(const Operand& a, const Operand& b) { return binary(ir::BinaryFn::ne, a, b); }
Value operator&&(const Operand& a, const Operand& b) {
  return binary(ir::BinaryFn::logical_and, a, b);
}
Value operator||(const Operand& a, const Operand& b) {
  return binary(ir::BinaryFn::logical_or, a, b);
}
Value operator!(const Operand& a) { return unary(ir::UnaryFn::logical_not, a); }
Value operator&(const Operand& a, const Operand& b) { return binary(ir::BinaryFn::bit_and, a, b); }
Value operator|(const Operand& a, const Operand& b) { return binary(ir::BinaryFn::bit_or, a, b); }
Value operator^(const Operand& a, const Operand& b) { return binary(ir::BinaryFn::bit_xor, a, b); }
Value operator~(const Operand& a) { return unary(ir::UnaryFn::bit_not, a); }
Value floordiv(const Operand& a, const Operand& b) { return binary(ir::BinaryFn::floordiv, a, b); }
Value maximum(const Operand& a, const Operand& b) { return binary(ir::BinaryFn::maximum, a, b); }
Value minimum(const Operand& a, const Operand& b) { return binary(ir::BinaryFn::minimum, a, b); }
Value pow(const Operand& a, const Operand& b) { return binary(ir::BinaryFn::pow, a, b); }

Value exp(const Operand& a) { return unary(ir::UnaryFn::exp, a); }
Value exp2(const Operand& a) { return unary(ir::UnaryFn::exp2, a); }
Value log(const Operand& a) { return unary(ir::UnaryFn::log, a); }
Value log2(const Operand& a) { return unary(ir::UnaryFn::log2, a); }
Value sqrt(const Operand& a) { return unary(ir::UnaryFn::sqrt, a); }
Value rsqrt(const Operand& a) { return unary(ir::UnaryFn::rsqrt, a); }
Value abs(const Operand& a) { return unary(ir::UnaryFn::abs, a); }
Value sin(const Operand& a) { return unary(ir::UnaryFn::sin, a); }
Value cos(const Operand& a) { return unary(ir::UnaryFn::cos, a); }
Value tanh(const Operand& a) { return unary(ir::UnaryFn::tanh, a); }
Value sigmoid(const Operand& a) { return unary(ir::UnaryFn::sigmoid, a); }
Value erf(const Operand& a) { return unary(ir::UnaryFn::erf, a); }
Value floor(const Operand& a) { return unary(ir::UnaryFn::floor, a); }
Value ceil(const Operand& a) { return unary(ir::UnaryFn::ceil, a); }

Value cast(const Operand& a, DType dtype) {
  return Value::wrap(cast_node(a.node(), dtype, a.loc()));
}

Value where(const Operand& cond, const Operand& a, const Operand& b) {
  TraceContext& ctx = TraceContext::current(cond.loc());
  SourceLoc loc = cond.loc();
  Node* c = cond.node();
  if (c->dtype != DType::boolean) c = binary(ir::BinaryFn::ne, cond, 0).node();
  DType t = common_dtype(a, b);
  check_weak_constants(t, a, b, loc);
  ir::Shape shape = frontend::broadcast_shapes(
      c->shape, frontend::broadcast_shapes(a.node()->shape, b.node()->shape, loc), loc);
  Node* n = ctx.add(Op::Where, t, shape,
                    {c, cast_node(a.node(), t, loc), cast_node(b.node(), t, loc)}, loc);
  return Value::wrap(n);
}

// ---- reductions ----

namespace {

Value reduce(ir::ReduceFn fn, const Operand& a, int dim, bool keepdim, Loc l) {
  TraceContext& ctx = TraceContext::current(SourceLoc::from(l));
  SourceLoc loc = SourceLoc::from(l);
  Node* x = a.node();
  int rank = static_cast<int>(x->shape.size());
  if (rank == 0)
    ctx.fail(loc, fmt::format("{} of a scalar value", ir::reduce_name(fn)),
             "reduce a tile value (one with dimensions), e.g. x(t, ts::all)");
  if (dim < -rank || dim >= rank)
    ctx.fail(loc,
             fmt::format("reduction dimension {} is out of range for a value of {} "
                         "dimensions",
                         dim, rank),
             fmt::format("use a dimension in [{}, {}]", -rank, rank - 1));
  if (dim < 0) dim += rank;
  DType t = x->dtype;
  switch (fn) {
    case ir::ReduceFn::sum:
    case ir::ReduceFn::prod:
      if (!is_float(t)) t = DType::i64;
      break;
    case ir::ReduceFn::argmax:
    case ir::ReduceFn::argmin:
      t = DType::i64;
      break;
    case ir::ReduceFn::any:
    case ir::ReduceFn::all:
      if (x->dtype != DType::boolean) x = binary(ir::BinaryFn::ne, a, 0).node();
      t = DType::boolean;
      break;
    case ir::ReduceFn::max:
    case ir::ReduceFn::min:
      break;
  }
  x = cast_node(x, (fn == ir::ReduceFn::argmax || fn == ir::ReduceFn::argmin) ? x->dtype : t, loc);
  ir::Shape shape = x->shape;
  if (keepdim)
    shape[dim] = nullptr;
  else
    shape.erase(shape.begin() + dim);
  Node* n = ctx.add(Op::Reduce, t, shape, {x}, loc);
  n->fn = static_cast<uint8_t>(fn);
  n->ival = dim;
  n->keepdim = keepdim;
  return Value::wrap(n);
}

}  // namespace

Value sum(const Operand& a, int dim, bool keepdim, Loc l) {
  return reduce(ir::ReduceFn::sum, a, dim, keepdim, l);
}
Value max(const Operand& a, int dim, bool keepdim, Loc l) {
  return reduce(ir::ReduceFn::max, a, dim, keepdim, l);
}
Value min(const Operand& a, int dim, bool keepdim, Loc l) {
  return reduce(ir::ReduceFn::min, a, dim, keepdim, l);
}
Value prod(const Operand& a, int dim, bool keepdim, Loc l) {
  return reduce(ir::ReduceFn::prod, a, dim, keepdim, l);
}
Value argmax(const Operand& a, int dim, bool keepdim, Loc l) {
  return reduce(ir::ReduceFn::argmax, a, dim, keepdim, l);
}
Value argmin(const Operand& a, int dim, bool keepdim, Loc l) {
  return reduce(ir::ReduceFn::argmin, a, dim, keepdim, l);
}
Value any(const Operand& a, int dim, bool keepdim, Loc l) {
  return reduce(ir::ReduceFn::any, a, dim, keepdim, l);
}
Value all_of(const Operand& a, int dim, bool keepdim, Loc l) {
  return reduce(ir::ReduceFn::all, a, dim, keepdim, l);
}

Value mean(const Operand& a, int dim, bool keepdim, Loc l) {
  TraceContext& ctx = TraceContext::current(SourceLoc::from(l));
  SourceLoc loc = SourceLoc::from(l);
  if (!is_float(a.node()->dtype))
    ctx.fail(loc,
             fmt::format("mean of {} {} value",
                         dtype_name(a.node()->dtype)[0] == 'i' ? "an" : "a",  // an i32
                         dtype_name(a.node()->dtype)),
             "convert to a float dtype first with .to(ts::f32)");
  int rank = static_cast<int>(a.node()->shape.size());
  int d = dim < 0 ? dim + rank : dim;
  ir::Sym* s = (d >= 0 && d < rank) ? ctx.canon(a.node()->shape[d]) : nullptr;
  // A narrower float is summed and divided in f32 and rounded once, as torch.mean of an f16
  // tensor (its sum would saturate or round first, and the count might not be exact).
  const DType out = a.node()->dtype;
  Value total = is_narrow_float(out)
                    ? reduce(ir::ReduceFn::sum, Value::wrap(cast_node(a.node(), DType::f32, loc)),
                             dim, keepdim, l)
                    : reduce(ir::ReduceFn::sum, a, dim, keepdim, l);
  Value count = 1;
  if (s && s->kind == ir::Sym::extent_k) {
    count = Value::wrap(s->extent);
  } else if (s && s->kind == ir::Sym::block_k) {
    ctx.fail(loc, "mean over a BlockSize dimension",
             "use ts::sum and divide by the number of valid elements");
  } else if (s) {
    Tile t(s->loop, s->loop_dim);
    count = t.end(l) - t.begin(l);
  }
  // Operands located at the user's call, so the generated division names their line.
  return Value::wrap(cast_node(
      binary(ir::BinaryFn::div, Operand(total).at(loc), Operand(count).at(loc)).node(), out, loc));
}

namespace frontend {

// A C++ integer next to an i8 or i32 tile value takes its dtype (torch's rule for Python
// scalars): one that does not fit is refused, as torch refuses it, instead of wrapping. A
// negative one next to a u64 value wraps as two's complement (torch's integer scalars do),
// and an unsigned one past 2^63 - 1 fits u64 only.
void check_weak_constant(DType target, const Operand& o, const std::string& whose, SourceLoc loc) {
  const Node* c = o.node();
  if (!o.weak() || c->op != Op::Const || is_float(c->dtype)) return;
  const bool big_unsigned = c->dtype == DType::u64;
  const bool narrow = target == DType::i32 || target == DType::i8;
  const int64_t lo = target == DType::i8 ? INT8_MIN : INT32_MIN,
                hi = target == DType::i8 ? INT8_MAX : INT32_MAX;
  if ((narrow && (big_unsigned || c->ival < lo || c->ival > hi)) ||
      (target == DType::i64 && big_unsigned))
    TraceContext::current(loc).fail(
        loc,
        fmt::format(
            "the constant {} does not fit {}, the dtype of {}",
            big_unsigned ? std::to_string(static_cast<uint64_t>(c->ival)) : std::to_string(c->ival),
            dtype_name(target), whose),
        big_unsigned ? "convert the tile value to ts::u64 first"
                     : "use a constant in range, or convert the tile value first, e.g. "
                       ".to(ts::i32) or .to(ts::i64)");
}

// A C++ number stored into a tensor (or applied by an atomic) must be a value of its dtype,
// as torch refuses `t[i] = 1e20` for an int32 t ("value cannot be converted ... without
// overflow"): integers as check_weak_constant says, fractions and floats in an integer
// dtype's range, finite floats that stay finite in f16, bf16 and f32. (8-bit floats
// saturate by design: tessel/dtype.hpp.)
void check_stored_constant(DType target, const Operand& o, const std::string& whose,
                           SourceLoc loc) {
  check_weak_constant(target, o, whose, loc);
  const Node* c = o.node();
  if (!o.weak() || c->op != Op::Const || !is_float(c->dtype)) return;
  const double v = c->fval;
  const bool integer = !is_float(target) && target != DType::boolean;
  if ((integer && !holds_integer_value(target, v)) || (!integer && !holds_value(target, v)))
    TraceContext::current(loc).fail(loc,
                                    fmt::format("the constant {} does not fit {}, the dtype of {}",
                                                v, dtype_name(target), whose),
                                    "use a constant in the dtype's range");
}

}  // namespace frontend

}  // namespace tessel
