// The per-loop knobs of a Config (Helion's loop_orders, flatten_loops, l2_groupings):
// which loops they index, when flattening is valid, and the values code generation uses.
//
// Indexing (also documented in include/tessel/config.hpp):
// - loop_orders and flatten_loops: one entry per loop with two or more dimensions
//   (`ts::tile(m, n)`, `ts::grid(m, n)`), top-level and nested alike, in trace order: a
//   loop comes before the loops nested in it, and earlier statements before later ones
//   (a pre-order walk of the kernel, as ir::walk visits it).
// - l2_groupings: one entry per top-level loop with two or more dimensions, in order.
//
// Example: for (tm, tn : tile(M, N)) { for (tk : tile(K)) ...; for (a, b : tile(A, B)) ... }
// then for (x, y : tile(X, Y)) ...: loop_orders = [order of (tm, tn), order of (a, b),
// order of (x, y)], l2_groupings = [group of (tm, tn), group of (x, y)].
#pragma once

#include <string>
#include <vector>

#include "ir/ir.hpp"
#include "tessel/config.hpp"

namespace tessel::passes {

/// The loops loop_orders and flatten_loops index, in that order (see the file comment).
std::vector<const ir::Node*> multi_dim_loops(const ir::Graph& g);

/// The top-level loops l2_groupings indexes, in that order.
std::vector<const ir::Node*> grouped_loops(const ir::Graph& g);

/// Why the dims of `loop` cannot be iterated as one flattened index space, or "" when
/// they can. The rule: `loop` is a ts::tile loop of two or more dimensions, its body
/// (nested loops included) uses none of its tiles' scalar attributes (begin, end,
/// block_size, id), and every value and every store target in it that has one of the
/// loop's tile dimensions has all of them (in any order). Reductions over a loop
/// dimension, `t.index()`, and loads or stores of a subset of the dims are therefore
/// excluded: each of them has a value with a subset of the dims.
std::string flatten_blocker(const ir::Node* loop);

/// The resolved knobs of one loop under a complete config.
struct LoopKnobs {
  /// A permutation of the loop's dims. Top-level loop: order[0] varies fastest across
  /// program ids, order[1] next, ... Nested loop: order[0] is the outermost generated
  /// loop. Flattened loop: order[0] is the slowest and order.back() the fastest dim of
  /// the flat index (row-major for the identity). Helion's meaning in all three cases.
  std::vector<int> order;
  bool flatten = false;
  /// Top-level loops of 2+ dims: the group size G (1 = none).
  int l2_grouping = 1;
};

/// The knobs of `loop` (a Loop node of `g`) under complete config `c`: identity order,
/// no flattening, no grouping where the config leaves the fields unset.
LoopKnobs loop_knobs(const ir::Graph& g, const ir::Node* loop, const Config& c);

/// Fills loop_orders (identity), flatten_loops (false) and l2_groupings (1) when unset and
/// the kernel has such loops, and checks them: lengths, permutations, positive powers of
/// two, flatten only where flatten_blocker is "", no grouping with pid_type xyz or on a
/// flattened loop. Errors: UserError naming `kernel` and the loop's source line.
void complete_loop_knobs(const ir::Graph& g, Config& c, const std::string& kernel);

/// The permutation of 0..k-1 of lexicographic rank `rank` (0 = identity), and back.
std::vector<int> permutation_of_rank(int k, int64_t rank);
int64_t rank_of_permutation(const std::vector<int>& perm);

}  // namespace tessel::passes
