#include "runtime/bounds_report.hpp"

#include <fmt/format.h>

#include "frontend/trace.hpp"

namespace tessel::rt {

UserError bounds_error(const ir::Graph& g, const ir::Node* access, int dim, int64_t index, int64_t extent) {
  return UserError(g.kernel_name, access->loc,
                   fmt::format("{} index {} is out of range for dimension {} of {} (size {})",
                               access->op == ir::Op::Store ? "a store's" : "a load's", index, dim,
                               frontend::describe_tensor(access->args.at(0)), extent),
                   "index within [0, size) (Settings::check_bounds reports this; without it an "
                   "out-of-range load reads 0 and an out-of-range store is skipped)");
}

void raise_bounds_record(const ir::Graph& g, const BoundsRecord& record) {
  if (record[0] == 0) return;
  int64_t id = record[0] - 1;
  const auto& nodes = g.nodes();
  if (id < 0 || id >= static_cast<int64_t>(nodes.size()) ||
      (nodes[id]->op != ir::Op::Load && nodes[id]->op != ir::Op::Store))
    throw InternalError(fmt::format("bounds record names node {}, not a load or store of kernel '{}'", id,
                                    g.kernel_name));
  throw bounds_error(g, nodes[id].get(), static_cast<int>(record[1]), record[2], record[3]);
}

}  // namespace tessel::rt
