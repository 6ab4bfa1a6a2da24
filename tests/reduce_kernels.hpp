// Kernels with several cross-warp reductions of a 2-D tile, for the tests of the
// reductions' shared memory (back-to-back reductions share no bytes and skip the leading
// barrier; registers are numbered densely) and of Config::maxnreg (CPU:
// tests/reduce_shared_test.cpp, GPU: tests/gpu/kernels_gpu_test.cpp).
#pragma once

#include <tessel/tessel.hpp>

namespace reduce_test {

namespace ts = tessel;

/// out[m, n] = x[m, n] - max over m of x[:, n] (within the [tm, tn] tile) + sum over n of
/// x[m, :] (within the tile) + argmax over m (within the tile, as f32): three reductions
/// back to back in straight-line code, over both dims of one 2-D tile, an argmax among
/// them. x: [M, N] f32; out: [M, N] f32. Each tile reduces on its own (the reductions are
/// of the tile, as in Helion).
inline auto make_tile_reductions(ts::Settings s = {}) {
  return ts::kernel(
      "tile_reductions",
      [](ts::Tensor x) {
        ts::Tensor out = ts::empty_like(x);
        for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) {
          ts::Value v = x(tm, tn);
          ts::Value col_max = ts::max(v, 0, /*keepdim=*/true);
          ts::Value row_sum = ts::sum(v, 1, /*keepdim=*/true);
          ts::Value col_arg = ts::argmax(v, 0, /*keepdim=*/true).to(ts::f32);
          out(tm, tn) = v - col_max + row_sum + col_arg;
        }
        return out;
      },
      s);
}

/// The configs the tests run make_tile_reductions with: {tm, tn} blocks and warps such
/// that both dims span several warps, and one with a register cap.
inline std::vector<ts::Config> tile_reduction_configs() {
  return {
      ts::Config{.block_sizes = std::vector<int64_t>{32, 64}, .num_warps = 8},
      ts::Config{.block_sizes = std::vector<int64_t>{64, 32}, .num_warps = 16},
      ts::Config{.block_sizes = std::vector<int64_t>{16, 256}, .num_warps = 4},
      ts::Config{.block_sizes = std::vector<int64_t>{32, 64}, .num_warps = 8, .maxnreg = 64},
  };
}

}  // namespace reduce_test
