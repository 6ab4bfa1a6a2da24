// Looped reductions (Helion's reduction_loops): a reduction dimension r chunked by C
// is no longer held whole in registers. Every value spanning r is recomputed inside a
// loop over chunks of C where it is consumed: a reduction over r becomes a loop that
// carries an accumulator, a store of an r-spanning value becomes a loop of stores.
//
// Before (r1 = x.size(1), C = 256; ir::print, tests/ir_pass_text_test.cpp):
//   %6 = load %0[tile %5 as t0, all %2 as r1] #0 : f32[t0, r1]
//   %7 = reduce max %6 dim 1 : f32[t0]
// After:
//   %6 = const -inf : f32
//   %7 = full %6 : f32[t0]
//   %8 = const 0 : i64
//   %9 = loop tile(%8..%2) as t1 fixed 256 carry %10 = %7 {
//     %10 = carried %9 : f32[t0]
//     %11 = load %0[tile %5 as t0, tile %9 as t1] #0 : f32[t0, t1]
//     %12 = reduce max %11 dim 1 : f32[t0]
//     %13 = binary maximum %10, %12 : f32[t0]
//     yield %13
//   }
//   %15 = loop_result %9 carry 0 : f32[t0]
#include "passes/roll_reductions.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ir/clone.hpp"

namespace tessel::passes {

using ir::Node;
using ir::Op;

namespace {

// The binary op that combines an accumulator with a chunk's partial result of reduction f.
ir::BinaryFn combine_fn(ir::ReduceFn f) {
  switch (f) {
    case ir::ReduceFn::sum:
      return ir::BinaryFn::add;
    case ir::ReduceFn::prod:
      return ir::BinaryFn::mul;
    case ir::ReduceFn::max:
      return ir::BinaryFn::maximum;
    case ir::ReduceFn::min:
      return ir::BinaryFn::minimum;
    case ir::ReduceFn::any:
      return ir::BinaryFn::logical_or;
    case ir::ReduceFn::all:
      return ir::BinaryFn::logical_and;
    case ir::ReduceFn::argmax:  // combined by a compare and two wheres (reduce_loop)
    case ir::ReduceFn::argmin:
      break;
  }
  throw InternalError(std::string("roll_reductions: no binary op combines ") + ir::reduce_name(f));
}

class Roller : public ir::Cloner {
 public:
  Roller(ir::Graph& dst, std::map<const ir::Sym*, int64_t> chunks, const ir::Graph& src)
      : Cloner(dst), chunks_(std::move(chunks)), kernel_(src.kernel_name), src_(src) {}

  void copy_block(const ir::Block& b, ir::Block& out) override {
    for (const Node* n : b) {
      if (n->op == Op::Reduce && chunk_sym(n->args[0]->shape[n->ival])) {
        reduce_loop(n, out);
      } else if (n->op == Op::Store && (rolled(n->args[1]) || store_sym(n))) {
        store_loop(n, out);
        stores_.push_back(n);
      } else if (rolled(n) && ir::writes_memory(n)) {
        throw UserError(kernel_, n->loc,
                        "reduction_loops: an atomic, signal or wait spans a chunked reduction "
                        "dimension (it would run once per use of its old values)",
                        "use reduction_loops = null (a persistent reduction) for this dimension");
      } else if (rolled(n)) {
        if (n->op == Op::Load) stores_before_[n] = stores_.size();
        continue;  // recomputed where it is consumed
      } else {
        if (n->op == Op::Store) stores_.push_back(n);
        for (const Node* a : n->args)
          if (rolled(a))
            throw UserError(
                kernel_, n->loc,
                "reduction_loops: a value spanning a chunked reduction dimension is used "
                "by something other than a reduction or a store",
                "use reduction_loops = null (a persistent reduction) for this dimension");
        copy_into(n, out);
      }
    }
  }

 private:
  const ir::Sym* chunk_sym(const ir::Sym* s) const { return s && chunks_.count(s) ? s : nullptr; }
  bool rolled(const Node* n) const {
    for (const ir::Sym* s : n->shape)
      if (chunk_sym(s)) return true;
    return false;
  }
  const ir::Sym* store_sym(const Node* n) const {
    for (const ir::IndexInfo& i : n->access)
      if (chunk_sym(i.sym)) return i.sym;
    return nullptr;
  }
  const ir::Sym* sym_of(const Node* n) const {
    for (const ir::Sym* s : n->shape)
      if (chunk_sym(s)) return s;
    return nullptr;
  }

  Node* make(Op op, DType t, ir::Shape shape, std::vector<Node*> args, SourceLoc loc,
             ir::Block& out) {
    Node* n = dst().new_node(op, loc);
    n->dtype = t;
    n->shape = std::move(shape);
    n->args = std::move(args);
    out.push_back(n);
    return n;
  }
  Node* constant(DType t, double v, SourceLoc loc, ir::Block& out) {
    Node* c = make(Op::Const, t, {}, {}, loc, out);
    c->fval = v;
    c->ival = std::isfinite(v) ? static_cast<int64_t>(v) : 0;
    return c;
  }
  ir::Shape mapped(const ir::Shape& s) {
    ir::Shape o;
    for (const ir::Sym* x : s) o.push_back(map_sym(x));
    return o;
  }

  /// Opens a loop over chunks of `r` in `out`; inside it r maps to the chunk's tile Sym.
  Node* open_chunks(const ir::Sym* r, SourceLoc loc, ir::Block& out) {
    Node* begin = constant(DType::i64, 0, loc, out);
    Node* loop = dst().new_node(Op::Loop, loc);
    ir::LoopDim d;
    d.begin = begin;
    d.end = map(r->extent);
    d.fixed_block = chunks_.at(r);
    d.sym = dst().new_sym(ir::Sym::tile);
    d.sym->loop = loop;
    d.sym->loop_dim = 0;
    d.sym->name = "chunk of " + r->name;
    loop->dims.push_back(d);
    saved_sym_ = map_sym(r);
    set_sym(r, d.sym);
    return loop;
  }
  void close_chunks(const ir::Sym* r, Node* loop, ir::Block& out) {
    set_sym(r, saved_sym_);
    for (const Node* n : chunk_nodes_) forget(n);
    chunk_nodes_.clear();
    out.push_back(loop);
  }

  // Whether tensors a and b may be one memory (ir::may_alias: the same node, or arguments
  // of a call whose memory ranges overlap).
  bool may_alias(const Node* a, const Node* b) const { return ir::may_alias(src_, a, b); }

  /// The copy of rolled value `n` inside the current chunk loop.
  Node* chunk_value(const Node* n, Node* loop, ir::Block& body) {
    if (!rolled(n)) return map(n);
    if (has(n)) return map(n);
    if (n->op == Op::Load && stores_before_.count(n))  // read again here: no store in between
      for (size_t k = stores_before_.at(n); k < stores_.size(); ++k)
        if (may_alias(stores_[k]->args[0], n->args[0]))
          throw UserError(
              kernel_, n->loc,
              "reduction_loops: the chunks of this load would be read again after the kernel "
              "stored into its tensor (or into one sharing its memory) and see the new values",
              "use reduction_loops = null (a persistent reduction) for this dimension, or "
              "store into another tensor");
    for (const Node* a : n->args) chunk_value(a, loop, body);
    if (n->op == Op::Arange) {
      Node* idx = make(Op::TileIndex, dst().index_dtype, mapped(n->shape), {loop}, n->loc, body);
      Node* c =
          idx->dtype == n->dtype ? idx : make(Op::Cast, n->dtype, idx->shape, {idx}, n->loc, body);
      set(n, c);
      chunk_nodes_.push_back(n);
      return c;
    }
    Node* c = copy_into(n, body);
    retarget_access(c, loop);
    chunk_nodes_.push_back(n);
    return c;
  }

  /// Loads/stores indexed with ts::all over a chunked dim index the chunk's tile instead.
  void retarget_access(Node* c, Node* loop) {
    if (c->op != Op::Load && c->op != Op::Store) return;
    size_t op = c->op == Op::Load ? 1 : 2;
    const ir::Sym* tc = loop->dims[0].sym;
    for (ir::IndexInfo& i : c->access) {
      if (i.kind == ir::IndexKind::newaxis) continue;
      if (i.kind == ir::IndexKind::all && i.sym == tc) {
        i.kind = ir::IndexKind::tile;
        c->args[op] = loop;
      }
      ++op;
    }
  }

  void reduce_loop(const Node* n, ir::Block& out) {
    const Node* x = n->args[0];
    const ir::Sym* r = x->shape[n->ival];
    ir::ReduceFn fn = n->rfn();
    bool arg = fn == ir::ReduceFn::argmax || fn == ir::ReduceFn::argmin;
    DType acc_t = (fn == ir::ReduceFn::sum || fn == ir::ReduceFn::prod) && is_float(n->dtype)
                      ? DType::f32
                  : arg ? x->dtype
                        : n->dtype;
    if (n->dtype == DType::f64) acc_t = DType::f64;
    ir::Shape shape = mapped(n->shape);
    SourceLoc loc = n->loc;
    std::vector<Node*> inits;
    Node* ident = make(Op::Const, acc_t, {}, {}, loc, out);
    ir::ConstValue v = ir::reduce_identity(fn, acc_t);
    ident->ival = v.ival;
    ident->fval = v.fval;
    Node* init_v = make(Op::Full, acc_t, shape, {ident}, loc, out);
    inits.push_back(init_v);
    if (arg)
      inits.push_back(
          make(Op::Full, DType::i64, shape, {constant(DType::i64, 0, loc, out)}, loc, out));
    Node* loop = open_chunks(r, loc, out);
    for (Node* i : inits) {
      Node* c = dst().new_node(Op::Carried, loc);
      c->dtype = i->dtype;
      c->shape = i->shape;
      c->args = {loop};
      loop->carried.push_back(c);
      loop->inits.push_back(i);
    }
    ir::Block& body = loop->body;
    Node* xc = chunk_value(x, loop, body);
    std::vector<Node*> next;
    auto reduce = [&](ir::ReduceFn f, DType t, Node* v) {
      Node* p = make(Op::Reduce, t, shape, {v}, loc, body);
      p->fn = static_cast<uint8_t>(f);
      p->ival = n->ival;
      p->keepdim = n->keepdim;
      return p;
    };
    auto binary = [&](ir::BinaryFn f, DType t, Node* a, Node* b) {
      Node* p = make(Op::Binary, t, shape, {a, b}, loc, body);
      p->fn = static_cast<uint8_t>(f);
      return p;
    };
    if (arg) {
      bool mx = fn == ir::ReduceFn::argmax;
      Node* pv = reduce(mx ? ir::ReduceFn::max : ir::ReduceFn::min, x->dtype, xc);
      Node* pi = reduce(fn, DType::i64, xc);
      Node* tb = make(Op::TileBegin, dst().index_dtype, {}, {loop}, loc, body);
      if (tb->dtype != DType::i64) tb = make(Op::Cast, DType::i64, {}, {tb}, loc, body);
      pi = binary(ir::BinaryFn::add, DType::i64, pi, tb);
      // A later chunk wins when strictly better (ties keep the first index). NaN counts
      // as the extreme, as in torch: a chunk's NaN wins over a number, and the first
      // NaN is kept.
      Node* better =
          binary(mx ? ir::BinaryFn::gt : ir::BinaryFn::lt, DType::boolean, pv, loop->carried[0]);
      if (is_float(x->dtype)) {
        Node* pv_nan = binary(ir::BinaryFn::ne, DType::boolean, pv, pv);
        Node* acc_num =
            binary(ir::BinaryFn::eq, DType::boolean, loop->carried[0], loop->carried[0]);
        better = binary(ir::BinaryFn::logical_or, DType::boolean, better,
                        binary(ir::BinaryFn::logical_and, DType::boolean, pv_nan, acc_num));
      }
      next.push_back(make(Op::Where, x->dtype, shape, {better, pv, loop->carried[0]}, loc, body));
      next.push_back(make(Op::Where, DType::i64, shape, {better, pi, loop->carried[1]}, loc, body));
    } else {
      if (xc->dtype != acc_t) xc = make(Op::Cast, acc_t, mapped(x->shape), {xc}, loc, body);
      Node* part = reduce(fn, acc_t, xc);
      next.push_back(binary(combine_fn(fn), acc_t, loop->carried[0], part));
    }
    make(Op::Yield, DType::boolean, {}, next, loc, body);
    close_chunks(r, loop, out);
    for (size_t i = 0; i < loop->carried.size(); ++i) {
      Node* res = make(Op::LoopResult, loop->carried[i]->dtype, shape, {loop}, loc, out);
      res->ival = static_cast<int64_t>(i);
      loop->results.push_back(res);
    }
    Node* result = arg ? loop->results[1] : loop->results[0];
    if (result->dtype != n->dtype) result = make(Op::Cast, n->dtype, shape, {result}, loc, out);
    set(n, result);
  }

  void store_loop(const Node* n, ir::Block& out) {
    const ir::Sym* r = store_sym(n);
    if (!r) r = sym_of(n->args[1]);
    Node* loop = open_chunks(r, n->loc, out);
    for (const Node* a : n->args) chunk_value(a, loop, loop->body);
    Node* c = copy_into(n, loop->body);
    retarget_access(c, loop);
    close_chunks(r, loop, out);
  }

  std::map<const ir::Sym*, int64_t> chunks_;
  std::string kernel_;
  const ir::Graph& src_;                         // the traced graph (its argument facts)
  std::vector<const Node*> stores_;              // stores copied so far, in program order
  std::map<const Node*, size_t> stores_before_;  // rolled load -> stores_.size() at its place
  ir::Sym* saved_sym_ = nullptr;
  std::vector<const Node*> chunk_nodes_;
};

}  // namespace

std::unique_ptr<ir::Graph> roll_reductions(const ir::Graph& g, const Config& c) {
  if (!c.reduction_loops) return nullptr;
  const auto& rl = *c.reduction_loops;
  if (rl.size() > g.reduction_syms.size())
    throw UserError(
        g.kernel_name, ir::first_loop_loc(g),
        fmt::format("config: {} reduction_loops given, the kernel has {} reduction dimensions",
                    rl.size(), g.reduction_syms.size()),
        "give one entry (null or a chunk size) per reduction dimension");
  std::map<const ir::Sym*, int64_t> chunks;
  for (size_t i = 0; i < rl.size(); ++i) {
    if (!rl[i]) continue;
    int64_t v = *rl[i];
    if (v <= 0 || (v & (v - 1)))
      throw UserError(g.kernel_name, ir::first_loop_loc(g),
                      fmt::format("config: reduction_loops chunk {} is not a power of two", v),
                      "use a power of two, or null for a persistent reduction");
    if (v < g.reduction_syms[i]->extent_pow2) chunks[g.reduction_syms[i]] = v;
  }
  if (chunks.empty()) return nullptr;
  auto out = std::make_unique<ir::Graph>();
  ir::copy_graph_facts(g, *out);
  Roller roller(*out, chunks, g);
  roller.copy_block(g.host, out->host);
  for (const Node* a : g.args) out->args.push_back(roller.map(a));
  for (const Node* o : g.outputs) out->outputs.push_back(roller.map(o));
  for (const ir::Sym* s : g.reduction_syms) out->reduction_syms.push_back(roller.map_sym(s));
  ir::verify(*out);
  return out;
}

}  // namespace tessel::passes

namespace tessel::passes {

std::vector<ir::Sym*> reduction_dims(const ir::Graph& g) {
  std::vector<ir::Sym*> out = g.reduction_syms;
  ir::walk(g.host, [&](const Node* n) {
    if (n->op != Op::Reduce) return;
    ir::Sym* s = n->args[0]->shape[n->ival];
    if (s && s->kind == ir::Sym::extent_k && std::find(out.begin(), out.end(), s) == out.end())
      out.push_back(s);
  });
  return out;
}

}  // namespace tessel::passes
