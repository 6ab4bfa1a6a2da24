// ts::dot (Helion's hl.dot, Triton's tl.dot): a matrix product traced as the sum over K of
// its operands' outer products, the form the layout stage lowers as a contraction
// (passes/contractions.hpp: never held as [M, K, N]) and, where it fits, on tensor cores
// (passes/tensor_cores.hpp). For a [M, K] and b [K, N]:
//   %x = cast a to f32 (f16, bf16: exact) | unary tf32 a (f32, dot_precision tf32) | a
//   %xv = view %x : f32[M, K, 1]      %yv = view %y : f32[1, K, N]
//   %p = binary mul %xv, %yv : f32[M, K, N]
//   %d = reduce sum %p dim 1 : f32[M, N]
// then the cast to out_dtype and the add of acc, as the user would write them. i8 operands
// are cast to i32 and multiplied and summed in i32 (torch._int_mm, Triton's int8 tl.dot).
#include <fmt/format.h>

#include "frontend/trace.hpp"

namespace tessel {

using frontend::TraceContext;
using ir::Node;
using ir::Op;

namespace {

bool dot_dtype(DType t) {
  return t == DType::f16 || t == DType::bf16 || t == DType::f32 || is_f8(t) || t == DType::i8;
}

// "a bf16", "an f32", "an i8": the dtype's name with its article.
std::string with_article(DType t) {
  const std::string n = dtype_name(t);
  return (n[0] == 'f' || n[0] == 'i' ? "an " : "a ") + n;
}

// The dtype a dot of operands of dtype t multiplies and sums in: i32 for i8, else f32.
DType product_dtype(DType t) { return t == DType::i8 ? DType::i32 : DType::f32; }

// Operand `x` in the products' dtype: f16, bf16 and the 8-bit floats widened to f32 and i8
// to i32 (exact), f32 truncated to TF32 under DotPrecision::tf32.
Node* product_operand(TraceContext& ctx, Node* x, DotPrecision precision, SourceLoc loc) {
  if (x->dtype != DType::f32) return ctx.add(Op::Cast, product_dtype(x->dtype), x->shape, {x}, loc);
  if (precision != DotPrecision::tf32) return x;
  Node* n = ctx.add(Op::Unary, DType::f32, x->shape, {x}, loc);
  n->fn = static_cast<uint8_t>(ir::UnaryFn::tf32);
  return n;
}

// x with a size-1 dim inserted before dim `at`.
Node* with_newaxis(TraceContext& ctx, Node* x, size_t at, SourceLoc loc) {
  ir::Shape s = x->shape;
  s.insert(s.begin() + static_cast<std::ptrdiff_t>(at), nullptr);
  return ctx.add(Op::View, x->dtype, s, {x}, loc);
}

// The load that value `v` reads through views, permutes and casts, and the dim of its
// tensor that tile Sym `k` indexes; {nullptr, -1} when there is none.
std::pair<Node*, int> load_dim_of(Node* v, const ir::Sym* k) {
  while (v->op == Op::View || v->op == Op::Permute || v->op == Op::Cast) v = v->args[0];
  if (v->op != Op::Load || v->is_multicast_access()) return {nullptr, -1};
  int dim = 0;
  for (const ir::IndexInfo& info : v->access) {
    if (info.kind == ir::IndexKind::newaxis) continue;
    if (info.kind == ir::IndexKind::tile && info.sym == k) return {v, dim};
    ++dim;
  }
  return {nullptr, -1};
}

// The f32 (i32) product of a and b (checked), then cast to out_dtype.
Value product(const Operand& a, const Operand& b, std::optional<DType> out_dtype, SourceLoc loc) {
  TraceContext& ctx = TraceContext::current(loc);
  Node* x = a.node();
  Node* y = b.node();
  const size_t rank = x->shape.size();
  if (rank != y->shape.size() || rank < 2 || rank > 3)
    ctx.fail(loc,
             fmt::format("ts::dot of values of shapes {} and {}: it multiplies two 2-D values "
                         "([M, K] and [K, N]) or two 3-D ones ([B, M, K] and [B, K, N])",
                         ir::shape_str(x->shape), ir::shape_str(y->shape)),
             "index the operands to 2-D tiles, e.g. ts::dot(x(tm, tk), y(tk, tn))");
  for (const Node* o : {x, y})
    if (!dot_dtype(o->dtype))
      ctx.fail(loc,
               fmt::format("ts::dot of {} value: its operands are f16, bf16, f32, f8e4m3, "
                           "f8e5m2 or i8",
                           with_article(o->dtype)),
               is_float(o->dtype) || o->dtype == DType::boolean
                   ? "cast the operand, e.g. .to(ts::f32)"
                   : "cast the operand: .to(ts::i8) for an i32 product (i8 values), or "
                     ".to(ts::f32)");
  if (x->dtype != y->dtype) {
    // The hint casts to the dot dtype of the two (the first's where both are).
    const DType to = dot_dtype(x->dtype) ? x->dtype : y->dtype;
    ctx.fail(loc,
             fmt::format("ts::dot of {} and {} value: both operands have one dtype",
                         with_article(x->dtype), with_article(y->dtype)),
             fmt::format("cast one of them, e.g. .to(ts::{})", dtype_name(to)));
  }
  const DType pt = product_dtype(x->dtype);
  if (out_dtype && pt == DType::i32 && *out_dtype != DType::i32)
    ctx.fail(loc,
             fmt::format("ts::dot of i8 operands with out_dtype {}: their product is i32",
                         dtype_name(*out_dtype)),
             "leave out out_dtype (or pass ts::i32) and cast the result afterwards, e.g. "
             "ts::dot(x, w).to(ts::f32) * scale");
  if (out_dtype && pt == DType::f32 && !is_float(*out_dtype))
    ctx.fail(loc,
             fmt::format("ts::dot's out_dtype is {}, not a float dtype", dtype_name(*out_dtype)),
             "use ts::f32, ts::f16 or ts::bf16 (or cast the result afterwards)");
  const ir::Sym* ka = x->shape[rank - 1];
  const ir::Sym* kb = y->shape[rank - 2];
  auto k_differs = [&] {
    ctx.fail(loc,
             fmt::format("ts::dot's operands differ in K: {} of the first ({}) against {} of "
                         "the second ({})",
                         ka ? frontend::describe_sym(ka) : "size 1", ir::shape_str(x->shape),
                         kb ? frontend::describe_sym(kb) : "size 1", ir::shape_str(y->shape)),
             "index K of both with the same tile (ts::dot(x(tm, tk), y(tk, tn))) or both with "
             "ts::all; a second operand indexed [N, K] is multiplied as [K, N]: index it "
             "y(tk, tn) or transpose it (.t())");
  };
  if (ka != kb && (!ka || !kb || ka->kind == ir::Sym::tile || kb->kind == ir::Sym::tile))
    k_differs();
  if (ka != kb) {  // two whole dims: of equal sizes on each call (broadcasting checks them)
    try {
      frontend::broadcast_shapes(ir::Shape{x->shape[rank - 1]}, ir::Shape{y->shape[rank - 2]}, loc);
    } catch (const UserError&) {
      k_differs();
    }
  }
  // Both operands loads whose tensors one tile `s` indexes (K, or the batch): their sizes
  // there are equal on each call, as torch.matmul and torch.bmm ask (a tile loop over one of
  // them would read a prefix of a longer other; a shorter one is the tile loop's cover check).
  auto check_equal = [&](const ir::Sym* s, const char* what, const char* hint) {
    if (!s || s->kind != ir::Sym::tile) return;
    const auto [la, da] = load_dim_of(x, s);
    const auto [lb, db] = load_dim_of(y, s);
    if (la && lb && (la->args[0] != lb->args[0] || da != db))
      ctx.check_equal_sizes(la->args[0], da, lb->args[0], db, what, hint, loc);
  };
  if (ka == kb)
    check_equal(ka, "ts::dot's operands differ in K on this call",
                "pass operands of one K: a [N, K] weight multiplies as w.transpose(0, 1), or "
                "index it w(tn, tk).t() in the kernel");
  if (rank == 3) {
    const ir::Sym* ba = x->shape[0];
    const ir::Sym* bb = y->shape[0];
    if (ba && bb && ba != bb && (ba->kind == ir::Sym::tile || bb->kind == ir::Sym::tile))
      ctx.fail(loc,
               fmt::format("ts::dot's operands differ in the batch dim: {} of the first ({}) "
                           "against {} of the second ({})",
                           frontend::describe_sym(ba), ir::shape_str(x->shape),
                           frontend::describe_sym(bb), ir::shape_str(y->shape)),
               "index the batch of both with the same tile (ts::dot(x(tb, tm, tk), y(tb, tk, "
               "tn)))");
    if (ba == bb)
      check_equal(ba, "ts::dot's operands differ in the batch dim on this call",
                  "pass operands of one batch size (torch.bmm's rule)");
  }
  const DotPrecision precision = ctx.settings().dot_precision.value_or(DotPrecision::tf32);
  Node* xv = with_newaxis(ctx, product_operand(ctx, x, precision, loc), rank, loc);  // [M, K, 1]
  Node* yv =
      with_newaxis(ctx, product_operand(ctx, y, precision, loc), rank - 2, loc);  // [1, K, N]
  // Broadcasting checks the batch dims and whole K dims (equal sizes on each call).
  ir::Shape shape = frontend::broadcast_shapes(xv->shape, yv->shape, loc);
  Node* p = ctx.add(Op::Binary, pt, shape, {xv, yv}, loc);
  p->fn = static_cast<uint8_t>(ir::BinaryFn::mul);
  shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(rank - 1));
  Node* d = ctx.add(Op::Reduce, pt, shape, {p}, loc);
  d->fn = static_cast<uint8_t>(ir::ReduceFn::sum);
  d->ival = static_cast<int64_t>(rank - 1);
  Value r = Value::wrap(d);
  return out_dtype ? cast(Operand(r).at(loc), *out_dtype) : r;
}

}  // namespace

Value dot(const Operand& a, const Operand& b, std::optional<DType> out_dtype, Loc l) {
  return product(a, b, out_dtype, SourceLoc::from(l));
}

Value dot(const Operand& a, const Operand& b, const Operand& acc, std::optional<DType> out_dtype,
          Loc l) {
  const SourceLoc loc = SourceLoc::from(l);
  Value r = product(a, b, out_dtype, loc);
  TraceContext& ctx = TraceContext::current(loc);
  // A C++ number as acc takes the product's dtype; a fraction cannot be an i32 one.
  const bool weak_fraction = acc.weak() && is_float(acc.node()->dtype) && r.dtype() == DType::i32;
  const DType t = acc.weak() && !weak_fraction ? r.dtype() : acc.node()->dtype;
  if (r.dtype() == DType::i32 && t != DType::i32)
    ctx.fail(loc,
             fmt::format("ts::dot of i8 operands with {} accumulator: it accumulates in i32",
                         acc.weak() ? "a float constant as" : with_article(t)),
             "accumulate in i32: ts::zeros({tm, tn}, ts::i32) before the K loop (or cast the "
             "result, e.g. ts::dot(x, y).to(ts::f32) + acc)");
  if (r.dtype() != DType::i32 && !is_float(t))
    ctx.fail(loc,
             fmt::format("ts::dot of {} operands with {} accumulator, not a float one",
                         dtype_name(a.node()->dtype), with_article(t)),
             is_integer(t) ? "accumulate in f32 (ts::zeros({tm, tn}) before the K loop), or pass "
                             "i8 operands for an i32 product"
                           : "accumulate in f32: ts::zeros({tm, tn}) before the K loop");
  const ir::Shape& shape = r.node()->shape;
  const ir::Shape& acc_shape = acc.node()->shape;
  bool fits = acc_shape.size() <= shape.size();  // broadcasts to the product's shape
  for (size_t i = 1; fits && i <= acc_shape.size(); ++i)
    fits = !acc_shape[acc_shape.size() - i] ||
           acc_shape[acc_shape.size() - i] == shape[shape.size() - i];
  if (!fits)
    ctx.fail(loc,
             fmt::format("ts::dot's accumulator has shape {}, which the product {} does not "
                         "have",
                         ir::shape_str(acc.node()->shape), ir::shape_str(shape)),
             "make the accumulator the product's shape, e.g. ts::zeros({tm, tn})");
  return cast(Operand(acc.at(loc) + Operand(r).at(loc)).at(loc), t);
}

}  // namespace tessel
