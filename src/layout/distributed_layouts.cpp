// Blocked, broadcast and slice register layouts, and fitting a layout to a tile's shape.
#include "layout/distributed_layouts.hpp"

#include <algorithm>
#include <numeric>

namespace tessel::layout {
namespace {

/// Throws unless `layout`'s output dims are the tensor dims dim0 .. dim{rank-1}.
void check_tensor_outs(const LinearLayout& layout, size_t rank) {
  bool ok = layout.out_dims().size() == rank;
  for (size_t i = 0; ok && i < rank; ++i) ok = layout.out_dims()[i].name == tensor_dim(i);
  if (!ok)
    layout_error("expected the " + std::to_string(rank) + " tensor dims as output dims:\n" +
                 layout.to_string());
}

}  // namespace

LinearLayout identity_nd(const std::string& in_dim, const std::vector<int32_t>& sizes,
                         const std::vector<int>& order) {
  check_permutation(order, sizes.size(), "order");
  std::vector<LinearLayout::OutDim> outs;
  for (size_t i = 0; i < sizes.size(); ++i) outs.push_back({tensor_dim(i), 1});
  LinearLayout result(std::vector<LinearLayout::InDim>{{in_dim, {}}}, outs);
  for (int d : order) result = result * LinearLayout::identity_1d(sizes[d], in_dim, tensor_dim(d));
  return result;
}

LinearLayout fit_to_shape(const LinearLayout& layout, const std::vector<int32_t>& shape,
                          const std::vector<int>& rep_order) {
  check_tensor_outs(layout, shape.size());
  check_permutation(rep_order, shape.size(), "rep_order");
  LinearLayout grown = layout;
  for (int d : rep_order) {
    log2_exact(shape[d], "shape[" + std::to_string(d) + "]");
    int32_t covered = grown.out_dim_size(tensor_dim(d));
    if (covered < shape[d])
      grown = grown * LinearLayout::identity_1d(shape[d] / covered, kRegister, tensor_dim(d));
  }
  std::vector<LinearLayout::InDim> ins;
  for (const auto& d : grown.in_dims()) {
    ins.push_back({d.name, {}});
    for (const auto& basis : d.bases) {
      LinearLayout::Basis kept(basis.size());
      for (size_t k = 0; k < basis.size(); ++k) kept[k] = basis[k] & (shape[k] - 1);
      bool became_zero =
          kept != basis && std::all_of(kept.begin(), kept.end(), [](int32_t c) { return c == 0; });
      if (!(became_zero && d.name == kRegister)) ins.back().bases.push_back(std::move(kept));
    }
  }
  std::vector<LinearLayout::OutDim> outs;
  for (size_t k = 0; k < shape.size(); ++k)
    outs.push_back({tensor_dim(k), std::min(shape[k], grown.out_dims()[k].size)});
  return LinearLayout(std::move(ins), std::move(outs));
}

LinearLayout blocked(const std::vector<int32_t>& shape, const std::vector<int32_t>& size_per_thread,
                     const std::vector<int32_t>& threads_per_warp,
                     const std::vector<int32_t>& warps_per_cta, const std::vector<int>& order) {
  size_t rank = shape.size();
  if (rank == 0 || size_per_thread.size() != rank || threads_per_warp.size() != rank ||
      warps_per_cta.size() != rank || order.size() != rank)
    layout_error(
        "blocked: shape, size_per_thread, threads_per_warp, warps_per_cta and order need " +
        std::to_string(rank) + " (> 0) entries each");
  int64_t lanes = 1;
  for (int32_t t : threads_per_warp) lanes *= t;
  if (lanes != 32)
    layout_error("blocked: threads_per_warp covers " + std::to_string(lanes) + " lanes, not 32");
  LinearLayout cta = identity_nd(kRegister, size_per_thread, order) *
                     identity_nd(kLane, threads_per_warp, order) *
                     identity_nd(kWarp, warps_per_cta, order);
  return fit_to_shape(cta, shape, order);
}

LinearLayout broadcast(const LinearLayout& parent, int dim) {
  int rank = static_cast<int>(parent.out_dims().size());
  if (dim < 0 || dim >= rank)
    layout_error("dim " + std::to_string(dim) + " is not one of the " + std::to_string(rank) +
                 " tensor dims of\n" + parent.to_string());
  std::vector<int32_t> shape;
  for (const auto& d : parent.out_dims()) shape.push_back(d.size);
  shape[dim] = 1;
  std::vector<int> order(rank);
  std::iota(order.begin(), order.end(), 0);
  return fit_to_shape(parent, shape, order);
}

LinearLayout slice(const LinearLayout& parent, int dim) {
  LinearLayout kept = broadcast(parent, dim);
  std::vector<LinearLayout::OutDim> outs;
  for (size_t k = 0; k + 1 < kept.out_dims().size(); ++k)
    outs.push_back({tensor_dim(k), kept.out_dims()[k < size_t(dim) ? k : k + 1].size});
  std::vector<LinearLayout::InDim> ins = kept.in_dims();
  for (auto& d : ins)
    for (auto& basis : d.bases) basis.erase(basis.begin() + dim);
  return LinearLayout(std::move(ins), std::move(outs));
}

}  // namespace tessel::layout
