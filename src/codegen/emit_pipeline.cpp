// Software pipelining of device loops (Config::num_stages = S >= 2), in registers: the
// vector loads of a one-dim device loop whose addresses are known before the iteration
// starts are issued S - 1 iterations early, into S - 1 buffers per load in their memory
// dtype (S up to 4; more stages act as 4). Iteration i converts buffer 0 into the loads'
// values, moves buffers 1.. down by one (register moves), issues iteration i + S - 1's
// loads into the last buffer, and computes; so the next tiles' loads are in flight during
// this tile's work (reductions, __syncthreads, stores). In a persistent kernel (pid_type
// persistent_*) the program loop over tiles is pipelined with one buffer: the next
// program id's tile loads are issued before this tile's work. A contraction's factor
// loads (emit_contract.cpp) are pipelined in their factors' layouts: the next tiles of
// both factors are in flight while this tile's products are summed.
// Source of the technique: Triton's num_stages (software pipelining of loads in loops).
#include <fmt/format.h>

#include <functional>

#include "codegen/emitter_state.hpp"

namespace tessel::codegen {

using ir::Node;
using ir::Op;

// Every node inside `b`, nested loops included, into `out`.
static void collect(const ir::Block& b, std::set<const Node*>& out) {
  for (const Node* n : b) {
    out.insert(n);
    if (n->op == Op::Loop) collect(n->body, out);
  }
}

int Emitter::tiles_ahead(const Node* loop) const {
  if (loop == top_) return 1;
  return std::min(plan_.num_stages, 4) - 1;
}

// Prefetch buffer k of load n: p<id> with one buffer, p<id>_<k> with several.
static std::string buffer(const Node* n, int k, int count) {
  return count == 1 ? fmt::format("p{}", n->id) : fmt::format("p{}_{}", n->id, k);
}

std::vector<const Node*> Emitter::prefetchable_loads(const Node* loop) {
  std::vector<const Node*> out;
  // Bounds-checking mode checks each access where it runs: no load is issued early.
  if (plan_.num_stages < 2 || g_.check_bounds) return out;
  // Device loops of one dim, and the top-level loop of a persistent kernel (its
  // programs loop over tiles), of any number of dims.
  if (loop == top_ ? !plan_.persistent : loop->dims.size() != 1) return out;
  if (plan_.knobs(loop).flatten) return out;
  std::set<const Node*> inside;
  collect(loop->body, inside);
  // Tensors stored anywhere in the program: a load issued early could pass a store to
  // memory it may share (ir::may_alias), or the barrier that orders them (passes/memory_order.cpp).
  std::set<const Node*> in_program;
  collect(top_->body, in_program);
  std::vector<const Node*> stored;
  for (const Node* n : in_program)
    if (ir::writes_memory(n)) stored.push_back(n->args[0]);
  auto may_be_stored = [&](const Node* t) {
    for (const Node* s : stored)
      if (ir::may_alias(g_, s, t)) return true;
    return false;
  };
  for (size_t d = 0; d < loop->dims.size(); ++d)  // the probe plans accesses of this loop's tile
    dims[{loop, static_cast<int>(d)}] = dim_vars(loop, static_cast<int>(d));
  for (const Node* n : loop->body) {  // the body's own level: not under a nested loop
    if (n->op != Op::Load || !live_.count(n) || !is_array(n) || may_be_stored(n->args[0])) continue;
    // A contraction's factor nodes are emitted by its sum; its loads are issued early in
    // the factor's layout.
    if (staged_.count(n) && !factor_load_layout(n)) continue;
    bool early = true;
    for (size_t i = 1; i < n->args.size(); ++i)
      early &= n->args[i] == loop || !inside.count(n->args[i]);
    if (!early) continue;
    // The access must be a vector load (probed into a scratch stream).
    bool vector = false;
    std::ostringstream scratch;
    body_.swap(scratch);
    each_in_load_layout({n}, [&](const Node* m) { vector = emit_vector_load_into_probe(m); });
    body_.swap(scratch);
    if (vector) out.push_back(n);
  }
  return out;
}

const passes::Layout* Emitter::factor_load_layout(const Node* n) const {
  for (const passes::Contraction& c : nest_.contractions)
    for (int i = 0; i < 2; ++i)
      if (c.match.factor[i].load() == n) return &c.factor_layout[i];
  return nullptr;
}

void Emitter::declare_prefetch_buffers(const std::vector<const Node*>& loads, int count,
                                       const std::string& comment) {
  each_in_load_layout(loads, [&](const Node* n) {
    for (int k = 0; k < count; ++k)
      line(fmt::format("__align__(16) {} {}[TS_N];  // {}", dtype_cuda_storage(n->args[0]->dtype),
                       buffer(n, k, count), comment),
           n);
  });
}

void Emitter::load_into_buffers(const std::vector<const Node*>& loads, int k, int count) {
  each_in_load_layout(loads, [&](const Node* n) { emit_vector_load_into(n, buffer(n, k, count)); });
}

void Emitter::take_prefetched(const std::vector<const Node*>& loads, int count) {
  each_in_load_layout(loads, [&](const Node* n) {
    std::string nm = ids_.value(n);
    names_[n] = nm;
    line(fmt::format("{} {}[TS_N];", reg_type(n->dtype), nm), n);
    line(fmt::format("ts::to_regs<{}, TS_N>({}, {});", dtype_cuda_storage(n->args[0]->dtype),
                     buffer(n, 0, count), nm));
    for (int k = 0; k + 1 < count; ++k)  // the later tiles move down one buffer
      line(fmt::format("TS_FOR(r) {}[r] = {}[r];", buffer(n, k, count), buffer(n, k + 1, count)));
    prefetched_.insert(n);  // the load itself emits nothing where it stands
  });
}

void Emitter::emit_prefetch_first(const Node* loop, const std::vector<const Node*>& loads) {
  DimVars dv = dim_vars(loop, 0);
  std::string le = fmt::format("le{}_{}", loop->id, 0);
  const int ahead = tiles_ahead(loop);
  declare_prefetch_buffers(
      loads, ahead,
      ahead == 1 ? "loaded one iteration early" : fmt::format("loaded {} iterations early", ahead));
  for (int k = 0; k < ahead; ++k) {  // tiles 0 .. ahead - 1
    std::string begin = k == 0 ? dv.lb : fmt::format("{} + {}", dv.lb, k * dv.block);
    open(fmt::format("if ({} < {})", begin, le));
    line(fmt::format("const {} {} = ({})({});", idx_t_, dv.tb, idx_t_, begin));
    line(fmt::format("const {} {} = ({})min({} + {}, {});", idx_t_, dv.te, idx_t_, dv.lb,
                     (k + 1) * dv.block, le));
    dims[{loop, 0}] = dv;
    load_into_buffers(loads, k, ahead);
    close();
  }
}

void Emitter::emit_prefetch_next(const Node* loop, const std::vector<const Node*>& loads) {
  DimVars dv = dim_vars(loop, 0);
  std::string le = fmt::format("le{}_{}", loop->id, 0);
  const int ahead = tiles_ahead(loop);
  take_prefetched(loads, ahead);
  // Tile i + ahead, in an inner scope that shadows this tile's begin and end.
  open(fmt::format("if ({}_ + {} < {})", dv.tb, ahead * dv.block, le));
  line(
      fmt::format("const {} {} = ({})({}_ + {});", idx_t_, dv.tb, idx_t_, dv.tb, ahead * dv.block));
  line(fmt::format("const {} {} = ({})min({}_ + {}, {});", idx_t_, dv.te, idx_t_, dv.tb,
                   (ahead + 1) * dv.block, le));
  load_into_buffers(loads, ahead - 1, ahead);
  close();
}

// The persistent program loop (pid_type persistent_*): `first` / `next` are the first
// and the following virtual program ids of this program, `end` the bound they must stay
// under; the tile of a program id comes from emit_program_tiles, in a scope of its own
// that shadows the running tile's variables.
void Emitter::emit_program_prefetch_first(const std::vector<const Node*>& loads,
                                          const passes::LoopKnobs& knobs,
                                          const std::vector<std::string>& counts,
                                          const std::string& first, const std::string& end) {
  declare_prefetch_buffers(loads, 1, "the next program's tile, loaded early");
  open(fmt::format("if ({} < {})", first, end));
  line(fmt::format("const long long pid = {};", first));
  emit_program_tiles(knobs, counts, false);
  load_into_buffers(loads, 0, 1);
  close();
}

void Emitter::emit_program_prefetch_next(const std::vector<const Node*>& loads,
                                         const passes::LoopKnobs& knobs,
                                         const std::vector<std::string>& counts,
                                         const std::string& next, const std::string& end) {
  take_prefetched(loads, 1);
  line(fmt::format("const long long pid_next = {};", next));
  open(fmt::format("if (pid_next < {})", end));
  line("const long long pid = pid_next;");
  emit_program_tiles(knobs, counts, false);
  load_into_buffers(loads, 0, 1);
  close();
  // Back in the running program's scope: its tile variables again.
  for (size_t d = 0; d < top_->dims.size(); ++d)
    dims[{top_, static_cast<int>(d)}] = dim_vars(top_, static_cast<int>(d));
}

}  // namespace tessel::codegen
