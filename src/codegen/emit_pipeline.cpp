// Software pipelining of device loops (Config::num_stages = S >= 2), in registers: the
// loads the kernel IR issues early (passes/prefetch_plan.hpp: vector loads of a one-dim
// device loop whose addresses are known before the iteration starts) go S - 1 iterations
// ahead, into S - 1 buffers per load in their memory dtype (S up to 4; more act as 4). Iteration i
// converts buffer 0 into the loads' values, moves buffers 1.. down by one (register moves), issues
// iteration i + S - 1's loads into the last buffer, and computes; so the next tiles' loads are in
// flight during this tile's work (reductions, __syncthreads, stores). In a persistent kernel
// (pid_type persistent_*) the program loop over tiles is pipelined with one buffer: where a
// load stands in the tile's work, its value is taken from the buffer and the next program
// id's tile of it is issued into the buffer, in flight until the next tile reaches it. A
// contraction's factor loads (emit_contract.cpp) are pipelined in their factors' layouts: the next
// tiles of both factors are in flight while this tile's products are summed. Source of the
// technique: Triton's num_stages (software pipelining of loads in loops).
//
// An mma.sync contraction's factor loads with a ring (Contraction::Mma::copy_stages = S =
// tiles ahead + 1) go to shared memory instead, by cp.async (sm_80 and later; CUTLASS's
// multistage mainloop): the tiles 0 .. S - 2 into slots 0 .. S - 2 before the loop (after a
// barrier: earlier readers of those bytes are done), one commit group per tile; iteration i
// waits for its own group (cp.async.wait_group S - 2), meets the other threads at a barrier
// (every thread's copies of tile i have landed, every thread is done reading tile i - 1),
// copies tile i + S - 1 into the slot tile i - 1 held, commits, and the contraction reads
// slot i % S in place (emit_mma.cpp): no registers hold the tiles and nothing is staged.
#include <fmt/format.h>

#include <functional>

#include "codegen/emitter_state.hpp"

namespace tessel::codegen {

using ir::Node;
using ir::Op;

// Prefetch buffer k of load n: p<id> with one buffer, p<id>_<k> with several.
static std::string buffer(const Node* n, int k, int count) {
  return count == 1 ? fmt::format("p{}", n->id) : fmt::format("p{}_{}", n->id, k);
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

const passes::Contraction* Emitter::copy_ring_of(const Node* n) const {
  for (const passes::Contraction& c : nest_.contractions)
    for (int i = 0; c.mma && c.mma->copy_stages && i < 2; ++i)
      if (c.match.factor[i].load() == n) return &c;
  return nullptr;
}

void Emitter::copy_into_ring(const std::vector<const Node*>& loads, const std::string& slot) {
  each_in_load_layout(loads, [&](const Node* n) {
    const passes::Contraction& c = *copy_ring_of(n);
    const int i = c.match.factor[0].load() == n ? 0 : 1;
    const passes::Layout& F = c.factor_layout[i];
    const int64_t slot_bytes = (c.shared_bytes + 15) / 16 * 16;
    const std::string elem = dtype_cuda_storage(n->args[0]->dtype);
    emit_vector_copy_into(
        n,
        fmt::format("reinterpret_cast<{}*>(ts_smem + {} + ({}) * {})", elem,
                    shared_use(c.match.sum).offset + c.shared_offset[i], slot, slot_bytes),
        F.slot_block.back(), c.mma->pitch[i]);
  });
}

void Emitter::emit_prefetch_first(const Node* loop, const passes::Prefetch& p) {
  std::vector<const Node*> loads, copies;  // into registers; by cp.async into rings
  for (const Node* n : p.loads) (copy_ring_of(n) ? copies : loads).push_back(n);
  DimVars dv = dim_vars(loop, 0);
  std::string le = fmt::format("le{}_{}", loop->id, 0);
  const int ahead = p.tiles_ahead;
  declare_prefetch_buffers(
      loads, ahead,
      ahead == 1 ? "loaded one iteration early" : fmt::format("loaded {} iterations early", ahead));
  if (!copies.empty())
    line(
        fmt::format("__syncthreads();  // the ring's slots: earlier readers are done; tiles 0 .. "
                    "{} by cp.async into slots 0 .. {}",
                    ahead - 1, ahead - 1));
  for (int k = 0; k < ahead; ++k) {  // tiles 0 .. ahead - 1
    std::string begin = k == 0 ? dv.lb : fmt::format("{} + {}", dv.lb, k * dv.block);
    open(fmt::format("if ({} < {})", begin, le));
    line(fmt::format("const {} {} = ({})({});", idx_t_, dv.tb, idx_t_, begin));
    line(fmt::format("const {} {} = ({})min({} + {}, {});", idx_t_, dv.te, idx_t_, dv.lb,
                     (k + 1) * dv.block, le));
    dims[{loop, 0}] = dv;
    load_into_buffers(loads, k, ahead);
    if (!copies.empty()) copy_into_ring(copies, std::to_string(k));
    close();
    if (!copies.empty()) line("ts::cp_async_commit();  // a group per tile, empty past K");
  }
}

void Emitter::emit_prefetch_next(const Node* loop, const passes::Prefetch& p) {
  std::vector<const Node*> loads, copies;  // into registers; by cp.async into rings
  for (const Node* n : p.loads) (copy_ring_of(n) ? copies : loads).push_back(n);
  DimVars dv = dim_vars(loop, 0);
  std::string le = fmt::format("le{}_{}", loop->id, 0);
  const int ahead = p.tiles_ahead;
  const std::string tile = fmt::format("(({}_ - {}) / {})", dv.tb, dv.lb, dv.block);
  if (!copies.empty()) {
    const std::string slot = fmt::format("slot{}", loop->id);
    line(fmt::format("const int {} = (int)({} % {});  // this tile's slot in the ring", slot, tile,
                     ahead + 1));
    line(fmt::format("ts::cp_async_wait<{}>();  // this thread's copies of this tile", ahead - 1));
    line("__syncthreads();  // every thread's copies of it, and the reads of the tile before");
    ring_slot_[loop] = slot;
    for (const Node* n : copies) prefetched_.insert(n);  // read in place from the ring
  }
  take_prefetched(loads, ahead);
  // Tile i + ahead, in an inner scope that shadows this tile's begin and end.
  open(fmt::format("if ({}_ + {} < {})", dv.tb, ahead * dv.block, le));
  line(
      fmt::format("const {} {} = ({})({}_ + {});", idx_t_, dv.tb, idx_t_, dv.tb, ahead * dv.block));
  line(fmt::format("const {} {} = ({})min({}_ + {}, {});", idx_t_, dv.te, idx_t_, dv.tb,
                   (ahead + 1) * dv.block, le));
  load_into_buffers(loads, ahead - 1, ahead);
  if (!copies.empty())
    copy_into_ring(copies, fmt::format("({} + {}) % {}", tile, ahead, ahead + 1));
  close();
  if (!copies.empty()) line("ts::cp_async_commit();");
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

void Emitter::take_program_prefetch(const Node* n) {
  take_prefetched({n}, 1);
  const std::string next = fmt::format("pid_next{}", n->id);
  line(fmt::format("const long long {} = {};  // the next program's tile of it", next,
                   program_next_));
  open(fmt::format("if ({} < {})", next, program_end_));
  line(fmt::format("const long long pid = {};", next));
  emit_program_tiles(plan_.knobs(top_), program_counts_, false);
  load_into_buffers({n}, 0, 1);
  close();
  // Back in the running program's scope: its tile variables again.
  for (size_t d = 0; d < top_->dims.size(); ++d)
    dims[{top_, static_cast<int>(d)}] = dim_vars(top_, static_cast<int>(d));
}

}  // namespace tessel::codegen
