// Transpose of a [16384, 16384] tensor (f32 and bf16): achieved GB/s and the ratio to
// cuMemcpyDtoD bandwidth measured in the same run (bytes counted: read once, written once).
//   tessel .t()       out(tn, tm) = x(tm, tn).t(): both accesses move 16-byte vectors, one of
//                     them in a layout of its own, the tile converting through shared memory
//                     (passes/access_layouts.hpp)
//   strided view      a copy kernel over the transposed view x.t(), how a transpose is
//                     written without .t(): the view is contiguous along its dim 0, so its
//                     load runs in a layout of its own (vectors along dim 0) and converts
//   transpose_bench [--iters N] [--n N]
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

// out[m, n] = x[m, n] into a new row-major tensor (x may be any strided view).
static auto make_copy_2d(ts::Settings s) {
  return ts::kernel(
      "copy_2d",
      [](ts::Tensor x) {
        ts::Tensor out = x.new_empty({x.size(0), x.size(1)});
        for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) out(tm, tn) = x(tm, tn);
        return out;
      },
      s);
}

int main(int argc, char** argv) {
  CLI::App app{"tessel transpose bandwidth benchmark"};
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
  const std::vector<std::vector<int64_t>> blocks{{32, 32},  {64, 64},  {32, 64}, {64, 32},
                                                 {32, 128}, {128, 32}, {16, 128}};
  std::printf("%-14s %-5s %-24s %9s %9s %9s\n", "kernel", "dtype", "config", "ms", "GB/s",
              "/memcpy");
  for (ts::DType dt : {ts::f32, ts::bf16}) {
    const int64_t bytes = n * n * ts::dtype_size(dt);
    ts::Buffer x = ts::Buffer::randn({n, n}, dt, ts::cuda(0), 2);
    ts::Buffer copy = ts::Buffer::empty({n, n}, dt, ts::cuda(0));
    double memcpy_ms = time_ms([&] { ts::rt::memcpy_dtod(copy.data_ptr(), x.data_ptr(), bytes); });
    double memcpy_gbs = 2.0 * bytes / memcpy_ms / 1e6;
    std::printf("%-14s %-5s %-24s %9.3f %9.1f\n", "cuMemcpyDtoD", ts::dtype_name(dt).c_str(), "",
                memcpy_ms, memcpy_gbs);
    ts::Buffer xt = x.view_as_strided({n, n}, {1, n}, 0);
    for (const char* which : {"tessel .t()", "strided view"}) {
      double best = 0;
      std::string best_cfg;
      for (const std::vector<int64_t>& b : blocks) {
        for (int warps : {4, 8}) {
          ts::Config cfg{.block_sizes = b, .num_warps = warps};
          ts::Settings s{.config = cfg};
          double ms;
          if (std::string(which) == "tessel .t()") {
            auto k = examples::make_transpose(s);
            ms = time_ms([&] { k(x); });
          } else {
            auto k = make_copy_2d(s);
            ms = time_ms([&] { k(xt); });
          }
          double gbs = 2.0 * bytes / ms / 1e6;
          if (gbs > best) {
            best = gbs;
            best_cfg = cfg.to_json();
          }
          std::printf("%-14s %-5s block %-4lld x %-4lld warps %d %9.3f %9.1f %9.3f\n", which,
                      ts::dtype_name(dt).c_str(), static_cast<long long>(b[0]),
                      static_cast<long long>(b[1]), warps, ms, gbs, gbs / memcpy_gbs);
        }
      }
      std::printf("BEST %-13s %-5s %8.1f GB/s = %.3f of cuMemcpyDtoD, config %s\n", which,
                  ts::dtype_name(dt).c_str(), best, best / memcpy_gbs, best_cfg.c_str());
    }
  }
  return 0;
}
