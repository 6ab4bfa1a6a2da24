// A kernel whose loads cover every access width, for the tests of
// Config::load_eviction_policies (CPU: tests/eviction_test.cpp, GPU:
// tests/gpu/kernels_gpu_test.cpp).
#pragma once

#include <tessel/tessel.hpp>

namespace eviction_test {

namespace ts = tessel;

/// Loads of the kernel below (Config::load_eviction_policies has one entry per load, in
/// source order).
inline constexpr int kLoads = 9;

/// m: [N] bool; h: [N] f16; x: [N] f32; idx: [N] i64 in [0, N); out: [3, N] f32:
///   out[0, i] = (m[i] ? h[i] : x[idx[i]]) + x[0]
///   out[1, i] = 2 x[i] + h[i]
///   out[2, i] = x[i] + idx[i]
/// The first loop reads 1-byte vectors and 2-, 4- and 8-byte elements (a gather, a scalar);
/// the second 16-byte vectors of f16; the third 16-byte vectors of f32 and 8-byte elements.
inline auto make_mixed_loads(ts::Settings s = {}) {
  return ts::kernel(
      "mixed_loads",
      [](ts::Tensor m, ts::Tensor h, ts::Tensor x, ts::Tensor idx) {
        ts::Tensor out = x.new_empty({3, x.size(0)});
        for (auto t : ts::tile(x.size(0))) {
          ts::Value mask = m(t);
          ts::Value half = h(t).to(ts::f32);
          ts::Value at = idx(t);
          ts::Value gathered = x(at);
          ts::Value first = x(0);
          out(0, t) = ts::where(mask, half, gathered) + first;
        }
        for (auto t : ts::tile(x.size(0))) {
          ts::Value v = x(t);
          ts::Value half = h(t).to(ts::f32);
          out(1, t) = v * 2.0 + half;
        }
        for (auto t : ts::tile(x.size(0))) {
          ts::Value v = x(t);
          ts::Value i = idx(t).to(ts::f32);
          out(2, t) = v + i;
        }
        return out;
      },
      s);
}

}  // namespace eviction_test
