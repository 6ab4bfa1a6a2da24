// Kernels and references shared by the GPU tests of persistent kernels
// (persistent_gpu_test.cpp, green_context_gpu_test.cpp).
#pragma once

#include <tessel/tessel.hpp>
#include <vector>

namespace persistent_test {
namespace ts = tessel;

/// out[i] = sum(x[i, :]) for i < rows, `other` for the remaining rows (x: 2-D, on any
/// device; computed on the host in double).
inline std::vector<double> row_sums(const ts::Buffer& x, int64_t rows, double other) {
  std::vector<double> v = x.to_vector(), out(x.size(0), other);
  for (int64_t i = 0; i < rows && i < x.size(0); ++i) {
    double s = 0;
    for (int64_t j = 0; j < x.size(1); ++j) s += v[i * x.size(1) + j];
    out[i] = s;
  }
  return out;
}

/// A persistent kernel (device-resident bound n) whose every tile of 32 records
/// program_id(): the programs a launch used.
inline auto make_who_ran(ts::Settings s) {
  return ts::kernel(
      "who_ran",
      [](ts::Tensor n, ts::Tensor out) {
        for (auto t : ts::tile(n, {.block_size = 32})) out(t) = ts::program_id();
      },
      s);
}

}  // namespace persistent_test
