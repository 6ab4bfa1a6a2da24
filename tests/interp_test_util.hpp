// Helpers shared by the interpreter tests: building CPU Buffers from values, reading
// them back, and fixed block-size settings.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <tessel/tessel.hpp>
#include <vector>

namespace interp_test {

namespace ts = tessel;

/// Every CPU test runs with the interpreter's race check on (programs in a shuffled order,
/// conflicting writes refused: interp/write_log.hpp), unless the environment already sets
/// TESSEL_CHECK_RACES (tests/races_test.cpp tests the check itself).
inline const bool race_check_on = [] {
  return setenv("TESSEL_CHECK_RACES", "1", /*overwrite=*/0) == 0;
}();

/// A CPU Buffer of dtype `t` holding `v` (row-major) with shape `shape`.
inline ts::Buffer buffer(const std::vector<double>& v, std::vector<int64_t> shape,
                         ts::DType t = ts::f32) {
  return ts::Buffer::from_vector(v, std::move(shape), t);
}

/// 0, 1, ..., n-1 scaled by `step` and shifted by `start` (exact in f32 for small n).
inline std::vector<double> ramp(int64_t n, double start = 0, double step = 1) {
  std::vector<double> v(n);
  for (int64_t k = 0; k < n; ++k) v[k] = start + step * static_cast<double>(k);
  return v;
}

/// Settings forcing the block sizes of the kernel's tunable tile dimensions.
inline ts::Settings blocks(std::vector<int64_t> b) {
  return ts::Settings{.config = ts::Config{.block_sizes = std::move(b)}};
}

/// `v` rounded to f32, as a float tensor stores it.
inline double f32(double v) { return static_cast<float>(v); }

}  // namespace interp_test
