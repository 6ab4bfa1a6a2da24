// Kernels whose programs read memory they wrote earlier (memory order inside a program,
// codegen/emit_barriers.cpp). CPU: tests/barriers_test.cpp (generated code, NVRTC);
// GPU: tests/gpu/barriers_gpu_test.cpp (against the interpreter).
#pragma once

#include <tessel/tessel.hpp>

namespace barrier_test {

namespace ts = tessel;

/// s[m] = sum over n of 2 * x[m, n]: a device loop stores out = 2 * x tile by tile, then
/// the row tile is reloaded whole (another layout of its elements) and summed.
inline auto make_store_then_row_sum(ts::Settings s = {}) {
  return ts::kernel(
      "store_then_row_sum",
      [](ts::Tensor x) {
        ts::Tensor out = ts::empty_like(x);
        ts::Tensor sums = x.new_empty({x.size(0)});
        for (auto tm : ts::tile(x.size(0))) {
          for (auto tn : ts::tile(x.size(1))) out(tm, tn) = x(tm, tn) * 2;
          sums(tm) = ts::sum(out(tm, ts::all), 1);
        }
        return sums;
      },
      s);
}

/// y[b, j] = 2 * x[b, j'] + 1 with j' the mirror of j inside its tile: a row tile stored
/// and reloaded in the same loop body, through a gather (other threads' elements).
inline auto make_mirror_in_tile(ts::Settings s = {}) {
  return ts::kernel(
      "mirror_in_tile",
      [](ts::Tensor x) {
        ts::Tensor out = ts::empty_like(x);
        ts::Tensor y = ts::empty_like(x);
        for (auto b : ts::grid(x.size(0)))
          for (auto t : ts::tile(x.size(1))) {
            out(b, t) = x(b, t) * 2;
            y(b, t) = out(b, t.begin() + t.end() - 1 - t.index()) + 1;
          }
        return y;
      },
      s);
}

/// y[b, j] = 2 * x[b, j'] (j' the mirror of j inside its tile): out is stored by one
/// device loop and read mirrored by the next (one barrier between the loops).
inline auto make_mirror_after_loop(ts::Settings s = {}) {
  return ts::kernel(
      "mirror_after_loop",
      [](ts::Tensor x) {
        ts::Tensor out = ts::empty_like(x);
        ts::Tensor y = ts::empty_like(x);
        for (auto b : ts::grid(x.size(0))) {
          for (auto t : ts::tile(x.size(1))) out(b, t) = x(b, t) * 2;
          for (auto t : ts::tile(x.size(1))) y(b, t) = out(b, t.begin() + t.end() - 1 - t.index());
        }
        return y;
      },
      s);
}

/// out[b, :] = x[b, :] - mean(x[b, :]): the mean is stored (one element, by one thread)
/// and reloaded by every thread.
inline auto make_stash_mean(ts::Settings s = {}) {
  return ts::kernel(
      "stash_mean",
      [](ts::Tensor x) {
        ts::Tensor mean = x.new_empty({x.size(0)});
        ts::Tensor out = ts::empty_like(x);
        for (auto b : ts::grid(x.size(0))) {
          mean(b) = ts::sum(x(b, ts::all), 0) / x.size(1);
          out(b, ts::all) = x(b, ts::all) - mean(b);
        }
        return out;
      },
      s);
}

/// acc[m] = sum over n of x[m, n], accumulated into memory in a device loop: the [tm]
/// row of acc is held by every thread of its row, stored by one of them.
inline auto make_accumulate_rows(ts::Settings s = {}) {
  return ts::kernel(
      "accumulate_rows",
      [](ts::Tensor x) {
        ts::Tensor acc = x.new_zeros({x.size(0)});
        for (auto tm : ts::tile(x.size(0)))
          for (auto tn : ts::tile(x.size(1))) acc(tm) = acc(tm) + ts::sum(x(tm, tn), 1);
        return acc;
      },
      s);
}

/// out[m, n] += sum over r of x[r, m, n]: the same elements, in the same registers, loaded
/// and stored on every iteration (no barrier needed).
inline auto make_accumulate_tiles(ts::Settings s = {}) {
  return ts::kernel(
      "accumulate_tiles",
      [](ts::Tensor x) {
        ts::Tensor out = x.new_zeros({x.size(1), x.size(2)});
        for (auto [tm, tn] : ts::tile(x.size(1), x.size(2)))
          for (auto r : ts::grid(x.size(0))) out(tm, tn) = out(tm, tn) + x(r, tm, tn);
        return out;
      },
      s);
}

/// x[i] *= 2 in place (each element loaded and stored by one thread: no barrier).
inline auto make_double_in_place(ts::Settings s = {}) {
  return ts::kernel(
      "double_in_place",
      [](ts::Tensor x) {
        for (auto t : ts::tile(x.size(0))) x(t) = x(t) * 2;
      },
      s);
}

/// out[b, :] = x[b, :] + 1 in a device loop, then s[b] = sum of x[b, :] reloaded whole.
/// A barrier orders them only when the call passes memory shared by x and out.
inline auto make_write_then_read_other(ts::Settings s = {}) {
  return ts::kernel(
      "write_then_read_other",
      [](ts::Tensor x, ts::Tensor out) {
        ts::Tensor sums = x.new_empty({x.size(0)});
        for (auto b : ts::grid(x.size(0))) {
          for (auto t : ts::tile(x.size(1))) out(b, t) = x(b, t) + 1;
          sums(b) = ts::sum(x(b, ts::all), 0);
        }
        return sums;
      },
      s);
}

}  // namespace barrier_test
