// Test-only helpers for the IR's text form (ir::print, ir::parse): a field-by-field
// comparison of two graphs, and the round trip that tests/ir_text_test.cpp checks.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>

#include "ir/ir.hpp"
#include "ir/parser.hpp"

namespace ir_text_test {

namespace ir = tessel::ir;

/// Compares what a pass, the interpreter or code generation can read of two graphs: every
/// node reachable from the host block (paired in block order, ids included), every Sym,
/// and the graph's facts. `names`: also names and source
/// locations (printed only with names). `depth`: also Node::depth (set by the tracer, not
/// by passes). A Loop's dtype is not compared (no consumer reads it). Returns "" when
/// equal, else the first difference.
class GraphDiff {
 public:
  GraphDiff(const ir::Graph& a, const ir::Graph& b, bool names, bool depth)
      : a_(a), b_(b), names_(names), depth_(depth) {}

  std::string run() {
    facts();
    syms();
    if (diff_.empty()) block(a_.host, b_.host, "host");
    if (diff_.empty()) {
      nodes_eq(a_.args, b_.args, "Graph::args");
      nodes_eq(a_.outputs, b_.outputs, "Graph::outputs");
    }
    return diff_;
  }

 private:
  template <class T>
  void eq(const T& x, const T& y, const std::string& what) {
    if (diff_.empty() && !(x == y)) diff_ = what + " differs";
  }
  void facts() {
    eq(a_.kernel_name, b_.kernel_name, "kernel_name");
    eq(a_.num_block_sizes, b_.num_block_sizes, "num_block_sizes");
    eq(a_.num_loads, b_.num_loads, "num_loads");
    eq(a_.block_size_hint, b_.block_size_hint, "block_size_hint");
    eq(a_.block_size_range, b_.block_size_range, "block_size_range");
    eq(a_.tunables, b_.tunables, "tunables");
    eq(a_.index_dtype, b_.index_dtype, "index_dtype");
    eq(a_.index_dtype_forced, b_.index_dtype_forced, "index_dtype_forced");
    eq(a_.check_bounds, b_.check_bounds, "check_bounds");
    eq(a_.arg_facts, b_.arg_facts, "arg_facts");
    std::vector<int> ra, rb;
    for (const ir::Sym* s : a_.reduction_syms) ra.push_back(s->id);
    for (const ir::Sym* s : b_.reduction_syms) rb.push_back(s->id);
    eq(ra, rb, "reduction_syms");
  }
  static int sid(const ir::Sym* s) { return s ? s->id : -1; }
  static int nid(const ir::Node* n) { return n ? n->id : -1; }
  void syms() {
    eq(a_.syms().size(), b_.syms().size(), "number of syms");
    for (size_t i = 0; diff_.empty() && i < a_.syms().size(); ++i) {
      const ir::Sym& x = *a_.syms()[i];
      const ir::Sym& y = *b_.syms()[i];
      std::string w = "sym " + ir::sym_name(&x) + ": ";
      eq(x.kind, y.kind, w + "kind");
      eq(x.id, y.id, w + "id");
      eq(nid(x.loop), nid(y.loop), w + "loop");
      eq(x.loop_dim, y.loop_dim, w + "loop_dim");
      eq(x.block_id, y.block_id, w + "block_id");
      eq(nid(x.extent), nid(y.extent), w + "extent");
      eq(x.extent_pow2, y.extent_pow2, w + "extent_pow2");
      eq(x.extent_at_trace, y.extent_at_trace, w + "extent_at_trace");
      if (names_) eq(x.name, y.name, w + "name");
    }
  }
  void node_ref(const ir::Node* x, const ir::Node* y, const std::string& what) {
    if (!diff_.empty()) return;
    if (!x || !y) {
      if (x != y) diff_ = what + ": null against non-null";
      return;
    }
    auto it = map_.find(x);
    bool same = it != map_.end() ? it->second == y : x->id == y->id;
    if (!same) diff_ = fmt::format("{}: %{} against %{}", what, x->id, y->id);
  }
  void nodes_eq(const std::vector<ir::Node*>& x, const std::vector<ir::Node*>& y,
                const std::string& what) {
    eq(x.size(), y.size(), what + " size");
    for (size_t i = 0; diff_.empty() && i < x.size(); ++i) node_ref(x[i], y[i], what);
  }
  void block(const ir::Block& x, const ir::Block& y, const std::string& where) {
    eq(x.size(), y.size(), where + ": number of nodes");
    for (size_t i = 0; diff_.empty() && i < x.size(); ++i) node(x[i], y[i]);
  }
  void node(const ir::Node* x, const ir::Node* y) {
    map_[x] = y;
    std::string w = fmt::format("%{} ({}): ", x->id, ir::op_name(x->op));
    eq(x->op, y->op, w + "op");
    if (!diff_.empty()) return;
    eq(x->id, y->id, w + "id");
    if (x->op != ir::Op::Loop) eq(x->dtype, y->dtype, w + "dtype");
    std::vector<int> sa, sb;
    for (const ir::Sym* s : x->shape) sa.push_back(sid(s));
    for (const ir::Sym* s : y->shape) sb.push_back(sid(s));
    eq(sa, sb, w + "shape");
    nodes_eq(x->args, y->args, w + "args");
    eq(x->ival, y->ival, w + "ival");
    bool fsame = std::memcmp(&x->fval, &y->fval, sizeof(double)) == 0 ||
                 (std::isnan(x->fval) && std::isnan(y->fval));
    if (diff_.empty() && !fsame) diff_ = w + "fval differs";
    eq(x->fn, y->fn, w + "fn");
    eq(x->sem, y->sem, w + "sem");
    eq(x->scope, y->scope, w + "scope");
    eq(x->keepdim, y->keepdim, w + "keepdim");
    eq(x->arg_kind, y->arg_kind, w + "arg_kind");
    node_ref(x->like, y->like, w + "like");
    eq(x->rank, y->rank, w + "rank");
    eq(x->access.size(), y->access.size(), w + "access size");
    for (size_t i = 0; diff_.empty() && i < x->access.size(); ++i) {
      eq(x->access[i].kind, y->access[i].kind, w + "access kind");
      eq(sid(x->access[i].sym), sid(y->access[i].sym), w + "access sym");
    }
    eq(x->persistent, y->persistent, w + "persistent");
    if (depth_) eq(x->depth, y->depth, w + "depth");
    eq(x->load_id, y->load_id, w + "load_id");
    if (names_) {
      eq(x->name, y->name, w + "name");
      eq(std::string(x->loc.file ? x->loc.file : ""), std::string(y->loc.file ? y->loc.file : ""),
         w + "loc.file");
      eq(x->loc.line, y->loc.line, w + "loc.line");
      eq(x->loc.column, y->loc.column, w + "loc.column");
    }
    eq(x->dims.size(), y->dims.size(), w + "dims");
    for (size_t i = 0; diff_.empty() && i < x->dims.size(); ++i) {
      const ir::LoopDim &d = x->dims[i], &e = y->dims[i];
      eq(d.is_tile, e.is_tile, w + "dim is_tile");
      node_ref(d.begin, e.begin, w + "dim begin");
      node_ref(d.end, e.end, w + "dim end");
      eq(sid(d.sym), sid(e.sym), w + "dim sym");
      eq(d.block_id, e.block_id, w + "dim block_id");
      eq(d.fixed_block, e.fixed_block, w + "dim fixed_block");
    }
    if (x->op != ir::Op::Loop || !diff_.empty()) return;
    eq(x->carried.size(), y->carried.size(), w + "carried");
    for (size_t i = 0; diff_.empty() && i < x->carried.size(); ++i)
      node(x->carried[i], y->carried[i]);
    nodes_eq(x->inits, y->inits, w + "inits");
    if (diff_.empty()) block(x->body, y->body, w + "body");
    nodes_eq(x->results, y->results, w + "results");
  }

  const ir::Graph& a_;
  const ir::Graph& b_;
  bool names_, depth_;
  std::map<const ir::Node*, const ir::Node*> map_;
  std::string diff_;
};

/// Parses `g`'s text (with and without names) and expects the same text back and an equal
/// graph (GraphDiff). `depth`: g is a traced graph (its depths are the tracer's).
inline void expect_round_trip(const ir::Graph& g, bool depth = true) {
  for (bool names : {true, false}) {
    std::string text = ir::print(g, names);
    std::unique_ptr<ir::Graph> back;
    try {
      back = ir::parse(text);
    } catch (const tessel::UserError& e) {
      ADD_FAILURE() << e.what() << "\nin:\n" << text;
      return;
    }
    EXPECT_EQ(ir::print(*back, names), text);
    EXPECT_EQ(GraphDiff(g, *back, names, depth).run(), "") << text;
  }
}

}  // namespace ir_text_test
