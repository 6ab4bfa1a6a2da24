// Kernels of the bounds-checking tests (tests/check_bounds_test.cpp on the interpreter,
// tests/gpu/check_bounds_gpu_test.cpp on the GPU): each has one access whose index can
// leave its tensor; *_line is that access's source line (set while tracing).
#pragma once

#include <tessel/tessel.hpp>

namespace check_bounds_kernels {

inline const tessel::Settings kChecked{.check_bounds = true};

inline int column_line = 0, shift_line = 0, gather_line = 0, grid_line = 0, scatter_line = 0,
           pick_line = 0, tile_line = 0;

/// out[t] = x[t, c] for a column c given as a plain number (a constant of the code).
inline auto make_column(tessel::Settings s = {}) {
  return tessel::kernel(
      "column",
      [](tessel::Tensor x, int c) {
        tessel::Tensor out = x.new_empty({x.size(0)});
        for (auto t : tessel::tile(x.size(0))) {
          out(t) = x(t, c);
          column_line = __LINE__ - 1;
        }
        return out;
      },
      s);
}

/// out[t] = x[t, i + 1]: a column computed in host code from a symbolic argument.
inline auto make_shifted_column(tessel::Settings s = {}) {
  return tessel::kernel(
      "shifted_column",
      [](tessel::Tensor x, tessel::Value i) {
        tessel::Tensor out = x.new_empty({x.size(0)});
        for (auto t : tessel::tile(x.size(0))) {
          out(t) = x(t, i + 1);
          shift_line = __LINE__ - 1;
        }
        return out;
      },
      s);
}

/// out[t] = x[idx[t] - 1]: a gather (idx's lanes past its end load 0, so they index -1:
/// masked by design, never reported).
inline auto make_gather(tessel::Settings s = {}) {
  return tessel::kernel(
      "gather",
      [](tessel::Tensor x, tessel::Tensor idx) {
        tessel::Tensor out = tessel::empty({idx.size(0)}, x.dtype());
        for (auto t : tessel::tile(idx.size(0))) {
          out(t) = x(idx(t) - 1);
          gather_line = __LINE__ - 1;
        }
        return out;
      },
      s);
}

/// out[g] = x[g] + 1 for g in grid(n): a grid index beyond x when n > x.size(0).
inline auto make_grid(tessel::Settings s = {}) {
  return tessel::kernel(
      "grid_copy",
      [](tessel::Tensor x, tessel::Value n) {
        tessel::Tensor out = x.new_zeros({n});
        for (auto g : tessel::grid(n)) {
          out(g) = x(g) + 1;
          grid_line = __LINE__ - 1;
        }
        return out;
      },
      s);
}

/// out[t] = x[t] + 1 for t in tile(n): a ts::tile bound that is not x's size, so the
/// tile's lanes reach past x's end when n > x.size(0).
inline auto make_tile_copy(tessel::Settings s = {}) {
  return tessel::kernel(
      "tile_copy",
      [](tessel::Tensor x, tessel::Value n) {
        tessel::Tensor out = x.new_zeros({n});
        for (auto t : tessel::tile(n)) {
          out(t) = x(t) + 1;
          tile_line = __LINE__ - 1;
        }
        return out;
      },
      s);
}
/// out[idx[t]] = x[t]: a scatter, the store's gathered index.
inline auto make_scatter(tessel::Settings s = {}) {
  return tessel::kernel(
      "scatter",
      [](tessel::Tensor x, tessel::Tensor idx, tessel::Tensor out) {
        for (auto t : tessel::tile(x.size(0))) {
          out(idx(t)) = x(t);
          scatter_line = __LINE__ - 1;
        }
        return out;
      },
      s);
}

/// out[tm] = x[tm, labels[tm]]: a gather along dim 1 sharing the rows' tile (the
/// cross-entropy target pick).
inline auto make_pick(tessel::Settings s = {}) {
  return tessel::kernel(
      "pick",
      [](tessel::Tensor x, tessel::Tensor labels) {
        tessel::Tensor out = x.new_empty({x.size(0)});
        for (auto tm : tessel::tile(x.size(0))) {
          out(tm) = x(tm, labels(tm));
          pick_line = __LINE__ - 1;
        }
        return out;
      },
      s);
}

inline tessel::Buffer grid_3x4() {
  return tessel::Buffer::arange(12, tessel::f32).view_as_strided({3, 4}, {4, 1}, 0);
}

}  // namespace check_bounds_kernels
