// mma.sync and wgmma fragment layouts (PTX ISA fragment figures), tiled over warps and
// registers.
#include "layout/mma_layouts.hpp"

#include "layout/distributed_layouts.hpp"

namespace tessel::layout {
namespace {

using Bases = std::vector<LinearLayout::Basis>;

/// lane -> (groupID, 2 * threadID_in_group): the lanes of the accumulator and A fragments.
const Bases kLaneRowsCols = {{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}};

/// Throws unless `shape` and `warps` are two powers of two each and the tile holds at
/// least one rows x cols fragment.
void check_tile(const std::string& what, const std::vector<int32_t>& shape,
                const std::vector<int32_t>& warps, int32_t rows, int32_t cols) {
  if (shape.size() != 2 || warps.size() != 2)
    layout_error(what + ": the tile shape and warps_per_cta need 2 entries each");
  for (int d = 0; d < 2; ++d) {
    log2_exact(shape[d], what + " shape[" + std::to_string(d) + "]");
    log2_exact(warps[d], what + " warps_per_cta[" + std::to_string(d) + "]");
  }
  if (shape[0] < rows || shape[1] < cols)
    layout_error(what + ": a " + std::to_string(shape[0]) + " x " + std::to_string(shape[1]) +
                 " tile is smaller than one " + std::to_string(rows) + " x " +
                 std::to_string(cols) + " fragment");
}

/// A fragment of `rows` x `cols` from its register and lane bases.
LinearLayout fragment(Bases registers, Bases lanes, int32_t rows, int32_t cols) {
  return LinearLayout({{kRegister, std::move(registers)}, {kLane, std::move(lanes)}},
                      {{tensor_dim(0), rows}, {tensor_dim(1), cols}});
}

/// Warps along both dims (dim1 fastest); `zero_dim` (0, 1, or -1 for none) is held by
/// every warp of the other dim alike.
LinearLayout mma_sync_warps(const std::vector<int32_t>& warps, int zero_dim) {
  auto part = [&](int d) {
    return d == zero_dim ? LinearLayout::zeros_1d(warps[d], kWarp, tensor_dim(d))
                         : LinearLayout::identity_1d(warps[d], kWarp, tensor_dim(d));
  };
  return part(1) * part(0);
}

}  // namespace

LinearLayout mma_sync_accumulator(const std::vector<int32_t>& shape,
                                  const std::vector<int32_t>& warps_per_cta) {
  check_tile("mma_sync_accumulator", shape, warps_per_cta, 16, 8);
  LinearLayout c = fragment({{0, 1}, {8, 0}}, kLaneRowsCols, 16, 8);
  return fit_to_shape(c * mma_sync_warps(warps_per_cta, -1), shape, {1, 0});
}

LinearLayout mma_sync_a(const std::vector<int32_t>& shape,
                        const std::vector<int32_t>& warps_per_cta) {
  check_tile("mma_sync_a", shape, warps_per_cta, 16, 16);
  LinearLayout a = fragment({{0, 1}, {8, 0}, {0, 8}}, kLaneRowsCols, 16, 16);
  return fit_to_shape(a * mma_sync_warps(warps_per_cta, 1), shape, {1, 0});
}

LinearLayout mma_sync_b(const std::vector<int32_t>& shape,
                        const std::vector<int32_t>& warps_per_cta) {
  check_tile("mma_sync_b", shape, warps_per_cta, 16, 8);
  LinearLayout b = fragment({{1, 0}, {8, 0}}, {{2, 0}, {4, 0}, {0, 1}, {0, 2}, {0, 4}}, 16, 8);
  return fit_to_shape(b * mma_sync_warps(warps_per_cta, 0), shape, {0, 1});
}

LinearLayout wgmma_accumulator(const std::vector<int32_t>& shape, int32_t n,
                               const std::vector<int32_t>& warps_per_cta) {
  int n_bits = log2_exact(n, "wgmma_accumulator instruction width n");
  if (n < 8 || n > 256)
    layout_error("wgmma_accumulator: n is " + std::to_string(n) + ", not 8 .. 256");
  check_tile("wgmma_accumulator", shape, warps_per_cta, 64, n);
  if (warps_per_cta[0] < 4)
    layout_error("wgmma_accumulator: warps_per_cta[0] is " + std::to_string(warps_per_cta[0]) +
                 ", not a multiple of 4 (a warpgroup of 4 warps spans 64 rows)");
  Bases registers = {{0, 1}, {8, 0}};
  for (int b = 3; b < n_bits; ++b) registers.push_back({0, int32_t{1} << b});
  // Each warp of a warpgroup holds 16 rows, consecutive warps the next rows (warp bits
  // along M first), then further warpgroups along N.
  LinearLayout d = fragment(std::move(registers), kLaneRowsCols, 16, n) *
                   LinearLayout::identity_1d(warps_per_cta[0], kWarp, tensor_dim(0)) *
                   LinearLayout::identity_1d(warps_per_cta[1], kWarp, tensor_dim(1));
  return fit_to_shape(d, shape, {1, 0});
}

}  // namespace tessel::layout
