// Which tensor arguments of a call may share memory, decided by address ranges (not by
// Buffer identity: two DLPack handles of one torch tensor, or a Buffer::from_blob over
// another Buffer's memory, are distinct Buffers over one memory).
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "tessel/buffer.hpp"

namespace tessel::rt {

/// The bytes [first, last) that Buffer `b` may touch: from its lowest to past its highest
/// element (negative strides included); {0, 0} for an empty Buffer.
std::pair<uintptr_t, uintptr_t> byte_range(const Buffer& b);

/// Per argument (nullptr: not a tensor), ir::ArgFacts::alias_group: the lowest position
/// among the tensors connected to it by overlapping byte ranges, or -1 when its range
/// overlaps no other tensor's. Empty when no two ranges overlap (the common case; no
/// allocation).
std::vector<int> alias_groups(const std::vector<const Buffer*>& tensors);
/// The same over each argument's byte_range ({0, 0}: not a tensor, or no elements).
std::vector<int> alias_groups(std::span<const std::pair<uintptr_t, uintptr_t>> ranges);

}  // namespace tessel::rt
