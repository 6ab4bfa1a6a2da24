#include "common/internal_overlap.hpp"

#include <algorithm>
#include <cstdlib>
#include <numeric>

namespace tessel {

std::optional<std::pair<int64_t, int64_t>> overlapping_elements(const std::vector<int64_t>& shape,
                                                                const std::vector<int64_t>& strides,
                                                                bool* decided,
                                                                int64_t max_enumerated) {
  *decided = true;
  const size_t rank = shape.size();
  int64_t numel = 1;
  for (int64_t s : shape) numel *= s;
  if (numel <= 1) return std::nullopt;
  // Dims of more than one element by increasing |stride|: none overlaps where each stride
  // is past the span of the dims before it.
  std::vector<size_t> dims;
  for (size_t d = 0; d < rank; ++d)
    if (shape[d] > 1) dims.push_back(d);
  std::sort(dims.begin(), dims.end(),
            [&](size_t a, size_t b) { return std::abs(strides[a]) < std::abs(strides[b]); });
  int64_t span = 0;
  bool separated = true;
  for (size_t d : dims) {
    if (std::abs(strides[d]) <= span) separated = false;
    span += (shape[d] - 1) * std::abs(strides[d]);
  }
  if (separated) return std::nullopt;
  if (numel > max_enumerated) {
    *decided = false;
    return std::nullopt;
  }
  // Every element's offset, in row-major order, then sorted: equal neighbours overlap.
  std::vector<std::pair<int64_t, int64_t>> at(static_cast<size_t>(numel));  // (offset, index)
  std::vector<int64_t> idx(rank, 0);
  int64_t offset = 0;
  for (int64_t i = 0; i < numel; ++i) {
    at[static_cast<size_t>(i)] = {offset, i};
    for (size_t d = rank; d-- > 0;) {  // the next index, row-major
      if (++idx[d] < shape[d]) {
        offset += strides[d];
        break;
      }
      offset -= (shape[d] - 1) * strides[d];
      idx[d] = 0;
    }
  }
  std::sort(at.begin(), at.end());
  for (size_t i = 1; i < at.size(); ++i)
    if (at[i].first == at[i - 1].first)
      return std::make_pair(std::min(at[i].second, at[i - 1].second),
                            std::max(at[i].second, at[i - 1].second));
  return std::nullopt;
}

}  // namespace tessel
