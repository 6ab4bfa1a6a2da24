// Memory order inside a program (the kernel_ir stage, passes/kernel_ir.hpp): where a load or store
// must wait for the program's earlier accesses to the same memory made by other threads.
//
// Each thread of a program accesses the elements its registers hold (passes/layout.hpp):
// a store writes an element from one thread (the one whose coordinates outside the
// stored dims are 0), an array load reads it in every thread holding a copy of it, a
// scalar load in every thread. When a load reads memory a store of the same program wrote
// before it (or a store overwrites what a load read, or two stores write one element) and
// the threads differ, the second access waits at a barrier:
//
//   for (auto b : ts::grid(B)) {
//     for (auto t : ts::tile(N)) out(b, t) = x(b, t) * 2;  // thread i stores element i
//     __syncthreads();                                      // (emitted here)
//     s(b) = ts::sum(out(b, ts::all), 0);                   // another layout of the row
//   }
//
// No barrier is needed where both accesses are of the same tensor with the same indices
// (the same elements in the same registers) and either both are stores (the same thread
// stores each element) or no layout slot outside the accessed dims spans threads (then one
// thread holds each element in both): `x(t) = x(t) * 2`, `acc(tm, tn) += ...` in a device
// loop, `out(rows) = ...` on every iteration. Tensors are compared by ir::may_alias: the same
// tensor, or arguments whose memory overlaps in this call (ArgFacts::alias_group).
// Accesses are followed in program order through device loops, their next iteration
// included (a load at the top of a body after a store at its bottom); the top-level loop's
// tiles are programs of their own (passes/race_check.hpp). An access in a device loop
// that waits only for accesses before the loop gets one barrier before the loop instead
// of one per iteration. A load by tensor descriptor (the TMA's, for every thread) never
// shares a thread with another access. The barrier is __syncwarp()
// when the program is one warp, __syncthreads() otherwise (both order the threads'
// global memory accesses, CUDA C++ Programming Guide, "Synchronization Functions").
#include "passes/memory_order.hpp"

#include <algorithm>
#include <vector>

namespace tessel::passes {

using ir::Node;
using ir::Op;

namespace {

struct Order {
  const ir::Graph& g;
  const NestIr& nir;
  std::set<const Node*> staged;  // contractions' factors and products
  std::set<const Node*> barriers;
};

// Whether accesses a and b (of one tensor) touch each element from the same thread.
bool same_thread_per_element(const Order& o, const Node* a, const Node* b) {
  // An access in its own layout holds other elements in each thread than the nest does.
  if (o.nir.own.count(a) || o.nir.own.count(b)) return false;
  if (o.staged.count(a) || o.staged.count(b)) return false;  // a contraction's factor
  // A load by tensor descriptor is made by the TMA, for all threads.
  for (const Node* n : {a, b})
    if (auto x = o.nir.accesses.find(n);
        x != o.nir.accesses.end() && x->second.form == Access::Form::tma)
      return false;
  if (a->args[0] != b->args[0] || a->access.size() != b->access.size()) return false;
  const Layout& L = o.nir.nest();
  for (size_t i = 0; i < a->access.size(); ++i)
    if (a->access[i].kind != b->access[i].kind || a->access[i].sym != b->access[i].sym)
      return false;
  const size_t fa = ir::first_index(a), fb = ir::first_index(b);
  if (a->args.size() - fa != b->args.size() - fb) return false;
  for (size_t i = 0; fa + i < a->args.size(); ++i)
    if (a->args[fa + i] != b->args[fb + i]) return false;
  // Two writes with the same addressing write each element from the same thread, its
  // owner (Emitter::owner_test).
  if (ir::writes_memory(a) && ir::writes_memory(b)) return true;
  // The slots of the accessed elements' coordinates (as emit_store dedupes them).
  const std::set<int> covered = covered_slots(L, a);
  // A load whose value is a scalar is made by every thread; a store of one element by
  // thread 0.
  if (covered.empty()) return false;
  const int lv = L.log2_vec(), lt = L.log2_threads();
  for (size_t k = 0; k < L.slot_block.size(); ++k) {
    if (covered.count(static_cast<int>(k))) continue;
    for (int b : L.slot_bits[k])
      if (b >= lv && b < lv + lt) return false;  // copies of an element in several threads
  }
  return true;
}

bool needs_order(const Order& o, const Node* earlier, const Node* later) {
  if (!ir::writes_memory(earlier) && !ir::writes_memory(later)) return false;
  if (!ir::may_alias(o.g, earlier->args[0], later->args[0])) return false;
  return !same_thread_per_element(o, earlier, later);
}

// Whether a live access in block b (nested loops included) must wait for one of `pending`.
bool waits_for(const Order& o, const ir::Block& b, const std::vector<const Node*>& pending) {
  for (const Node* n : b) {
    if (!o.nir.live.count(n)) continue;
    if (n->op == Op::Loop && waits_for(o, n->body, pending)) return true;
    if (!ir::is_access(n)) continue;
    for (const Node* p : pending)
      if (needs_order(o, p, n)) return true;
  }
  return false;
}

// Follows block b in program order from the accesses `pending` since the last barrier,
// marking the accesses that need one.
void order_block(Order& o, const ir::Block& b, std::vector<const Node*>& pending) {
  for (const Node* n : b) {
    if (!o.nir.live.count(n)) continue;
    if (n->op == Op::Loop) {
      // An access in the loop waiting for one before the loop: one barrier before the
      // loop, not one per iteration.
      if (o.barriers.count(n) || waits_for(o, n->body, pending)) {
        o.barriers.insert(n);
        pending.clear();
      }
      // The body runs again after itself: iterate until the accesses pending at its
      // start (from before the loop or from the previous iteration) no longer grow.
      std::vector<const Node*> entry = pending, start = pending;
      while (true) {
        std::vector<const Node*> end = start;
        order_block(o, n->body, end);
        std::vector<const Node*> next = entry;
        for (const Node* e : end)
          if (std::find(next.begin(), next.end(), e) == next.end()) next.push_back(e);
        std::sort(next.begin(), next.end());
        std::vector<const Node*> sorted_start = start;
        std::sort(sorted_start.begin(), sorted_start.end());
        if (next == sorted_start) break;
        start = next;
      }
      pending = start;  // zero iterations, or any number
      continue;
    }
    if (!ir::is_access(n)) continue;
    bool wait = o.barriers.count(n) > 0;
    for (const Node* p : pending) wait = wait || needs_order(o, p, n);
    if (wait) {
      o.barriers.insert(n);
      pending.clear();
    }
    if (std::find(pending.begin(), pending.end(), n) == pending.end()) pending.push_back(n);
  }
}

}  // namespace

std::set<const Node*> memory_order_barriers(const ir::Graph& g, const NestIr& nir) {
  Order o{g, nir, staged_nodes(nir.nest()), {}};
  std::vector<const Node*> pending;
  order_block(o, nir.loop->body, pending);
  return o.barriers;
}

}  // namespace tessel::passes
