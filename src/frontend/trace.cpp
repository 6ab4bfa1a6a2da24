#include "frontend/trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>

#include "common/dtype_check.hpp"
#include "common/element.hpp"
#include "ir/host_eval.hpp"

namespace tessel::frontend {

static thread_local TraceContext* g_current = nullptr;

TraceContext::TraceContext(ir::Graph& graph, const Settings& settings, std::vector<TraceArg> args,
                           SourceLoc called_at)
    : graph_(graph), settings_(settings), args_(std::move(args)), previous_(g_current), id_([] {
        static std::atomic<uint64_t> next{1};
        return next++;
      }()) {
  blocks_.push_back(&graph_.host);
  // 64-bit index arithmetic when a tensor argument needs it (a strided view can span far
  // more than it holds) or an integer argument does not fit 32 bits (kernel_impl's key
  // holds the same condition).
  index_dtype_ = settings_.index_dtype.value_or(DType::i32);
  for (size_t i = 0; i < args_.size(); ++i) {
    const TraceArg& a = args_[i];
    std::string what;
    if (a.kind == ir::ArgKind::tensor && needs_64bit_indexing(a.buffer))
      what = a.buffer.span() >= (int64_t{1} << 31)
                 ? fmt::format("tensor argument {} spans {} elements of memory", i, a.buffer.span())
                 : fmt::format("tensor argument {} has {} elements along a dimension", i,
                               *std::max_element(a.buffer.shape().begin(), a.buffer.shape().end()));
    if (a.kind == ir::ArgKind::int_scalar && !a.specialized &&
        (a.ivalue < INT32_MIN || a.ivalue > INT32_MAX))
      what = fmt::format("integer argument {} is {}", i, a.ivalue);
    if (what.empty()) continue;
    if (settings_.index_dtype == DType::i32)
      throw UserError(graph_.kernel_name, called_at,
                      what + ", beyond 32-bit index arithmetic (Settings::index_dtype i32)",
                      "leave Settings::index_dtype unset or set it to ts::i64");
    index_dtype_ = DType::i64;
  }
  // Float scalar arguments are weakly typed, like Python floats (docs/DECISIONS.md).
  for (size_t i = 0; i < args_.size() && i < graph_.args.size(); ++i)
    if (args_[i].kind == ir::ArgKind::float_scalar && !args_[i].specialized)
      weak_floats_.insert(graph_.args[i]);
  graph_.index_dtype = index_dtype_;
  graph_.index_dtype_forced = settings_.index_dtype.has_value();
  graph_.check_bounds = settings_.check_bounds.value_or(false);
  graph_.fast_accum = settings_.fast_accum.value_or(false);
  // Last: a constructor that throws runs no destructor, so it must not leave itself current.
  g_current = this;
}

bool needs_64bit_indexing(const Buffer& b) { return needs_64bit_indexing(b.shape(), b.span()); }

bool needs_64bit_indexing(const std::vector<int64_t>& shape, int64_t span) {
  constexpr int64_t kLimit = int64_t{1} << 31;
  if (span >= kLimit) return true;
  for (int64_t s : shape)
    if (s >= kLimit) return true;
  return false;
}

TraceContext::~TraceContext() { g_current = previous_; }

TraceContext* TraceContext::current_or_null() { return g_current; }

TraceContext& TraceContext::current(SourceLoc called_at) {
  if (!g_current)
    throw UserError("", called_at,
                    "a tessel language call (ts::tile, ts::grid, tensor indexing, tile ops such "
                    "as ts::sum) was made while no kernel is being traced",
                    "such calls must be inside a ts::kernel body: move it into the lambda "
                    "given to ts::kernel, which tessel traces when the kernel is called");
  return *g_current;
}

void TraceContext::fail(SourceLoc loc, const std::string& what, const std::string& hint) {
  throw UserError(graph_.kernel_name, loc, what, hint);
}

ir::Node* TraceContext::add(ir::Op op, DType dtype, ir::Shape shape, std::vector<ir::Node*> args,
                            SourceLoc loc) {
  if (!is_known_dtype(dtype)) fail(loc, unknown_dtype_what(dtype), unknown_dtype_hint());
  ir::Node* n = graph_.new_node(op, loc);
  n->dtype = dtype;
  n->shape = std::move(shape);
  n->args = std::move(args);
  n->depth = depth();
  blocks_.back()->push_back(n);
  if (!loops_.empty()) owner_[n] = loops_.back().loop;
  return n;
}

ir::Node* TraceContext::add_host(ir::Op op, DType dtype, std::vector<ir::Node*> args,
                                 SourceLoc loc) {
  if (!is_known_dtype(dtype)) fail(loc, unknown_dtype_what(dtype), unknown_dtype_hint());
  ir::Node* n = graph_.new_node(op, loc);
  n->dtype = dtype;
  n->args = std::move(args);
  n->depth = 0;
  ir::Block& host = graph_.host;
  host.insert(depth() > 0 ? host.end() - 1 : host.end(), n);
  return n;
}

ir::Node* TraceContext::tensor_attr(ir::Op op, ir::Node* tensor, int dim, SourceLoc loc) {
  auto key = std::make_tuple(static_cast<int>(op), tensor, dim);
  auto it = attr_cache_.find(key);
  if (it != attr_cache_.end()) return it->second;
  ir::Node* n = nullptr;
  int64_t arg_size = op == ir::Op::Size && tensor->op == ir::Op::Arg
                         ? args_.at(static_cast<size_t>(tensor->ival)).buffer.size(dim)
                         : -1;
  if (op == ir::Op::Size && tensor->op == ir::Op::Alloc) {
    n = tensor->args.at(dim);  // the allocation's own extent
  } else if (arg_size >= 0 &&
             ir::size_fixed_by_key(arg_size, settings_.static_shapes.value_or(false))) {
    // A size the specialization key fixes (static shapes, or a power of two) is a constant.
    int64_t v = arg_size;
    n = add_host(ir::Op::Const, DType::i64, {}, loc);  // host: shape checks use it too
    n->ival = v;
    n->fval = static_cast<double>(v);
    size_origin_[n] = {tensor, dim};
  } else {
    n = add_host(op, DType::i64, {tensor}, loc);
    n->ival = dim;
  }
  attr_cache_[key] = n;
  return n;
}

ir::Sym* TraceContext::all_sym(ir::Node* tensor, int dim, SourceLoc loc) {
  auto key = std::make_pair(tensor, dim);
  auto it = all_cache_.find(key);
  if (it != all_cache_.end()) return it->second;
  std::string name =
      fmt::format("{}.size({})", tensor->name.empty() ? "tensor" : tensor->name, dim);
  ir::Sym* s = extent_sym(tensor_attr(ir::Op::Size, tensor, dim, loc), name, loc);
  all_cache_[key] = s;
  return s;
}

void TraceContext::check_constant_fits(double v, DType dtype, SourceLoc loc) {
  if (!holds_value(dtype, v))
    fail(loc,
         fmt::format("the constant {} cannot be converted to {} without overflow", v,
                     dtype_name(dtype)),
         is_float(dtype) ? "use a value the dtype holds, or a wider float dtype (f32, f64)"
                         : "use a value the dtype holds, a wider integer dtype, or a float dtype");
}

ir::Node* TraceContext::constant_int(int64_t v, DType dtype, SourceLoc loc) {
  ir::Node* n = add(ir::Op::Const, dtype, {}, {}, loc);
  n->ival = v;
  n->fval = static_cast<double>(v);
  return n;
}

ir::Node* TraceContext::constant_float(double v, DType dtype, SourceLoc loc) {
  ir::Node* n = add(ir::Op::Const, dtype, {}, {}, loc);
  n->fval = v;
  n->ival = holds_integer_value(DType::i64, v) ? static_cast<int64_t>(v) : 0;  // no UB for inf, NaN
  return n;
}

ir::Node* TraceContext::open_loop(ir::Node* loop) {
  loops_.push_back(OpenLoop{loop, {}});
  blocks_.push_back(&loop->body);
  return loop;
}

// Replaces uses of `from` by `to` in `b` (recursively).
static void replace_uses(ir::Block& b, ir::Node* from, ir::Node* to) {
  for (ir::Node* n : b) {
    for (ir::Node*& a : n->args)
      if (a == from) a = to;
    if (n->op == ir::Op::Loop) {
      for (ir::LoopDim& d : n->dims) {
        if (d.begin == from) d.begin = to;
        if (d.end == from) d.end = to;
      }
      for (ir::Node*& i : n->inits)
        if (i == from) i = to;
      replace_uses(n->body, from, to);
    }
  }
}

void TraceContext::close_loop(ir::Node* loop) {
  TESSEL_CHECK(!loops_.empty() && loops_.back().loop == loop, "loops closed out of order");
  OpenLoop& level = loops_.back();
  std::vector<ir::Node*> yields;
  std::vector<std::pair<const Value*, ir::Node*>> carried_vars;
  // Variables of enclosing scopes changed in the body become loop-carried; the others
  // read their outer binding directly.
  auto unchanged = [&](const OpenLoop::Entry& entry) {
    replace_uses(loop->body, entry.placeholder, entry.init);
    // The widened placeholder of a weak float reads the outer binding's exact value.
    auto it = exact_floats_.find(entry.placeholder);
    if (it == exact_floats_.end() || !weak_float(entry.init)) return;
    replace_uses(loop->body, it->second, exact_float(entry.init));
    std::erase(loop->body, it->second);
  };
  for (auto& [var, entry] : level.vars) {
    if (!var) {
      unchanged(entry);
      continue;
    }
    ir::Node*& binding = ValueAccess::node(*var);
    if (binding == entry.placeholder) {
      unchanged(entry);
      binding = entry.init;
      continue;
    }
    if (depth() == 1)
      fail(binding->loc, "a variable declared outside the top-level loop is assigned inside it",
           "iterations of a top-level loop run as parallel programs and cannot carry values; "
           "declare the variable inside the loop");
    if (binding->dtype != entry.placeholder->dtype || binding->shape != entry.placeholder->shape)
      fail(
          binding->loc,
          fmt::format("a loop-carried variable changes from {}{} to {}{} inside the loop",
                      dtype_name(entry.placeholder->dtype), ir::shape_str(entry.placeholder->shape),
                      dtype_name(binding->dtype), ir::shape_str(binding->shape)),
          "initialize it before the loop with the dtype and shape it has after each "
          "iteration (e.g. ts::zeros({tile}, ts::f32)), or convert with .to(dtype)");
    loop->carried.push_back(entry.placeholder);
    loop->inits.push_back(entry.init);
    yields.push_back(binding);
    carried_vars.emplace_back(var, binding);
  }
  if (!yields.empty()) add(ir::Op::Yield, DType::boolean, {}, yields, loop->loc);
  loops_.pop_back();
  blocks_.pop_back();
  for (size_t i = 0; i < carried_vars.size(); ++i) {
    ir::Node* c = loop->carried[i];
    ir::Node* r = add(ir::Op::LoopResult, c->dtype, c->shape, {loop}, loop->loc);
    r->ival = static_cast<int64_t>(i);
    loop->results.push_back(r);
    ValueAccess::node(*carried_vars[i].first) = r;
  }
}

ir::Node* TraceContext::resolve(const Value* var, ir::Node*& binding, int decl_depth,
                                SourceLoc use) {
  if (!binding) return nullptr;
  int d = depth();
  if (binding->depth > 0 && binding->depth <= d) {
    auto it = owner_.find(binding);
    if (it != owner_.end() && it->second != loops_[binding->depth - 1].loop) {
      const bool at_use = use.line > 0 && binding->loc.line > 0;
      fail(at_use ? use : binding->loc,
           at_use ? fmt::format("a value computed inside one loop (at {}) is used in another loop",
                                binding->loc.str())
                  : std::string("a value computed inside one loop is used in another loop"),
           "loops cannot pass values to each other; recompute the value in the loop that "
           "uses it, or store it to a tensor and load it there");
    }
  }
  for (int level = decl_depth + 1; level <= d; ++level) {
    OpenLoop& ol = loops_[level - 1];
    auto it =
        std::find_if(ol.vars.begin(), ol.vars.end(), [&](const auto& e) { return e.first == var; });
    if (it != ol.vars.end()) continue;
    ir::Node* p = graph_.new_node(ir::Op::Carried, binding->loc);
    p->dtype = binding->dtype;
    p->shape = binding->shape;
    p->args = {ol.loop};
    p->depth = level;
    if (weak_float(binding)) weak_floats_.insert(p);
    ol.vars.emplace_back(var, OpenLoop::Entry{p, binding});
    binding = p;
  }
  if (binding->depth > d)
    fail(binding->loc, "a value computed inside a loop is used after the loop ends",
         "declare the variable before the loop (e.g. `ts::Value acc = ts::zeros(...)`) so it "
         "becomes loop-carried");
  return binding;
}

void TraceContext::forget(const Value* var) {
  // The variable dies inside the loop: its entry stays (copies may still hold the
  // placeholder) and is resolved as unmodified when the loop closes.
  for (OpenLoop& ol : loops_)
    for (auto& e : ol.vars)
      if (e.first == var) e.first = nullptr;
}

void TraceContext::defer_error(SourceLoc loc, const std::string& what, const std::string& hint) {
  if (has_deferred_) return;
  has_deferred_ = true;
  deferred_loc_ = loc;
  deferred_what_ = what;
  deferred_hint_ = hint;
}

void TraceContext::raise_deferred() {
  if (has_deferred_) fail(deferred_loc_, deferred_what_, deferred_hint_);
}

ir::Sym* TraceContext::canon(ir::Sym* s) const {
  while (s) {
    auto it = parent_.find(s);
    if (it == parent_.end()) break;
    s = it->second;
  }
  return s;
}

bool TraceContext::unify(ir::Sym* a, ir::Sym* b, SourceLoc loc) {
  a = canon(a);
  b = canon(b);
  if (a == b) return true;
  if (!a || !b || a->kind != ir::Sym::extent_k || b->kind != ir::Sym::extent_k) return false;
  if (a->extent_at_trace != b->extent_at_trace) return false;
  // The representative keeps an extent of host code (a size, or a constant of the
  // specialization) over a constant written inside a loop (ts::arange(4)), which device
  // code has not computed before that point.
  if (a->extent->depth > 0 && b->extent->depth == 0) std::swap(a, b);
  parent_[b] = a;
  // The two extents must stay equal on every call: checked by the host program before
  // the launch of the loop being traced (host copies of extents computed inside a loop).
  if (a->extent->op == ir::Op::Const && b->extent->op == ir::Op::Const) return true;
  ir::Node* check = graph_.new_node(ir::Op::ShapeCheck, loc);
  check->dtype = DType::boolean;
  check->args = {host_copy(a->extent), host_copy(b->extent)};
  ir::Block& host = graph_.host;
  host.insert(depth() > 0 ? host.end() - 1 : host.end(), check);
  return true;
}

ir::Node* TraceContext::host_copy(ir::Node* n) {
  if (n->depth == 0) return n;
  std::vector<ir::Node*> args;
  for (ir::Node* a : n->args) args.push_back(host_copy(a));
  ir::Node* c = add_host(n->op, n->dtype, std::move(args), n->loc);
  c->ival = n->ival;
  c->fval = n->fval;
  c->fn = n->fn;
  c->arg_kind = n->arg_kind;
  return c;
}

ir::Node* TraceContext::exact_float(ir::Node* n) {
  if (n->dtype == DType::f64) return n;
  if (auto it = exact_floats_.find(n); it != exact_floats_.end()) return it->second;
  if (n->op == ir::Op::Carried) {
    // A weak variable of an enclosing scope read in a loop: its widened placeholder, at
    // the front of the loop's body. close_loop makes it read the exact value of the
    // variable's outer binding when the loop leaves the variable unchanged.
    ir::Node* loop = n->args.at(0);
    ir::Node* c = graph_.new_node(ir::Op::Cast, n->loc);
    c->dtype = DType::f64;
    c->args = {n};
    c->depth = n->depth;
    loop->body.insert(loop->body.begin(), c);
    owner_[c] = loop;
    exact_floats_[n] = c;
    return c;
  }
  std::vector<ir::Node*> args;
  for (ir::Node* a : n->args) {
    if (a->op == ir::Op::Const) {
      ir::Node* c = add_host(ir::Op::Const, DType::f64, {}, a->loc);
      c->fval = is_float(a->dtype) ? a->fval : static_cast<double>(a->ival);
      c->ival = a->ival;
      args.push_back(c);
    } else if (weak_floats_.count(a)) {
      args.push_back(exact_float(a));
    } else {
      throw InternalError("a weakly typed float computed from a value that is not");
    }
  }
  // An argument, or neg, abs and arithmetic of weak floats and constants: in the host
  // block, or right after `n` when it reads a variable's placeholder in a loop.
  bool host =
      std::all_of(args.begin(), args.end(), [](const ir::Node* a) { return a->depth == 0; });
  ir::Node* e = nullptr;
  if (host) {
    e = add_host(n->op, DType::f64, std::move(args), n->loc);
  } else {
    ir::Node* loop = const_cast<ir::Node*>(owner_.at(n));
    e = graph_.new_node(n->op, n->loc);
    e->dtype = DType::f64;
    e->args = std::move(args);
    e->depth = n->depth;
    owner_[e] = loop;
    loop->body.insert(std::find(loop->body.begin(), loop->body.end(), n) + 1, e);
  }
  e->ival = n->ival;
  e->fn = n->fn;
  e->arg_kind = n->arg_kind;
  e->name = n->name;
  weak_floats_.insert(e);
  exact_floats_[n] = e;
  return e;
}

void TraceContext::check_equal_sizes(ir::Node* a, int dim_a, ir::Node* b, int dim_b,
                                     const std::string& what, const std::string& hint,
                                     SourceLoc loc) {
  ir::Node* sa = tensor_attr(ir::Op::Size, a, dim_a, loc);
  ir::Node* sb = tensor_attr(ir::Op::Size, b, dim_b, loc);
  if (sa == sb || (sa->op == ir::Op::Const && sb->op == ir::Op::Const && sa->ival == sb->ival))
    return;
  ir::Node* check = graph_.new_node(ir::Op::ShapeCheck, loc);
  check->dtype = DType::boolean;
  check->args = {sa, sb};
  check->name = fmt::format("{}\n{} size({})\n{} size({})\n{}", what, describe_tensor(a), dim_a,
                            describe_tensor(b), dim_b, hint);
  ir::Block& host = graph_.host;
  host.insert(depth() > 0 ? host.end() - 1 : host.end(), check);
}

void TraceContext::check_tile_covers(ir::Node* tensor, int dim, ir::Node* end,
                                     const std::string& what, SourceLoc loc) {
  std::pair<ir::Node*, int> origin;
  if (end->op == ir::Op::Size && end->args.at(0)->op == ir::Op::Arg) {
    origin = {end->args[0], static_cast<int>(end->ival)};
  } else if (auto it = size_origin_.find(end); it != size_origin_.end()) {
    origin = it->second;
  } else {
    return;  // a bound of the user's own: masked at the tensor's end by design
  }
  ir::Node* size = tensor_attr(ir::Op::Size, tensor, dim, loc);
  if (size == end || origin == std::make_pair(tensor, dim)) return;
  // Sizes the specialization's key fixes: a check that holds now holds on every call it
  // serves (one that fails stays, to raise at the call).
  if (size->op == ir::Op::Const && end->op == ir::Op::Const && size->ival >= end->ival) return;
  if (!cover_checked_.insert({tensor, dim, end}).second) return;
  ir::Node* check = graph_.new_node(ir::Op::ShapeCheck, loc);
  check->dtype = DType::boolean;
  check->ival = 1;
  check->args = {size, end};
  check->name = fmt::format("{} size({})\n{} size({})", what, dim, describe_tensor(origin.first),
                            origin.second);
  ir::Block& host = graph_.host;
  host.insert(depth() > 0 ? host.end() - 1 : host.end(), check);
}

ir::Node* TraceContext::value_outside_loops(ir::Node* n) const {
  for (bool found = true; found && n->op == ir::Op::Carried;) {
    found = false;
    for (const OpenLoop& ol : loops_)
      for (const auto& e : ol.vars)
        if (e.second.placeholder == n) {
          n = e.second.init;
          found = true;
        }
  }
  return n;
}

ir::Sym* TraceContext::extent_sym(ir::Node* extent, const std::string& name, SourceLoc loc) {
  // An extent needs the host value a placeholder stands for.
  extent = value_outside_loops(extent);
  if (!ir::host_computable(extent))
    fail(loc, "the extent of `ts::all` or a tile constructor must be known on the host",
         "use sizes of tensors or integer arguments; device-resident values can only be loop "
         "bounds");
  if (extent->op == ir::Op::Const && extent->ival < 0)
    fail(loc, fmt::format("the extent {} is negative", extent->ival), "use a size of 0 or more");
  if (auto it = extent_cache_.find(extent); it != extent_cache_.end()) return it->second;
  ir::Sym* s = graph_.new_sym(ir::Sym::extent_k);
  extent_cache_[extent] = s;
  s->extent = extent;
  s->extent_at_trace = trace_value(extent);
  int64_t p = 1;
  while (p < s->extent_at_trace) p *= 2;
  s->extent_pow2 = p;
  s->name = name;
  return s;
}

ir::Sym* TraceContext::block_sym(int id, SourceLoc loc) {
  if (id < 0 || id >= graph_.num_block_sizes)
    fail(loc, "a BlockSize that was not made by ts::register_block_size in this kernel",
         "declare it in host code with ts::register_block_size");
  ir::Sym*& s = block_syms_[id];
  if (!s) {
    s = graph_.new_sym(ir::Sym::block_k);
    s->block_id = id;
    s->name = fmt::format("block size {}", id);
  }
  return s;
}

void TraceContext::number_loads() {
  std::vector<ir::Node*> loads;
  for (const auto& n : graph_.nodes())
    if (n->op == ir::Op::Load && n->load_id >= 0) loads.push_back(n.get());
  std::stable_sort(loads.begin(), loads.end(), [](const ir::Node* a, const ir::Node* b) {
    int f = std::strcmp(a->loc.file, b->loc.file);
    if (f != 0) return f < 0;
    if (a->loc.line != b->loc.line) return a->loc.line < b->loc.line;
    if (a->loc.column != b->loc.column) return a->loc.column < b->loc.column;
    return a->load_id < b->load_id;
  });
  for (size_t i = 0; i < loads.size(); ++i) loads[i]->load_id = static_cast<int>(i);
}

void TraceContext::canonicalize() {
  for (const auto& n : graph_.nodes()) {
    for (ir::Sym*& s : n->shape) s = canon(s);
    for (ir::IndexInfo& i : n->access) i.sym = canon(i.sym);
  }
  std::vector<ir::Sym*> rs;
  for (ir::Sym* s : graph_.reduction_syms)
    if (std::find(rs.begin(), rs.end(), canon(s)) == rs.end()) rs.push_back(canon(s));
  graph_.reduction_syms = rs;
}

int64_t TraceContext::trace_value(ir::Node* host_int) {
  std::vector<ir::ArgValue> vals(args_.size());
  for (size_t i = 0; i < args_.size(); ++i) {
    vals[i].shape = &args_[i].buffer.shape();
    vals[i].strides = &args_[i].buffer.strides();
    vals[i].ivalue = args_[i].ivalue;
    vals[i].fvalue = args_[i].fvalue;
  }
  return ir::eval_host_int(host_int, vals);
}

std::string describe_sym(const ir::Sym* s) {
  if (!s) return "1";
  if (s->kind == ir::Sym::tile)
    return fmt::format("tile {} of the loop at {}", ir::sym_name(s), s->loop->loc.str());
  if (s->kind == ir::Sym::block_k) return fmt::format("the block of BlockSize {}", s->block_id);
  return fmt::format("extent {} ({} = {})", ir::sym_name(s), s->name, s->extent_at_trace);
}

bool lined_up(const ir::Sym* x, const ir::Sym* y) {
  if (!x || !y) return false;
  if (y->kind == ir::Sym::block_k) std::swap(x, y);
  return x->kind == ir::Sym::block_k && y->kind == ir::Sym::tile && y->block_id == x->block_id;
}

ir::Shape broadcast_shapes(const ir::Shape& a, const ir::Shape& b, SourceLoc loc) {
  TraceContext& ctx = TraceContext::current(loc);
  size_t n = std::max(a.size(), b.size());
  ir::Shape out(n, nullptr);
  for (size_t i = 0; i < n; ++i) {
    ir::Sym* x = i < n - a.size() ? nullptr : ctx.canon(a[i - (n - a.size())]);
    ir::Sym* y = i < n - b.size() ? nullptr : ctx.canon(b[i - (n - b.size())]);
    if (!x) {
      out[i] = y;
    } else if (!y || x == y) {
      out[i] = x;
    } else if (lined_up(x, y)) {
      out[i] = x->kind == ir::Sym::block_k
                   ? x
                   : y;  // the BlockSize's dim: a carried value keeps its shape
    } else if (ctx.unify(x, y, loc)) {
      out[i] = ctx.canon(x);
    } else {
      // Operands of different ranks: often a tensor indexed with fewer indices than its dims.
      const std::string ranks =
          a.size() == b.size()
              ? ""
              : fmt::format(
                    "the operands have {} and {} dims (a tensor indexed with fewer indices than "
                    "its dims keeps the others whole, as y[t] does in torch: y(t) of a 2-D y is "
                    "[t, all]); ",
                    a.size(), b.size());
      ctx.fail(
          loc,
          fmt::format("shapes {} and {} do not broadcast: dimension {} is {} in one and {} "
                      "in the other",
                      ir::shape_str(a), ir::shape_str(b), i, describe_sym(x), describe_sym(y)),
          ranks +
              (x->kind == ir::Sym::extent_k && y->kind == ir::Sym::extent_k &&
                       x->extent_at_trace != y->extent_at_trace
                   ? fmt::format("the two sizes differ on this call ({} and {}): check the "
                                 "tensors' shapes",
                                 x->extent_at_trace, y->extent_at_trace)
               : x->kind == ir::Sym::tile && y->kind == ir::Sym::tile && x->loop == y->loop
                   ? "these are two dimensions of the same loop: check the operands' ranks and "
                     "indices (an extra index, or a missing ts::newaxis)"
                   : "tiles of different loops never broadcast together, even with equal block "
                     "sizes; index both operands with the same tile, or add ts::newaxis (a value "
                     "built with a ts::register_block_size dim, ts::zeros({tm, bs}), lines up "
                     "with the tiles of every loop using bs)"));
    }
  }
  return out;
}

}  // namespace tessel::frontend
