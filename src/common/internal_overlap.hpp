// Whether some elements of a strided tensor share one memory location (a tensor written
// by a kernel must have none: its programs would race on them).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace tessel {

/// Two elements (flat row-major indices into `shape`) of a tensor of `shape` and `strides`
/// (elements) at one memory location, or none. Exact: a layout whose dims, by increasing
/// stride, each step past the span of the ones before has none; any other is enumerated
/// when it has at most `max_enumerated` elements. Past that, nullopt in `*decided` = false.
/// Source: torch's has_internal_overlap tells only zero strides (YES) from dense layouts
/// (NO) and calls the rest TOO_HARD; this decides them.
std::optional<std::pair<int64_t, int64_t>> overlapping_elements(const std::vector<int64_t>& shape,
                                                                const std::vector<int64_t>& strides,
                                                                bool* decided,
                                                                int64_t max_enumerated = int64_t{1}
                                                                                         << 20);

}  // namespace tessel
