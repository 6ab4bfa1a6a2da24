// Persistent kernels: padded_sum with its row count in device memory (persistent grid)
// against the same kernel with a host-known count (flat pid), and CUDA graph replay
// against eager launches, per call. With --json prints one JSON object per line (for
// persistent_vs_torch.py, which adds torch's x[:n].sum(1) measured in the same run).
//   persistent_bench [--json]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

#include "bench/gpu_timer.hpp"
#include "driver/cuda_api.hpp"
#include "examples/kernels/seed002.hpp"

namespace ts = tessel;

/// GPU time per call of `f` on `stream` (20 calls per round), in ms.
static double gpu_ms(const std::function<void()>& f, void* stream) {
  return bench::gpu_time_ms(f, 20, stream);
}

/// Host wall time per call of `calls` back-to-back calls ending in a sync, in us.
static double wall_us(const std::function<void()>& f, ts::Stream s, int calls) {
  return bench::wall_time_ms(
             f, [&] { s.synchronize(); }, calls, 10) *
         1000;
}

int main(int argc, char** argv) {
  CLI::App app{"persistent kernel benchmark"};
  bool json = false;
  app.add_flag("--json", json, "one JSON object per line");
  CLI11_PARSE(app, argc, argv);
  if (!ts::rt::cuda_available()) {
    std::printf("no GPU: %s\n", ts::rt::cuda_unavailable_reason().c_str());
    return 0;
  }
  ts::Stream s = ts::Stream::create();
  const int64_t rows = int64_t{1} << 20, cols = 128;
  ts::Buffer x = ts::Buffer::randn({rows, cols}, ts::f32, ts::cuda(0), 1);
  ts::Buffer out = ts::Buffer::zeros({rows}, ts::f32, ts::cuda(0));
  ts::Config cfg{.block_sizes = std::vector<int64_t>{8}, .num_warps = 4};
  auto persistent = examples::make_padded_sum_into(ts::Settings{.config = cfg});
  auto host = examples::make_padded_sum_host_into(ts::Settings{.config = cfg});
  if (!json)
    std::printf("%-10s %12s %12s %10s %10s\n", "rows n", "persist ms", "flat ms", "ratio",
                "GB/s pers");
  for (int64_t n : {rows, rows / 2, rows / 16, int64_t{1000}}) {
    ts::Buffer size = ts::Buffer::scalar(static_cast<double>(n), ts::i32, ts::cuda(0));
    double pm = gpu_ms([&] { persistent(ts::Stream{s}, x, size, out); }, s.handle);
    double fm = gpu_ms([&] { host(ts::Stream{s}, x, n, out); }, s.handle);
    double gbs = static_cast<double>(n) * cols * 4 / pm / 1e6;
    if (json)
      std::printf(
          "{\"bench\":\"padded_sum\",\"rows\":%lld,\"cols\":%lld,\"n\":%lld,\"persistent_ms\":%.5f,"
          "\"flat_ms\":%.5f}\n",
          (long long)rows, (long long)cols, (long long)n, pm, fm);
    else
      std::printf("%-10lld %12.4f %12.4f %10.3f %10.1f\n", (long long)n, pm, fm, fm / pm, gbs);
  }
  // Graph replay vs eager launch, per call (small problem: launch-bound).
  ts::Buffer xs = ts::Buffer::randn({100, 100}, ts::f32, ts::cuda(0), 2);
  ts::Buffer size = ts::Buffer::scalar(80, ts::i32, ts::cuda(0));
  ts::Buffer o = ts::Buffer::zeros({100}, ts::f32, ts::cuda(0));
  auto small = examples::make_padded_sum_into();
  small(s, xs, size, o);
  s.synchronize();
  const int per_graph = 10;
  ts::CudaGraph g = ts::CudaGraph::capture(s, [&] {
    for (int i = 0; i < per_graph; ++i) small(s, xs, size, o);
  });
  double eager = wall_us([&] { small(s, xs, size, o); }, s, 1000);
  double replay = wall_us([&] { g.replay(s); }, s, 100) / per_graph;
  if (json)
    std::printf("{\"bench\":\"graph\",\"eager_us\":%.3f,\"replay_us\":%.3f}\n", eager, replay);
  else
    std::printf(
        "\nper call, x [100, 100]: eager %.2f us, graph replay %.2f us (%d calls per graph), ratio "
        "%.2f\n",
        eager, replay, per_graph, eager / replay);
  s.destroy();
  return 0;
}
