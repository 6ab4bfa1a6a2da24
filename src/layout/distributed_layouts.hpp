// Register layouts of a program's tile (input dims register, lane, warp; output dims the
// tensor dims): Triton's BlockedEncoding, and the layouts of a reduction's result (slice)
// and of a value of size 1 along a dim (broadcast). The mma.sync and wgmma fragments are
// in src/layout/mma_layouts.hpp.
#pragma once

#include <cstdint>
#include <vector>

#include "layout/linear_layout.hpp"

namespace tessel::layout {

/// in_dim over the tensor dims dim0 .. dim{r-1} (r = sizes.size()) as an r-dimensional
/// identity of extents `sizes`, order[0] the fastest-varying dim (Triton's
/// identityStandardND). Output dims in tensor order, of the sizes `sizes`.
LinearLayout identity_nd(const std::string& in_dim, const std::vector<int32_t>& sizes,
                         const std::vector<int>& order);

/// `layout` (over tensor dims dim0 ..) fitted to a tile of `shape` (powers of two): a dim
/// the layout covers less of is repeated in registers, dims taken in `rep_order` (the
/// first repeats in the lowest new register bits); a dim it covers more of keeps only the
/// coordinates below the shape: lanes and warps past it get coordinate 0 there (they hold
/// copies of the same elements) and register bits that become 0 are removed. Throws
/// InternalError when the rank differs or a size is not a power of two.
LinearLayout fit_to_shape(const LinearLayout& layout, const std::vector<int32_t>& shape,
                          const std::vector<int>& rep_order);

/// Triton's BlockedEncoding over a tile of `shape`: each thread holds size_per_thread
/// consecutive elements, a warp's lanes cover threads_per_warp such blocks, the program's
/// warps warps_per_cta warp tiles; all three numbered along `order` (order[0] the
/// fastest-varying dim, e.g. {1, 0} row-major). The tile is covered by repeating that
/// CTA tile in registers (dims in `order`), or truncated as fit_to_shape says. Every
/// argument has one entry per dim, powers of two; threads_per_warp's product is 32.
/// Throws InternalError otherwise.
LinearLayout blocked(const std::vector<int32_t>& shape, const std::vector<int32_t>& size_per_thread,
                     const std::vector<int32_t>& threads_per_warp,
                     const std::vector<int32_t>& warps_per_cta, const std::vector<int>& order);

/// The layout of a value of size 1 along tensor dim `dim` held by the threads of
/// `parent` (the source of a broadcast along `dim`, Triton's tt.broadcast): `dim` keeps
/// size 1, the lanes and warps of parent that span it hold copies of the same elements
/// (zero bases) and the registers that span it are removed.
LinearLayout broadcast(const LinearLayout& parent, int dim);

/// The layout of a reduction of `parent` over tensor dim `dim` (Triton's SliceEncoding):
/// broadcast(parent, dim) without that output dim; the remaining tensor dims are
/// renumbered dim0 .. dim{r-2}. Throws InternalError when `dim` is not a dim of parent.
LinearLayout slice(const LinearLayout& parent, int dim);

}  // namespace tessel::layout
