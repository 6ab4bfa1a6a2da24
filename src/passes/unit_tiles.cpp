// Unit tiles (passes/unit_tiles.hpp). Before (a batched ts::dot whose batch tile t0 has
// block 1; ir::print, abridged; docs/PIPELINE.md, stage 4):
//   %15 = loop tile(%6..%2) as t0 fixed 1 tile(%7..%3) as t1 block 0 tile(%8..%4) as t2 block 1 {
//     %17 = full %16 : f32[t0, t1, t2]
//     %19 = loop tile(%18..%9) as t3 block 2 carry %20 = %17 {
//       %21 = load %1[tile %15 as t0, tile %19 as t3, tile %15 as t2] #1 : bf16[t0, t3, t2]
//       ...
//       %28 = reduce sum %27 dim 2 : f32[t0, t1, t2]
// After: t0 is in no shape; the accesses index its tensor dim with the tile's begin.
//   %15 = loop tile(%6..%2) as t0 fixed 1 tile(%7..%3) as t1 block 0 tile(%8..%4) as t2 block 1 {
//     %35 = tile_begin %15 dim 0 : i32
//     %17 = full %16 : f32[t1, t2]
//     %19 = loop tile(%18..%9) as t3 block 2 carry %20 = %17 {
//       %21 = load %1[%35, tile %19 as t3, tile %15 as t2] #1 : bf16[t3, t2]
//       ...
//       %28 = reduce sum %27 dim 1 : f32[t1, t2]
#include "passes/unit_tiles.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "ir/clone.hpp"
#include "passes/default_config.hpp"
#include "passes/loop_knobs.hpp"

namespace tessel::passes {

using ir::Node;
using ir::Op;

namespace {

// Every node of g: blocks in order, loops' carried values and results included.
std::vector<Node*> all_nodes(const ir::Graph& g) {
  std::vector<Node*> out;
  std::set<Node*> seen;
  auto add = [&](Node* n) {
    if (seen.insert(n).second) out.push_back(n);
  };
  ir::walk(g.host, [&](Node* n) {
    add(n);
    if (n->op != Op::Loop) return;
    for (Node* c : n->carried) add(c);
    for (Node* r : n->results) add(r);
  });
  return out;
}

using Drop = std::set<const ir::Sym*>;

ir::Shape without(const ir::Shape& s, const Drop& drop) {
  ir::Shape out;
  for (ir::Sym* x : s)
    if (!drop.count(x)) out.push_back(x);
  return out;
}

// The shape of the elements access `n` indexes (a Store's value broadcasts to it); for the
// other accesses their own shape. A gather's dims are not placed: nullopt.
std::optional<ir::Shape> access_shape(const Node* n) {
  if (n->op != Op::Store) return n->shape;
  ir::Shape out;
  for (const ir::IndexInfo& info : n->access) {
    if (info.kind == ir::IndexKind::gather) return std::nullopt;
    if (info.kind != ir::IndexKind::scalar) out.push_back(info.sym);
  }
  return out;
}

// The operands of `n` that broadcast to a shape (right-aligned, size-1 dims stretching: the
// frontend's rule), as positions in n->args, and that shape.
std::vector<size_t> broadcast_operands(const Node* n) {
  std::vector<size_t> out;
  if (n->op == Op::Unary || n->op == Op::Binary || n->op == Op::Where || n->op == Op::Cast)
    for (size_t i = 0; i < n->args.size(); ++i) out.push_back(i);
  if (n->op == Op::Store) out.push_back(1);
  if (n->op == Op::Atomic || n->op == Op::Signal || n->op == Op::Wait)
    for (size_t i = 1; i <= static_cast<size_t>(n->ival); ++i) out.push_back(i);
  return out;
}

bool lined_up(const ir::Sym* a, const ir::Sym* b) {
  return a->block_id >= 0 && a->block_id == b->block_id &&
         (a->kind == ir::Sym::block_k || b->kind == ir::Sym::block_k);
}

// Operand shape `v` without its leading size-1 dims past `to`'s rank, where it still
// broadcasts to `to`; nullopt where it does not.
std::optional<ir::Shape> fitted(ir::Shape v, const ir::Shape& to) {
  while (v.size() > to.size() && !v.front()) v.erase(v.begin());
  if (v.size() > to.size()) return std::nullopt;
  for (size_t i = 1; i <= v.size(); ++i) {
    const ir::Sym* a = v[v.size() - i];
    const ir::Sym* b = to[to.size() - i];
    if (a && a != b && !(b && lined_up(a, b))) return std::nullopt;
  }
  return v;
}

// The dims of size 1 under c, in loop nests that hold a ts::dot (a sum over a product of
// three or more dims), that nothing but elementwise use, accesses by their tile, t.index(),
// views, permutes and reductions over other dims reach, and whose dropping keeps every
// broadcast aligned.
Drop droppable(const ir::Graph& g, const std::vector<Node*>& nodes, const Config& c) {
  Drop out;
  for (const auto& s : g.syms()) {
    if (s->kind == ir::Sym::extent_k || sym_block(s.get(), c) != 1) continue;
    if (s->kind == ir::Sym::tile && loop_knobs(g, s->loop, c).flatten) continue;
    out.insert(s.get());
  }
  auto keep = [&](const ir::Shape& shape) {
    bool kept = false;
    for (const ir::Sym* s : shape) kept |= out.erase(s) > 0;
    return kept;
  };
  // Only the nests that hold a ts::dot lose their unit dims (elsewhere such a dim costs no
  // register: the nest keeps the code its benchmarks measured).
  for (const Node* top : g.host) {
    if (top->op != Op::Loop) continue;
    bool dot = false;
    ir::walk(top->body, [&](const Node* n) {
      dot |= n->op == Op::Reduce && n->rfn() == ir::ReduceFn::sum && n->args[0]->op == Op::Binary &&
             n->args[0]->bfn() == ir::BinaryFn::mul && n->args[0]->shape.size() >= 3;
    });
    if (dot) continue;
    for (const ir::LoopDim& d : top->dims) out.erase(d.sym);
    ir::walk(top->body, [&](const Node* n) {
      keep(n->shape);
      for (const ir::IndexInfo& info : n->access) out.erase(info.sym);
      if (n->op == Op::Loop)
        for (const ir::LoopDim& d : n->dims) out.erase(d.sym);
    });
  }
  for (const Node* n : nodes) {
    if (n->op == Op::Reduce) out.erase(n->args[0]->shape.at(static_cast<size_t>(n->ival)));
    if (n->op == Op::Arange || n->op == Op::Multicast || n->is_multicast_access()) keep(n->shape);
    if (n->op == Op::Multicast) keep(n->args.at(1)->shape);
    if (!ir::is_access(n)) continue;
    size_t k = ir::first_index(n);
    for (const ir::IndexInfo& info : n->access) {
      if (info.kind == ir::IndexKind::newaxis) continue;
      if (info.kind == ir::IndexKind::gather) keep(n->args.at(k)->shape);
      ++k;
    }
  }
  // A broadcast whose operand would no longer line up with its result (a dropped dim
  // beside a size-1 one) keeps the dims of both.
  for (bool changed = true; changed;) {
    changed = false;
    for (const Node* n : nodes) {
      const std::optional<ir::Shape> to = access_shape(n);
      for (size_t i : broadcast_operands(n)) {
        const ir::Shape& v = n->args[i]->shape;
        if (!to)
          changed |= keep(v);
        else if (!fitted(without(v, out), without(*to, out)))
          changed |= keep(v) | keep(*to);
      }
    }
  }
  return out;
}

// Position `i` of a shape less the dropped dims before it.
size_t squeezed(const ir::Shape& shape, size_t i, const Drop& drop) {
  size_t at = i;
  for (size_t j = 0; j < i; ++j) at -= drop.count(shape[j]);
  return at;
}

class Squeezer {
 public:
  Squeezer(ir::Graph& g, Drop drop) : g_(g), drop_(std::move(drop)) {}

  // Rewrites the nodes of every block (after `nodes`' shapes are recorded).
  void run(const std::vector<Node*>& nodes) {
    for (const Node* n : nodes) before_[n] = n->shape;
    for (Node* n : nodes) rewrite(n);
    block(g_.host);
  }

 private:
  // n's shape, axes and accesses without the dropped dims.
  void rewrite(Node* n) {
    const ir::Shape& shape = before_.at(n);
    const std::vector<int> perm = n->op == Op::Permute ? ir::permutation(n) : std::vector<int>{};
    n->shape = without(shape, drop_);
    if (n->op == Op::TileIndex && n->shape.empty()) n->op = Op::TileBegin;
    if (n->op == Op::Reduce)
      n->ival = static_cast<int64_t>(
          squeezed(before_.at(n->args[0]), static_cast<size_t>(n->ival), drop_));
    if (n->op == Op::Permute) {
      const ir::Shape& in = before_.at(n->args[0]);
      std::vector<int> kept;
      for (size_t i = 0; i < perm.size(); ++i)
        if (!drop_.count(shape[i]))
          kept.push_back(static_cast<int>(squeezed(in, static_cast<size_t>(perm[i]), drop_)));
      n->ival = ir::encode_permutation(kept);
    }
    if (!ir::is_access(n)) return;
    size_t k = ir::first_index(n);
    for (ir::IndexInfo& info : n->access) {
      if (info.kind == ir::IndexKind::newaxis) continue;
      if (info.kind == ir::IndexKind::tile && drop_.count(info.sym)) {
        n->args[k] = tile_begin(info.sym);
        info = {ir::IndexKind::scalar, nullptr};
      }
      ++k;
    }
  }

  // The begin of dropped tile s, made once at the top of its loop's body.
  Node* tile_begin(const ir::Sym* s) {
    Node*& b = begin_of_[s];
    if (b) return b;
    Node* loop = s->loop;
    b = g_.new_node(Op::TileBegin, loop->loc);
    b->dtype = g_.index_dtype;
    b->args = {loop};
    b->ival = s->loop_dim;
    b->depth = loop->depth + 1;
    pending_[loop].push_back(b);
    return b;
  }

  // Places the tiles' begins and the views that drop an operand's leading size-1 dims
  // (a [1, 1, N] bias of a [B, M, N] sum whose B is dropped: [1, N] of [M, N]).
  void block(ir::Block& b) {
    ir::Block out;
    for (Node* n : b) {
      if (n->op != Op::Carried) flush(enclosing_, out);
      const std::optional<ir::Shape> to = access_shape(n);
      for (size_t i : to ? broadcast_operands(n) : std::vector<size_t>{}) {
        Node* v = n->args[i];
        const ir::Shape fit = *fitted(v->shape, *to);
        if (fit.size() == v->shape.size()) continue;
        Node* view = g_.new_node(Op::View, n->loc);
        view->dtype = v->dtype;
        view->shape = fit;
        view->args = {v};
        view->depth = n->depth;
        out.push_back(view);
        n->args[i] = view;
      }
      out.push_back(n);
      if (n->op == Op::Loop) {
        Node* outer = enclosing_;
        enclosing_ = n;
        block(n->body);
        enclosing_ = outer;
      }
    }
    flush(enclosing_, out);
    b = std::move(out);
  }

  void flush(const Node* loop, ir::Block& out) {
    auto it = pending_.find(loop);
    if (it == pending_.end()) return;
    out.insert(out.end(), it->second.begin(), it->second.end());
    pending_.erase(it);
  }

  ir::Graph& g_;
  const Drop drop_;
  std::map<const Node*, ir::Shape> before_;  // shapes as traced, read while rewriting
  std::map<const ir::Sym*, Node*> begin_of_;
  std::map<const Node*, std::vector<Node*>> pending_;  // loop -> begins not yet placed
  Node* enclosing_ = nullptr;
};

}  // namespace

std::unique_ptr<ir::Graph> squeeze_unit_tiles(const ir::Graph& traced, const Config& c) {
  std::unique_ptr<ir::Graph> g = ir::clone_graph(traced);
  const std::vector<Node*> nodes = all_nodes(*g);
  Drop drop = droppable(*g, nodes, c);
  bool used = false;
  for (const Node* n : nodes)
    for (const ir::Sym* s : n->shape) used |= drop.count(s) > 0;
  if (!used) return nullptr;
  Squeezer(*g, std::move(drop)).run(nodes);
  ir::verify(*g);
  return g;
}

}  // namespace tessel::passes
