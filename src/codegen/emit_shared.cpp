// The shared memory of a loop nest, planned before its code is printed (Emitter::SharedUse).
// Every op that stages values in shared memory writes them, waits at a barrier, then reads
// them. A barrier before its writes is needed only where an op that may run just before it
// (no barrier between them) reads bytes that its writes overlap: the previous such op in
// program order, the last one of a loop body before the body's first (the back edge), the
// ones before a loop that may run no iteration. Any op in between has its own barrier
// after the earlier op's reads. The plan walks the nest in program order, collects those
// neighbours, gives each op the lowest offset disjoint from its neighbours' bytes while the
// nest's total stays within max(its largest op, kFreeSharedBytes), and then marks the ops
// whose neighbours overlap them.
//
//   two reductions back to back (a row's max, then its sum):  max at 0, barrier;
//                                                             sum at 64, no barrier
//   a matmul's contraction in its loop over k:                at 0, barrier (itself, the
//                                                             previous iteration)
//   a transpose's conversion, one tile per program:           at 0, no barrier
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <set>

#include "codegen/emitter_state.hpp"
#include "passes/access_layouts.hpp"

namespace tessel::codegen {

using ir::Node;
using ir::Op;

namespace {

// The shared memory a nest may take to place neighbours apart (beyond its largest op's):
// 32 KiB still lets 7 programs share an SM's 228 KiB, more than its 64 warps hold at
// 8 warps each.
constexpr int64_t kFreeSharedBytes = 32 * 1024;

int64_t round16(int64_t b) { return (b + 15) / 16 * 16; }

}  // namespace

int64_t Emitter::shared_bytes_of(const Node* n) {
  if (!live_.count(n) || staged_.count(n)) return 0;
  if (const passes::Contraction* c = contraction_of(n)) return round16(c->shared_bytes);
  if (n->op == Op::Reduce) return reduce_steps(n).bytes;
  if (n->op == Op::Load) {
    const passes::Layout* own = is_array(n) ? own_layout(n) : nullptr;
    return own ? round16(passes::conversion_bytes(*own, n->dtype)) : 0;
  }
  if (n->op == Op::Store) {
    const Node* v = n->args[1];
    if (writes_one_element(n) || !is_array(v) || !own_layout(n)) return 0;
    return round16(passes::conversion_bytes(nest_, v->dtype));
  }
  if (n->op == Op::Atomic || n->op == Op::Signal || n->op == Op::Wait) {
    if (!value_used(n)) return 0;
    const bool one = writes_one_element(n);
    if (!one && copy_bits(n) == 0) return 0;
    return round16((one ? 1 : L_->elems) * (dtype_size(n->dtype) > 4 ? 8 : 4));
  }
  return 0;  // the other ops stage nothing
}

void Emitter::plan_shared() {
  std::vector<const Node*> order;  // the ops, in program order
  std::map<const Node*, int64_t> bytes;
  std::map<const Node*, std::set<const Node*>> before;  // the ops that may run just before
  // `frontier`: the ops that may be the last one run so far.
  std::function<void(const ir::Block&, std::set<const Node*>&)> walk;
  auto loop = [&](const ir::Block& body, std::set<const Node*>& frontier) {
    const std::set<const Node*> in = frontier;
    std::set<const Node*> first = in;
    walk(body, first);  // the first iteration
    std::set<const Node*> later = in;
    later.insert(first.begin(), first.end());
    walk(body, later);  // the others: after the previous iteration's last op
    frontier = in;      // no iteration, or after the last
    frontier.insert(later.begin(), later.end());
  };
  walk = [&](const ir::Block& b, std::set<const Node*>& frontier) {
    for (const Node* n : b) {
      if (!live_.count(n)) continue;
      if (n->op == Op::Loop) {
        loop(n->body, frontier);
        continue;
      }
      const int64_t nb = shared_bytes_of(n);
      if (nb == 0) continue;
      if (nb > passes::kSharedBytesLimit)
        throw UserError(g_.kernel_name, n->loc,
                        fmt::format("this needs {} bytes of shared memory, more than a program "
                                    "has ({})",
                                    nb, passes::kSharedBytesLimit),
                        "use smaller block sizes, fewer warps, or reduction_loops");
      if (!bytes.count(n)) order.push_back(n);
      bytes[n] = nb;
      before[n].insert(frontier.begin(), frontier.end());
      frontier = {n};
    }
  };
  std::set<const Node*> frontier;
  if (plan_.persistent || top_->persistent)
    loop(top_->body, frontier);  // the program loops over tiles
  else
    walk(top_->body, frontier);

  int64_t largest = 0;
  for (const auto& [n, b] : bytes) largest = std::max(largest, b);
  const int64_t cap = std::max(largest, kFreeSharedBytes);
  auto overlap = [&](const Node* a, const Node* b) {
    const SharedUse &x = shared_[a], &y = shared_[b];
    return x.offset < y.offset + y.bytes && y.offset < x.offset + x.bytes;
  };
  for (const Node* n : order) {
    SharedUse& u = shared_[n];
    u.bytes = bytes[n];
    // The lowest offset past every placed neighbour's bytes that keeps within the cap.
    for (int64_t at = 0;;) {
      bool clear = true;
      for (const Node* p : before[n])
        if (p != n && shared_.count(p) && shared_[p].bytes > 0) {
          const SharedUse& q = shared_[p];
          if (at < q.offset + q.bytes && q.offset < at + u.bytes) {
            clear = false;
            at = round16(q.offset + q.bytes);
          }
        }
      if (clear || at + u.bytes > cap) {
        u.offset = clear && at + u.bytes <= cap ? at : 0;
        break;
      }
    }
  }
  for (const Node* n : order) {
    bool barrier = false;
    for (const Node* p : before[n]) barrier |= p == n || overlap(p, n);
    shared_[n].barrier = barrier;
    shared_bytes_ = std::max(shared_bytes_, static_cast<int>(shared_[n].offset + shared_[n].bytes));
  }
}

const Emitter::SharedUse& Emitter::shared_use(const Node* n) const {
  static const SharedUse unplanned{0, 0, true};  // not planned: at 0, after a barrier
  auto it = shared_.find(n);
  return it == shared_.end() ? unplanned : it->second;
}

}  // namespace tessel::codegen
