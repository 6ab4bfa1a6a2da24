#include "driver/alias_groups.hpp"

#include <algorithm>

namespace tessel::rt {

std::pair<uintptr_t, uintptr_t> byte_range(const Buffer& b) {
  if (b.numel() == 0) return {0, 0};
  const int64_t es = dtype_size(b.dtype());
  int64_t lo = 0, hi = 0;  // element offsets of the lowest and highest elements
  for (int d = 0; d < b.dim(); ++d) {
    int64_t extent = (b.size(d) - 1) * b.stride(d);
    (extent < 0 ? lo : hi) += extent;
  }
  const uintptr_t base = reinterpret_cast<uintptr_t>(b.data_ptr());
  return {base + static_cast<uintptr_t>(lo * es), base + static_cast<uintptr_t>((hi + 1) * es)};
}

static bool overlap(const Buffer* a, const Buffer* b) {
  auto [a0, a1] = byte_range(*a);
  auto [b0, b1] = byte_range(*b);
  return a0 < a1 && b0 < b1 && a0 < b1 && b0 < a1;
}

std::vector<int> alias_groups(const std::vector<const Buffer*>& tensors) {
  const int n = static_cast<int>(tensors.size());
  std::vector<int> group;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < i; ++j) {
      if (!tensors[i] || !tensors[j] || !overlap(tensors[i], tensors[j])) continue;
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
