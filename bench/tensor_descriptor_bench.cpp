// Loads by tensor descriptor (Config::indexing "tensor_descriptor", the TMA) against the
// same kernels with pointer loads, on [16384, 16384] tensors (f32 and bf16): achieved GB/s
// and the ratio to cuMemcpyDtoD bandwidth measured in the same run (bytes counted: each
// tensor read or written once).
//   add_2d      out(tm, tn) = x(tm, tn) + y(tm, tn)
//   transpose   out(tn, tm) = x(tm, tn).t(): with pointers the store converts through
//               shared memory; with a box the load lands there and the store converts
// Per kernel and indexing, the best of the block sizes and warp counts below.
//   tensor_descriptor_bench [--iters N] [--n N]
#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "bench/gpu_timer.hpp"
#include "driver/cuda_api.hpp"
#include "examples/kernels/basic.hpp"

namespace ts = tessel;

static int iters = 10;

static double time_ms(const std::function<void()>& f) { return bench::gpu_time_ms(f, iters); }

int main(int argc, char** argv) {
  CLI::App app{"tessel tensor descriptor (TMA) load benchmark"};
  int64_t n = 16384;
  app.add_option("--iters", iters, "calls per timed round");
  app.add_option("--n", n, "rows and columns");
  CLI11_PARSE(app, argc, argv);
  if (!ts::rt::cuda_available()) {
    std::printf("no GPU: %s\n", ts::rt::cuda_unavailable_reason().c_str());
    return 0;
  }
  std::printf("device: %s, %d SMs, [%lld, %lld]\n", ts::rt::device_name(0).c_str(),
              ts::rt::sm_count(0), static_cast<long long>(n), static_cast<long long>(n));
  const std::vector<std::vector<int64_t>> blocks{{32, 32}, {64, 64}, {32, 128}, {16, 256}};
  std::printf("%-10s %-5s %-18s %-26s %9s %9s %9s\n", "kernel", "dtype", "indexing", "config", "ms",
              "GB/s", "/memcpy");
  for (ts::DType dt : {ts::f32, ts::bf16}) {
    const int64_t bytes = n * n * ts::dtype_size(dt);
    ts::Buffer x = ts::Buffer::randn({n, n}, dt, ts::cuda(0), 2);
    ts::Buffer y = ts::Buffer::randn({n, n}, dt, ts::cuda(0), 3);
    ts::Buffer copy = ts::Buffer::empty({n, n}, dt, ts::cuda(0));
    double memcpy_ms = time_ms([&] { ts::rt::memcpy_dtod(copy.data_ptr(), x.data_ptr(), bytes); });
    double memcpy_gbs = 2.0 * bytes / memcpy_ms / 1e6;
    std::printf("%-10s %-5s %-18s %-26s %9.3f %9.1f\n", "memcpy", ts::dtype_name(dt).c_str(), "",
                "", memcpy_ms, memcpy_gbs);
    for (const char* kernel : {"add_2d", "transpose"}) {
      const int tensors = std::string(kernel) == "add_2d" ? 3 : 2;
      for (const char* indexing : {"pointer", "tensor_descriptor"}) {
        double best = 0;
        std::string best_cfg;
        for (const std::vector<int64_t>& b : blocks) {
          for (int warps : {4, 8}) {
            ts::Config cfg{.block_sizes = b,
                           .num_warps = warps,
                           .indexing = std::vector<std::string>{indexing}};
            ts::Settings s{.config = cfg};
            double ms;
            if (std::string(kernel) == "add_2d") {
              auto k = examples::make_add_2d(s);
              ms = time_ms([&] { k(x, y); });
            } else {
              auto k = examples::make_transpose(s);
              ms = time_ms([&] { k(x); });
            }
            double gbs = static_cast<double>(tensors) * bytes / ms / 1e6;
            if (gbs > best) {
              best = gbs;
              best_cfg = "block " + std::to_string(b[0]) + "x" + std::to_string(b[1]) + " warps " +
                         std::to_string(warps);
            }
          }
        }
        std::printf("%-10s %-5s %-18s %-26s %9s %9.1f %9.3f\n", kernel, ts::dtype_name(dt).c_str(),
                    indexing, best_cfg.c_str(), "", best, best / memcpy_gbs);
      }
    }
  }
  return 0;
}
