// MoE-style kernels whose row counts live in device memory (seed 002's use case).
#pragma once

#include <tessel/tessel.hpp>

namespace examples {
namespace ts = tessel;

/// Routed SiLU-and-mul: x [E, C, 2H] holds, per expert e and routed-token slot c, the
/// gate (x[e, c, :H]) and up (x[e, c, H:]) projections; counts [E] (i32, device memory)
/// says how many slots of each expert hold tokens. out[e, c, h] = silu(gate) * up for
/// c < counts[e]; other rows are left untouched (zeros from new_zeros).
/// silu(g) = g * sigmoid(g). The grid over experts is host-known; each expert's row loop
/// reads its bound on the GPU.
inline auto make_silu_and_mul_routed(ts::Settings settings = {}) {
  return ts::kernel(
      "silu_and_mul_routed",
      [](ts::Tensor x, ts::Tensor counts) {
        ts::Value h = ts::floordiv(x.size(2), 2);
        ts::Tensor out = x.new_zeros({x.size(0), x.size(1), h});
        for (auto e : ts::grid(x.size(0)))
          for (auto tc : ts::tile(counts(e)))
            for (auto th : ts::tile(h)) {
              ts::Value gate = x(e, tc, th).to(ts::f32);
              ts::Value up = x(e, tc, th.index() + h).to(ts::f32);
              out(e, tc, th) = gate * ts::sigmoid(gate) * up;
            }
        return out;
      },
      settings);
}

/// The same over tokens packed back to back: x [T, 2H] with a device-resident token count
/// n_tokens (one element): a persistent 2-D tile loop whose first bound is on the device
/// and second host-known.
inline auto make_silu_and_mul_packed(ts::Settings settings = {}) {
  return ts::kernel(
      "silu_and_mul_packed",
      [](ts::Tensor x, ts::Tensor n_tokens) {
        ts::Value h = ts::floordiv(x.size(1), 2);
        ts::Tensor out = x.new_zeros({x.size(0), h});
        for (auto [tm, th] : ts::tile(n_tokens, h)) {
          ts::Value gate = x(tm, th).to(ts::f32);
          out(tm, th) = gate * ts::sigmoid(gate) * x(tm, th.index() + h).to(ts::f32);
        }
        return out;
      },
      settings);
}

}  // namespace examples
