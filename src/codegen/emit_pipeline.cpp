// Software pipelining of device loops (Config::num_stages >= 2), in registers: the vector
// loads of a one-dim device loop whose addresses are known before the iteration starts
// are issued one iteration early, into a buffer in their memory dtype. Iteration i
// converts the buffer into the loads' values, issues iteration i + 1's loads into it, and
// computes; so the next tile's loads are in flight during this tile's work (reductions,
// __syncthreads, stores). Two stages take one buffer per load; num_stages > 2 is treated
// as 2 (more stages would need rotating register buffers). In a persistent kernel
// (pid_type persistent_*) the program loop over tiles is pipelined the same way: the
// next program id's tile loads are issued before this tile's work.
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

static bool persistent_pid(const Config& c) {
  PidType p = c.pid_type.value_or(PidType::flat);
  return p == PidType::persistent_blocked || p == PidType::persistent_interleaved;
}

std::vector<const Node*> Emitter::prefetchable_loads(const Node* loop) {
  std::vector<const Node*> out;
  if (config_.num_stages.value_or(1) < 2) return out;
  // Device loops of one dim, and the top-level loop of a persistent kernel (its
  // programs loop over tiles), of any number of dims.
  if (loop == top_ ? !persistent_pid(config_) : loop->dims.size() != 1) return out;
  if (passes::loop_knobs(g_, loop, config_).flatten) return out;
  std::set<const Node*> inside;
  collect(loop->body, inside);
  std::set<const Node*> stored;
  for (const Node* n : inside)
    if (n->op == Op::Store) stored.insert(n->args[0]);
  for (size_t d = 0; d < loop->dims.size(); ++d)  // the probe plans accesses of this loop's tile
    dims[{loop, static_cast<int>(d)}] = dim_vars(loop, static_cast<int>(d));
  for (const Node* n : loop->body) {  // the body's own level: not under a nested loop
    if (n->op != Op::Load || !live_.count(n) || !is_array(n) || stored.count(n->args[0])) continue;
    bool early = true;
    for (size_t i = 1; i < n->args.size(); ++i) early &= n->args[i] == loop || !inside.count(n->args[i]);
    // The access must be a vector load (probed into a scratch stream).
    if (early && emit_vector_load_into_probe(n)) out.push_back(n);
  }
  return out;
}

void Emitter::declare_prefetch_buffers(const std::vector<const Node*>& loads, const char* comment) {
  for (const Node* n : loads)
    line(fmt::format("__align__(16) {} p{}[TS_N];  // {}", dtype_cuda_storage(n->args[0]->dtype), n->id, comment), n);
}

void Emitter::load_into_buffers(const std::vector<const Node*>& loads) {
  for (const Node* n : loads) emit_vector_load_into(n, fmt::format("p{}", n->id));
}

void Emitter::take_prefetched(const std::vector<const Node*>& loads) {
  for (const Node* n : loads) {
    std::string nm = fmt::format("v{}", n->id);
    names_[n] = nm;
    line(fmt::format("{} {}[TS_N];", reg_type(n->dtype), nm), n);
    line(fmt::format("ts::to_regs<{}, TS_N>(p{}, {});", dtype_cuda_storage(n->args[0]->dtype), n->id, nm));
    prefetched_.insert(n);  // the load itself emits nothing where it stands
  }
}

void Emitter::emit_prefetch_first(const Node* loop, const std::vector<const Node*>& loads) {
  DimVars dv = dim_vars(loop, 0);
  std::string le = fmt::format("le{}_{}", loop->id, 0);
  declare_prefetch_buffers(loads, "loaded one iteration early");
  open(fmt::format("if ({} < {})", dv.lb, le));
  line(fmt::format("const {} {} = ({}){};", idx_t_, dv.tb, idx_t_, dv.lb));
  line(fmt::format("const {} {} = ({})min({} + {}, {});", idx_t_, dv.te, idx_t_, dv.lb, dv.block, le));
  dims[{loop, 0}] = dv;
  load_into_buffers(loads);
  close();
}

void Emitter::emit_prefetch_next(const Node* loop, const std::vector<const Node*>& loads) {
  DimVars dv = dim_vars(loop, 0);
  std::string le = fmt::format("le{}_{}", loop->id, 0);
  take_prefetched(loads);
  // The next tile, in an inner scope that shadows this tile's begin and end.
  open(fmt::format("if ({}_ + {} < {})", dv.tb, dv.block, le));
  line(fmt::format("const {} {} = ({})({}_ + {});", idx_t_, dv.tb, idx_t_, dv.tb, dv.block));
  line(fmt::format("const {} {} = ({})min({}_ + {}, {});", idx_t_, dv.te, idx_t_, dv.tb, 2 * dv.block, le));
  load_into_buffers(loads);
  close();
}

// The persistent program loop (pid_type persistent_*): `first` / `next` are the first
// and the following virtual program ids of this program, `end` the bound they must stay
// under; the tile of a program id comes from emit_program_tiles, in a scope of its own
// that shadows the running tile's variables.
void Emitter::emit_program_prefetch_first(const std::vector<const Node*>& loads, const passes::LoopKnobs& knobs,
                                          const std::vector<std::string>& counts, const std::string& first,
                                          const std::string& end) {
  declare_prefetch_buffers(loads, "the next program's tile, loaded early");
  open(fmt::format("if ({} < {})", first, end));
  line(fmt::format("const long long pid = {};", first));
  emit_program_tiles(knobs, counts, false);
  load_into_buffers(loads);
  close();
}

void Emitter::emit_program_prefetch_next(const std::vector<const Node*>& loads, const passes::LoopKnobs& knobs,
                                         const std::vector<std::string>& counts, const std::string& next,
                                         const std::string& end) {
  take_prefetched(loads);
  line(fmt::format("const long long pid_next = {};", next));
  open(fmt::format("if (pid_next < {})", end));
  line("const long long pid = pid_next;");
  emit_program_tiles(knobs, counts, false);
  load_into_buffers(loads);
  close();
  // Back in the running program's scope: its tile variables again.
  for (size_t d = 0; d < top_->dims.size(); ++d) dims[{top_, static_cast<int>(d)}] = dim_vars(top_, static_cast<int>(d));
}

}  // namespace tessel::codegen
