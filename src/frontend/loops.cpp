// ts::tile / ts::grid loops, Tile attributes and device-side tile constructors.
#include <fmt/format.h>

#include <algorithm>
#include <exception>

#include "common/count_text.hpp"
#include "common/element.hpp"
#include "common/pow2.hpp"
#include "frontend/trace.hpp"
#include "ir/host_eval.hpp"

namespace tessel {

using frontend::TraceContext;
using ir::Node;
using ir::Op;

// ---- Bound ----

Bound::Bound(const Value& end, Loc loc) : end_(end), loc_(SourceLoc::from(loc)) {}
Bound::Bound(const TensorRef& end, Loc loc) : end_(Value(end, loc)), loc_(SourceLoc::from(loc)) {}
Bound::Bound(const Tensor& end, Loc loc) : loc_(SourceLoc::from(loc)) {
  TraceContext& ctx = TraceContext::current(loc_);
  Node* t = end.node();
  if (!is_integer(t->dtype))
    ctx.fail(loc_,
             fmt::format("a loop bound is not an integer: the bound tensor has dtype {}",
                         dtype_name(t->dtype)),
             "pass a one-element i32 or i64 tensor as a device-side bound");
  if (t->op == Op::Arg) {
    int64_t n = ctx.args()[t->ival].buffer.numel();
    if (n != 1)
      ctx.fail(loc_,
               fmt::format("a tensor used as a loop bound must have one element, it has {}", n),
               "index it to pick the bound (e.g. `ts::tile(sizes(i))` in host code)");
  }
  end_ = end.item(loc);
}
Bound::Bound(const Operand& begin, const Operand& end)
    : begin_(begin), end_(end), loc_(begin.loc()) {}

// ---- loops ----

namespace detail {

LoopRangeBase::LoopRangeBase(bool is_tile, std::vector<Bound> bounds, TileOptions opts, Loc loc)
    : is_tile_(is_tile),
      bounds_(std::move(bounds)),
      opts_(std::move(opts)),
      loc_(SourceLoc::from(loc)),
      uncaught_(std::uncaught_exceptions()) {}

static Node* bound_node(TraceContext& ctx, const Value& v, SourceLoc loc, const char* which) {
  Node* n = v.node();
  if (!n) return ctx.constant_int(0, DType::i64, loc);
  if (!n->is_scalar())
    ctx.fail(loc,
             fmt::format("a loop {} must be a scalar, got a value of shape {}", which,
                         ir::shape_str(n->shape)),
             "use a size, an integer, or a one-element tensor");
  if (!is_integer(n->dtype))
    ctx.fail(loc,
             fmt::format("a loop bound is not an integer: the {} has dtype {}", which,
                         dtype_name(n->dtype)),
             "use ts::floordiv for integer division (`/` is true division), or .to(ts::i64)");
  return n;
}

Node* LoopRangeBase::open() {
  TraceContext& ctx = TraceContext::current(loc_);
  ir::Graph& g = ctx.graph();
  if (loop_)
    ctx.fail(loc_,
             fmt::format("this ts::{} range is iterated a second time: a range makes one loop",
                         is_tile_ ? "tile" : "grid"),
             fmt::format("call ts::{}(...) again for a second loop (a range is not a container)",
                         is_tile_ ? "tile" : "grid"));
  const std::vector<int64_t>& fixed = opts_.block_size.sizes;
  const std::vector<int>& shared = opts_.block_size.shared;
  if (!is_tile_ && (!fixed.empty() || !shared.empty()))
    ctx.fail(loc_, "ts::grid takes no block size");
  const std::string hint = fmt::format(
      "give one block size per dimension ({}; 0 leaves one to the config), or one for all",
      bounds_.size() == 3 ? "e.g. {.block_size = {1, 0, 0}}" : "in the loop's order");
  if (shared.size() > 1 && shared.size() != bounds_.size())
    ctx.fail(loc_,
             fmt::format("{} given for a loop of {}",
                         count_of(static_cast<int64_t>(shared.size()), "block size"),
                         count_of(static_cast<int64_t>(bounds_.size()), "dimension")),
             hint);
  if (fixed.size() > 1 && fixed.size() != bounds_.size())
    ctx.fail(loc_,
             fmt::format("{} given for a loop of {}",
                         count_of(static_cast<int64_t>(fixed.size()), "block size"),
                         count_of(static_cast<int64_t>(bounds_.size()), "dimension")),
             hint);
  bool top = ctx.depth() == 0;
  std::vector<std::pair<Node*, Node*>> limits;
  for (const Bound& b : bounds_)
    limits.emplace_back(bound_node(ctx, b.begin(), b.loc(), "begin"),
                        bound_node(ctx, b.end(), b.loc(), "bound"));
  Node* loop = ctx.add(Op::Loop, DType::i64, {}, {}, loc_);
  for (size_t d = 0; d < bounds_.size(); ++d) {
    ir::LoopDim ld;
    ld.is_tile = is_tile_;
    ld.begin = limits[d].first;
    ld.end = limits[d].second;
    if (!ir::host_computable(ld.begin) || !ir::host_computable(ld.end)) loop->persistent |= top;
    if (is_tile_) {
      ld.sym = g.new_sym(ir::Sym::tile);
      ld.sym->loop = loop;
      ld.sym->loop_dim = static_cast<int>(d);
      int64_t f = fixed.empty() ? 0 : fixed[fixed.size() == 1 ? 0 : d];
      if (f < 0 || (f & (f - 1)) != 0)
        ctx.fail(loc_, fmt::format("block size {} is not a power of two", f),
                 "use 1, 2, 4, ..., or leave it unset to let the config choose");
      ld.fixed_block = f;
      if (!shared.empty()) {
        int id = shared[shared.size() == 1 ? 0 : d];
        if (id < 0 || id >= g.num_block_sizes)
          ctx.fail(loc_, "a BlockSize that was not made by ts::register_block_size in this kernel");
        ld.block_id = id;
        if (ir::host_computable(ld.end) && ir::host_computable(ld.begin))
          g.block_size_hint[id] =
              std::max(g.block_size_hint[id], ctx.trace_value(ld.end) - ctx.trace_value(ld.begin));
      } else if (f == 0) {
        ld.block_id = g.num_block_sizes++;
        int64_t hint = 0;
        if (ir::host_computable(ld.end) && ir::host_computable(ld.begin))
          hint = ctx.trace_value(ld.end) - ctx.trace_value(ld.begin);
        g.block_size_hint.push_back(hint);
        g.block_size_range.emplace_back(0, 0);
      }
      ld.sym->block_id = ld.block_id;
      ld.sym->name = fmt::format("tile at {}", loc_.str());
    }
    loop->dims.push_back(ld);
  }
  loop_ = ctx.open_loop(loop);
  return loop_;
}

void LoopRangeBase::close() {
  if (closed_) return;
  closed_ = true;
  TraceContext::current(loc_).close_loop(loop_);
}

LoopRangeBase::~LoopRangeBase() {
  if (!loop_ || closed_ || std::uncaught_exceptions() != uncaught_) return;
  TraceContext* ctx = TraceContext::current_or_null();
  if (!ctx) return;
  ctx->defer_error(loc_, "the body of this loop was left early (break, return or goto)",
                   "device loops cannot be left early; use ts::where or masks to skip work");
  try {
    closed_ = true;
    ctx->close_loop(loop_);
  } catch (...) {
  }
}

Value grid_index(Node* loop, int dim) {
  TraceContext& ctx = TraceContext::current({});
  Node* n = ctx.add(Op::LoopIndex, ctx.index_dtype(), {}, {loop}, loop->loc);
  n->ival = dim;
  return Value::wrap(n);
}

}  // namespace detail

detail::LoopRange<1, true> tile(Bound a, TileOptions opts, Loc loc) {
  return detail::LoopRange<1, true>(true, {a}, opts, loc);
}
detail::LoopRange<2, true> tile(Bound a, Bound b, TileOptions opts, Loc loc) {
  return detail::LoopRange<2, true>(true, {a, b}, opts, loc);
}
detail::LoopRange<3, true> tile(Bound a, Bound b, Bound c, TileOptions opts, Loc loc) {
  return detail::LoopRange<3, true>(true, {a, b, c}, opts, loc);
}
detail::LoopRange<1, false> grid(Bound a, Loc loc) {
  return detail::LoopRange<1, false>(false, {a}, {}, loc);
}
detail::LoopRange<2, false> grid(Bound a, Bound b, Loc loc) {
  return detail::LoopRange<2, false>(false, {a, b}, {}, loc);
}
detail::LoopRange<3, false> grid(Bound a, Bound b, Bound c, Loc loc) {
  return detail::LoopRange<3, false>(false, {a, b, c}, {}, loc);
}

BlockSize register_block_size(int64_t min, int64_t max, Loc l) {
  TraceContext& ctx = TraceContext::current(SourceLoc::from(l));
  SourceLoc loc = SourceLoc::from(l);
  if (ctx.depth() > 0)
    ctx.fail(loc, "ts::register_block_size is host code", "call it before the first device loop");
  if (min < 1 || (max && min > max))
    ctx.fail(loc, fmt::format("block size range [{}, {}] is empty", min, max),
             "use 1 <= min <= max");
  int64_t p = next_pow2(min);
  if (max && p > max)
    ctx.fail(
        loc, fmt::format("block size range [{}, {}] holds no power of two", min, max),
        fmt::format("block sizes are powers of two: widen the range to hold one (e.g. [{}, {}])",
                    p / 2, p));
  ir::Graph& g = ctx.graph();
  BlockSize b{g.num_block_sizes++};
  g.block_size_hint.push_back(0);
  g.block_size_range.emplace_back(min, max);
  return b;
}

Value register_reduction_dim(const Value& size, Loc l) {
  TraceContext& ctx = TraceContext::current(SourceLoc::from(l));
  SourceLoc loc = SourceLoc::from(l);
  Node* n = size.node();
  if (!n || !is_integer(n->dtype) || !n->is_scalar())
    ctx.fail(loc, "ts::register_reduction_dim takes an integer size",
             "pass a size such as x.size(1)");
  ir::Sym* s = ctx.extent_sym(n, "reduction dim", loc);
  auto& rs = ctx.graph().reduction_syms;
  if (std::find(rs.begin(), rs.end(), s) == rs.end()) rs.push_back(s);
  return size;
}

// ---- Tile ----

static Value tile_attr(Op op, Node* loop, int dim, Loc l) {
  TraceContext& ctx = TraceContext::current(SourceLoc::from(l));
  SourceLoc loc = SourceLoc::from(l);
  bool open = false;
  for (int d = 1; d <= ctx.depth(); ++d) open |= ctx.loop_level(d).loop == loop;
  if (!open)
    ctx.fail(loc, "a tile is used outside the loop that defines it",
             "use a tile only inside its ts::tile loop");
  ir::Shape shape;
  if (op == Op::TileIndex) shape = {loop->dims[dim].sym};
  Node* n = ctx.add(op, ctx.index_dtype(), shape, {loop}, loc);
  n->ival = dim;
  return Value::wrap(n);
}

Value Tile::index(Loc l) const { return tile_attr(Op::TileIndex, loop_, dim_, l); }
Value Tile::begin(Loc l) const { return tile_attr(Op::TileBegin, loop_, dim_, l); }
Value Tile::end(Loc l) const { return tile_attr(Op::TileEnd, loop_, dim_, l); }
Value Tile::block_size(Loc l) const { return tile_attr(Op::TileBlock, loop_, dim_, l); }
Value Tile::id(Loc l) const { return tile_attr(Op::TileId, loop_, dim_, l); }

Value program_id(Loc l) {
  TraceContext& ctx = TraceContext::current(SourceLoc::from(l));
  SourceLoc loc = SourceLoc::from(l);
  if (ctx.depth() == 0)
    ctx.fail(loc, "ts::program_id() is device code", "call it inside a ts::tile or ts::grid loop");
  return Value::wrap(ctx.add(Op::ProgramId, ctx.index_dtype(), {}, {}, loc));
}

// ---- tile constructors ----

static ir::Shape tile_shape(const std::vector<TileDim>& dims, SourceLoc loc) {
  TraceContext& ctx = TraceContext::current(loc);
  ir::Shape shape;
  for (const TileDim& d : dims) {
    if (d.is_tile()) {
      shape.push_back(d.tile().loop()->dims.at(d.tile().loop_dim()).sym);
      continue;
    }
    if (d.is_block()) {
      shape.push_back(ctx.block_sym(d.block().id, loc));
      continue;
    }
    Node* n = d.extent().node();
    // A 1 written as such is a size-1 dim (it broadcasts); a tensor's size of 1 is the
    // extent `x(tm, ts::all)` gives that dim, so that both agree.
    if (n->op == Op::Const && n->ival == 1 && !ctx.is_tensor_size(n)) {
      shape.push_back(nullptr);
      continue;
    }
    shape.push_back(ctx.extent_sym(n, "extent", loc));
  }
  return shape;
}

static void require_device(SourceLoc loc, const char* what) {
  TraceContext& ctx = TraceContext::current(loc);
  if (ctx.depth() == 0)
    ctx.fail(loc,
             fmt::format("{} builds a tile value and can only be used inside a device loop", what),
             "use ts::empty / x.new_zeros for tensors in host code");
}

Value full(std::vector<TileDim> shape, double value, DType dtype, Loc l) {
  SourceLoc loc = SourceLoc::from(l);
  require_device(loc, "ts::full/ts::zeros");
  TraceContext& ctx = TraceContext::current(loc);
  ctx.check_constant_fits(value, dtype, loc);
  Node* v = is_float(dtype)
                ? ctx.constant_float(value, dtype, loc)
                : ctx.constant_int(dtype == DType::boolean ? value != 0 : integer_bits(value),
                                   dtype, loc);
  return Value::wrap(ctx.add(Op::Full, dtype, tile_shape(shape, loc), {v}, loc));
}

Value zeros(std::vector<TileDim> shape, DType dtype, Loc l) {
  return full(std::move(shape), 0.0, dtype, l);
}

Value arange(const Extent& n, DType dtype, Loc l) {
  SourceLoc loc = SourceLoc::from(l);
  require_device(loc, "ts::arange");
  TraceContext& ctx = TraceContext::current(loc);
  if (dtype == DType::boolean || is_f8(dtype))
    ctx.fail(loc, fmt::format("ts::arange of dtype {}: torch.arange has none", dtype_name(dtype)),
             "count in an integer or a 16-bit or wider float dtype and convert: "
             "ts::arange(n).to(...)");
  ir::Shape shape = {ctx.extent_sym(n.value().node(), "arange extent", loc)};
  // An i8 count stops at 127, an i32 one at 2^31 - 1 (torch.arange refuses ends past the
  // dtype's range). The specialization holds the extent's next power of two, so at most
  // 128 (2^31) always fits and more never does.
  const int64_t limit = dtype == DType::i8 ? 128 : dtype == DType::i32 ? int64_t{1} << 31 : 0;
  if (limit && shape[0]->extent_pow2 > limit)
    ctx.fail(
        loc,
        fmt::format("ts::arange of dtype {} over {} elements: {} counts to {} only",
                    dtype_name(dtype), shape[0]->extent_at_trace, dtype_name(dtype), limit - 1),
        dtype == DType::i8 ? "count in ts::i32 (the default) and convert: ts::arange(n).to(ts::i8)"
                           : "count in ts::i64: ts::arange(n, ts::i64)");
  return Value::wrap(ctx.add(Op::Arange, dtype, shape, {}, loc));
}

}  // namespace tessel
