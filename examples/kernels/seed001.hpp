// Seed 001: multicast tensors (ts::multicast_like, Helion's hl.multicast_like). A
// multicast tensor stacks equally shaped buffers (same shape, strides and dtype as an
// example tensor) whose addresses are a u64 tensor `dev_ptrs`; a load reads one slice from
// every buffer, a store writes the reverse. The four programs of the seed, as in Helion's
// test/test_multicast_tensor.py, and the masked form (ragged buffers and pointer tiles).
#pragma once

#include <tessel/tessel.hpp>

namespace examples {
namespace ts = tessel;

/// out[m, i, j] = buffer m [i, j]: 1-D dev_ptrs [M], a 2-D example [N1, N2].
inline auto make_multicast_load_2d_tensors(ts::Settings s = {}) {
  return ts::kernel(
      "multicast_load_2d_tensors",
      [](ts::Tensor dev_ptrs, ts::Tensor like) {
        ts::Tensor out = ts::empty({dev_ptrs.size(0), like.size(0), like.size(1)}, like.dtype());
        for (auto [t1, t2] : ts::tile(like.size(0), like.size(1))) {
          auto bufs = ts::multicast_like(like, dev_ptrs(ts::all));
          out(ts::all, t1, t2) = bufs(t1, t2);  // shape [M, t1, t2]
        }
        return out;
      },
      s);
}

/// out[a, b, i] = buffer (a, b) [i]: 2-D dev_ptrs [M1, M2], a 1-D example [N], block 4.
inline auto make_multicast_load_2d_dev_ptrs(ts::Settings s = {}) {
  return ts::kernel(
      "multicast_load_2d_dev_ptrs",
      [](ts::Tensor dev_ptrs, ts::Tensor like) {
        ts::Tensor out =
            ts::empty({dev_ptrs.size(0), dev_ptrs.size(1), like.size(0)}, like.dtype());
        for (auto t : ts::tile(like.size(0), {.block_size = 4})) {
          auto bufs = ts::multicast_like(like, dev_ptrs(ts::all, ts::all));
          out(ts::all, ts::all, t) = bufs(t);  // shape [M1, M2, t]
        }
        return out;
      },
      s);
}

/// Every buffer [i] = x[i]: the tile of x broadcast to every buffer (x_tile[None, :]).
inline auto make_multicast_store_broadcast(ts::Settings s = {}) {
  return ts::kernel(
      "multicast_store_broadcast",
      [](ts::Tensor x, ts::Tensor dev_ptrs, ts::Tensor like) {
        for (auto t : ts::tile(x.size(0), {.block_size = 4})) {
          auto bufs = ts::multicast_like(like, dev_ptrs(ts::all));
          ts::Value x_tile = x(t);
          bufs(t) = x_tile(ts::newaxis, ts::all);
        }
      },
      s);
}

/// Buffer m [i] = m for every i: arange(M) unstacked, one value per buffer.
inline auto make_multicast_store_arange(ts::Settings s = {}) {
  return ts::kernel(
      "multicast_store_arange",
      [](ts::Tensor dev_ptrs, ts::Tensor like) {
        for (auto i : ts::grid(like.size(0))) {
          auto bufs = ts::multicast_like(like, dev_ptrs(ts::all));
          bufs(i) = ts::arange(dev_ptrs.size(0));  // shape [M]: element m goes to buffer m
        }
      },
      s);
}

/// out[m, i] = buffer m [i] with the buffers in tiles of 4 (a device loop over dev_ptrs):
/// masked in the pointer dim (M = 3) and the tensor dim (N = 15), Helion's
/// test_multicast_mask.
inline auto make_multicast_load_masked(ts::Settings s = {}) {
  return ts::kernel(
      "multicast_load_masked",
      [](ts::Tensor dev_ptrs, ts::Tensor like) {
        ts::Tensor out = ts::empty({dev_ptrs.size(0), like.size(0)}, like.dtype());
        for (auto t : ts::tile(like.size(0), {.block_size = 4}))
          for (auto tm : ts::tile(dev_ptrs.size(0), {.block_size = 4})) {
            auto bufs = ts::multicast_like(like, dev_ptrs(tm));
            out(tm, t) = bufs(t);  // shape [tm, t]
          }
        return out;
      },
      s);
}

}  // namespace examples
