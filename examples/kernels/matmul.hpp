// Matrix products. make_matmul and make_matmul_bias_relu are written as a broadcast
// multiply and a sum: the form a Helion user writes before hl.dot. tessel lowers the sum of
// products as a contraction (src/passes/contractions.hpp): the [tm, tk, tn] product is never held;
// the x and y tiles are loaded with 16-byte vectors into shared memory and each thread sums the
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

/// out = x @ y with ts::dot (Helion's hl.dot), out of x's dtype: x [M, K], y [K, N] of f16 or
/// bf16 run on tensor cores (src/passes/tensor_cores.hpp), f32 under Settings::dot_precision.
inline auto make_dot_matmul(ts::Settings settings = {}) {
  return ts::kernel(
      "dot_matmul", {"x", "y"},
      [](ts::Tensor x, ts::Tensor y) {
        ts::Tensor out = x.new_empty({x.size(0), y.size(1)}).named("out");
        for (auto [tm, tn] : ts::tile(x.size(0), y.size(1))) {
          ts::Value acc = ts::zeros({tm, tn});
          for (auto tk : ts::tile(x.size(1))) acc = ts::dot(x(tm, tk), y(tk, tn), acc);
          out(tm, tn) = acc;
        }
        return out;
      },
      settings);
}

/// out = gelu(x @ y + bias) with gelu's tanh form (torch's approximate="tanh"), bias [N]:
/// the epilogue runs on the f32 accumulator and rounds once, at the store (x's dtype).
inline auto make_matmul_bias_gelu(ts::Settings settings = {}) {
  return ts::kernel(
      "matmul_bias_gelu", {"x", "y", "bias"},
      [](ts::Tensor x, ts::Tensor y, ts::Tensor bias) {
        ts::Tensor out = x.new_empty({x.size(0), y.size(1)}).named("out");
        for (auto [tm, tn] : ts::tile(x.size(0), y.size(1))) {
          ts::Value acc = ts::zeros({tm, tn});
          for (auto tk : ts::tile(x.size(1))) acc = ts::dot(x(tm, tk), y(tk, tn), acc);
          ts::Value h = acc + bias(ts::newaxis, tn).to(ts::f32);
          out(tm, tn) = 0.5 * h * (1.0 + ts::tanh(0.7978845608028654 * (h + 0.044715 * h * h * h)));
        }
        return out;
      },
      settings);
}

/// out = (x @ y) * scale_x * scale_y as bf16 (torch._scaled_mm): x [M, K] and y [K, N] of
/// f8e4m3 or f8e5m2, products summed in f32, the scales applied to the f32 sum, one rounding
/// at the store. Rowwise false: per-tensor scales, scale_x and scale_y f32 [1] (on the
/// device, as _scaled_mm's); true: scale_x f32 [M] (one per row of x), scale_y f32 [N] (one
/// per column of y). On sm_90 the dot runs on wgmma at K blocks of 128 or more: fastest
/// where both operands are contiguous along K (y as w.transpose(0, 1) of a [N, K] tensor,
/// what _scaled_mm asks too); a row-major y is copied K-major tile by tile by the threads
/// that sum the products.
/// Smaller K blocks run on mma.sync (m16n8k32, sm_89 and later) where y is K-major, else on
/// the CUDA cores.
template <bool Rowwise>
inline auto make_scaled_fp8_matmul(ts::Settings settings) {
  return ts::kernel(
      Rowwise ? "fp8_matmul_rowwise" : "fp8_matmul", {"x", "y", "scale_x", "scale_y"},
      [](ts::Tensor x, ts::Tensor y, ts::Tensor scale_x, ts::Tensor scale_y) {
        ts::Tensor out = x.new_empty({x.size(0), y.size(1)}, ts::bf16).named("out");
        for (auto [tm, tn] : ts::tile(x.size(0), y.size(1))) {
          ts::Value acc = ts::zeros({tm, tn});
          for (auto tk : ts::tile(x.size(1))) acc = ts::dot(x(tm, tk), y(tk, tn), acc);
          if constexpr (Rowwise)
            out(tm, tn) = acc * scale_x(tm, ts::newaxis) * scale_y(ts::newaxis, tn);
          else
            out(tm, tn) = acc * (scale_x(0) * scale_y(0));
        }
        return out;
      },
      settings);
}

/// Per-tensor scales (make_scaled_fp8_matmul<false>).
inline auto make_fp8_matmul(ts::Settings settings = {}) {
  return make_scaled_fp8_matmul<false>(settings);
}

/// Row-wise scales, _scaled_mm's rowwise (make_scaled_fp8_matmul<true>).
inline auto make_fp8_matmul_rowwise(ts::Settings settings = {}) {
  return make_scaled_fp8_matmul<true>(settings);
}

/// out = x @ y (torch._int_mm): x [M, K] and y [K, N] of i8, products summed in i32 (wrapping
/// modulo 2^32), out i32 [M, N]. On sm_90 the dot runs on wgmma (s8) at K blocks of 128 or
/// more, fastest with y as w.transpose(0, 1) of a [N, K] tensor (a row-major y is copied
/// K-major by the threads that sum the products);
/// smaller K blocks run on mma.sync (m16n8k32) where y is K-major,
/// else on the CUDA cores.
inline auto make_int8_matmul(ts::Settings settings = {}) {
  return ts::kernel(
      "int8_matmul", {"x", "y"},
      [](ts::Tensor x, ts::Tensor y) {
        ts::Tensor out = x.new_empty({x.size(0), y.size(1)}, ts::i32).named("out");
        for (auto [tm, tn] : ts::tile(x.size(0), y.size(1))) {
          ts::Value acc = ts::zeros({tm, tn}, ts::i32);
          for (auto tk : ts::tile(x.size(1))) acc = ts::dot(x(tm, tk), y(tk, tn), acc);
          out(tm, tn) = acc;
        }
        return out;
      },
      settings);
}

/// W8A8 (SmoothQuant's int8 Linear): out = (x @ y) * scale_x * scale_y as bf16, x [M, K] and
/// y [K, N] of i8, summed exactly in i32, then converted to f32 and scaled per row of x
/// (scale_x f32 [M]) and per column of y (scale_y f32 [N]), one rounding at the store.
/// wgmma as make_int8_matmul.
inline auto make_int8_matmul_rowwise(ts::Settings settings = {}) {
  return ts::kernel(
      "int8_matmul_rowwise", {"x", "y", "scale_x", "scale_y"},
      [](ts::Tensor x, ts::Tensor y, ts::Tensor scale_x, ts::Tensor scale_y) {
        ts::Tensor out = x.new_empty({x.size(0), y.size(1)}, ts::bf16).named("out");
        for (auto [tm, tn] : ts::tile(x.size(0), y.size(1))) {
          ts::Value acc = ts::zeros({tm, tn}, ts::i32);
          for (auto tk : ts::tile(x.size(1))) acc = ts::dot(x(tm, tk), y(tk, tn), acc);
          out(tm, tn) = acc.to(ts::f32) * scale_x(tm, ts::newaxis) * scale_y(ts::newaxis, tn);
        }
        return out;
      },
      settings);
}

/// out[b] = x[b] @ y[b] (torch.bmm): x [B, M, K], y [B, K, N]. A batched ts::dot of 3-D
/// tiles whose batch tile holds one element (block size fixed at 1, as Helion's
/// block_size=[1, None, None]): each program multiplies the 2-D [M, K] and [K, N] tiles of
/// its batch (passes/unit_tiles.hpp), on tensor cores for f16 and bf16. Tunables:
/// block_sizes = {tm, tn, tk}, num_warps.
inline auto make_bmm(ts::Settings settings = {}) {
  return ts::kernel(
      "bmm", {"x", "y"},
      [](ts::Tensor x, ts::Tensor y) {
        ts::Tensor out = x.new_empty({x.size(0), x.size(1), y.size(2)}).named("out");
        for (auto [tb, tm, tn] :
             ts::tile(x.size(0), x.size(1), y.size(2), ts::TileOptions{.block_size = {1, 0, 0}})) {
          ts::Value acc = ts::zeros({tb, tm, tn});
          for (auto tk : ts::tile(x.size(2))) acc = ts::dot(x(tb, tm, tk), y(tb, tk, tn), acc);
          out(tb, tm, tn) = acc;
        }
        return out;
      },
      settings);
}

}  // namespace examples
