// Kernels with loops of two or more dimensions, for the tests of Config::loop_orders,
// flatten_loops and l2_groupings (CPU: tests/loop_knobs_test.cpp, GPU:
// tests/gpu/loop_knobs_gpu_test.cpp). 2-D elementwise: examples::make_add_2d.
#pragma once

#include <tessel/tessel.hpp>

namespace loop_knobs_test {

namespace ts = tessel;

/// out[a, b, c] = x[a, b, c] + 1 over one 3-D top-level loop (l2 grouping of a 3-D
/// grid, six loop orders).
inline auto make_add1_3d(ts::Settings s = {}) {
  return ts::kernel(
      "add1_3d",
      [](ts::Tensor x) {
        ts::Tensor out = ts::empty_like(x);
        for (auto [ta, tb, tc] : ts::tile(x.size(0), x.size(1), x.size(2)))
          out(ta, tb, tc) = x(ta, tb, tc) + 1;
        return out;
      },
      s);
}

/// out[a, b, c, d] = x[a, b, c, d] * 2 + 1: a 2-D top-level loop around a 2-D device
/// loop, elementwise (both loops can be flattened). loop_orders[0] / flatten_loops[0]:
/// the outer loop, [1]: the inner one.
inline auto make_scale_4d(ts::Settings s = {}) {
  return ts::kernel(
      "scale_4d",
      [](ts::Tensor x) {
        ts::Tensor out = ts::empty_like(x);
        for (auto [ta, tb] : ts::tile(x.size(0), x.size(1)))
          for (auto [tc, td] : ts::tile(x.size(2), x.size(3)))
            out(ta, tb, tc, td) = x(ta, tb, tc, td) * 2 + 1;
        return out;
      },
      s);
}

/// out[a, b] = sum over c, d of x[a, b, c, d]: a 2-D device loop carries a [ta, tb]
/// accumulator. The outer loop can be flattened, the inner one cannot (its dims are
/// reduced away).
inline auto make_block_sums(ts::Settings s = {}) {
  return ts::kernel(
      "block_sums",
      [](ts::Tensor x) {
        ts::Tensor out = x.new_empty({x.size(0), x.size(1)});
        for (auto [ta, tb] : ts::tile(x.size(0), x.size(1))) {
          ts::Value acc = ts::zeros({ta, tb}, ts::f32);
          for (auto [tc, td] : ts::tile(x.size(2), x.size(3)))
            acc = acc + ts::sum(ts::sum(x(ta, tb, tc, td), 3), 2);
          out(ta, tb) = acc;
        }
        return out;
      },
      s);
}

/// out[m, n] = x[m, n] + 1 for m < m_bound[0], n < n_bound[0] (one-element integer
/// tensors read on the GPU), 0 elsewhere: a persistent 2-D top-level loop.
inline auto make_add1_device_bounds(ts::Settings s = {}) {
  return ts::kernel(
      "add1_device_bounds",
      [](ts::Tensor x, ts::Tensor m_bound, ts::Tensor n_bound) {
        ts::Tensor out = ts::zeros_like(x);
        for (auto [tm, tn] : ts::tile(m_bound, n_bound)) out(tm, tn) = x(tm, tn) + 1;
        return out;
      },
      s);
}

}  // namespace loop_knobs_test
