// Matmul written as a broadcast multiply and a sum (examples/kernels/matmul.hpp), lowered
// as a contraction on the CUDA cores (src/passes/contractions.hpp).
//   compile   NVRTC time of one candidate, block sizes 64x64x32 with 4 warps (no GPU needed)
//   f32 GEMM  TFLOP/s at M = N = K = --n over a few configs (block sizes, warps, num_stages),
//             and the ratio to cuBLAS SGEMM
//             (FP32 math, no TF32) measured in the same run, where cuBLAS was found
//   matmul_bench [--n N] [--iters N] [--compile-only]
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/gpu_timer.hpp"
#include "driver/cuda_api.hpp"
#include "examples/kernels/matmul.hpp"

#ifdef TESSEL_BENCH_CUBLAS
#include <cublas_v2.h>
#endif

namespace ts = tessel;

static ts::Config config(int64_t m, int64_t n, int64_t k, int warps) {
  return ts::Config{.block_sizes = std::vector<int64_t>{m, n, k}, .num_warps = warps};
}

int main(int argc, char** argv) {
  CLI::App app{"tessel CUDA-core matmul benchmark"};
  int64_t n = 4096;
  int iters = 5;
  bool compile_only = false;
  app.add_option("--n", n, "M = N = K");
  app.add_option("--iters", iters, "calls per timed round");
  app.add_flag("--compile-only", compile_only, "only the NVRTC compile time");
  CLI11_PARSE(app, argc, argv);

  {
    ts::Buffer x = ts::Buffer::zeros({1024, 1024}, ts::f32),
               y = ts::Buffer::zeros({1024, 1024}, ts::f32);
    auto k = examples::make_matmul(ts::Settings{.config = config(64, 64, 32, 4)});
    auto t0 = std::chrono::steady_clock::now();
    k.cuda(true, x, y);  // generates and compiles with NVRTC for the target
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("compile  matmul 64x64x32, 4 warps: %.2f s (NVRTC, one candidate)\n", s);
  }
  if (compile_only) return 0;
  if (!ts::rt::cuda_available()) {
    std::printf("no GPU: %s\n", ts::rt::cuda_unavailable_reason().c_str());
    return 0;
  }
  std::printf("device: %s, M = N = K = %lld, f32\n", ts::rt::device_name(0).c_str(),
              static_cast<long long>(n));
  ts::Buffer x = ts::Buffer::randn({n, n}, ts::f32, ts::cuda(0), 1);
  ts::Buffer y = ts::Buffer::randn({n, n}, ts::f32, ts::cuda(0), 2);
  const double flop = 2.0 * static_cast<double>(n) * n * n;
  double peer = 0;
#ifdef TESSEL_BENCH_CUBLAS
  {
    cublasHandle_t h;
    cublasCreate(&h);
    cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH);  // FP32 FMA, no TF32
    ts::Buffer c = ts::Buffer::empty({n, n}, ts::f32, ts::cuda(0));
    const float one = 1, zero = 0;
    const int ni = static_cast<int>(n);
    double ms = bench::gpu_time_ms(
        [&] {
          // Row-major out = x @ y is column-major out^T = y^T @ x^T.
          cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &one,
                      static_cast<const float*>(y.data_ptr()), ni,
                      static_cast<const float*>(x.data_ptr()), ni, &zero,
                      static_cast<float*>(c.data_ptr()), ni);
        },
        iters);
    peer = flop / ms / 1e9;
    std::printf("%-10s %-34s %9.3f ms %8.2f TFLOP/s\n", "cuBLAS", "SGEMM (pedantic FP32)", ms,
                peer);
    cublasDestroy(h);
  }
#else
  std::printf("cuBLAS not found at build time: no peer ratio\n");
#endif
  // num_stages S >= 2: the factors' next tiles load while this one's products are summed.
  for (auto [bm, bn, bk, w, stages] :
       std::vector<std::tuple<int64_t, int64_t, int64_t, int, int>>{{64, 64, 32, 4, 1},
                                                                    {64, 64, 32, 4, 2},
                                                                    {64, 64, 32, 4, 3},
                                                                    {128, 64, 32, 8, 1},
                                                                    {128, 64, 32, 8, 2},
                                                                    {128, 128, 16, 8, 1},
                                                                    {128, 128, 16, 8, 2},
                                                                    {64, 64, 16, 4, 1},
                                                                    {128, 128, 32, 16, 1},
                                                                    {128, 128, 32, 16, 2}}) {
    ts::Config c = config(bm, bn, bk, w);
    c.num_stages = stages;
    auto k = examples::make_matmul(ts::Settings{.config = c});
    double ms = bench::gpu_time_ms([&] { k(x, y); }, iters);
    double tf = flop / ms / 1e9;
    std::string cfg = std::to_string(bm) + "x" + std::to_string(bn) + "x" + std::to_string(bk) +
                      ", " + std::to_string(w) + " warps, " + std::to_string(stages) + " st.";
    std::printf("%-10s %-34s %9.3f ms %8.2f TFLOP/s", "tessel", cfg.c_str(), ms, tf);
    if (peer > 0) std::printf(" = %.3f of cuBLAS", tf / peer);
    std::printf("\n");
  }
  return 0;
}
