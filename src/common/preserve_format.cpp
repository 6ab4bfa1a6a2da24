#include "common/preserve_format.hpp"

#include <algorithm>
#include <numeric>

namespace tessel {

bool non_overlapping_and_dense(const std::vector<int64_t>& shape,
                               const std::vector<int64_t>& strides) {
  size_t n = shape.size();
  if (n == 1) return shape[0] < 2 || strides[0] == 1;
  // Dims by increasing stride, size-0 and size-1 dims last.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (shape[a] < 2) return false;
    if (shape[b] < 2) return true;
    return strides[a] < strides[b];
  });
  int64_t expected = 1;
  for (size_t d : order) {
    if (shape[d] < 2) return true;
    if (strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

std::vector<int64_t> preserve_format_strides(const std::vector<int64_t>& shape,
                                             const std::vector<int64_t>& strides) {
  if (non_overlapping_and_dense(shape, strides)) return strides;
  size_t n = shape.size();
  if (n <= 1) return std::vector<int64_t>(n, 1);
  // perm[0] is the innermost dim; starts with the row-major order (last dim innermost).
  std::vector<size_t> perm(n);
  for (size_t i = 0; i < n; ++i) perm[i] = n - 1 - i;
  // > 0: dim a goes outside dim b; < 0: inside; 0: no order between them.
  auto compare = [&](size_t a, size_t b) {
    if (strides[a] == 0 || strides[b] == 0) return 0;
    if (strides[a] != strides[b]) return strides[a] < strides[b] ? -1 : 1;
    return shape[a] > shape[b] ? 1 : 0;
  };
  // Insertion sort that moves a dim inward past the dims it must go inside of, and stops
  // at the first one it must stay outside of (a stride-0 dim in between does not stop it).
  for (size_t i = 1; i < n; ++i) {
    size_t at = i;
    for (size_t j = i; j-- > 0;) {
      int c = compare(perm[j], perm[at]);
      if (c > 0) {
        std::swap(perm[j], perm[at]);
        at = j;
      } else if (c < 0) {
        break;
      }
    }
  }
  std::vector<int64_t> out(n);
  int64_t stride = 1;
  for (size_t d : perm) {
    out[d] = stride;
    if (shape[d] > 1) stride *= shape[d];
  }
  return out;
}

bool row_major_strides(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  int64_t expected = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] == 0) return true;
    if (shape[d] != 1 && strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

}  // namespace tessel
