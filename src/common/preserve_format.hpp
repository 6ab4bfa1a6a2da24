// The strides of a tensor allocated like another one, as torch's empty_like,
// zeros_like and full_like (memory_format=torch.preserve_format) give them.
#pragma once

#include <cstdint>
#include <vector>

namespace tessel {

/// Whether a tensor of `shape` and `strides` (elements) is non-overlapping and dense: its
/// elements fill a contiguous range of memory in some order of its dims (torch's
/// is_non_overlapping_and_dense; size-1 dims and empty tensors do not matter).
bool non_overlapping_and_dense(const std::vector<int64_t>& shape,
                               const std::vector<int64_t>& strides);

/// Strides (elements) of a dense tensor of `shape` allocated like one with `strides`: those
/// strides when non-overlapping and dense, else dense strides in the same order of dims
/// (torch's at::infer_dense_strides: dims sorted by increasing stride, stably, a stride-0
/// dim keeping its place and equal strides putting the smaller size innermost).
/// Source: PyTorch's empty_like (aten/src/ATen/native/TensorFactories.cpp).
std::vector<int64_t> preserve_format_strides(const std::vector<int64_t>& shape,
                                             const std::vector<int64_t>& strides);

/// Whether `strides` are row-major for `shape`, size-1 dims aside (Buffer::is_contiguous).
bool row_major_strides(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides);

}  // namespace tessel
