#include "runtime/host_indices.hpp"

#include "driver/bounds_report.hpp"

namespace tessel::rt {

std::vector<HostIndex> collect_host_indices(const ir::Graph& g) {
  std::vector<HostIndex> out;
  for (const ir::Node* top : g.host) {
    if (top->op != ir::Op::Loop) continue;
    ir::walk(top->body, [&](const ir::Node* n) {
      if (!ir::is_access(n) || n->is_multicast_access()) return;
      const ir::Node* t = n->args.at(0);
      if (t->op != ir::Op::Arg && t->op != ir::Op::Alloc) return;
      size_t k = ir::first_index(n);
      int dim = 0;
      for (const ir::IndexInfo& info : n->access) {
        if (info.kind == ir::IndexKind::newaxis) continue;
        const ir::Node* index = n->args.at(k++);
        if (info.kind == ir::IndexKind::scalar && ir::host_computable(index))
          out.push_back({n, index, t, dim});
        ++dim;
      }
    });
  }
  return out;
}

void check_host_indices(const ir::Graph& g, std::span<const HostIndex> indices,
                        std::span<const ir::ArgValue> args) {
  for (const HostIndex& h : indices) {
    const int64_t at = ir::eval_host_int(h.index, args);
    const int64_t size =
        h.tensor->op == ir::Op::Arg
            ? args[static_cast<size_t>(h.tensor->ival)].shape->at(static_cast<size_t>(h.dim))
            : ir::eval_host_int(h.tensor->args.at(static_cast<size_t>(h.dim)), args);
    // A negative allocation size is the allocation's error, raised where it is made.
    if ((at >= 0 && at < size) || size < 0) continue;
    throw bounds_error(g, h.access, h.dim, at, size, /*on_every_call=*/true);
  }
}

}  // namespace tessel::rt
