#include "passes/kernel_plan.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "passes/default_config.hpp"

namespace tessel::passes {

int64_t KernelPlan::block(const ir::Sym* s) const {
  if (!s) return 1;
  if (s->id < 0 || static_cast<size_t>(s->id) >= blocks_by_sym.size() ||
      blocks_by_sym[static_cast<size_t>(s->id)] < 1)
    throw InternalError(fmt::format("kernel plan: no block size for {}", s->name));
  return blocks_by_sym[static_cast<size_t>(s->id)];
}

int64_t KernelPlan::tile_elems(const ir::Node* l) const {
  int64_t elems = 1;
  for (const ir::LoopDim& d : l->dims) elems *= block(d);
  return elems;
}

const LoopKnobs& KernelPlan::knobs(const ir::Node* l) const {
  for (const auto& [at, k] : knobs_by_loop)
    if (at == l) return k;
  throw InternalError(fmt::format("kernel plan: the loop at {} is not in the nest", l->loc.str()));
}

bool has_mma_sync(int arch, DType operand) { return arch >= (is_f8(operand) ? 89 : 80); }

int64_t shared_bytes_limit(int arch) {
  switch (arch) {
    case 75:
      return 64 * 1024;
    case 80:
    case 87:
      return 163 * 1024;
    case 86:
    case 89:
    case 120:
    case 121:
      return 99 * 1024;
    default:
      return arch < 75 ? 96 * 1024 : 227 * 1024;  // sm_70 and sm_72; sm_90 and later
  }
}

KernelPlan plan_kernel(const ir::Graph& g, const ir::Node* loop, const Config& c, int arch) {
  KernelPlan p;
  p.loop = loop;
  p.arch = arch;
  p.config_json = c.to_json();
  p.pid_type = c.pid_type.value_or(PidType::flat);
  p.persistent =
      p.pid_type == PidType::persistent_blocked || p.pid_type == PidType::persistent_interleaved;
  p.num_stages = c.num_stages.value_or(1);
  p.maxnreg = c.maxnreg;
  p.split_k = c.split_k.value_or(1);
  p.warp_specialize = c.warp_specialize.value_or(false);
  if (c.load_eviction_policies) p.load_eviction = *c.load_eviction_policies;
  if (c.indexing && !has_tma(arch))
    p.tensor_descriptors_without_tma =
        std::find(c.indexing->begin(), c.indexing->end(), "tensor_descriptor") != c.indexing->end();
  if (c.indexing && has_tma(arch)) {
    // One entry for all memory ops, or one per op: the loads first (Config::indexing).
    const std::vector<std::string>& ix = *c.indexing;
    for (int i = 0; i < g.num_loads; ++i)
      p.tensor_descriptor_loads.push_back(ix.at(ix.size() == 1 ? 0 : static_cast<size_t>(i)) ==
                                          "tensor_descriptor");
  }
  for (const auto& s : g.syms()) {
    if (s->id < 0) continue;
    if (static_cast<size_t>(s->id) >= p.blocks_by_sym.size())
      p.blocks_by_sym.resize(static_cast<size_t>(s->id) + 1, 0);
    p.blocks_by_sym[static_cast<size_t>(s->id)] = sym_block(s.get(), c);
  }
  p.knobs_by_loop.emplace_back(loop, loop_knobs(g, loop, c));
  ir::walk(loop->body, [&](const ir::Node* n) {
    if (n->op == ir::Op::Loop) p.knobs_by_loop.emplace_back(n, loop_knobs(g, n, c));
  });
  return p;
}

std::string describe(const KernelPlan& p) {
  std::string out = fmt::format(
      "//   plan: sm_{}, pid_type {}, num_stages {}{}{}{}{}\n", p.arch, pid_type_name(p.pid_type),
      p.num_stages, p.maxnreg ? fmt::format(", maxnreg {}", *p.maxnreg) : "",
      p.split_k > 1 ? fmt::format(", split_k {}", p.split_k) : "",
      p.warp_specialize ? ", warp_specialize" : "",
      p.tensor_descriptors_without_tma
          ? fmt::format(", indexing tensor_descriptor read through pointers (sm_{} has no TMA)",
                        p.arch)
          : "");
  for (const auto& [l, k] : p.knobs_by_loop) {
    std::vector<int64_t> blocks;
    for (const ir::LoopDim& d : l->dims) blocks.push_back(p.block(d));
    out += fmt::format("//   loop at {}: blocks [{}], order [{}]{}{}\n", l->loc.str(),
                       fmt::join(blocks, ", "), fmt::join(k.order, ", "),
                       k.flatten ? ", flattened" : "",
                       k.l2_grouping > 1 ? fmt::format(", l2 grouping {}", k.l2_grouping) : "");
  }
  return out;
}

}  // namespace tessel::passes
