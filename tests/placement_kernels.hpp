// A 2-D kernel whose nest holds loads, elementwise ops, reductions along both tile dims
// (register, lane and warp bits) and a store: the CPU and GPU tests of register layouts
// other than the blocked one (passes::with_placement) run it.
#pragma once

#include <tessel/tessel.hpp>

namespace placement_test {
namespace ts = tessel;

/// out(tm, tn) = 2 x(tm, tn) + the sum of x's tile row + the maximum of y's tile column:
/// the reductions stay inside one [tm, tn] tile, so the result depends on the block sizes.
inline auto make_tile_mix(ts::Settings settings = {}) {
  return ts::kernel(
      "tile_mix", {"x", "y"},
      [](ts::Tensor x, ts::Tensor y) {
        ts::Tensor out = ts::empty_like(x).named("out");
        for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) {
          ts::Value a = x(tm, tn);
          out(tm, tn) = a * 2.0 + ts::sum(a, 1, true) + ts::max(y(tm, tn), 0, true);
        }
        return out;
      },
      settings);
}

/// Tiles of 64 x 64 on 4 warps: 32 registers per thread, as the mma.sync accumulator of
/// a 64 x 64 tile on 2 x 2 warps holds it.
inline ts::Config mix_config() {
  return ts::Config{.block_sizes = std::vector<int64_t>{64, 64}, .num_warps = 4};
}

}  // namespace placement_test
