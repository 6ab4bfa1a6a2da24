// Loads moved by the Tensor Memory Accelerator (Config::indexing "tensor_descriptor"): the
// tile a load reads is one box of its tensor, copied by one thread's cp.async.bulk.tensor
// into shared memory (the load's `tma` shared stage), completing on an mbarrier that every
// thread waits on before it reads its elements there. The host encodes the tensor's
// CUtensorMap on each call (rt::encode_tensor_map) from its sizes and strides; elements
// past the tensor's end arrive as zeros, and the threads' reads keep the load's own masks
// (tile edges, extents), so a load reads the same values either way.
//
// The box's dims are TMA's order: dim 0 the tensor's dim of unit stride (the TMA's
// contiguous dim), then the other tensor dims from the last to the first. A [64, 128] tile
// of a row-major f32 matrix: dims {1, 0}, box {128, 64}, 32768 bytes, in shared memory as
// a row-major [64][128] array.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/ir.hpp"
#include "passes/kernel_plan.hpp"

namespace tessel::passes {

struct TmaBox {
  std::vector<int> dims;     // TMA dim j -> tensor dim (dims[0]: the unit-stride dim)
  std::vector<int64_t> box;  // per TMA dim: elements (a tile's block, ts::all's padded
                             // extent, 1 for a scalar index)
  int64_t bytes = 0;         // of the box in shared memory (all its chunks)
  /// A tensor-core operand's box (passes/tensor_cores.hpp): copied in `chunks` copies of
  /// `box` (whose dim 0 is then 128 bytes) along dim 0, chunk c at c * bytes / chunks in
  /// shared memory, each written swizzled by `swizzle` bytes (128: CU_TENSOR_MAP_SWIZZLE_128B,
  /// the wgmma operand layout of layout::swizzled_shared). 0 and 1: one plain box.
  int swizzle = 0;
  int chunks = 1;
  bool operator==(const TmaBox&) const = default;
};

/// The largest box a load copies (bytes): a quarter of a program's shared memory.
inline constexpr int64_t kMaxTmaBoxBytes = 48 * 1024;

/// The box of load `n` of the plan's nest when Config::indexing asks for a tensor
/// descriptor and the TMA can move its tile (else nullopt, and the load uses pointers):
/// a tile value indexed by tiles, ts::all or scalars of a tensor (not multicast) with a dim
/// of unit stride whose data pointer and other strides the key knows to be 16-byte
/// aligned, rank at most 5, every box dim at most 256, the unit-stride dim's box a multiple
/// of 16 bytes, at most kMaxTmaBoxBytes, no flattened loop dim, 32-bit indices.
std::optional<TmaBox> tensor_descriptor_box(const ir::Graph& g, const KernelPlan& plan,
                                            const ir::Node* n);

/// Whether the TMA can move load `n`'s tile for some block sizes: the checks of
/// tensor_descriptor_box that do not depend on the config (a tile value of a tensor that is
/// not multicast, no gather, a dim of unit stride, the data pointer and other strides
/// 16-byte aligned, rank at most 5, 32-bit indices). The autotuner offers such loads an
/// indexing knob (autotune/config_space.hpp). `why` (where given): the check that failed.
bool tma_may_move(const ir::Graph& g, const ir::Node* n, std::string* why = nullptr);

/// The box of load n's tile as tensor_descriptor_box finds it, whatever Config::indexing
/// says (a tensor-core operand's loads, which the TMA moves when it can), and with boxes
/// up to `max_bytes`. `why` (where given): the check that failed, as "it gathers ...".
std::optional<TmaBox> tile_box(const ir::Graph& g, const KernelPlan& plan, const ir::Node* n,
                               int64_t max_bytes, std::string* why = nullptr);

}  // namespace tessel::passes
