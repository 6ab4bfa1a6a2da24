#include "passes/kernel_ir.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "ir/ir_text.hpp"
#include "passes/access_layouts.hpp"
#include "passes/lane_exchange.hpp"
#include "passes/memory_order.hpp"
#include "passes/reduce_steps.hpp"
#include "passes/shared_plan.hpp"
#include "passes/store_rounding.hpp"
#include "passes/tensor_cores.hpp"
#include "tessel/error.hpp"

namespace tessel::passes {

using ir::Node;
using ir::Op;

const char* memory_space_name(MemorySpace s) {
  switch (s) {
    case MemorySpace::registers:
      return "registers";
    case MemorySpace::uniform:
      return "uniform";
    case MemorySpace::shared:
      return "shared";
    case MemorySpace::global:
      return "global";
    case MemorySpace::none:
      return "none";
  }
  return "";
}

const char* stage_kind_name(SharedStage::Kind k) {
  switch (k) {
    case SharedStage::Kind::reduce:
      return "reduce";
    case SharedStage::Kind::convert:
      return "convert";
    case SharedStage::Kind::contract:
      return "contract";
    case SharedStage::Kind::broadcast:
      return "broadcast";
    case SharedStage::Kind::tma:
      return "tma";
    case SharedStage::Kind::ring:
      return "ring";
  }
  return "";
}

const Layout* NestIr::own_layout(const Node* n) const {
  auto it = own.find(n);
  return it == own.end() ? nullptr : &layouts.at(static_cast<size_t>(it->second));
}

const SharedStage* NestIr::stage(const Node* n) const {
  auto it = shared.find(n);
  return it == shared.end() ? nullptr : &it->second;
}

const Access& NestIr::access(const Node* n) const {
  auto it = accesses.find(n);
  if (it == accesses.end())
    throw InternalError(
        fmt::format("%{} has no access in the kernel IR of loop %{}", n->id, loop->id));
  return it->second;
}

const Prefetch* NestIr::prefetched(const Node* l) const {
  auto it = prefetch.find(l);
  return it == prefetch.end() ? nullptr : &it->second;
}

bool reaches_one_element(const Node* n) {
  for (const ir::IndexInfo& info : n->access)
    if (info.sym || info.kind == ir::IndexKind::gather) return false;
  for (const ir::Sym* s : ir::stack_shape(n))
    if (s) return false;
  return true;
}

std::set<int> covered_slots(const Layout& L, const Node* n) {
  std::set<int> covered;
  size_t op = ir::first_index(n);
  for (const ir::IndexInfo& info : n->access) {
    if (info.kind == ir::IndexKind::newaxis) continue;
    const Node* operand = n->args[op++];
    if (info.sym) covered.insert(L.slot_of.at(info.sym));
    if (info.kind == ir::IndexKind::gather)
      for (const ir::Sym* s : operand->shape)
        if (s) covered.insert(L.slot_of.at(s));
  }
  for (const ir::Sym* s : ir::stack_shape(n))  // a multicast tensor's buffers
    if (s) covered.insert(L.slot_of.at(s));
  return covered;
}

std::vector<int> copy_slots(const Layout& L, const Node* n) {
  const std::set<int> covered = covered_slots(L, n);
  std::vector<int> out;
  for (size_t k = 0; k < L.slot_block.size(); ++k)
    if (!covered.count(static_cast<int>(k)) && L.slot_block[k] > 1)
      out.push_back(static_cast<int>(k));
  return out;
}

bool value_used(const NestIr& nir, const Node* n) { return nir.used.count(n) > 0; }

namespace {

// ---- liveness: nodes that reach a store, a yield or a loop bound ----

void mark(const Node* n, std::set<const Node*>& live) {
  if (!n || !live.insert(n).second) return;
  for (const Node* a : n->args) mark(a, live);
  if (n->op == Op::Loop) {
    for (const ir::LoopDim& d : n->dims) {
      mark(d.begin, live);
      mark(d.end, live);
    }
    for (const Node* i : n->inits) mark(i, live);
  }
  if (n->op == Op::Carried) {
    const Node* loop = n->args[0];
    for (size_t i = 0; i < loop->carried.size(); ++i)
      if (loop->carried[i] == n) {
        mark(loop->inits[i], live);
        mark(loop->body.back()->args[i], live);
      }
  }
  if (n->op == Op::LoopResult) mark(n->args[0]->carried.at(n->ival), live);
}

void roots(const ir::Block& b, std::set<const Node*>& live) {
  for (const Node* n : b) {
    if (ir::writes_memory(n)) mark(n, live);
    if (n->op == Op::Loop) {
      roots(n->body, live);
      bool any = false;
      for (const Node* m : n->body) any |= live.count(m) > 0;
      if (any) mark(n, live);
    }
  }
}

bool is_tensor(const Node* n) { return n->is_tensor() || n->op == Op::Multicast; }

int64_t round16(int64_t b) { return (b + 15) / 16 * 16; }

// The own layout access n runs in (a load of a tile value, a store of one that reaches
// more than one element), or -1: the nest's.
int own_layout_used(const NestIr& nir, const Node* n) {
  auto own = nir.own.find(n);
  if (own == nir.own.end()) return -1;
  if (n->op == Op::Load) return n->is_scalar() ? -1 : own->second;
  if (n->op == Op::Store)
    return reaches_one_element(n) || n->args[1]->is_scalar() ? -1 : own->second;
  return -1;
}

// Contraction::Mma::copy_stages: an mma.sync contraction whose factors are 16- or 8-bit loads
// (through casts and views) that its loop over K issues early with vector accesses of 4, 8
// or 16 bytes copies them by cp.async into a ring of tiles-ahead + 1 slots, where they fit
// beside nothing else (the plan after may still shrink nothing: a ring that does not fit the
// program's shared memory with the nest's other stages is an error, as a wgmma ring's).
void plan_copy_rings(const KernelPlan& plan, NestIr& nir) {
  for (Contraction& c : nir.layouts.front().contractions) {
    if (!c.mma || c.mma->wgmma || dtype_size(c.mma->operand) > 2 || !nir.live.count(c.match.sum))
      continue;
    const Prefetch* p = nir.prefetched(c.match.k->loop);
    if (!p) continue;
    bool fits = (p->tiles_ahead + 1) * round16(c.shared_bytes) <= plan.shared_limit();
    for (int i = 0; i < 2; ++i) {
      const Node* load = c.match.factor[i].load();
      fits &= std::find(p->loads.begin(), p->loads.end(), load) != p->loads.end();
      // Widening casts, views and permutes (`w(tn, tk).t()`) move no element of the tile.
      for (const Node* m : c.match.factor[i].nodes)
        fits &= m->op == Op::Load || m->op == Op::Cast || m->op == Op::View || m->op == Op::Permute;
      const int64_t bytes = c.factor_layout[i].vec * dtype_size(load->dtype);
      fits &= nir.access(load).form == Access::Form::vector &&
              (bytes == 4 || bytes == 8 || bytes == 16);
    }
    if (fits) c.mma->copy_stages = p->tiles_ahead + 1;
  }
}

// The stage op n adds (bytes 0: none).
SharedStage stage_of(const NestIr& nir, const std::set<const Node*>& staged, const Node* n) {
  using K = SharedStage::Kind;
  const Layout& L = nir.nest();
  if (staged.count(n)) return {};
  if (auto a = nir.accesses.find(n); a != nir.accesses.end() && a->second.form == Access::Form::tma)
    return {K::tma, 0, round16(a->second.tma.bytes)};
  for (const Contraction& c : L.contractions)
    if (c.match.sum == n) {
      if (c.mma && c.mma->wgmma) {
        SharedStage ring{K::ring, 0, c.shared_bytes};
        ring.stages = c.mma->stages;
        return ring;
      }
      if (c.mma && c.mma->copy_stages) {
        SharedStage ring{K::ring, 0, c.mma->copy_stages * round16(c.shared_bytes)};
        ring.stages = c.mma->copy_stages;
        ring.cp_async = true;
        return ring;
      }
      return {K::contract, 0, round16(c.shared_bytes)};
    }
  if (n->op == Op::Reduce) return {K::reduce, 0, reduce_steps(L, n).bytes};
  if (const int own = own_layout_used(nir, n); own >= 0) {
    if (nir.exchanged.count(n)) return {};  // warp shuffles
    if (n->op == Op::Load)
      return {K::convert,
              0,
              round16(conversion_bytes(nir.layouts.at(static_cast<size_t>(own)), n->dtype)),
              false,
              own,
              0};
    return {K::convert, 0, round16(conversion_bytes(L, n->args[1]->dtype)), false, 0, own};
  }
  if (n->op == Op::Atomic || n->op == Op::Signal || n->op == Op::Wait) {
    if (!value_used(nir, n)) return {};
    const bool one = reaches_one_element(n);
    if (!one && copy_slots(L, n).empty()) return {};
    return {K::broadcast, 0, round16((one ? 1 : L.elems) * (dtype_size(n->dtype) > 4 ? 8 : 4))};
  }
  return {};  // the other ops stage nothing
}

std::string shape_text(const Node* n) {
  return n->shape.empty() ? dtype_name(n->dtype) : dtype_name(n->dtype) + ir::shape_str(n->shape);
}

bool is_memory_op(const Node* n) {
  return n->op == Op::Load || n->op == Op::Store || n->op == Op::Atomic || n->op == Op::Signal ||
         n->op == Op::Wait;
}

// The layout memory op n runs in: a load's or store's own, a contraction factor's load's,
// else the nest's.
int access_layout(const NestIr& nir, const std::map<const Node*, int>& factor_loads,
                  const Node* n) {
  if (auto f = factor_loads.find(n); f != factor_loads.end()) return f->second;
  return std::max(own_layout_used(nir, n), 0);
}

// The stores of a tensor-core accumulator's placement that take wider vectors along their
// tensor's contiguous dim with lanes exchanged for registers (passes/lane_exchange.hpp):
// 16 bytes per thread where the exchanged layout's access is an aligned vector access.
std::map<const Node*, Layout> exchanged_stores(const ir::Graph& g, const KernelPlan& plan,
                                               const NestIr& nir, const Layout& L) {
  std::map<const Node*, Layout> out;
  if (!tensor_core_placement(L)) return out;
  ir::walk(plan.loop->body, [&](const Node* n) {
    if (n->op != Op::Store || !nir.live.count(n) || L.own_order.count(n) ||
        n->args[1]->is_scalar() || n->is_multicast_access() || reaches_one_element(n))
      return;
    const ir::Sym* s = unit_stride_sym(g, n);
    auto k = s ? L.slot_of.find(s) : L.slot_of.end();
    const int vec = static_cast<int>(16 / dtype_size(ir::addressed_tensor(n)->dtype));
    if (k == L.slot_of.end() || vec <= L.vec) return;
    std::optional<Layout> R = lanes_exchanged(L, k->second, vec);
    if (!R) return;
    const Access a = plan_access(g, plan, *R, 1, n);
    if (a.form == Access::Form::vector && a.aligned) out.emplace(n, *R);
  });
  return out;
}

}  // namespace

NestIr lower_nest(const ir::Graph& g, const KernelPlan& plan, const Layout& L) {
  NestIr nir;
  nir.loop = plan.loop;
  nir.persistent = plan.persistent;
  roots(plan.loop->body, nir.live);
  ir::walk(plan.loop->body, [&](const Node* m) {
    if (!nir.live.count(m)) return;
    nir.used.insert(m->args.begin(), m->args.end());
    nir.used.insert(m->inits.begin(), m->inits.end());
  });
  nir.layouts.push_back(L);
  nir.layout_names.push_back("the nest's");
  std::map<int, const Node*> own_by_id;
  for (const auto& [n, order] : L.own_order) own_by_id[n->id] = n;
  const std::map<const Node*, Layout> exchanged = exchanged_stores(g, plan, nir, L);
  for (const auto& [n, layout] : exchanged) own_by_id[n->id] = n;
  for (const auto& [id, n] : own_by_id) {
    nir.own[n] = static_cast<int>(nir.layouts.size());
    if (auto e = exchanged.find(n); e != exchanged.end()) {
      nir.exchanged.insert(n);
      nir.layouts.push_back(e->second);
      nir.layout_names.push_back(fmt::format("%{}'s own (lanes exchanged for registers)", id));
      continue;
    }
    nir.layouts.push_back(L.reordered(L.own_order.at(n)));
    nir.layout_names.push_back(fmt::format("%{}'s own", id));
  }
  std::map<const Node*, int> factor_layout;  // a factor's value -> its layout
  std::map<const Node*, int> factor_loads;   // a factor's load -> its layout
  for (const Contraction& c : L.contractions)
    for (int i = 0; i < 2; ++i) {
      factor_layout[c.match.factor[i].value()] = static_cast<int>(nir.layouts.size());
      factor_loads[c.match.factor[i].load()] = static_cast<int>(nir.layouts.size());
      nir.layouts.push_back(c.factor_layout[i]);
      nir.layout_names.push_back(fmt::format("factor {} of %{}", i, c.match.sum->id));
    }
  const std::set<const Node*> staged = staged_nodes(L);

  ir::walk(plan.loop->body, [&](const Node* n) {
    if (!nir.live.count(n) || !ir::has_result(n->op) || n->op == Op::Loop) return;
    TileType t;
    if (is_tensor(n))
      t.space = MemorySpace::global;
    else if (auto f = factor_layout.find(n); f != factor_layout.end())
      t = {f->second, MemorySpace::shared};
    else if (staged.count(n))
      t.space = MemorySpace::none;  // summed from the staged factors
    else if (n->is_scalar())
      t.space = MemorySpace::uniform;
    else
      t = {0, MemorySpace::registers};
    nir.types[n] = t;
  });

  ir::walk(plan.loop->body, [&](const Node* n) {
    if (!nir.live.count(n) || !is_memory_op(n)) return;
    const int k = access_layout(nir, factor_loads, n);
    nir.accesses[n] = plan_access(g, plan, nir.layouts.at(static_cast<size_t>(k)), k, n);
  });
  // The factors of a contraction on wgmma are copied by the TMA into its ring.
  for (const Contraction& c : L.contractions)
    for (int i = 0; c.mma && c.mma->wgmma && i < 2; ++i) {
      Access& a = nir.accesses.at(c.match.factor[i].load());
      a.form = Access::Form::tma;
      a.tma = c.mma->box[i];
      a.vdim = -1;
      a.whole = a.aligned = false;
    }
  nir.prefetch = plan_prefetch(g, plan, nir);
  plan_copy_rings(plan, nir);
  ir::walk(plan.loop->body, [&](const Node* n) {
    if (!nir.live.count(n) || n->op == Op::Loop) return;
    SharedStage s = stage_of(nir, staged, n);
    if (s.bytes == 0) return;
    if (s.bytes > plan.shared_limit())
      throw UserError(
          g.kernel_name, n->loc,
          s.kind == SharedStage::Kind::broadcast
              ? fmt::format("the old values of this atomic reach {} threads through {} bytes of "
                            "shared memory, more than a program has ({})",
                            L.threads, s.bytes, plan.shared_limit())
              : fmt::format("this needs {} bytes of shared memory, more than a program has ({})",
                            s.bytes, plan.shared_limit()),
          s.kind == SharedStage::Kind::broadcast
              ? "use smaller block sizes, or index the atomic with every tile of the loop"
              : "use smaller block sizes, fewer warps, or reduction_loops");
    nir.shared[n] = s;
  });
  plan_shared(nir);
  // A ring keeps its bytes for its loop over K: the stages that may run while it is not free
  // (ring_free_at) come after it. Past the limit, a ring of more than two buffers gives one
  // up (Config::num_stages: as many as fit, at least 2) and the plan is made again.
  while (nir.shared_bytes > plan.shared_limit()) {
    Contraction* shrunk = nullptr;
    for (Contraction& c : nir.layouts.front().contractions)
      if (c.mma && c.mma->wgmma && c.mma->stages > 2 && nir.shared.count(c.match.sum)) shrunk = &c;
    if (!shrunk) break;
    --shrunk->mma->stages;
    shrunk->shared_bytes =
        shrunk->mma->stages * shrunk->mma->stage_bytes + shrunk->mma->transpose_total();
    SharedStage& st = nir.shared.at(shrunk->match.sum);
    st.stages = shrunk->mma->stages;
    st.bytes = shrunk->shared_bytes;
    plan_shared(nir);
  }
  // Still past it: an mma.sync's cp.async ring goes back to registers and one staged tile
  // (its bytes alone fitted; beside a persistent program's epilogue they may not).
  while (nir.shared_bytes > plan.shared_limit()) {
    Contraction* ring = nullptr;
    for (Contraction& c : nir.layouts.front().contractions)
      if (c.mma && c.mma->copy_stages) ring = &c;
    if (!ring) break;
    ring->mma->copy_stages = 0;
    nir.shared.at(ring->match.sum) = stage_of(nir, staged, ring->match.sum);
    plan_shared(nir);
  }
  for (const auto& [n, st] : nir.shared)
    if (st.kind == SharedStage::Kind::ring && nir.shared_bytes > plan.shared_limit())
      throw UserError(
          g.kernel_name, n->loc,
          fmt::format("this ts::dot's ring of {} buffers ({} bytes) and the loop's other shared "
                      "memory need {} bytes, more than a program has ({})",
                      st.stages, st.bytes, nir.shared_bytes, plan.shared_limit()),
          "use a smaller num_stages (each buffer holds a tile of K of both operands) or smaller "
          "block sizes");
  nir.barrier_before = memory_order_barriers(g, nir);
  nir.rounded_by_store = values_rounded_by_stores(g, nir.live);
  if (std::string why = shared_plan_error(nir); !why.empty())
    throw InternalError("the shared memory plan of loop %" + std::to_string(plan.loop->id) + ": " +
                        why);
  return nir;
}

std::string describe(const NestIr& nir) {
  std::string out = fmt::format("// kernel IR of loop %{}: layouts:", nir.loop->id);
  for (size_t i = 0; i < nir.layouts.size(); ++i)
    out += fmt::format("{} L{} {}", i ? ";" : "", i, nir.layout_names[i]);
  out += "\n";
  auto line = [&](const Node* n) {
    std::string head = fmt::format("//   %{} {}", n->id, ir::op_name(n->op));
    std::vector<std::string> parts;
    if (auto t = nir.types.find(n); t != nir.types.end()) {
      head += " " + shape_text(n);
      parts.push_back(memory_space_name(t->second.space));
      if (t->second.layout >= 0) parts.back() += fmt::format(" L{}", t->second.layout);
    }
    if (nir.rounded_by_store.count(n)) parts.push_back("rounded by its store");
    if (auto a = nir.accesses.find(n); a != nir.accesses.end())
      parts.push_back(describe(a->second, nir.layouts.at(static_cast<size_t>(a->second.layout))));
    if (const SharedStage* s = nir.stage(n)) {
      std::string p = fmt::format("shared stage {}", stage_kind_name(s->kind));
      if (s->kind == SharedStage::Kind::convert) p += fmt::format(" L{} -> L{}", s->from, s->to);
      if (s->kind == SharedStage::Kind::ring)  // its buffers and what fills them
        p += fmt::format(" of {}, {}", s->stages, s->cp_async ? "cp.async" : "TMA");
      parts.push_back(p + fmt::format(" at {}, {} bytes, {}", s->offset, s->bytes,
                                      s->barrier ? "barrier before" : "no barrier before"));
    }
    if (const Prefetch* p = nir.prefetched(n)) {
      std::string loads;
      for (const Node* m : p->loads) loads += fmt::format("%{}, ", m->id);
      parts.push_back(fmt::format("prefetch {}{} tile{} ahead", loads, p->tiles_ahead,
                                  p->tiles_ahead == 1 ? "" : "s"));
    }
    if (nir.barrier_before.count(n)) parts.push_back("memory barrier");
    if (parts.empty()) return;
    out += head + ": " + fmt::format("{}", fmt::join(parts, "; ")) + "\n";
  };
  if (nir.prefetched(nir.loop)) line(nir.loop);
  ir::walk(nir.loop->body, line);
  out += fmt::format("//   shared memory: {} bytes\n", nir.shared_bytes);
  return out;
}

}  // namespace tessel::passes
