#include "codegen/cuda_kernel.hpp"

#include <fmt/format.h>
#include <xxhash.h>

#include <cctype>

#include "codegen/cuda_emitter.hpp"

namespace tessel::codegen {

std::string kernel_identifier(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "k_" + out;
  constexpr size_t kMax = 96, kKept = 80;
  if (out.size() > kMax)
    out = fmt::format("{}_{:016x}", out.substr(0, kKept), XXH3_64bits(s.data(), s.size()))
              .substr(0, kKept + 9);
  return out;
}

CudaKernel generate_cuda(const ir::Graph& g, const passes::KernelPlan& plan,
                         const passes::Layout& layout) {
  return generate_cuda(g, plan, passes::lower_nest(g, plan, layout));
}

CudaKernel generate_cuda(const ir::Graph& g, const passes::KernelPlan& plan,
                         const passes::NestIr& nir) {
  const ir::Node* loop = plan.loop;
  CudaKernel k;
  int index = 0;
  for (const ir::Node* n : g.host) {
    if (n == loop) break;
    if (n->op == ir::Op::Loop) ++index;
  }
  k.name = fmt::format("{}_loop{}", kernel_identifier(g.kernel_name), index);
  k.arch = plan.arch;
  PidType pid = plan.pid_type;
  k.grid.persistent = plan.persistent;
  const passes::LoopKnobs& knobs = plan.knobs(loop);
  k.grid.flattened = knobs.flatten;
  k.grid.order = knobs.order;
  k.grid.xyz = pid == PidType::xyz && !knobs.flatten;
  if (k.grid.xyz && loop->dims.size() > 3)
    throw UserError(g.kernel_name, loop->loc, "pid_type xyz supports loops of up to 3 dimensions",
                    "use pid_type flat");
  for (const ir::LoopDim& d : loop->dims) {
    k.grid.begins.push_back(d.begin);
    k.grid.ends.push_back(d.end);
    k.grid.blocks.push_back(plan.block(d));
  }
  emit_kernel(g, plan, nir, k);
  return k;
}

}  // namespace tessel::codegen
