// Classic kernels: add, copy, a 2-D broadcast, and the basic row softmax.
#pragma once

#include <tessel/tessel.hpp>

namespace examples {
namespace ts = tessel;

/// out = x + y over a 1-D tensor (any dtype; promotion as in PyTorch).
inline auto make_add(ts::Settings settings = {}) {
  return ts::kernel(
      "add", {"x", "y"},
      [](ts::Tensor x, ts::Tensor y) {
        ts::Tensor out = ts::empty_like(x).named("out");
        for (auto t : ts::tile(x.size(0))) out(t) = x(t) + y(t);
        return out;
      },
      settings);
}

/// out = x over a 1-D tensor.
inline auto make_copy(ts::Settings settings = {}) {
  return ts::kernel(
      "copy",
      [](ts::Tensor x) {
        ts::Tensor out = ts::empty_like(x);
        for (auto t : ts::tile(x.size(0))) out(t) = x(t);
        return out;
      },
      settings);
}

/// out[m, n] = x[m, n] + y[m, n] over 2-D tiles.
inline auto make_add_2d(ts::Settings settings = {}) {
  return ts::kernel(
      "add_2d",
      [](ts::Tensor x, ts::Tensor y) {
        ts::Tensor out = ts::empty_like(x);
        for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) out(tm, tn) = x(tm, tn) + y(tm, tn);
        return out;
      },
      settings);
}

/// out[n, m] = x[m, n] (any dtype): `.t()` transposes the [tm, tn] tile. The load is contiguous
/// along tn, the store along tm: one of them runs in a layout of its own and the tile converts
/// through shared memory (passes/access_layouts.hpp), so both move 16-byte vectors.
inline auto make_transpose(ts::Settings settings = {}) {
  return ts::kernel(
      "transpose",
      [](ts::Tensor x) {
        ts::Tensor out = x.new_empty({x.size(1), x.size(0)}).named("out");
        for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) out(tn, tm) = x(tm, tn).t();
        return out;
      },
      settings);
}

/// out[m, n] = x[m, n] + y[n, m]: x and out are contiguous along tn, y along tm (y's load
/// converts into the nest's layout).
inline auto make_add_transposed(ts::Settings settings = {}) {
  return ts::kernel(
      "add_transposed",
      [](ts::Tensor x, ts::Tensor y) {
        ts::Tensor out = ts::empty_like(x).named("out");
        for (auto [tm, tn] : ts::tile(x.size(0), x.size(1)))
          out(tm, tn) = x(tm, tn) + y(tn, tm).t();
        return out;
      },
      settings);
}

/// out[m, n] = x[m, n] + bias[n]: bias(ts::newaxis, tn) has shape [1, tn].
inline auto make_add_bias(ts::Settings settings = {}) {
  return ts::kernel(
      "add_bias",
      [](ts::Tensor x, ts::Tensor bias) {
        ts::Tensor out = ts::empty_like(x);
        for (auto [tm, tn] : ts::tile(x.size(0), x.size(1)))
          out(tm, tn) = x(tm, tn) + bias(ts::newaxis, tn);
        return out;
      },
      settings);
}

/// Row softmax in x's dtype (no f32 upcast), dividing by the row sum:
/// out[m, :] = exp(x[m, :] - max(x[m, :])) / sum(exp(x[m, :] - max)). x: [M, N].
/// Source: Helion examples/softmax.py `softmax`. (norms.hpp's make_softmax computes in f32
/// and multiplies by the reciprocal; this form is the one the autotuner tests and
/// benchmark use.)
inline auto make_softmax_basic(ts::Settings settings = {}) {
  return ts::kernel(
      "softmax",
      [](ts::Tensor x) {
        ts::Tensor out = ts::empty_like(x);
        for (auto tm : ts::tile(x.size(0))) {
          ts::Value row = x(tm, ts::all);
          ts::Value e = ts::exp(row - ts::max(row, 1, true));
          out(tm, ts::all) = e / ts::sum(e, 1, true);
        }
        return out;
      },
      settings);
}

}  // namespace examples
