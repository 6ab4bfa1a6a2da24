// Seed 000: nested loops whose bounds live in device memory (DESIGN.md section 6).
// Each kernel computes out[b, d] = x[b, d] + 1 for b < batch_shape, d < dim_shape, where
// both bounds are one-element integer tensors read on the GPU (never on the host).
#pragma once

#include <tessel/tessel.hpp>

namespace examples {
namespace ts = tessel;

/// One 2-D tile loop over two device-side bounds.
inline auto make_f1() {
  return ts::kernel(
      "f1",
      [](ts::Tensor x, ts::Tensor batch_shape, ts::Tensor dim_shape) {
        ts::Tensor out = x.new_empty({x.size(0), x.size(1)});
        for (auto [b, t] : ts::tile(batch_shape, dim_shape)) out(b, t) = x(b, t) + 1;
        return out;
      },
      ts::Settings{.index_dtype = ts::i64});
}

/// A grid over one device-side bound around a tile over another (the Helion bug report).
inline auto make_f2() {
  return ts::kernel(
      "f2",
      [](ts::Tensor x, ts::Tensor batch_shape, ts::Tensor dim_shape) {
        ts::Tensor out = x.new_empty({x.size(0), x.size(1)});
        for (auto b : ts::grid(batch_shape))
          for (auto t : ts::tile(dim_shape)) out(b, t) = x(b, t) + 1;
        return out;
      },
      ts::Settings{.index_dtype = ts::i64});
}

/// The workaround from the report: the inner bound loaded in host code first.
inline auto make_f2_fixed() {
  return ts::kernel(
      "f2_fixed",
      [](ts::Tensor x, ts::Tensor batch_shape, ts::Tensor dim_shape) {
        ts::Tensor out = x.new_empty({x.size(0), x.size(1)});
        ts::Value d = ts::load(dim_shape);
        for (auto b : ts::grid(batch_shape))
          for (auto t : ts::tile(d)) out(b, t) = x(b, t) + 1;
        return out;
      },
      ts::Settings{.index_dtype = ts::i64});
}

}  // namespace examples
