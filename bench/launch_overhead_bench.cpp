// Host overhead of a cached call: wall time per call of N back-to-back calls (no sync
// between them; a sync after each round, not timed) of a tessel kernel, against N bare
// cuLaunchKernel calls of the same compiled CUfunction with the same packed parameters,
// grid and block (recorded from one tessel call: rt::observe_launches). Rounds of the two
// alternate; printed: the medians of each and of the difference within a round's pair.
// Cases:
//   add_into      1-D x + y into out (3 tensors)
//   axpby_bias_2d 2-D out = alpha * x + y + bias[newaxis, :] (4 tensors, a scalar)
//   padded_sum    seed 002: the row count in device memory (a persistent grid)
//   add (allocs)  1-D x + y returning a new tensor (its output made and released through
//                 the block cache; the time of that alone is printed below the table)
// Target (issue 15): at most 1.5 us above the bare launch.
//   launch_overhead_bench [--calls N] [--rounds R] [--dry] [--case NAME]
// --dry needs no GPU: CPU Buffers take the GPU path with no driver call (the kernel is
// neither compiled nor launched: rt::LaunchObserver::dry), timing tessel's host part alone
// (argument checks, key, lookup, host program, parameter packing, grid).
#include <cuda.h>
#include <dlfcn.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "driver/cuda_api.hpp"
#include "driver/gpu_program.hpp"
#include "examples/kernels/basic.hpp"
#include "examples/kernels/seed002.hpp"

namespace ts = tessel;

namespace {

int calls = 256;  // per round: well below the driver's queue of pending launches
int rounds = 21;

/// Host wall time per call of one round of `calls` calls of `f`, in us; `sync` (not timed)
/// runs after it.
double round_us(const std::function<void()>& f, const std::function<void()>& sync) {
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) f();
  auto t1 = std::chrono::steady_clock::now();
  sync();
  return std::chrono::duration<double, std::micro>(t1 - t0).count() / calls;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Per round, the time per call of `calls` calls of `f` and then (when given) of `g`,
/// alternating so that both see the same host and GPU conditions (clocks, other load),
/// after 20 warm-up calls of each: the medians over the rounds of f's time, g's and the
/// difference f - g of one round's pair.
struct Timing {
  double f = 0, g = 0, difference = 0;
};
Timing time_rounds(const std::function<void()>& f, const std::function<void()>& g,
                   const std::function<void()>& sync) {
  for (int i = 0; i < 20; ++i) f();
  for (int i = 0; g && i < 20; ++i) g();
  sync();
  std::vector<double> tf, tg, diff;
  for (int r = 0; r < rounds; ++r) {
    tf.push_back(round_us(f, sync));
    if (!g) continue;
    tg.push_back(round_us(g, sync));
    diff.push_back(tf.back() - tg.back());
  }
  if (!g) return {median(tf), 0, 0};
  return {median(tf), median(tg), median(diff)};
}

using LaunchFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void**, void**);

/// The driver's cuLaunchKernel itself (libcuda is loaded by tessel already).
LaunchFn bare_launch() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  return lib ? reinterpret_cast<LaunchFn>(dlsym(lib, "cuLaunchKernel")) : nullptr;
}

struct Case {
  std::string name;
  std::function<void()> call;
};

/// Prints one row: tessel's time per call, the bare launch's (GPU) and the difference.
void run(const Case& c, bool dry, LaunchFn launch) {
  auto sync = [&] {
    if (!dry) ts::rt::stream_synchronize();
  };
  // The launch a call issues, recorded once.
  std::vector<ts::rt::LaunchRecord> rec;
  ts::rt::LaunchObserver record{.dry = dry, .record = &rec};
  ts::rt::LaunchObserver* before = ts::rt::observe_launches(&record);
  c.call();
  ts::rt::observe_launches(before);
  sync();
  if (rec.size() != 1) {
    std::printf("%-16s: %zu launches per call, expected 1\n", c.name.c_str(), rec.size());
    return;
  }
  ts::rt::LaunchObserver quiet{.dry = dry};
  before = ts::rt::observe_launches(dry ? &quiet : nullptr);
  if (dry) {
    const double host = time_rounds(c.call, nullptr, sync).f;
    ts::rt::observe_launches(before);
    std::printf("%-16s %10.3f us per call (host part, no driver call)\n", c.name.c_str(), host);
    return;
  }
  ts::rt::LaunchRecord r = rec[0];
  std::vector<void*> params;
  for (uint32_t offset : r.offsets) params.push_back(r.block.data() + offset);
  auto fn = static_cast<CUfunction>(r.fn.fn);
  const Timing t = time_rounds(
      c.call,
      [&] {
        launch(fn, r.grid[0], r.grid[1], r.grid[2], r.threads, 1, 1,
               static_cast<unsigned>(r.shared_bytes), nullptr, params.data(), nullptr);
      },
      sync);
  ts::rt::observe_launches(before);
  std::printf("%-16s %10.3f %10.3f %10.3f%s\n", c.name.c_str(), t.f, t.g, t.difference,
              t.difference > 1.5 ? "  (above the 1.5 us target)" : "");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"host overhead of a cached tessel call against a bare cuLaunchKernel"};
  bool dry = false;
  std::string only;
  app.add_option("--calls", calls, "calls per timed round");
  app.add_option("--rounds", rounds, "timed rounds (the median is printed)");
  app.add_flag("--dry", dry, "no GPU: time the host part of a call on CPU Buffers");
  app.add_option("--case", only, "run this case only (a kernel name of the table)");
  CLI11_PARSE(app, argc, argv);
  if (!dry && !ts::rt::cuda_available()) {
    std::printf("no GPU: %s (--dry times the host part alone)\n",
                ts::rt::cuda_unavailable_reason().c_str());
    return 0;
  }
  LaunchFn launch = dry ? nullptr : bare_launch();
  if (!dry && !launch) {
    std::printf("cuLaunchKernel not found in libcuda.so.1\n");
    return 1;
  }
  ts::Device dev = dry ? ts::cpu() : ts::cuda(0);
  if (!dry) std::printf("device: %s\n", ts::rt::device_name(0).c_str());
  std::printf("%d calls per round, median of %d rounds%s\n", calls, rounds,
              dry ? "" : " (tessel and bare alternating)");

  auto add_into = ts::kernel("add_into", [](ts::Tensor x, ts::Tensor y, ts::Tensor out) {
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) + y(t);
  });
  auto axpby = ts::kernel("axpby_bias_2d", [](ts::Tensor x, ts::Tensor y, ts::Tensor bias,
                                              ts::Value alpha, ts::Tensor out) {
    for (auto [tm, tn] : ts::tile(x.size(0), x.size(1)))
      out(tm, tn) = x(tm, tn) * alpha + y(tm, tn) + bias(ts::newaxis, tn);
  });
  auto padded_sum = examples::make_padded_sum_into();
  auto add = examples::make_add();

  ts::Buffer x = ts::Buffer::zeros({1024}, ts::f32, dev),
             y = ts::Buffer::zeros({1024}, ts::f32, dev);
  ts::Buffer out = ts::Buffer::zeros({1024}, ts::f32, dev);
  ts::Buffer x2 = ts::Buffer::zeros({64, 256}, ts::f32, dev);
  ts::Buffer y2 = ts::Buffer::zeros({64, 256}, ts::f32, dev);
  ts::Buffer b2 = ts::Buffer::zeros({256}, ts::f32, dev);
  ts::Buffer o2 = ts::Buffer::zeros({64, 256}, ts::f32, dev);
  ts::Buffer xs = ts::Buffer::zeros({100, 100}, ts::f32, dev);
  ts::Buffer size = ts::Buffer::scalar(80, ts::i32, dev);
  ts::Buffer os = ts::Buffer::zeros({100}, ts::f32, dev);
  std::vector<Case> cases = {
      {"add_into", [&] { add_into(x, y, out); }},
      {"axpby_bias_2d", [&] { axpby(x2, y2, b2, 0.5, o2); }},
      {"padded_sum", [&] { padded_sum(xs, size, os); }},
      {"add (allocs)", [&] { add(x, y); }},
  };
  if (!only.empty() &&
      std::none_of(cases.begin(), cases.end(), [&](const Case& c) { return c.name == only; })) {
    std::printf("no case '%s' (the cases: add_into, axpby_bias_2d, padded_sum, add (allocs))\n",
                only.c_str());
    return 2;
  }
  if (!dry) std::printf("%-16s %10s %10s %10s\n", "kernel", "tessel us", "bare us", "overhead");
  for (const Case& c : cases)
    if (only.empty() || c.name == only) run(c, dry, launch);
  // The allocating call's share that is not the kernel call: its output Buffer made and
  // released (on a GPU, through the block cache: no driver call) with nothing launched.
  if (only.empty() || only == "add (allocs)") {
    const double alloc =
        time_rounds([&] { ts::Buffer b = ts::Buffer::empty({1024}, ts::f32, dev); }, nullptr, [] {})
            .f;
    std::printf("  of which Buffer::empty({1024}, f32) and its release: %.3f us per call\n", alloc);
  }
  return 0;
}
