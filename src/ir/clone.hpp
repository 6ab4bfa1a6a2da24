// Copies IR nodes into a graph, remapping operands, loops and Syms. The base of passes
// that build a new graph from an old one (a node copied twice is copied twice: callers
// decide what to share through the maps).
#pragma once

#include <functional>
#include <map>

#include "ir/ir.hpp"

namespace tessel::ir {

class Cloner {
 public:
  explicit Cloner(Graph& dst) : dst_(dst) {}
  virtual ~Cloner() = default;

  /// The copy of `n` (made on first use with `copy_node`, appended nowhere).
  Node* map(const Node* n);
  Sym* map_sym(const Sym* s);
  /// Records that `from` is replaced by `to` (for nodes and Syms).
  void set(const Node* from, Node* to) { nodes_[from] = to; }
  void set_sym(const Sym* from, Sym* to) { syms_[from] = to; }
  bool has(const Node* n) const { return nodes_.count(n) > 0; }

  /// Copies `n` with remapped operands (loops: dims, body, carried, results) and appends
  /// the copy to `out`. Loop bodies are copied with copy_block.
  Node* copy_into(const Node* n, Block& out);
  /// Copies every node of `b` in order into `out` (passes override it to rewrite).
  virtual void copy_block(const Block& b, Block& out);
  void forget(const Node* n) { nodes_.erase(n); }

  Graph& dst() { return dst_; }

 protected:
  Node* fresh(const Node* n);
  Graph& dst_;
  std::map<const Node*, Node*> nodes_;
  std::map<const Sym*, Sym*> syms_;
};

/// A deep copy of `g` (same structure, new nodes and Syms).
std::unique_ptr<Graph> clone_graph(const Graph& g);

/// Copies what a graph knows besides its nodes (kernel name, block sizes, loads, tunables,
/// index dtype, argument facts) from `g` into `out`: a pass that builds a new graph from g
/// (clone_graph, passes::roll_reductions) keeps them.
void copy_graph_facts(const Graph& g, Graph& out);

}  // namespace tessel::ir
