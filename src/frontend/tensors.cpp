// Tensor, Index, TensorRef: indexing, loads, stores and host allocations.
#include <fmt/format.h>

#include <set>

#include "common/count_text.hpp"
#include "common/preserve_format.hpp"
#include "frontend/trace.hpp"
#include "ir/host_eval.hpp"

namespace tessel {

using frontend::TraceContext;
using ir::Node;
using ir::Op;

static std::string tensor_name(const Node* t) { return frontend::describe_tensor(t); }

// ---- Index ----

Index::Index(All, Loc loc) : kind(all_k), loc(SourceLoc::from(loc)) {}
Index::Index(NewAxis, Loc loc) : kind(newaxis_k), loc(SourceLoc::from(loc)) {}
Index::Index(const Tile& t, Loc loc)
    : kind(tile_k), node(t.loop()), tile_dim(t.loop_dim()), loc(SourceLoc::from(loc)) {}
Index::Index(const Value& v, Loc loc)
    : kind(value_k), node(v.node_at(SourceLoc::from(loc))), loc(SourceLoc::from(loc)) {}
Index::Index(const TensorRef& r, Loc loc)
    : kind(value_k), node(r.load(SourceLoc::from(loc))), loc(SourceLoc::from(loc)) {}

// ---- Tensor ----

static int norm_dim(const Node* t, int d, SourceLoc loc, const char* what) {
  if (d < -t->rank || d >= t->rank)
    TraceContext::current(loc).fail(
        loc,
        fmt::format("{}({}) is out of range: {} has {}", what, d, tensor_name(t),
                    count_of(t->rank, "dimension")),
        t->rank == 0
            ? std::string(
                  "a 0-dimensional tensor has no dimension to index: pass a tensor of shape [1] "
                  "and read it with ts::load(t) or t.item()")
            : fmt::format("use a dimension in [{}, {}]", -t->rank, t->rank - 1));
  return d < 0 ? d + t->rank : d;
}

Tensor::Tensor(Node* n) : node_(n) {
  if (TraceContext* ctx = TraceContext::current_or_null()) trace_ = ctx->id();
}

Node* Tensor::node_at(SourceLoc loc) const {
  TraceContext* ctx = TraceContext::current_or_null();
  if (ctx && node_ && trace_ != ctx->id())
    ctx->fail(loc, "a ts::Tensor from another trace (an earlier call, or another kernel) is used",
              "use the kernel's own parameters and the tensors its host code allocates; a "
              "ts::Tensor cannot "
              "outlive the call that traced it");
  return node_;
}

Tensor Tensor::named(const std::string& name) const {
  if (Node* n = node()) n->name = name;  // read by codegen (codegen/names.hpp) and the printer
  return *this;
}

Value Tensor::size(int d, Loc l) const {
  SourceLoc loc = SourceLoc::from(l);
  TraceContext& ctx = TraceContext::current(loc);
  Node* self = node_at(loc);
  d = norm_dim(self, d, loc, "size");
  return Value::wrap(ctx.tensor_attr(Op::Size, self, d, loc));  // a constant with static shapes
}

Value Tensor::stride(int d, Loc l) const {
  SourceLoc loc = SourceLoc::from(l);
  Node* self = node_at(loc);
  d = norm_dim(self, d, loc, "stride");
  return Value::wrap(TraceContext::current(loc).tensor_attr(Op::Stride, self, d, loc));
}

int Tensor::dim() const { return node()->rank; }
DType Tensor::dtype() const { return node()->dtype; }

static Node* device_scalar(const Tensor& t, std::vector<Node*> index, SourceLoc loc) {
  TraceContext& ctx = TraceContext::current(loc);
  Node* tn = t.node();
  if (!is_integer(tn->dtype) && tn->dtype != DType::boolean && !is_float(tn->dtype))
    ctx.fail(loc, "unsupported dtype for a device scalar");
  std::vector<Node*> args{tn};
  for (Node* i : index) args.push_back(i);
  Node* n = ctx.add_host(Op::DeviceScalar, tn->dtype, args, loc);
  return n;
}

Value Tensor::item(Loc l) const {
  SourceLoc loc = SourceLoc::from(l);
  TraceContext& ctx = TraceContext::current(loc);
  Node* self = node_at(loc);
  if (self->op == Op::Arg) {
    const Buffer& b = ctx.args()[self->ival].buffer;
    if (b.numel() != 1)
      ctx.fail(loc, fmt::format("item() of {} with {} elements", tensor_name(self), b.numel()),
               "item() and ts::load(t) need a one-element tensor");
  }
  std::vector<Node*> zeros;
  for (int d = 0; d < self->rank; ++d)
    zeros.push_back(ctx.add_host(Op::Const, DType::i64, {}, loc));
  return Value::wrap(device_scalar(*this, zeros, loc));
}

Value load(const Tensor& t, Loc loc) { return t.item(loc); }

static Tensor alloc(std::vector<Extent> shape, DType dtype, int64_t fill, double value,
                    SourceLoc loc, const Tensor* like = nullptr) {
  TraceContext& ctx = TraceContext::current(loc);
  if (ctx.depth() > 0)
    ctx.fail(loc, "tensors can only be allocated in host code, outside device loops",
             "allocate the tensor before the first ts::tile/ts::grid loop; use ts::zeros or "
             "ts::full for tile values inside loops");
  if (fill == ir::fill_value) ctx.check_constant_fits(value, dtype, loc);
  std::vector<Node*> dims;
  for (const Extent& e : shape) {
    Node* n = e.value().node();
    if (is_float(n->dtype) && n->is_scalar())
      ctx.fail(
          loc,
          fmt::format("an allocation's size is a {} value, not an integer", dtype_name(n->dtype)),
          "`/` is true division (as in PyTorch): use ts::floordiv(a, b) for an integer quotient");
    if (!is_integer(n->dtype) || !n->is_scalar() || !ir::host_computable(n))
      ctx.fail(loc,
               "an allocation's size must be a host integer (an integer, a size, or an "
               "integer argument)",
               "device-resident values cannot size allocations: allocate the largest size and "
               "use the device value as a loop bound");
    dims.push_back(n);
  }
  Node* a = ctx.add(Op::Alloc, dtype, {}, dims, loc);
  a->rank = static_cast<int>(dims.size());
  a->ival = fill;
  a->fval = value;
  // Like a tensor argument (or an allocation like one): its stride order, as torch's
  // preserve_format; the layout of this trace's argument is the specialization's.
  if (like) a->like = like->node()->op == Op::Arg ? like->node() : like->node()->like;
  if (a->like) {
    const Buffer& b = ctx.args().at(static_cast<size_t>(a->like->ival)).buffer;
    a->fn = row_major_strides(b.shape(), preserve_format_strides(b.shape(), b.strides()))
                ? ir::alloc_row_major
                : ir::alloc_strided;
  }
  return Tensor(a);
}

static std::vector<Extent> shape_of(const Tensor& t, Loc loc) {
  std::vector<Extent> s;
  for (int d = 0; d < t.dim(); ++d) s.emplace_back(t.size(d, loc));
  return s;
}

Tensor empty(std::vector<Extent> shape, DType dtype, Loc loc) {
  return alloc(std::move(shape), dtype, ir::fill_none, 0, SourceLoc::from(loc));
}
Tensor empty_like(const Tensor& t, Loc loc) {
  return alloc(shape_of(t, loc), t.dtype(), ir::fill_none, 0, SourceLoc::from(loc), &t);
}
Tensor zeros_like(const Tensor& t, Loc loc) {
  return alloc(shape_of(t, loc), t.dtype(), ir::fill_value, 0, SourceLoc::from(loc), &t);
}
Tensor full_like(const Tensor& t, double value, Loc loc) {
  return alloc(shape_of(t, loc), t.dtype(), ir::fill_value, value, SourceLoc::from(loc), &t);
}
Tensor Tensor::new_empty(std::vector<Extent> shape, Loc loc) const {
  return alloc(std::move(shape), dtype(), ir::fill_none, 0, SourceLoc::from(loc));
}
Tensor Tensor::new_empty(std::vector<Extent> shape, DType dtype, Loc loc) const {
  return alloc(std::move(shape), dtype, ir::fill_none, 0, SourceLoc::from(loc));
}
Tensor Tensor::new_zeros(std::vector<Extent> shape, Loc loc) const {
  return alloc(std::move(shape), dtype(), ir::fill_value, 0, SourceLoc::from(loc));
}
Tensor Tensor::new_zeros(std::vector<Extent> shape, DType dtype, Loc loc) const {
  return alloc(std::move(shape), dtype, ir::fill_value, 0, SourceLoc::from(loc));
}
Tensor Tensor::new_full(std::vector<Extent> shape, double value, Loc loc) const {
  return alloc(std::move(shape), dtype(), ir::fill_value, value, SourceLoc::from(loc));
}
Tensor Tensor::new_full(std::vector<Extent> shape, double value, DType dtype, Loc loc) const {
  return alloc(std::move(shape), dtype, ir::fill_value, value, SourceLoc::from(loc));
}

static TensorRef make_ref(Node* t, std::vector<Index> v) {
  SourceLoc loc = v.empty() ? SourceLoc{} : v.front().loc;
  return TensorRef(t, std::move(v), loc);
}
TensorRef Tensor::operator()() const { return make_ref(node(), {}); }
TensorRef Tensor::operator()(Index a) const { return make_ref(node_at(a.loc), {a}); }
TensorRef Tensor::operator()(Index a, Index b) const { return make_ref(node_at(a.loc), {a, b}); }
TensorRef Tensor::operator()(Index a, Index b, Index c) const {
  return make_ref(node_at(a.loc), {a, b, c});
}
TensorRef Tensor::operator()(Index a, Index b, Index c, Index d) const {
  return make_ref(node_at(a.loc), {a, b, c, d});
}
TensorRef Tensor::operator()(Index a, Index b, Index c, Index d, Index e) const {
  return make_ref(node_at(a.loc), {a, b, c, d, e});
}
TensorRef Tensor::operator()(Index a, Index b, Index c, Index d, Index e, Index f) const {
  return make_ref(node_at(a.loc), {a, b, c, d, e, f});
}

// ---- indexing ----

namespace {

/// The addressing of one Load/Store: index kinds, operand nodes, result shape.
struct Access {
  std::vector<ir::IndexInfo> info;
  std::vector<Node*> operands;  // one per non-newaxis index
  ir::Shape shape;
};

/// `tensor` is the tensor indexed, or a multicast tensor: then its example is indexed and
/// its dev_ptrs value's shape leads the access's shape (ts::multicast_like).
Access resolve_access(Node* indexed, const std::vector<Index>& idx, SourceLoc loc) {
  TraceContext& ctx = TraceContext::current(loc);
  Node* tensor = indexed->op == Op::Multicast ? indexed->args.at(0) : indexed;
  int consumed = 0;
  for (const Index& i : idx)
    if (i.kind != Index::newaxis_k) ++consumed;
  if (consumed > tensor->rank)
    ctx.fail(
        loc,
        fmt::format("{} has {} but is indexed with {}", tensor_name(tensor),
                    count_of(tensor->rank, "dimension"), count_of(consumed, "index", "indices")),
        "index each dimension once (ts::all for a whole dimension)");
  std::vector<Index> full = idx;
  for (int k = consumed; k < tensor->rank; ++k) full.emplace_back(all, Loc::current());

  Access acc;
  ir::Shape gather_shape;
  int gather_pos = -1;
  int dim = 0;
  for (const Index& i : full) {
    ir::IndexInfo info;
    switch (i.kind) {
      case Index::newaxis_k:
        info.kind = ir::IndexKind::newaxis;
        acc.shape.push_back(nullptr);
        break;
      case Index::all_k:
        info.kind = ir::IndexKind::all;
        info.sym = ctx.all_sym(tensor, dim, loc);
        acc.operands.push_back(info.sym->extent);
        acc.shape.push_back(info.sym);
        ++dim;
        break;
      case Index::tile_k: {
        const ir::LoopDim& ld = i.node->dims.at(i.tile_dim);
        bool open = false;
        for (int l = 1; l <= ctx.depth(); ++l) open |= ctx.loop_level(l).loop == i.node;
        if (!open)
          ctx.fail(i.loc, "a tile is used outside the loop that defines it",
                   "use a tile only inside its ts::tile loop");
        info.kind = ir::IndexKind::tile;
        info.sym = ld.sym;
        ctx.check_tile_covers(tensor, dim, ld.end, tensor_name(tensor), i.loc);
        acc.operands.push_back(i.node);
        acc.shape.push_back(ld.sym);
        ++dim;
        break;
      }
      case Index::value_k: {
        Node* v = i.node;
        if (v->dtype == DType::boolean)
          ctx.fail(
              i.loc,
              "an index must be an integer, got a bool value (in PyTorch a bool index is a mask; "
              "tessel has no boolean-mask indexing)",
              "mask with ts::where(mask, value, 0), or convert it with .to(ts::i64) to index with "
              "0 and 1");
        if (!is_integer(v->dtype))
          ctx.fail(i.loc,
                   fmt::format("an index must be an integer, got a {} value", dtype_name(v->dtype)),
                   "convert it with .to(ts::i64), or use ts::floordiv for integer division");
        if (v->op == Op::Const && v->ival < 0) {
          // A negative constant counts from the end, as in PyTorch and Helion: x(t, -1) is
          // x(t, x.size(1) - 1). Past the start (-k < -size) it is out of range.
          Node* size = ctx.tensor_attr(Op::Size, tensor, dim, i.loc);
          Node* from_end = ctx.add(Op::Binary, DType::i64, {},
                                   {size, ctx.constant_int(v->ival, DType::i64, i.loc)}, i.loc);
          from_end->fn = static_cast<uint8_t>(ir::BinaryFn::add);
          v = from_end;
        }
        if (v->is_scalar()) {
          info.kind = ir::IndexKind::scalar;
          // A grid index bounded by a tensor's size is checked against this tensor's on
          // every call, as a tile's is (a shorter tensor would be read as 0 past its end).
          if (const Node* g = ctx.value_outside_loops(v);
              g->op == Op::LoopIndex && !g->args.at(0)->dims.at(g->ival).is_tile)
            ctx.check_tile_covers(tensor, dim, g->args[0]->dims[g->ival].end, tensor_name(tensor),
                                  i.loc);
        } else {
          info.kind = ir::IndexKind::gather;
          if (gather_pos < 0) {
            gather_pos = static_cast<int>(acc.shape.size());
            gather_shape = v->shape;
          } else {
            gather_shape = frontend::broadcast_shapes(gather_shape, v->shape, i.loc);
          }
        }
        acc.operands.push_back(v);
        ++dim;
        break;
      }
    }
    acc.info.push_back(info);
  }
  // Gather dims go where the first gather index is; a dimension the gather value shares
  // with a tile or ts::all index is that same dimension (x(tm, labels(tm)) has shape [tm]).
  if (gather_pos >= 0) {
    ir::Shape extra;
    for (ir::Sym* s : gather_shape) {
      ir::Sym* c = ctx.canon(s);
      bool shared = false;
      for (ir::Sym* t : acc.shape) shared |= c && ctx.canon(t) == c;
      if (!shared) extra.push_back(s);
    }
    acc.shape.insert(acc.shape.begin() + gather_pos, extra.begin(), extra.end());
  }
  if (indexed != tensor) {
    const ir::Shape& stack = indexed->args.at(1)->shape;
    acc.shape.insert(acc.shape.begin(), stack.begin(), stack.end());
  }
  std::set<ir::Sym*> seen;
  for (ir::Sym*& s : acc.shape) {
    s = ctx.canon(s);
    if (s && !seen.insert(s).second)
      ctx.fail(loc,
               fmt::format("the same {} indexes two dimensions of {}", frontend::describe_sym(s),
                           tensor_name(indexed)),
               "a tile can index one dimension of a load or store; use another loop for the "
               "other dimension");
  }
  return acc;
}

}  // namespace

Node* TensorRef::load(SourceLoc loc) const {
  TraceContext& ctx = TraceContext::current(loc);
  if (!loc.line) loc = loc_;
  if (ctx.depth() == 0 && tensor_->op != Op::Multicast) {
    std::vector<Node*> index;
    for (const Index& i : idx_) {
      if (i.kind != Index::value_k || !i.node->is_scalar())
        ctx.fail(loc,
                 fmt::format("{} is indexed with a tile or ts::all outside a device loop",
                             tensor_name(tensor_)),
                 "host code may read one element (a device scalar, e.g. `size(0)`); load tiles "
                 "inside ts::tile or ts::grid loops");
      index.push_back(i.node);
    }
    if (static_cast<int>(index.size()) != tensor_->rank)
      ctx.fail(loc,
               fmt::format("{} has {} but is indexed with {} in host code", tensor_name(tensor_),
                           count_of(tensor_->rank, "dimension"),
                           count_of(static_cast<int64_t>(index.size()), "integer")),
               "give one integer index per dimension");
    std::vector<Node*> args{tensor_};
    args.insert(args.end(), index.begin(), index.end());
    return ctx.add_host(Op::DeviceScalar, tensor_->dtype, args, loc);
  }
  Access a = resolve_access(tensor_, idx_, loc);
  std::vector<Node*> args{tensor_};
  args.insert(args.end(), a.operands.begin(), a.operands.end());
  // The read's position is its first index (`t` in `x(t)`): distinct for two reads in one
  // expression, whose operand conversions share a position (TraceContext::number_loads).
  Node* n = ctx.add(Op::Load, tensor_->dtype, a.shape, args, loc_.line ? loc_ : loc);
  n->access = a.info;
  n->load_id = ctx.graph().num_loads++;
  return n;
}

// Value `value` of a store, atomic, signal or wait (`what`) broadcast to `shape`, the
// indexed elements of `tensor`, and converted to its dtype. Errors: UserError at `loc`.
static Node* broadcast_operand(Node* value, const ir::Shape& shape, Node* tensor, const char* what,
                               SourceLoc loc) {
  TraceContext& ctx = TraceContext::current(loc);
  // The value must broadcast to the indexed shape (right-aligned; size-1 dims stretch).
  bool ok = value->shape.size() <= shape.size();
  for (size_t i = 0; ok && i < value->shape.size(); ++i) {
    ir::Sym* v = ctx.canon(value->shape[value->shape.size() - 1 - i]);
    ir::Sym* t = ctx.canon(shape[shape.size() - 1 - i]);
    ok = !v || v == t || frontend::lined_up(v, t) || ctx.unify(v, t, loc);
  }
  if (!ok)
    ctx.fail(
        loc,
        fmt::format("shape mismatch in {}: the value has shape {} but the indexed "
                    "elements of {} have shape {}",
                    what, ir::shape_str(value->shape), tensor_name(tensor), ir::shape_str(shape)),
        "the value must broadcast to the indexed shape; index the target with the same "
        "tiles the value was computed from");
  if (value->dtype != tensor->dtype) {
    value = cast(Value::wrap(value), tensor->dtype).node();
    value->loc = loc;  // the implicit conversion belongs to the user's store
  }
  return value;
}

void TensorRef::store(Node* value, SourceLoc loc) {
  TraceContext& ctx = TraceContext::current(loc);
  if (ctx.depth() == 0)
    ctx.fail(loc, fmt::format("a store to {} outside a device loop", tensor_name(tensor_)),
             "write tensors inside a ts::tile or ts::grid loop");
  Access a = resolve_access(tensor_, idx_, loc);
  value = broadcast_operand(value, a.shape, tensor_, "a store", loc);
  std::vector<Node*> args{tensor_, value};
  args.insert(args.end(), a.operands.begin(), a.operands.end());
  Node* n = ctx.add(Op::Store, tensor_->dtype, {}, args, loc);
  n->access = a.info;
}

namespace frontend {

Node* trace_memory_op(Op op, Node* tensor, const std::vector<Index>& idx,
                      std::vector<Node*> operands, const char* what, SourceLoc loc) {
  TraceContext& ctx = TraceContext::current(loc);
  if (ctx.depth() == 0)
    ctx.fail(loc, fmt::format("{} on {} outside a device loop", what, tensor_name(tensor)),
             "call it inside a ts::tile or ts::grid loop");
  Access a = resolve_access(tensor, idx, loc);
  std::vector<Node*> args{tensor};
  for (Node* o : operands) args.push_back(broadcast_operand(o, a.shape, tensor, what, loc));
  args.insert(args.end(), a.operands.begin(), a.operands.end());
  Node* n = ctx.add(op, tensor->dtype, a.shape, args, loc);
  n->access = a.info;
  n->ival = static_cast<int64_t>(operands.size());
  return n;
}

}  // namespace frontend

Value TensorRef::to(DType dtype, Loc loc) const { return cast(Operand(*this, loc), dtype); }
Value TensorRef::permute(const std::vector<int>& dims, Loc loc) const {
  return Value::wrap(load(SourceLoc::from(loc))).permute(dims, loc);
}
Value TensorRef::t(Loc loc) const { return Value::wrap(load(SourceLoc::from(loc))).t(loc); }

Value TensorRef::operator()(const Index& a) const { return Value::wrap(load(loc_))(a); }
Value TensorRef::operator()(const Index& a, const Index& b) const {
  return Value::wrap(load(loc_))(a, b);
}
Value TensorRef::operator()(const Index& a, const Index& b, const Index& c) const {
  return Value::wrap(load(loc_))(a, b, c);
}
Value TensorRef::operator()(const Index& a, const Index& b, const Index& c, const Index& d) const {
  return Value::wrap(load(loc_))(a, b, c, d);
}

TensorRef& TensorRef::operator=(const Operand& v) {
  const SourceLoc loc = v.loc().line ? v.loc() : loc_;
  frontend::check_stored_constant(tensor_->dtype, v, tensor_name(tensor_), loc);
  store(v.node(), loc);
  return *this;
}
TensorRef& TensorRef::operator=(const TensorRef& r) {
  store(r.load(r.loc_), r.loc_);
  return *this;
}
TensorRef& TensorRef::operator+=(const Operand& v) {
  store((Operand(Value::wrap(load(SourceLoc{}))).at(v.loc()) + v).node(), v.loc());
  return *this;
}
TensorRef& TensorRef::operator-=(const Operand& v) {
  store((Operand(Value::wrap(load(SourceLoc{}))).at(v.loc()) - v).node(), v.loc());
  return *this;
}
TensorRef& TensorRef::operator*=(const Operand& v) {
  store((Operand(Value::wrap(load(SourceLoc{}))).at(v.loc()) * v).node(), v.loc());
  return *this;
}

}  // namespace tessel
