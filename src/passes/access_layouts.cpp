#include "passes/access_layouts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "passes/default_config.hpp"
#include "passes/kernel_plan.hpp"
#include "passes/loop_knobs.hpp"
#include "passes/tensor_descriptor.hpp"

namespace tessel::passes {

namespace {

bool any_flattened(const ir::Graph& g, const ir::Node* loop, const Config& config) {
  bool flat = loop_knobs(g, loop, config).flatten;
  ir::walk(loop->body, [&](const ir::Node* n) {
    if (n->op == ir::Op::Loop) flat |= loop_knobs(g, n, config).flatten;
  });
  return flat;
}

// The slot order of access n's own layout, or empty when n keeps the nest's layout.
// `refused`: why an access that would take one keeps the nest's layout.
std::vector<int> own_order(const ir::Graph& g, const ir::Node* n, const Config& config,
                           const KernelPlan& plan, const Layout& L, std::string& refused) {
  if (n->op != ir::Op::Load && n->op != ir::Op::Store) return {};
  const ir::Node* value = n->op == ir::Op::Load ? n : n->args[1];
  if (value->is_scalar() || n->is_multicast_access() || L.vec <= 1) return {};
  const ir::Sym* last = unit_stride_sym(g, n);  // vectors run along its tensor dim
  if (!last) return {};
  // The nest's innermost slot that holds more than one element (slots of block 1 hold no
  // bits: a tile of block size 1 orders nothing).
  int inner = static_cast<int>(L.slot_block.size()) - 1;
  while (inner > 0 && L.slot_block[static_cast<size_t>(inner)] <= 1) --inner;
  std::set<int> covered;
  for (const ir::IndexInfo& info : n->access) {
    if (info.kind == ir::IndexKind::newaxis) continue;
    if (info.kind == ir::IndexKind::gather) return {};
    // A slot counts as covered where the index's Sym fills it (a tile of block 1 sharing a
    // slot of 4 leaves 3 copies of each element along it).
    if (info.sym &&
        sym_block(info.sym, config) == L.slot_block[static_cast<size_t>(L.slot_of.at(info.sym))])
      covered.insert(L.slot_of.at(info.sym));
  }
  if (!last || !covered.count(inner)) return {};
  int k = L.slot_of.at(last);
  if (k == inner || sym_block(last, config) != L.slot_block[static_cast<size_t>(k)] ||
      L.slot_block[static_cast<size_t>(k)] % L.vec != 0)
    return {};
  if (const int64_t bytes = conversion_bytes(L, value->dtype); bytes > L.shared_limit) {
    refused = fmt::format(
        "converting its value to vectors along its contiguous dim needs {} bytes of shared "
        "memory, more than a program on sm_{} has ({}): one element per thread at a stride",
        bytes, plan.arch, L.shared_limit);
    return {};
  }
  std::vector<int> order;
  for (int i = 0; i < static_cast<int>(L.slot_block.size()); ++i)
    if (i != k) order.push_back(i);
  order.push_back(k);
  return order;
}

}  // namespace

int64_t conversion_bytes(const Layout& L, DType t) {
  // Registers hold 16- and 8-bit floats as float (codegen::reg_type).
  int64_t elem = is_narrow_float(t) ? 4 : dtype_size(t);
  int64_t inner = L.slot_block.empty() ? 1 : L.slot_block.back();
  return (L.elems + L.elems / inner) * elem;
}

void assign_access_layouts(const ir::Graph& g, const ir::Node* loop, const Config& config,
                           Layout& L) {
  assign_access_layouts(g, loop, config, plan_kernel(g, loop, config), L);
}

void assign_access_layouts(const ir::Graph& g, const ir::Node* loop, const Config& config,
                           const KernelPlan& plan, Layout& L) {
  // A contraction's factor loads with vectors along the dim its tensor is contiguous in
  // (a transposed view's dim 0).
  for (Contraction& c : L.contractions) {
    Contraction oriented =
        plan_contraction(c.match, config, L.threads, unit_stride_sym(g, c.match.factor[0].load()),
                         unit_stride_sym(g, c.match.factor[1].load()));
    // Where the f32 staging of either does not fit (8- and 16-bit factors kept for tensor
    // cores, whose staging is in their own dtype), the orientation still decides whether
    // tensor cores can read them K-major.
    if (oriented.shared_bytes <= L.shared_limit || c.shared_bytes > L.shared_limit) c = oriented;
  }
  L.own_order.clear();
  L.own_order_refused.clear();
  if (L.slot_block.size() < 2 || any_flattened(g, loop, config)) return;
  std::set<const ir::Node*> staged = staged_nodes(L);  // loaded in the factors' layouts
  ir::walk(loop->body, [&](const ir::Node* n) {
    // A load by tensor descriptor lands in shared memory, whence any layout reads it.
    if (staged.count(n) || tensor_descriptor_box(g, plan, n)) return;
    std::string refused;
    std::vector<int> order = own_order(g, n, config, plan, L, refused);
    if (!order.empty()) L.own_order[n] = std::move(order);
    if (!refused.empty()) L.own_order_refused[n] = std::move(refused);
  });
}

}  // namespace tessel::passes
