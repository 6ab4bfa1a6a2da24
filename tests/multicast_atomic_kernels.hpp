// Kernels with atomics, signals and waits on multicast tensors, shared by the interpreter
// tests (tests/multicast_atomics_test.cpp) and the GPU tests
// (tests/gpu/multicast_atomics_gpu_test.cpp), whose oracle is the interpreter.
#pragma once

#include <tessel/tessel.hpp>

namespace multicast_atomic_test {

namespace ts = tessel;

/// Every buffer [i] += x[i]; returns the old values [M, N].
inline auto make_add_broadcast() {
  return ts::kernel("mc_add_broadcast", [](ts::Tensor x, ts::Tensor dev_ptrs, ts::Tensor like) {
    ts::Tensor olds = ts::empty({dev_ptrs.size(0), like.size(0)}, like.dtype());
    for (auto t : ts::tile(like.size(0), {.block_size = 4})) {
      auto bufs = ts::multicast_like(like, dev_ptrs(ts::all));
      olds(ts::all, t) = ts::atomic_add(bufs, {t}, x(t));
    }
    return olds;
  });
}

/// Buffer m [i] = max(buffer m [i], y[m, i]): a value of the full shape unstacks.
inline auto make_max_unstacked() {
  return ts::kernel("mc_max_unstacked", [](ts::Tensor y, ts::Tensor dev_ptrs, ts::Tensor like) {
    for (auto t : ts::tile(like.size(0), {.block_size = 4})) {
      auto bufs = ts::multicast_like(like, dev_ptrs(ts::all));
      ts::atomic_max(bufs, {t}, y(ts::all, t));
    }
  });
}

/// Buffer m [i] += 1 with the buffers in tiles of 4 (masked past dev_ptrs' size).
inline auto make_add_pointer_tiles() {
  return ts::kernel("mc_add_pointer_tiles", [](ts::Tensor dev_ptrs, ts::Tensor like) {
    for (auto t : ts::tile(like.size(0), {.block_size = 4}))
      for (auto tm : ts::tile(dev_ptrs.size(0), {.block_size = 4})) {
        auto bufs = ts::multicast_like(like, dev_ptrs(tm));
        ts::atomic_add(bufs, {t}, 1);
      }
  });
}

/// Program p sets pad element p of every pad to p + 1; returns the old values [P, R].
inline auto make_signal_every_pad() {
  return ts::kernel("mc_signal", [](ts::Tensor pad_ptrs, ts::Tensor pad) {
    ts::Tensor olds = pad.new_zeros({pad.size(0), pad_ptrs.size(0)}, ts::i32);
    for (auto p : ts::grid(pad.size(0))) {
      auto pads = ts::multicast_like(pad, pad_ptrs(ts::all));
      olds(p, ts::all) = ts::signal(pads, {p}, p + 1);
    }
    return olds;
  });
}

/// Program 1 signals element 0 of every pad; program 0 waits on every pad's element 0 and
/// resets them to 0, then records that it ran.
inline auto make_wait_every_pad(ts::Settings s = {}) {
  return ts::kernel(
      "mc_wait",
      [](ts::Tensor pad_ptrs, ts::Tensor pad) {
        ts::Tensor out = pad.new_zeros({2}, ts::i32);
        for (auto p : ts::grid(2)) {
          auto pads = ts::multicast_like(pad, pad_ptrs(ts::all));
          ts::signal(pads, {p - 1}, 1);  // program 1: element 0; program 0: masked
          ts::wait(pads, {p}, 1, 0);     // program 0: element 0; program 1: masked
          out(p) = 1;
        }
        return out;
      },
      s);
}

}  // namespace multicast_atomic_test
