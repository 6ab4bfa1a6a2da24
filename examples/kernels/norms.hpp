// Row-wise reductions and normalizations (issue 3): softmax (whole row in registers, and
// online: Helion's per-chunk form softmax_two_pass and per-lane statistics
// softmax_online), layer_norm, rms_norm, cross_entropy (whole row, and online:
// cross_entropy_online), a row sum and seed 002's padded_sum with a host-known bound.
// Each factory takes the kernel's ts::Settings, as in basic.hpp.
//
// Shapes: x is [M, N], row-major or any strides. Reductions run over dim 1 (the N
// columns). f16/bf16 inputs are computed in f32 (loaded with .to(ts::f32)) and rounded to
// the input dtype once, at the store, as torch does.
//
// Tunables (ts::Config):
//   block_sizes      the row tile (rows per program); the online kernels (softmax_two_pass,
//                    softmax_online, cross_entropy_online): {rows, column chunk}.
//   reduction_loops  kernels that declare ts::register_reduction_dim(x.size(1)) (softmax,
//                    layer_norm, rms_norm, cross_entropy, row sums): unset = persistent
//                    reduction (the whole row in registers), {C} = looped reduction over
//                    chunks of C columns.
#pragma once

#include <cmath>
#include <limits>
#include <tessel/tessel.hpp>

namespace examples {
namespace ts = tessel;

/// Softmax over each row: out[m, :] = exp(x[m, :] - max(x[m, :])) / sum(exp(x[m, :] - max)).
/// x: [M, N] f32/f16/bf16; out: [M, N], x's dtype, computed in f32. The division is a
/// multiplication by the reciprocal of the row's sum (one division per row instead of
/// one per element; within 1 ulp of f32 division, as torch's softmax kernels do).
/// Source: Helion examples/softmax.py `softmax` / `softmax_decomposed` (the whole row,
/// x[tile_m, :], held in registers; max, exp, sum, divide).
inline auto make_softmax(ts::Settings settings = {}) {
  return ts::kernel(
      "softmax", {"x"},
      [](ts::Tensor x) {
        ts::Tensor out = ts::empty_like(x).named("out");
        ts::register_reduction_dim(x.size(1));
        for (auto tm : ts::tile(x.size(0))) {
          ts::Value row = x(tm, ts::all).to(ts::f32).named("row");
          ts::Value e = ts::exp(row - ts::max(row, 1, /*keepdim=*/true)).named("e");
          out(tm, ts::all) = e * (1.0 / ts::sum(e, 1, /*keepdim=*/true));
        }
        return out;
      },
      settings);
}

/// Online softmax: the same result as make_softmax, reading each row twice in chunks of
/// columns instead of holding it in registers. The first loop carries the running maximum
/// mi and the running denominator di (rescaled by exp(mi - mi_next) when the maximum
/// grows); the second writes exp(x - mi) / di.
/// x: [M, N] f32/f16/bf16; out: [M, N], x's dtype, computed in f32.
/// Config::block_sizes = {rows per program, column chunk}: both are declared with
/// ts::register_block_size, and the column chunk is shared by the two inner loops.
/// Source: Helion examples/softmax.py `softmax_two_pass` (Milakov & Gimelshein 2018,
/// "Online normalizer calculation for softmax").
inline auto make_softmax_two_pass(ts::Settings settings = {}) {
  return ts::kernel(
      "softmax_two_pass",
      [](ts::Tensor x) {
        ts::Tensor out = ts::empty_like(x);
        ts::BlockSize block_m = ts::register_block_size();
        ts::BlockSize block_n = ts::register_block_size();
        for (auto tm : ts::tile(x.size(0), {.block_size = block_m})) {
          ts::Value mi = ts::full({tm}, -std::numeric_limits<double>::infinity(), ts::f32);
          ts::Value di = ts::zeros({tm}, ts::f32);
          for (auto tn : ts::tile(x.size(1), {.block_size = block_n})) {
            ts::Value v = x(tm, tn).to(ts::f32);
            ts::Value local = ts::max(v, 1);
            ts::Value mi_next = ts::maximum(mi, local);
            di =
                di * ts::exp(mi - mi_next) + ts::sum(ts::exp(v - mi_next(ts::all, ts::newaxis)), 1);
            mi = mi_next;
          }
          ts::Value inv_di = 1.0 / di;
          for (auto tn : ts::tile(x.size(1), {.block_size = block_n})) {
            ts::Value v = x(tm, tn).to(ts::f32);
            out(tm, tn) = ts::exp(v - mi(ts::all, ts::newaxis)) * inv_di(ts::all, ts::newaxis);
          }
        }
        return out;
      },
      settings);
}

/// Per-lane statistics of an online softmax: the running maximum mi and denominator di
/// of each position of a [rows, block_n] block (a ts::register_block_size dimension, lined
/// up with the chunks of a loop over columns). Each position keeps its own pair over the
/// chunks it sees; the pairs are combined once per row after the loop:
///   m = max_j mi[j],  d = sum_j di[j] * exp(mi[j] - m).
/// Per element one exp: with hi = max(mi, v) and lo = min(mi, v), t = exp(lo - hi) and
/// di = v > mi ? di * t + 1 : di + t. mi starts at -FLT_MAX (not -inf, so that no lane
/// computes -inf - -inf); columns past the row's end must be passed as -inf.
/// Source: Milakov & Gimelshein 2018, "Online normalizer calculation for softmax" (the
/// per-element update), kept per lane as in Helion examples/long_sum.py's
/// `hl.zeros([tile_m, block_size_n])` accumulator.
struct LaneMaxSum {
  ts::Value mi, di;  // [rows, block_n] f32

  LaneMaxSum(const ts::Tile& tm, const ts::BlockSize& block_n)
      : mi(ts::full({tm, block_n}, -std::numeric_limits<float>::max(), ts::f32)),
        di(ts::zeros({tm, block_n}, ts::f32)) {}

  /// Adds a chunk v: [rows, chunk] f32, chunk lined up with block_n.
  void update(const ts::Value& v) {
    ts::Value hi = ts::maximum(mi, v);
    ts::Value t = ts::exp(ts::minimum(mi, v) - hi);
    di = ts::where(v > mi, di * t + 1.0, di + t);
    mi = hi;
  }
  /// The row maximum m: [rows] f32.
  ts::Value row_max() const { return ts::max(mi, 1); }
  /// The row denominator sum(exp(x - m)): [rows] f32, for m = row_max().
  ts::Value row_sum(const ts::Value& m) const {
    return ts::sum(di * ts::exp(mi - m(ts::all, ts::newaxis)), 1);
  }
};

/// Online softmax with per-lane statistics: the same result as make_softmax, reading
/// each row twice in chunks, without a reduction per chunk: the first loop keeps a
/// LaneMaxSum (one exp per element), combined once per row; the second writes
/// exp(x - m) / d.
/// x: [M, N] f32/f16/bf16; out: [M, N], x's dtype, computed in f32.
/// Config::block_sizes = {rows per program, column chunk}.
/// Source: LaneMaxSum's.
inline auto make_softmax_online(ts::Settings settings = {}) {
  return ts::kernel(
      "softmax_online",
      [](ts::Tensor x) {
        ts::Tensor out = ts::empty_like(x);
        ts::BlockSize block_m = ts::register_block_size();
        ts::BlockSize block_n = ts::register_block_size();
        for (auto tm : ts::tile(x.size(0), {.block_size = block_m})) {
          LaneMaxSum s(tm, block_n);
          for (auto tn : ts::tile(x.size(1), {.block_size = block_n}))
            s.update(ts::where(tn.index() < x.size(1), x(tm, tn).to(ts::f32),
                               -std::numeric_limits<double>::infinity()));
          ts::Value m = s.row_max();
          ts::Value inv = 1.0 / s.row_sum(m);
          for (auto tn : ts::tile(x.size(1), {.block_size = block_n}))
            out(tm, tn) = ts::exp(x(tm, tn).to(ts::f32) - m(ts::all, ts::newaxis)) *
                          inv(ts::all, ts::newaxis);
        }
        return out;
      },
      settings);
}

/// Layer norm forward over each row, with an affine weight and bias:
///   mean = sum(x[m, :]) / N,  var = sum((x[m, :] - mean)^2) / N  (biased, as torch),
///   out[m, n] = (x[m, n] - mean) * rsqrt(var + eps) * weight[n] + bias[n].
/// x: [M, N] f32/f16/bf16; weight, bias: [N] (any float dtype); eps: a symbolic scalar
/// (a double at the call; changing it does not recompile). Mean and variance in f32;
/// out: [M, N], x's dtype. The variance is the two-pass (centered) form.
/// Source: torch.nn.functional.layer_norm; Helion examples/layer_norm.py `layer_norm_fwd`.
inline auto make_layer_norm(ts::Settings settings = {}) {
  return ts::kernel(
      "layer_norm", {"x", "weight", "bias", "eps"},
      [](ts::Tensor x, ts::Tensor weight, ts::Tensor bias, ts::Value eps) {
        ts::Tensor out = ts::empty_like(x).named("out");
        ts::register_reduction_dim(x.size(1));
        for (auto tm : ts::tile(x.size(0))) {
          ts::Value row = x(tm, ts::all).to(ts::f32).named("row");
          ts::Value centered = (row - ts::mean(row, 1, /*keepdim=*/true)).named("centered");
          ts::Value var = ts::mean(centered * centered, 1, /*keepdim=*/true).named("var");
          ts::Value normalized = (centered * ts::rsqrt(var + eps)).named("normalized");
          out(tm, ts::all) = normalized * weight(ts::all).to(ts::f32) + bias(ts::all).to(ts::f32);
        }
        return out;
      },
      settings);
}

/// The body of rms_norm: for each row tile,
///   out[m, n] = x[m, n] * rsqrt(sum(x[m, :]^2) / N + eps) * weight[n],
/// computed in f32 and stored in out's dtype. x, out: [M, N]; weight: [N].
inline void rms_norm_rows(ts::Tensor x, ts::Tensor weight, ts::Value eps, ts::Tensor out) {
  ts::register_reduction_dim(x.size(1));
  for (auto tm : ts::tile(x.size(0))) {
    ts::Value row = x(tm, ts::all).to(ts::f32).named("row");
    ts::Value inv_rms = ts::rsqrt(ts::mean(row * row, 1, /*keepdim=*/true) + eps).named("inv_rms");
    out(tm, ts::all) = row * inv_rms * weight(ts::all).to(ts::f32);
  }
}

/// RMS norm forward over each row, with a weight:
///   out[m, n] = x[m, n] * rsqrt(sum(x[m, :]^2) / N + eps) * weight[n].
/// x: [M, N] f32/f16/bf16; weight: [N] (any float dtype); eps: a symbolic scalar.
/// Computed in f32; out: [M, N], x's dtype.
/// Source: Zhang & Sennrich 2019 (RMSNorm); torch.nn.functional.rms_norm; Helion
/// examples/rms_norm.py `rms_norm_fwd`.
inline auto make_rms_norm(ts::Settings settings = {}) {
  return ts::kernel(
      "rms_norm", {"x", "weight", "eps"},  // names in generated code (x, x_size0, ...)
      [](ts::Tensor x, ts::Tensor weight, ts::Value eps) {
        ts::Tensor out = ts::empty_like(x).named("out");
        rms_norm_rows(x, weight, eps, out);
        return out;
      },
      settings);
}

/// rms_norm into `out`, a tensor the caller allocates: out: [M, N] (any strides), any float
/// dtype (the f32 result is rounded to it); x, weight and eps as in make_rms_norm. Returns
/// nothing, so a call allocates no memory: what a torch op needs (its output comes from
/// torch's allocator, and a call captured in a CUDA graph writes the same tensor on every
/// replay). examples/torch_extension registers it as torch.ops.tessel_examples.rms_norm.
inline auto make_rms_norm_out(ts::Settings settings = {}) {
  return ts::kernel(
      "rms_norm_out", {"x", "weight", "eps", "out"},
      [](ts::Tensor x, ts::Tensor weight, ts::Value eps, ts::Tensor out) {
        rms_norm_rows(x, weight, eps, out);
      },
      settings);
}

/// Cross entropy per row (torch.nn.functional.cross_entropy(reduction='none')):
///   loss[n] = logsumexp(logits[n, :]) - logits[n, target[n]],
///   logsumexp(r) = max(r) + log(sum(exp(r - max(r)))).
/// logits: [N, V] f32/f16/bf16; target: [N] i64 (or i32), each in [0, V) (no ignore_index;
/// an out-of-range target reads a masked 0 instead of faulting); loss: [N] f32.
/// The target logit is a gather, logits(tm, target(tm)): the index tensor's dimension is
/// the tile's own (DECISIONS.md, "gathers zip"), so its shape is [tm], one load per row.
/// Source: Helion examples/cross_entropy.py (which gathers from a flat view,
/// tile_n.index * v + labels).
inline auto make_cross_entropy(ts::Settings settings = {}) {
  return ts::kernel(
      "cross_entropy",
      [](ts::Tensor logits, ts::Tensor target) {
        ts::Tensor loss = ts::empty({logits.size(0)}, ts::f32);
        ts::register_reduction_dim(logits.size(1));
        for (auto tm : ts::tile(logits.size(0))) {
          ts::Value labels = target(tm);
          ts::Value picked = logits(tm, labels).to(ts::f32);
          ts::Value row = logits(tm, ts::all).to(ts::f32);
          ts::Value m = ts::max(row, 1);
          ts::Value lse = m + ts::log(ts::sum(ts::exp(row - m(ts::all, ts::newaxis)), 1));
          loss(tm) = lse - picked;
        }
        return loss;
      },
      settings);
}

/// Cross entropy per row as make_cross_entropy, reading each row once in chunks of
/// columns with per-lane statistics (LaneMaxSum) instead of holding the row in registers:
///   loss[n] = m + log(d) - logits[n, target[n]]
/// with (m, d) the combined row maximum and denominator.
/// logits: [N, V] f32/f16/bf16; target: [N] i64 (or i32), each in [0, V); loss: [N] f32.
/// Config::block_sizes = {rows per program, column chunk}.
/// Source: torch.nn.functional.cross_entropy(reduction='none'); the online logsumexp of
/// Milakov & Gimelshein 2018.
inline auto make_cross_entropy_online(ts::Settings settings = {}) {
  return ts::kernel(
      "cross_entropy_online",
      [](ts::Tensor logits, ts::Tensor target) {
        ts::Tensor loss = ts::empty({logits.size(0)}, ts::f32);
        ts::BlockSize block_m = ts::register_block_size();
        ts::BlockSize block_n = ts::register_block_size();
        for (auto tm : ts::tile(logits.size(0), {.block_size = block_m})) {
          LaneMaxSum s(tm, block_n);
          for (auto tn : ts::tile(logits.size(1), {.block_size = block_n}))
            s.update(ts::where(tn.index() < logits.size(1), logits(tm, tn).to(ts::f32),
                               -std::numeric_limits<double>::infinity()));
          ts::Value m = s.row_max();
          loss(tm) = m + ts::log(s.row_sum(m)) - logits(tm, target(tm)).to(ts::f32);
        }
        return loss;
      },
      settings);
}

/// Row sum: out[m] = sum(x[m, :]). x: [M, N] any dtype; out: [M] in x's dtype
/// (f16/bf16 accumulate in f32 and round once; integers accumulate in i64), as torch.sum.
inline auto make_row_sum(ts::Settings settings = {}) {
  return ts::kernel(
      "row_sum",
      [](ts::Tensor x) {
        ts::Tensor out = x.new_empty({x.size(0)});
        ts::register_reduction_dim(x.size(1));
        for (auto tm : ts::tile(x.size(0))) out(tm) = ts::sum(x(tm, ts::all), 1);
        return out;
      },
      settings);
}

/// Seed 002's padded_sum with a host-known bound: out[i] = sum(x[i, :]) for i < n, and
/// out[i] = 0 for n <= i < M (new_zeros). x: [M, N] any dtype; n: a symbolic integer
/// argument (changing it does not recompile); a bound outside [0, M] acts as clamped to it
/// (the loads and stores are masked to the tensors' extents), except that a launch of
/// 2^31 programs or more (a bound of 2^31 or more with one row per program) is a
/// UserError, as a grid cannot hold it: a persistent pid_type runs any bound. out: [M] in
/// x's dtype.
/// The device-resident bound (`tile(size)`, a persistent kernel) is seed002.hpp.
inline auto make_padded_sum_host(ts::Settings settings = {}) {
  return ts::kernel(
      "padded_sum_host",
      [](ts::Tensor x, ts::Value n) {
        ts::Tensor out = x.new_zeros({x.size(0)});
        ts::register_reduction_dim(x.size(1));
        for (auto tn : ts::tile(n)) out(tn) = ts::sum(x(tn, ts::all), 1);
        return out;
      },
      settings);
}

}  // namespace examples
