// Test-only inputs for matmul tests (tests/contractions_test.cpp and its GPU twin).
#pragma once

#include <cstdint>
#include <tessel/tessel.hpp>
#include <vector>

namespace matmul_test {

/// An [m, n] Buffer of dtype t holding small integers in [-10, 10] (a pattern varied by
/// `seed`): exact in every float dtype, and their products' sums exact in f32, so GPU
/// results can be compared with the interpreter's exactly.
inline tessel::Buffer ints(int64_t m, int64_t n, tessel::DType t, int seed) {
  std::vector<double> v(static_cast<size_t>(m * n));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<double>(
        (static_cast<int64_t>(i) * 7 + seed * 5 + static_cast<int64_t>(i) / 13) % 21 - 10);
  return tessel::Buffer::from_vector(v, {m, n}, t);
}

}  // namespace matmul_test
