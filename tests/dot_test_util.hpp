// Test-only kernels and references for ts::dot (tests/dot_test.cpp and its GPU twin).
#pragma once

#include <cstdint>
#include <tessel/tessel.hpp>
#include <vector>

namespace dot_test {

namespace ts = tessel;

inline ts::Config blocks(int64_t m, int64_t n, int64_t k, int warps) {
  return ts::Config{.block_sizes = std::vector<int64_t>{m, n, k}, .num_warps = warps};
}

/// blocks() with num_stages.
inline ts::Config staged_blocks(int64_t m, int64_t n, int64_t k, int warps, int stages) {
  ts::Config c = blocks(m, n, k, warps);
  c.num_stages = stages;
  return c;
}

/// out = init + x @ y in f32 (x [M, K], y [K, N]): a K loop accumulating ts::dot into
/// ts::zeros (init 0) or ts::full(init). examples::make_dot_matmul with an f32 output, so that
/// results compare without a final rounding.
inline auto make_dot(ts::Settings settings = {}, double init = 0) {
  return ts::kernel(
      "dot", {"x", "y"},
      [init](ts::Tensor x, ts::Tensor y) {
        ts::Tensor out = ts::empty({x.size(0), y.size(1)}, ts::f32).named("out");
        for (auto [tm, tn] : ts::tile(x.size(0), y.size(1))) {
          ts::Value acc = init == 0 ? ts::zeros({tm, tn}) : ts::full({tm, tn}, init);
          for (auto tk : ts::tile(x.size(1))) acc = ts::dot(x(tm, tk), y(tk, tn), acc);
          out(tm, tn) = acc;
        }
        return out;
      },
      settings);
}

/// out = x @ w^T in f32 (x [M, K], w [N, K]: a Linear layer's weight), w's tile transposed
/// in the kernel: ts::dot(x(tm, tk), w(tn, tk).t(), acc).
inline auto make_dot_wt(ts::Settings settings = {}) {
  return ts::kernel(
      "dot_wt", {"x", "w"},
      [](ts::Tensor x, ts::Tensor w) {
        ts::Tensor out = ts::empty({x.size(0), w.size(0)}, ts::f32).named("out");
        for (auto [tm, tn] : ts::tile(x.size(0), w.size(0))) {
          ts::Value acc = ts::zeros({tm, tn});
          for (auto tk : ts::tile(x.size(1))) acc = ts::dot(x(tm, tk), w(tn, tk).t(), acc);
          out(tm, tn) = acc;
        }
        return out;
      },
      settings);
}

/// out[b] = x[b] @ y[b] + bias in f32 (x [B, M, K], y [B, K, N], bias [N]): a batched ts::dot
/// of 3-D tiles whose batch tile has block 1 (passes/unit_tiles.hpp makes it each program's
/// 2-D dot), the bias indexed bias(newaxis, newaxis, tn). block_sizes = {tm, tn, tk}.
inline auto make_batched_dot(ts::Settings settings = {}) {
  return ts::kernel(
      "batched_dot", {"x", "y", "bias"},
      [](ts::Tensor x, ts::Tensor y, ts::Tensor bias) {
        ts::Tensor out = ts::empty({x.size(0), x.size(1), y.size(2)}, ts::f32).named("out");
        for (auto [tb, tm, tn] :
             ts::tile(x.size(0), x.size(1), y.size(2), ts::TileOptions{.block_size = {1, 0, 0}})) {
          ts::Value acc = ts::zeros({tb, tm, tn});
          for (auto tk : ts::tile(x.size(2))) acc = ts::dot(x(tb, tm, tk), y(tb, tk, tn), acc);
          out(tb, tm, tn) = acc + bias(ts::newaxis, ts::newaxis, tn);
        }
        return out;
      },
      settings);
}

/// out[b] = x[b] @ y[b] in f32 (x [B, M, K], y [B, K, N]), every block size tuned:
/// block_sizes = {tb, tm, tn, tk}. A batch block of 1 puts the dot on tensor cores
/// (passes/unit_tiles.hpp), larger ones keep it on the CUDA cores.
inline auto make_tiled_batched_dot(ts::Settings settings = {}) {
  return ts::kernel(
      "bmm",
      [](ts::Tensor x, ts::Tensor y) {
        ts::Tensor out = ts::empty({x.size(0), x.size(1), y.size(2)}, ts::f32);
        for (auto [tb, tm, tn] : ts::tile(x.size(0), x.size(1), y.size(2))) {
          ts::Value acc = ts::zeros({tb, tm, tn});
          for (auto tk : ts::tile(x.size(2))) acc = ts::dot(x(tb, tm, tk), y(tb, tk, tn), acc);
          out(tb, tm, tn) = acc;
        }
        return out;
      },
      settings);
}

/// A batched dot of x [B, M, K] and y [B, K, N] (its batch tile of block 1, or of the
/// config's block size with `tuned_batch`: block_sizes = {tb,} tm, tn, tk) and epilogue number
/// `epilogue` (0 to 9) of its accumulator [tb, tm, tn], stored to out [B, M, N] ([B, N, M] for
/// the transposed one, 5): the forms the unit_tiles stage rewrites (passes/unit_tiles.hpp). v is
/// a bias [N] (1, 2) or a scale per batch [B] (3).
inline auto make_batched_epilogue(int epilogue, bool tuned_batch, ts::Settings settings = {}) {
  return ts::kernel("epilogue", {"x", "y", "v"},
                    [epilogue, tuned_batch](ts::Tensor x, ts::Tensor y, ts::Tensor v) {
                      const bool moved = epilogue == 5;
                      ts::Tensor out = ts::empty(
                          {x.size(0), moved ? y.size(2) : x.size(1), moved ? x.size(1) : y.size(2)},
                          epilogue == 8 ? ts::bf16 : ts::f32);
                      ts::TileOptions options;
                      if (!tuned_batch) options.block_size = {1, 0, 0};
                      for (auto [tb, tm, tn] : ts::tile(x.size(0), x.size(1), y.size(2), options)) {
                        ts::Value acc = ts::zeros({tb, tm, tn});
                        for (auto tk : ts::tile(x.size(2)))
                          acc = ts::dot(x(tb, tm, tk), y(tb, tk, tn), acc);
                        switch (epilogue) {
                          case 0:
                            out(tb, tm, tn) = acc;
                            break;
                          case 1:
                            out(tb, tm, tn) = acc + v(ts::newaxis, ts::newaxis, tn);
                            break;
                          case 2:
                            out(tb, tm, tn) = acc + v(ts::newaxis, tn);
                            break;
                          case 3:
                            out(tb, tm, tn) = acc * v(tb, ts::newaxis, ts::newaxis);
                            break;
                          case 4:
                            out(tb, tm, tn) = ts::exp(acc - ts::max(acc, 2, true));
                            break;
                          case 5:
                            out(tb, tn, tm) = acc.permute({0, 2, 1});
                            break;
                          case 6:
                            out(tb, tm, tn) = ts::where(acc > 0, acc, acc * 0.1);
                            break;
                          case 7:
                            out(tb, tm, tn) = acc + ts::sum(acc, 0, true) + ts::sum(acc, 1, true);
                            break;
                          case 8:
                            out(tb, tm, tn) = acc.to(ts::bf16);
                            break;
                          default:
                            out(tb, tm, tn) = acc + x(tb, tm, ts::newaxis, 0).to(ts::f32);
                            break;
                        }
                      }
                      return out;
                    });
}

/// x[b] @ y[b] + bias in double, [B, M, N] row-major (x [B, M, K], y [B, K, N], bias [N]).
inline std::vector<double> batched_reference(const ts::Buffer& x, const ts::Buffer& y,
                                             const ts::Buffer& bias) {
  const std::vector<double> xv = x.contiguous().to_vector(), yv = y.contiguous().to_vector(),
                            bv = bias.to_vector();
  const int64_t nb = x.size(0), m = x.size(1), k = x.size(2), n = y.size(2);
  std::vector<double> out(static_cast<size_t>(nb * m * n), 0.0);
  for (int64_t b = 0; b < nb; ++b)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = bv[static_cast<size_t>(j)];
        for (int64_t q = 0; q < k; ++q)
          s += xv[static_cast<size_t>((b * m + i) * k + q)] *
               yv[static_cast<size_t>((b * k + q) * n + j)];
        out[static_cast<size_t>((b * m + i) * n + j)] = s;
      }
  return out;
}

/// out = (x @ y)^T in f32 [N, M] (x [M, K], y [K, N]): the accumulator stored transposed,
/// out(tn, tm) = acc.t().
inline auto make_dot_stored_transposed(ts::Settings settings = {}) {
  return ts::kernel(
      "dot_stored_transposed",
      [](ts::Tensor x, ts::Tensor y) {
        ts::Tensor out = ts::empty({y.size(1), x.size(0)}, ts::f32);
        for (auto [tm, tn] : ts::tile(x.size(0), y.size(1))) {
          ts::Value acc = ts::zeros({tm, tn});
          for (auto tk : ts::tile(x.size(1))) acc = ts::dot(x(tm, tk), y(tk, tn), acc);
          out(tn, tm) = acc.t();
        }
        return out;
      },
      settings);
}

/// out = silu(x @ wg) * (x @ wu) in f32 (x [M, K], wg and wu [K, N]): two dots in one loop
/// over K (a gated MLP's gate and up projections).
inline auto make_gate_up(ts::Settings settings = {}) {
  return ts::kernel(
      "gate_up",
      [](ts::Tensor x, ts::Tensor wg, ts::Tensor wu) {
        ts::Tensor out = ts::empty({x.size(0), wg.size(1)}, ts::f32);
        for (auto [tm, tn] : ts::tile(x.size(0), wg.size(1))) {
          ts::Value g = ts::zeros({tm, tn}), u = ts::zeros({tm, tn});
          for (auto tk : ts::tile(x.size(1))) {
            g = ts::dot(x(tm, tk), wg(tk, tn), g);
            u = ts::dot(x(tm, tk), wu(tk, tn), u);
          }
          out(tm, tn) = g * ts::sigmoid(g) * u;
        }
        return out;
      },
      settings);
}

/// x @ y in double, row-major [M, N] (x [M, K], y [K, N] on the CPU, any strides).
inline std::vector<double> reference(const ts::Buffer& x, const ts::Buffer& y) {
  const ts::Buffer xc = x.contiguous(), yc = y.contiguous();
  const std::vector<double> xv = xc.to_vector(), yv = yc.to_vector();
  const int64_t m = x.size(0), k = x.size(1), n = y.size(1);
  std::vector<double> out(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t q = 0; q < k; ++q)
      for (int64_t j = 0; j < n; ++j)
        out[static_cast<size_t>(i * n + j)] +=
            xv[static_cast<size_t>(i * k + q)] * yv[static_cast<size_t>(q * n + j)];
  return out;
}

}  // namespace dot_test
