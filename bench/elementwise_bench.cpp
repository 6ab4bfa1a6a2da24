// Elementwise add and copy on 256 MiB per tensor (f32 and bf16): achieved GB/s and the
// ratio to cuMemcpyDtoD bandwidth measured in the same run, and to a hand-written
// vectorized copy kernel compiled through the same NVRTC and driver path.
// Bytes counted: copy reads and writes each tensor once (2 x 256 MiB), add 3 x 256 MiB.
//   elementwise_bench [--iters N]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <functional>
#include <vector>

#include "bench/gpu_timer.hpp"
#include "driver/cuda_api.hpp"
#include "examples/kernels/basic.hpp"

namespace ts = tessel;

static int iters = 20;

/// GPU time per call of `f`, in ms (bench/gpu_timer.hpp).
static double time_ms(const std::function<void()>& f) { return bench::gpu_time_ms(f, iters); }

static const char* kCopySource = R"(
extern "C" __global__ void hand_copy(const uint4* __restrict__ in, uint4* __restrict__ out, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (; i < n; i += stride) out[i] = in[i];
}
)";

int main(int argc, char** argv) {
  CLI::App app{"tessel elementwise bandwidth benchmark"};
  app.add_option("--iters", iters, "calls per timed round");
  CLI11_PARSE(app, argc, argv);
  if (!ts::rt::cuda_available()) {
    std::printf("no GPU: %s\n", ts::rt::cuda_unavailable_reason().c_str());
    return 0;
  }
  const int64_t bytes = int64_t{256} << 20;
  std::printf("device: %s, %d SMs\n", ts::rt::device_name(0).c_str(), ts::rt::sm_count(0));

  // Peers: cuMemcpyDtoD and a hand-written 16-byte copy kernel.
  ts::Buffer src = ts::Buffer::randn({bytes / 4}, ts::f32, ts::cuda(0), 1);
  ts::Buffer dst = ts::Buffer::empty({bytes / 4}, ts::f32, ts::cuda(0));
  double memcpy_ms = time_ms([&] { ts::rt::memcpy_dtod(dst.data_ptr(), src.data_ptr(), bytes); });
  double memcpy_gbs = 2.0 * bytes / memcpy_ms / 1e6;
  ts::rt::CompileOptions opts;
  opts.arch = ts::rt::compute_capability(0);
  ts::rt::Function hand = ts::rt::load_function(
      ts::rt::compile_cuda(kCopySource, "hand_copy.cu", opts), "hand_copy", 0);
  long long n16 = bytes / 16;
  void* in_ptr = src.data_ptr();
  void* out_ptr = dst.data_ptr();
  void* params[] = {&in_ptr, &out_ptr, &n16};
  unsigned blocks = static_cast<unsigned>(ts::rt::sm_count(0) * 8);
  double hand_ms = time_ms([&] { ts::rt::launch(hand, blocks, 1, 1, 256, 0, nullptr, params); });
  double hand_gbs = 2.0 * bytes / hand_ms / 1e6;
  std::printf("%-34s %9.3f ms %8.1f GB/s\n", "cuMemcpyDtoD (peer)", memcpy_ms, memcpy_gbs);
  std::printf("%-34s %9.3f ms %8.1f GB/s  %.3f of memcpy\n", "hand-written NVRTC copy", hand_ms,
              hand_gbs, hand_gbs / memcpy_gbs);

  std::printf("\n%-8s %-5s %-22s %9s %9s %9s %9s\n", "kernel", "dtype", "config", "ms", "GB/s",
              "/memcpy", "/hand");
  for (ts::DType dt : {ts::f32, ts::bf16}) {
    int64_t n = bytes / ts::dtype_size(dt);
    ts::Buffer x = ts::Buffer::randn({n}, dt, ts::cuda(0), 2);
    ts::Buffer y = ts::Buffer::randn({n}, dt, ts::cuda(0), 3);
    for (const char* which : {"copy", "add"}) {
      double best = 0;
      std::string best_cfg;
      for (int64_t block : {1024, 2048, 4096, 8192}) {
        for (int warps : {4, 8}) {
          ts::Config cfg{.block_sizes = std::vector<int64_t>{block}, .num_warps = warps};
          ts::Settings s{.config = cfg};
          double ms;
          if (std::string(which) == "copy") {
            auto k = examples::make_copy(s);
            ms = time_ms([&] { k(x); });
          } else {
            auto k = examples::make_add(s);
            ms = time_ms([&] { k(x, y); });
          }
          double moved = (std::string(which) == "copy" ? 2.0 : 3.0) * bytes;
          double gbs = moved / ms / 1e6;
          if (gbs > best) {
            best = gbs;
            best_cfg = cfg.to_json();
          }
          std::printf("%-8s %-5s block %-5lld warps %-2d %9.3f %9.1f %9.3f %9.3f\n", which,
                      ts::dtype_name(dt).c_str(), static_cast<long long>(block), warps, ms, gbs,
                      gbs / memcpy_gbs, gbs / hand_gbs);
        }
      }
      std::printf(
          "BEST %-4s %-5s %8.1f GB/s = %.3f of cuMemcpyDtoD, %.3f of hand copy, config %s\n", which,
          ts::dtype_name(dt).c_str(), best, best / memcpy_gbs, best / hand_gbs, best_cfg.c_str());
    }
  }
  return 0;
}
