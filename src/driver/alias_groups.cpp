#include "driver/alias_groups.hpp"

#include <algorithm>

namespace tessel::rt {

std::pair<uintptr_t, uintptr_t> byte_range(const Buffer& b) {
  // Runs on every call (alias_groups): the shape and strides are read directly.
  const std::vector<int64_t>& shape = b.shape();
  const std::vector<int64_t>& strides = b.strides();
  int64_t lo = 0, hi = 0;  // element offsets of the lowest and highest elements
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) return {0, 0};
    int64_t extent = (shape[d] - 1) * strides[d];
    (extent < 0 ? lo : hi) += extent;
  }
  const int64_t es = dtype_size(b.dtype());
  const uintptr_t base = reinterpret_cast<uintptr_t>(b.data_ptr());
  return {base + static_cast<uintptr_t>(lo * es), base + static_cast<uintptr_t>((hi + 1) * es)};
}

std::vector<int> alias_groups(const std::vector<const Buffer*>& tensors) {
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i]) ranges[i] = byte_range(*tensors[i]);
  return alias_groups(ranges);
}

std::vector<int> alias_groups(std::span<const std::pair<uintptr_t, uintptr_t>> range) {
  const int n = static_cast<int>(range.size());
  auto overlap = [&](int i, int j) {
    auto [a0, a1] = range[i];
    auto [b0, b1] = range[j];
    return a0 < a1 && b0 < b1 && a0 < b1 && b0 < a1;
  };
  std::vector<int> group;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < i; ++j) {
      if (!overlap(i, j)) continue;
      if (group.empty()) {
        group.resize(n);
        for (int k = 0; k < n; ++k) group[k] = k;
      }
      // Merge the two groups under the lower position.
      int from = std::max(group[i], group[j]), to = std::min(group[i], group[j]);
      for (int& g : group)
        if (g == from) g = to;
    }
  }
  if (group.empty()) return group;
  for (int i = 0; i < n; ++i)
    if (std::count(group.begin(), group.end(), group[i]) == 1) group[i] = -1;
  return group;
}

}  // namespace tessel::rt
