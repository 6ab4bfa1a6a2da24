// Matrix products written as a broadcast multiply and a sum, on the CUDA cores: the form
// a Helion user writes before hl.dot. tessel lowers the sum of products as a contraction
// (src/passes/contractions.hpp): the [tm, tk, tn] product is never held; the x and y
// tiles are loaded with 16-byte vectors into shared memory and each thread sums the
// products for its [tm, tn] elements.
//
// Shapes: x [M, K], y [K, N], out [M, N] of x's dtype; f16/bf16 are multiplied and summed
// in f32 and rounded once, at the store. Tunables: block_sizes = {tm, tn, tk}, num_warps.
#pragma once

#include <tessel/tessel.hpp>

namespace examples {
namespace ts = tessel;

/// out = x @ y.
inline auto make_matmul(ts::Settings settings = {}) {
  return ts::kernel(
      "matmul", {"x", "y"},
      [](ts::Tensor x, ts::Tensor y) {
        ts::Tensor out = x.new_empty({x.size(0), y.size(1)}).named("out");
        for (auto [tm, tn] : ts::tile(x.size(0), y.size(1))) {
          ts::Value acc = ts::zeros({tm, tn});
          for (auto tk : ts::tile(x.size(1)))
            acc =
                acc +
                ts::sum(x(tm, tk, ts::newaxis).to(ts::f32) * y(ts::newaxis, tk, tn).to(ts::f32), 1);
          out(tm, tn) = acc;
        }
        return out;
      },
      settings);
}

/// out = relu(x @ y + bias), bias [N]: the epilogue runs on the accumulator in registers.
inline auto make_matmul_bias_relu(ts::Settings settings = {}) {
  return ts::kernel(
      "matmul_bias_relu", {"x", "y", "bias"},
      [](ts::Tensor x, ts::Tensor y, ts::Tensor bias) {
        ts::Tensor out = x.new_empty({x.size(0), y.size(1)}).named("out");
        for (auto [tm, tn] : ts::tile(x.size(0), y.size(1))) {
          ts::Value acc = ts::zeros({tm, tn});
          for (auto tk : ts::tile(x.size(1)))
            acc =
                acc +
                ts::sum(x(tm, tk, ts::newaxis).to(ts::f32) * y(ts::newaxis, tk, tn).to(ts::f32), 1);
          out(tm, tn) = ts::maximum(acc + bias(ts::newaxis, tn).to(ts::f32), 0.0);
        }
        return out;
      },
      settings);
}

}  // namespace examples
