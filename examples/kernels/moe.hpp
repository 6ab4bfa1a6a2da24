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

/// Grouped GEMM (a mixture of experts' expert projections): out[t] = x[t] @ w[expert of t]
/// for the rows t < n_rows (one i32 element in device memory). Rows are grouped by expert,
/// each group padded to a multiple of `block_m` rows (the routing's alignment, as vLLM's
/// moe_align_block_size gives; 64 or 128), and block_expert[i] (i32) is the expert of rows
/// [block_m i, block_m (i + 1)). A tile loop over the device-resident row count (seed 002's
/// form: a persistent kernel, CUDA-graph safe, no host sync), the tile's expert a scalar
/// loaded on the GPU, ts::dot of x's [tm, tk] tile and that expert's [tk, tn] tile (tensor
/// cores for f16 and bf16; 128 rows fill two warpgroups of wgmma along M). x [T, K], w [E, K,
/// N], block_expert [T / block_m]; out [T, N] of x's dtype, rows from n_rows on zero.
/// Tunables: the N and K block sizes, num_warps (M's is block_m). block_expert must have an
/// entry per block_m rows below n_rows and each entry must be an expert: a read past its
/// end, like any masked load, gives 0 (expert 0), and an expert out of range gives zero
/// rows; Settings::check_bounds reports both.
inline auto make_grouped_matmul(ts::Settings settings = {}, int64_t block_m = 64) {
  settings.static_captures = true;  // `block_m` is fixed for the kernel object
  return ts::kernel(
      "grouped_matmul", {"x", "w", "n_rows", "block_expert"},
      [block_m](ts::Tensor x, ts::Tensor w, ts::Tensor n_rows, ts::Tensor block_expert) {
        ts::Tensor out = x.new_zeros({x.size(0), w.size(2)}).named("out");
        for (auto [tm, tn] :
             ts::tile(n_rows, w.size(2), ts::TileOptions{.block_size = {block_m, 0}})) {
          ts::Value e = block_expert(tm.id());
          ts::Value acc = ts::zeros({tm, tn});
          for (auto tk : ts::tile(x.size(1))) acc = ts::dot(x(tm, tk), w(e, tk, tn), acc);
          out(tm, tn) = acc;
        }
        return out;
      },
      settings);
}

}  // namespace examples
