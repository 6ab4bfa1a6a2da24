// The register layouts of tensor-core fragments, from the PTX ISA's fragment figures
// ("Matrix Fragments for mma.m16n8k16 with floating point type" and "Register Fragments
// ... wgmma .m64nNk16"), as layouts over a program's tile (input dims register, lane,
// warp; output dims dim0 = rows, dim1 = columns).
//
// Within one fragment, with groupID = lane / 4 and threadID_in_group = lane % 4:
//   mma.sync C (16 x 8, 4 registers): row = groupID + 8 * (r / 2 % 2),
//                                     col = 2 * threadID_in_group + r % 2
//   mma.sync A (16 x 16 of M x K, 8 registers): as C, col + 8 * (r / 4)
//   mma.sync B (16 x 8 of K x N, 4 registers): k = 2 * threadID_in_group + r % 2 +
//                                              8 * (r / 2 % 2), n = groupID
//   wgmma D (64 x N per warpgroup, N / 2 registers): warp w of the warpgroup holds rows
//     16 w .. 16 w + 15 as C, column chunk r / 4 of 8 columns each.
// The registers of 16-bit A and B operands are the elements, two per 32-bit register
// (a0, a1 in the first one). A tile larger than the warps' fragments repeats them in
// registers (fit_to_shape).
#pragma once

#include <cstdint>
#include <vector>

#include "layout/linear_layout.hpp"

namespace tessel::layout {

/// The mma.sync.m16n8k16 accumulator (C / D) over an M x N tile (`shape`, powers of two,
/// at least 16 x 8): warps_per_cta {wm, wn} warps, warp w at fragment (w / wn, w % wn);
/// repetitions in registers, columns first. Throws InternalError on a bad shape.
LinearLayout mma_sync_accumulator(const std::vector<int32_t>& shape,
                                  const std::vector<int32_t>& warps_per_cta);

/// The mma.sync.m16n8k16 A operand (16-bit elements) over an M x K tile (at least
/// 16 x 16), for the warps of mma_sync_accumulator: the wn warps of one row of warps hold
/// the same rows (zero warp bases); repetitions in registers, K first.
LinearLayout mma_sync_a(const std::vector<int32_t>& shape,
                        const std::vector<int32_t>& warps_per_cta);

/// The mma.sync.m16n8k16 B operand (16-bit elements) over a K x N tile (at least
/// 16 x 8), for the warps of mma_sync_accumulator: the wm warps of one column of warps
/// hold the same columns; repetitions in registers, K first.
LinearLayout mma_sync_b(const std::vector<int32_t>& shape,
                        const std::vector<int32_t>& warps_per_cta);

/// The wgmma.m64nNk16 accumulator (f32 or f16 D, one element per register) over an M x N
/// tile (at least 64 x n) for instruction width `n` (a power of two, 8 .. 256):
/// warps_per_cta {wm, wn} with wm a multiple of 4, warp w of warpgroup rows first
/// (Triton's MMAv3 order: w % wm along M, warps w .. w+3 one warpgroup of 64 rows);
/// repetitions in registers, columns first. Throws InternalError otherwise.
LinearLayout wgmma_accumulator(const std::vector<int32_t>& shape, int32_t n,
                               const std::vector<int32_t>& warps_per_cta);

}  // namespace tessel::layout
