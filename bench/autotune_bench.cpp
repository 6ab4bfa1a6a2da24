// The autotuner on softmax [4096, 4096] f32, add (1-D, 64M f32) and add_2d ([8192, 8192]
// f32, whose space also has loop_orders, flatten_loops and l2_groupings), each against
// peers measured in the same run:
// - quick tuning: wall time and configs tried (target: at most 60 s);
// - the tuned kernel's time against the best of an exhaustive sweep of block sizes x
//   num_warps (other knobs at their defaults), both measured again side by side by the
//   same timing worker (target: ratio <= 1.05);
// - a second process's first call with the warm cache, not counting CUDA context
//   creation (target: < 5 ms and no NVRTC call: compile_count 0);
// (The host overhead of a cached call is bench/launch_overhead_bench.cpp's.)
//   autotune_bench [--cases softmax,add,add_2d] [--cache-dir DIR] [--no-sweep]
// The cache directory defaults to a fresh one under /tmp, so the first tuning is cold.
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "autotune/autotuner.hpp"
#include "autotune/config_space.hpp"
#include "driver/cuda_api.hpp"
#include "examples/kernels/basic.hpp"
#include "runtime/kernel_tuning.hpp"

namespace ts = tessel;
namespace at = tessel::autotune;
using Clock = std::chrono::steady_clock;

namespace {

const ts::Settings kQuick{.autotune_effort = ts::AutotuneEffort::quick};

auto make_softmax(ts::Settings s) { return examples::make_softmax_basic(s); }

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

/// A GPU tensor filled from the host (no NVRTC: the utility kernels are not used).
ts::Buffer from_host(std::vector<int64_t> shape, uint64_t seed) {
  ts::Buffer cpu = ts::Buffer::randn(shape, ts::f32, ts::cpu(), seed);
  ts::Buffer gpu = ts::Buffer::empty(shape, ts::f32, ts::cuda(0));
  ts::rt::memcpy_htod(gpu.data_ptr(), cpu.data_ptr(), cpu.numel() * 4);
  ts::rt::stream_synchronize();
  return gpu;
}

struct Case {
  std::string name;
  std::vector<ts::Buffer> args;
  std::function<ts::detail::KernelImpl&()> impl;  // the quick-tuned kernel
  std::function<void()> call;                     // one call of it
};

/// The exhaustive sweep: every valid (block size, num_warps) pair, other knobs default.
std::vector<ts::Config> sweep_configs(const at::ConfigSpace& space) {
  std::vector<ts::Config> out;
  std::vector<std::vector<int64_t>> blocks;  // per block size knob
  std::vector<int64_t> warps;
  for (const at::Knob& k : space.knobs()) {
    if (k.kind == at::Knob::block_size) blocks.push_back(k.choices);
    if (k.name == "num_warps") warps = k.choices;
  }
  // Every combination of the block sizes (odometer order) with every num_warps.
  std::vector<size_t> pick(blocks.size(), 0);
  for (bool more = true; more;) {
    std::vector<int64_t> b;
    for (size_t i = 0; i < blocks.size(); ++i) b.push_back(blocks[i][pick[i]]);
    for (int64_t w : warps) {
      at::Point p = space.point(ts::Config{.block_sizes = b, .num_warps = static_cast<int>(w)});
      if (space.valid(p)) out.push_back(space.config(p));
    }
    more = false;
    for (size_t i = 0; i < pick.size() && !more; ++i) {
      if (++pick[i] < blocks[i].size())
        more = true;
      else
        pick[i] = 0;
    }
  }
  return out;
}

std::vector<ts::detail::CallArg> call_args(const std::vector<ts::Buffer>& b) {
  std::vector<ts::detail::CallArg> args;
  for (const ts::Buffer& x : b) args.emplace_back(&x);
  return args;
}

/// Runs this executable again for a first call with the warm cache; returns its JSON.
nlohmann::json second_process(const std::string& name) {
  char self[4096] = {};
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return {{"error", "cannot find /proc/self/exe"}};
  std::string cmd = std::string("'") + self + "' --child-first-call " + name;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return {{"error", "popen failed"}};
  std::string out;
  char buf[4096];
  while (size_t got = std::fread(buf, 1, sizeof(buf), p)) out.append(buf, got);
  int status = ::pclose(p);
  auto j = nlohmann::json::parse(out, nullptr, false);
  if (status != 0 || j.is_discarded())
    return {{"error", "child failed (status " + std::to_string(status) + "): " + out}};
  return j;
}

/// The child: context first (not timed), then the first call of `name`, timed.
int child_first_call(const std::string& name) {
  ts::rt::set_device(0);
  std::vector<ts::Buffer> args =
      name == "softmax" ? std::vector<ts::Buffer>{from_host({4096, 4096}, 1)}
      : name == "add_2d"
          ? std::vector<ts::Buffer>{from_host({8192, 8192}, 1), from_host({8192, 8192}, 2)}
          : std::vector<ts::Buffer>{from_host({1 << 26}, 1), from_host({1 << 26}, 2)};
  int64_t compiles = ts::rt::compile_count(), tunes = at::tune_count();
  auto start = Clock::now();
  double call_ms = 0;
  if (name == "softmax") {
    auto k = make_softmax(kQuick);
    k(args[0]);
    call_ms = seconds_since(start) * 1e3;
  } else if (name == "add_2d") {
    auto k = examples::make_add_2d(kQuick);
    k(args[0], args[1]);
    call_ms = seconds_since(start) * 1e3;
  } else {
    auto k = examples::make_add(kQuick);
    k(args[0], args[1]);
    call_ms = seconds_since(start) * 1e3;
  }
  ts::rt::stream_synchronize();
  double done_ms = seconds_since(start) * 1e3;
  nlohmann::json j{{"first_call_ms", call_ms},
                   {"first_call_with_sync_ms", done_ms},
                   {"compile_count", ts::rt::compile_count() - compiles},
                   {"tune_count", at::tune_count() - tunes}};
  std::printf("%s\n", j.dump().c_str());
  return 0;
}

void run_case(Case& c, bool sweep) {
  std::printf("\n== %s ==\n", c.name.c_str());
  // 1. Quick tuning, as the first call does it (the result is stored in the cache).
  at::TuneOptions quick;
  quick.effort = ts::AutotuneEffort::quick;
  auto t0 = Clock::now();
  at::TuneResult tuned = ts::rt::tune_kernel(c.impl(), call_args(c.args), quick, /*apply=*/true);
  c.call();
  ts::rt::stream_synchronize();
  double tune_s = seconds_since(t0);
  if (!tuned.best) {
    std::printf("quick tuning found no config: %s\n", tuned.note.c_str());
    return;
  }
  std::printf(
      "quick tuning: %.1f s (target <= 60 s), %zu configs tried (%d failed, %d rejected)%s\n",
      tune_s, tuned.trials.size(), tuned.failed, tuned.rejected,
      tuned.from_cache ? " [from cache!]" : "");
  std::printf("tuned config: %s  %.2f us\n", tuned.best->to_cpp().c_str(), tuned.best_us);

  // 2. The exhaustive sweep of block sizes x num_warps, then both winners side by side.
  if (sweep) {
    at::ConfigSpace space(ts::rt::traced_graph(c.impl(), call_args(c.args)), {}, c.name);
    at::TuneOptions list;
    list.search = at::SearchKind::list;
    list.list = sweep_configs(space);
    list.budget = at::Budget{100000, 1e9};
    list.use_cache = false;
    auto s0 = Clock::now();
    at::TuneResult swept = ts::rt::tune_kernel(c.impl(), call_args(c.args), list);
    double sweep_s = seconds_since(s0);
    if (!swept.best) {
      std::printf("sweep found no config: %s\n", swept.note.c_str());
      return;
    }
    std::printf("sweep: %zu configs in %.1f s, best %s  %.2f us\n", swept.trials.size(), sweep_s,
                swept.best->to_cpp().c_str(), swept.best_us);
    at::TuneOptions pair;
    pair.search = at::SearchKind::list;
    pair.list = {*tuned.best, *swept.best};
    pair.use_cache = false;
    at::TuneResult again = ts::rt::tune_kernel(c.impl(), call_args(c.args), pair);
    double tuned_us = again.trials.at(0).result.time_us;
    double sweep_us = again.trials.size() > 1 ? again.trials[1].result.time_us : tuned_us;
    std::printf("side by side: tuned %.2f us, sweep best %.2f us, ratio %.3f (target <= 1.05)\n",
                tuned_us, sweep_us, tuned_us / sweep_us);
  }

  // 3. A second process's first call with the warm cache.
  nlohmann::json child = second_process(c.name);
  if (child.contains("error"))
    std::printf("second process: %s\n", child["error"].get<std::string>().c_str());
  else
    std::printf(
        "second process first call: %.2f ms (%.2f ms with sync; target < 5 ms), NVRTC compiles "
        "%lld "
        "(target 0), tunings %lld\n",
        child["first_call_ms"].get<double>(), child["first_call_with_sync_ms"].get<double>(),
        static_cast<long long>(child["compile_count"].get<int64_t>()),
        static_cast<long long>(child["tune_count"].get<int64_t>()));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tessel autotuner benchmark"};
  std::string cases = "softmax,add,add_2d", cache_dir, child;
  bool no_sweep = false;
  app.add_option("--cases", cases, "comma-separated: softmax, add, add_2d");
  app.add_option("--cache-dir", cache_dir, "TESSEL_CACHE_DIR to use (default: a fresh directory)");
  app.add_flag("--no-sweep", no_sweep, "skip the exhaustive sweep");
  app.add_option("--child-first-call", child, "internal: the second process")->group("");
  CLI11_PARSE(app, argc, argv);
  if (!ts::rt::cuda_available()) {
    std::printf("no GPU: %s\n", ts::rt::cuda_unavailable_reason().c_str());
    return 0;
  }
  if (!child.empty()) return child_first_call(child);
  if (cache_dir.empty())
    cache_dir = (std::filesystem::temp_directory_path() /
                 ("tessel_autotune_bench_" + std::to_string(::getpid())))
                    .string();
  ::setenv("TESSEL_CACHE_DIR", cache_dir.c_str(), 1);
  ::unsetenv("TESSEL_SKIP_CACHE");
  std::printf("device: %s, %d SMs; cache %s\n", ts::rt::device_name(0).c_str(), ts::rt::sm_count(0),
              cache_dir.c_str());

  auto softmax = make_softmax(kQuick);
  auto add = examples::make_add(kQuick);
  auto add_2d = examples::make_add_2d(kQuick);
  std::vector<Case> all;
  std::vector<std::string> names;
  for (size_t b = 0, e; b <= cases.size(); b = e + 1) {
    e = cases.find(',', b);
    if (e == std::string::npos) e = cases.size();
    names.push_back(cases.substr(b, e - b));
  }
  auto wanted = [&](const char* n) {
    return std::find(names.begin(), names.end(), n) != names.end();
  };
  if (wanted("softmax")) {
    Case c{"softmax",
           {from_host({4096, 4096}, 1)},
           [&]() -> ts::detail::KernelImpl& { return softmax.impl(); },
           {}};
    c.call = [&softmax, x = c.args[0]] { softmax(x); };
    all.push_back(c);
  }
  if (wanted("add_2d")) {
    Case c{"add_2d",
           {from_host({8192, 8192}, 1), from_host({8192, 8192}, 2)},
           [&]() -> ts::detail::KernelImpl& { return add_2d.impl(); },
           {}};
    c.call = [&add_2d, x = c.args[0], y = c.args[1]] { add_2d(x, y); };
    all.push_back(c);
  }
  if (wanted("add")) {
    Case c{"add",
           {from_host({1 << 26}, 1), from_host({1 << 26}, 2)},
           [&]() -> ts::detail::KernelImpl& { return add.impl(); },
           {}};
    c.call = [&add, x = c.args[0], y = c.args[1]] { add(x, y); };
    all.push_back(c);
  }
  for (Case& c : all) run_case(c, !no_sweep);
  return 0;
}
