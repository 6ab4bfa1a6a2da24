// Shared-memory layouts: input dim `offset` (an element's offset from the tile's start,
// in elements), output dims the tensor dims. The swizzles are those of the PTX ISA's
// shared memory matrix layouts for wgmma and TMA (32-, 64- and 128-byte swizzling) and
// CUTLASS's Swizzle<B, 4, 3> on byte addresses: byte address bits [4, 4 + B) (the 16-byte
// chunk within a row of the swizzle width) are XORed with bits [7, 7 + B), B = log2(swizzle
// bytes / 16). The pattern repeats every 8 rows of swizzle bytes (256, 512, 1024 bytes),
// so a tile's start is assumed aligned to that.
#pragma once

#include <cstdint>
#include <vector>

#include "layout/linear_layout.hpp"

namespace tessel::layout {

/// A rows x cols tile (`shape`, powers of two) of elements of `element_bytes` (1, 2, 4
/// or 8) in shared memory, swizzled by `swizzle_bytes` (0: none, 32, 64 or 128).
/// `order` = {1, 0}: rows of dim1 contiguous (K-major for an A operand); {0, 1}: columns
/// of dim0 contiguous. With a swizzle the contiguous dim is cut into atoms of
/// swizzle_bytes (CUTLASS's Layout_K_SW*_Atom: 8 rows of swizzle_bytes, swizzled within),
/// stacked along the other dim first, then along the contiguous dim (as CUTLASS's
/// tile_to_shape); the contiguous dim must span at least one atom width and the other dim
/// at least 8. Without one the tile is plain row- (or column-) major. The layout is a
/// bijection: inverse() maps tensor coordinates to offsets. Throws InternalError on
/// other arguments.
LinearLayout swizzled_shared(const std::vector<int32_t>& shape, int element_bytes,
                             int swizzle_bytes, const std::vector<int>& order = {1, 0});

}  // namespace tessel::layout
