// tessel_fuzz: the differential fuzzer (tests/fuzz/program.hpp describes the programs).
//   tessel_fuzz --seed 1 --count 300 --jobs 2       CPU: interpreter vs naive, NVRTC compiles
//   tessel_fuzz --gpu --count 10000 --jobs 16       GPU vs interpreter
// Prints "N programs, M mismatches" and the failing seeds; with --print, each failing
// program shrunk and written as a C++ test. Exit status 1 when any program failed, 2
// for --gpu without a GPU.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <future>
#include <mutex>
#include <tessel/testing.hpp>
#include <thread>
#include <vector>

#include "fuzz/check.hpp"
#include "fuzz/generate.hpp"
#include "fuzz/print_cpp.hpp"
#include "fuzz/shrink.hpp"

namespace {

struct Failure {
  uint64_t seed;
  fuzz::Outcome outcome;
  bool in_prepare;  // drawing the config failed (tracing with the default config)
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tessel's differential fuzzer"};
  uint64_t seed = 1;
  int64_t count = 300;
  bool gpu = false, print = false, no_compile = false, verbose = false;
  int jobs = 0;
  double minutes = 0;
  app.add_option("--seed", seed, "first program seed");
  app.add_option("--count", count, "programs to check (seeds seed .. seed + count - 1)");
  app.add_flag(
      "--gpu", gpu,
      "compare the GPU against the interpreter (else the interpreter against the naive evaluator)");
  app.add_option("--jobs", jobs,
                 "programs checked at once (threads; default 2, with --gpu one per CPU core)");
  app.add_option("--minutes", minutes,
                 "stop starting programs after this many minutes (0: no limit)");
  app.add_flag("--print", print, "shrink each failing program and print it as a C++ test");
  app.add_flag("--no-compile", no_compile, "CPU mode: skip the NVRTC compilation");
  app.add_flag("--verbose", verbose, "print each program's description");
  CLI11_PARSE(app, argc, argv);
  if (jobs <= 0)
    jobs = gpu ? static_cast<int>(std::max(1u, std::thread::hardware_concurrency())) : 2;
  if (gpu && !tessel::gpu_available()) {
    fmt::print(stderr, "tessel_fuzz --gpu: no usable GPU here\n");
    return 2;
  }

  const auto start = std::chrono::steady_clock::now();
  auto out_of_time = [&] {
    return minutes > 0 && std::chrono::steady_clock::now() - start >
                              std::chrono::duration<double, std::ratio<60>>(minutes);
  };
  std::atomic<int64_t> next{0}, done{0};
  std::mutex mu;
  std::vector<Failure> failures;
  auto check = [&](uint64_t s) {
    fuzz::Program p = fuzz::generate(s);
    fuzz::Outcome o = fuzz::prepare(p);
    bool in_prepare = o.failed();
    if (!in_prepare) o = gpu ? fuzz::check_gpu(p) : fuzz::check_cpu(p, !no_compile);
    return std::make_tuple(p, o, in_prepare);
  };
  auto worker = [&] {
    for (;;) {
      int64_t i = next++;
      if (i >= count || out_of_time()) return;
      auto [p, o, in_prepare] = check(seed + static_cast<uint64_t>(i));
      ++done;
      std::lock_guard<std::mutex> lock(mu);
      if (verbose) fmt::print("{}", fuzz::describe(p));
      if (o.failed()) {
        fmt::print("seed {}: {}\n{}\n{}\n", p.seed, fuzz::kind_name(o.kind), o.detail,
                   fuzz::describe(p));
        failures.push_back({p.seed, o, in_prepare});
      }
      std::fflush(stdout);
    }
  };
  std::vector<std::future<void>> pool;
  for (int j = 0; j < std::max(1, jobs); ++j)
    pool.push_back(std::async(std::launch::async, worker));
  for (auto& f : pool) f.get();

  std::string seeds;
  for (const Failure& f : failures) seeds += fmt::format(" {}", f.seed);
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("{} programs, {} mismatches ({}, {:.1f} s){}{}\n", done.load(), failures.size(),
             gpu          ? "GPU vs interpreter"
             : no_compile ? "interpreter vs naive"
                          : "interpreter vs naive, NVRTC sm_90",
             secs, failures.empty() ? "" : "; failing seeds:", seeds);
  if (print) {
    for (const Failure& f : failures) {
      fuzz::Program p = fuzz::generate(f.seed);
      fuzz::prepare(p);
      auto still_fails = [&](const fuzz::Program& q) {
        fuzz::Program r = q;
        fuzz::Outcome o = f.in_prepare ? fuzz::prepare(r)
                          : gpu        ? fuzz::check_gpu(q)
                                       : fuzz::check_cpu(q, !no_compile);
        return o.kind == f.outcome.kind;
      };
      fuzz::Program small = fuzz::shrink(p, still_fails);
      fmt::print("// seed {} shrunk: {}\n{}\n", f.seed, fuzz::kind_name(f.outcome.kind),
                 fuzz::print_cpp(small));
    }
  }
  return failures.empty() ? 0 : 1;
}
