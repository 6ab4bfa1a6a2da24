#include "passes/shared_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <vector>

namespace tessel::passes {

using ir::Node;

namespace {

int64_t round_to(int64_t b, int64_t a) { return (b + a - 1) / a * a; }

int64_t round16(int64_t b) { return round_to(b, 16); }

int64_t alignment(const SharedStage& u) {
  return u.kind == SharedStage::Kind::ring ? 1024 : u.kind == SharedStage::Kind::tma ? 128 : 16;
}

bool is_ring(const SharedStage& u) { return u.kind == SharedStage::Kind::ring; }

// The mbarriers' bytes: 8 per tma stage, 16 per TMA ring buffer; none for a ring filled by
// cp.async.
int64_t mbarrier_bytes(const SharedStage& u) {
  return u.kind == SharedStage::Kind::tma ? 8 : is_ring(u) && !u.cp_async ? 16 * u.stages : 0;
}

bool overlap(const SharedStage& x, const SharedStage& y) {
  return x.offset < y.offset + y.bytes && y.offset < x.offset + x.bytes;
}

// The staging ops of `nir` in program order.
std::vector<const Node*> in_order(const NestIr& nir) {
  std::vector<const Node*> out;
  ir::walk(nir.loop->body, [&](const Node* n) {
    if (nir.shared.count(n)) out.push_back(n);
  });
  return out;
}

// Per node of the nest's body: the index of the statement of the body that holds it.
std::map<const Node*, size_t> statement_of(const NestIr& nir) {
  std::map<const Node*, size_t> out;
  const ir::Block& body = nir.loop->body;
  for (size_t i = 0; i < body.size(); ++i) {
    out[body[i]] = i;
    ir::walk(body[i]->body, [&](const Node* n) { out[n] = i; });
  }
  return out;
}

}  // namespace

bool ring_free_at(const NestIr& nir, const Node* ring, const Node* n) {
  if (nir.persistent || nir.loop->persistent) return false;
  const std::map<const Node*, size_t> at = statement_of(nir);
  return at.at(n) > at.at(ring);
}

std::map<const Node*, std::set<const Node*>> shared_neighbours(const NestIr& nir) {
  std::map<const Node*, std::set<const Node*>> before;
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
      if (!nir.live.count(n)) continue;
      if (n->op == ir::Op::Loop) {
        loop(n->body, frontier);
        continue;
      }
      auto st = nir.shared.find(n);
      if (st == nir.shared.end()) continue;
      before[n].insert(frontier.begin(), frontier.end());
      // A tma stage's or a ring's wait (an mbarrier) is no barrier between the threads.
      if (st->second.kind == SharedStage::Kind::tma || is_ring(st->second))
        frontier.insert(n);
      else
        frontier = {n};
    }
  };
  std::set<const Node*> frontier;
  if (nir.persistent || nir.loop->persistent)
    loop(nir.loop->body, frontier);  // the program loops over tiles
  else
    walk(nir.loop->body, frontier);
  return before;
}

void plan_shared(NestIr& nir) {
  const auto before = shared_neighbours(nir);
  int64_t largest = 0;
  for (const auto& [n, u] : nir.shared)
    if (!is_ring(u)) largest = std::max(largest, u.bytes);
  const int64_t cap = std::max(largest, kFreeSharedBytes);
  std::set<const Node*> placed;
  // Rings first, each in bytes of its own; the other stages after them.
  int64_t base = 0;
  for (const Node* n : in_order(nir)) {
    SharedStage& u = nir.shared.at(n);
    if (!is_ring(u)) continue;
    u.offset = base;
    base = round_to(base + u.bytes, 1024);
  }
  for (const Node* n : in_order(nir)) {
    SharedStage& u = nir.shared.at(n);
    if (is_ring(u)) continue;
    // From the rings' first byte where every ring is free (ring_free_at), else past them:
    // the lowest offset past every placed neighbour's bytes that keeps within the cap.
    bool rings_free = true;
    for (const auto& [r, ring] : nir.shared)
      if (is_ring(ring)) rings_free &= ring_free_at(nir, r, n);
    const int64_t start = rings_free ? 0 : base;
    for (int64_t at = round_to(start, alignment(u));;) {
      bool clear = true;
      for (const Node* p : before.at(n))
        if (p != n && placed.count(p)) {
          const SharedStage& q = nir.shared.at(p);
          if (at < q.offset + q.bytes && q.offset < at + u.bytes) {
            clear = false;
            at = round_to(q.offset + q.bytes, alignment(u));
          }
        }
      if (clear || at + u.bytes > start + cap) {
        u.offset = clear && at + u.bytes <= start + cap ? at : round_to(start, alignment(u));
        break;
      }
    }
    placed.insert(n);
  }
  for (auto& [n, u] : nir.shared) {
    bool barrier = false;
    for (const Node* p : before.at(n)) barrier |= p == n || overlap(nir.shared.at(p), u);
    u.barrier = barrier && !is_ring(u);
  }
  place_mbarriers(nir);
}

void place_mbarriers(NestIr& nir) {
  int64_t end = 0;
  for (const auto& [n, u] : nir.shared) end = std::max(end, u.offset + u.bytes);
  end = round16(end);
  std::map<int, SharedStage*> tma;  // by node id: program order within the nest's ops
  for (auto& [n, u] : nir.shared)
    if (mbarrier_bytes(u)) tma[n->id] = &u;
  for (auto& [id, u] : tma) {
    u->mbarrier = end;
    end += mbarrier_bytes(*u);
  }
  nir.shared_bytes = round16(end);
}

std::string shared_plan_error(const NestIr& nir) {
  const auto before = shared_neighbours(nir);
  std::map<int, const Node*> by_id;  // the stages in node order: the first error is stable
  for (const auto& [n, u] : nir.shared) by_id[n->id] = n;
  int64_t end = 0;
  for (const auto& [id, n] : by_id) {
    const SharedStage& u = nir.shared.at(n);
    end = std::max(end, u.offset + u.bytes);
    if (u.offset < 0 || u.offset % alignment(u) != 0)
      return fmt::format("%{}: offset {} is not a multiple of {}", n->id, u.offset, alignment(u));
    if (u.offset + u.bytes > nir.nest().shared_limit)
      return fmt::format("%{}: its bytes end at {}, past the {} a program has", n->id,
                         u.offset + u.bytes, nir.nest().shared_limit);
  }
  for (const auto& [id, n] : by_id) {
    const SharedStage& u = nir.shared.at(n);
    if (is_ring(u)) {
      for (const auto& [m, q] : nir.shared)
        if (m != n && overlap(q, u) && (is_ring(q) || !ring_free_at(nir, n, m)))
          return fmt::format("%{}: its ring overlaps %{}'s bytes", n->id, m->id);
      continue;
    }
    if (u.barrier) continue;
    for (const Node* p : before.at(n))
      if (p == n || overlap(nir.shared.at(p), u))
        return fmt::format(
            "%{} needs a barrier: %{} may run just before it and uses bytes it overwrites", n->id,
            p->id);
  }
  int64_t mbarriers = 0;
  for (const auto& [n, u] : nir.shared) mbarriers += mbarrier_bytes(u);
  end = round16(round16(end) + mbarriers);
  if (end != nir.shared_bytes)
    return fmt::format("shared memory is {} bytes, its stages and mbarriers end at {}",
                       nir.shared_bytes, end);
  return "";
}

}  // namespace tessel::passes
