#include "passes/tensor_descriptor.hpp"

#include <algorithm>

#include "passes/access_plan.hpp"
#include "passes/key_facts.hpp"

namespace tessel::passes {

std::optional<TmaBox> tensor_descriptor_box(const ir::Graph& g, const KernelPlan& plan,
                                            const ir::Node* n) {
  if (n->op != ir::Op::Load || n->load_id < 0 ||
      static_cast<size_t>(n->load_id) >= plan.tensor_descriptor_loads.size() ||
      !plan.tensor_descriptor_loads[static_cast<size_t>(n->load_id)])
    return std::nullopt;
  return tile_box(g, plan, n, kMaxTmaBoxBytes);
}

bool tma_may_move(const ir::Graph& g, const ir::Node* n) {
  if (n->op != ir::Op::Load || n->is_scalar() || n->is_multicast_access() ||
      g.index_dtype != DType::i32)
    return false;
  const ir::Node* t = ir::addressed_tensor(n);
  const int unit = ir::unit_stride_dim(g, t);
  if (unit < 0 || t->rank > 5 || !outer_strides_aligned(g, t, unit)) return false;
  return std::none_of(n->access.begin(), n->access.end(),
                      [](const ir::IndexInfo& info) { return info.kind == ir::IndexKind::gather; });
}

std::optional<TmaBox> tile_box(const ir::Graph& g, const KernelPlan& plan, const ir::Node* n,
                               int64_t max_bytes) {
  if (!tma_may_move(g, n)) return std::nullopt;
  const ir::Node* t = ir::addressed_tensor(n);
  const int unit = ir::unit_stride_dim(g, t);
  const int64_t elem = dtype_size(t->dtype);
  std::vector<int64_t> by_dim;  // per tensor dim
  for (const ir::IndexInfo& info : n->access) {
    if (info.kind == ir::IndexKind::newaxis) continue;
    if (info.kind == ir::IndexKind::scalar) {
      by_dim.push_back(1);
      continue;
    }
    if (flattened(plan, info.sym)) return std::nullopt;
    by_dim.push_back(plan.block(info.sym));
  }
  if (static_cast<int>(by_dim.size()) != t->rank) return std::nullopt;
  TmaBox b;
  b.dims.push_back(unit);
  for (int d = t->rank - 1; d >= 0; --d)
    if (d != unit) b.dims.push_back(d);
  b.bytes = elem;
  for (int d : b.dims) {
    const int64_t e = by_dim[static_cast<size_t>(d)];
    if (e > 256) return std::nullopt;
    b.box.push_back(e);
    b.bytes *= e;
  }
  if (b.box[0] * elem % 16 != 0 || b.bytes > max_bytes) return std::nullopt;
  return b;
}

}  // namespace tessel::passes
