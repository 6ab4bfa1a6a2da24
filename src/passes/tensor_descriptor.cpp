#include "passes/tensor_descriptor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

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

bool tma_may_move(const ir::Graph& g, const ir::Node* n, std::string* why) {
  auto refuse = [&](const char* reason) {
    if (why) *why = reason;
    return false;
  };
  if (n->op != ir::Op::Load || n->is_scalar()) return refuse("it is not a load of a tile");
  if (n->is_multicast_access()) return refuse("it reads a multicast tensor");
  if (g.index_dtype != DType::i32)
    return refuse("the kernel indexes with 64-bit integers (the TMA takes 32-bit coordinates)");
  const ir::Node* t = ir::addressed_tensor(n);
  const int unit = ir::unit_stride_dim(g, t);
  if (unit < 0) return refuse("its tensor has no dim of stride 1");
  if (t->rank > 5) return refuse("its tensor has more than 5 dims");
  if (!outer_strides_aligned(g, t, unit))
    return refuse("its tensor's data pointer or a stride is not a multiple of 16 bytes");
  if (std::any_of(n->access.begin(), n->access.end(),
                  [](const ir::IndexInfo& info) { return info.kind == ir::IndexKind::gather; }))
    return refuse("it gathers (an index tensor picks its elements)");
  return true;
}

std::optional<TmaBox> tile_box(const ir::Graph& g, const KernelPlan& plan, const ir::Node* n,
                               int64_t max_bytes, std::string* why) {
  auto refuse = [&](std::string reason) -> std::optional<TmaBox> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  if (!tma_may_move(g, n, why)) return std::nullopt;
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
    if (flattened(plan, info.sym)) return refuse("the Config flattens a loop of its tile");
    by_dim.push_back(plan.block(info.sym));
  }
  if (static_cast<int>(by_dim.size()) != t->rank)
    return refuse("its indices do not address each dim of its tensor once");
  TmaBox b;
  b.dims.push_back(unit);
  for (int d = t->rank - 1; d >= 0; --d)
    if (d != unit) b.dims.push_back(d);
  b.bytes = elem;
  for (int d : b.dims) {
    const int64_t e = by_dim[static_cast<size_t>(d)];
    if (e > 256)
      return refuse(
          fmt::format("its tile spans {} elements of dim {}, more than a box's 256", e, d));
    b.box.push_back(e);
    b.bytes *= e;
  }
  if (b.box[0] * elem % 16 != 0)
    return refuse(
        fmt::format("its tile's rows along the unit-stride dim are {} bytes, not a "
                    "multiple of 16",
                    b.box[0] * elem));
  if (b.bytes > max_bytes)
    return refuse(fmt::format("its tile is {} bytes, more than {}", b.bytes, max_bytes));
  return b;
}

}  // namespace tessel::passes
