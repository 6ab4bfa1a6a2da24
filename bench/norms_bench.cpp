// Row-wise reductions and normalizations (examples/kernels/norms.hpp) on the GPU: softmax,
// online softmax (softmax_two_pass: Helion's form; softmax_online: per-lane statistics),
// layer_norm, rms_norm and cross_entropy (also online: cross_entropy_online), on [4096, N]
// for N in 256, 1024, 4096, 16384 and on [32768, 16384], f32 and bf16.
//
// For each (kernel, dtype, shape) a small hand-picked set of configs is timed (below,
// `candidates`) and the best is printed as one JSON object per line on stdout:
//   {"kernel":"softmax","dtype":"bf16","M":4096,"N":1024,"ms":0.0123,"gbs":1364.2,
//    "config":{...},"ok":true}
// "ok" says whether the best config's output matched a double-precision reference on the
// first and last rows. Progress and per-config timings go to stderr. bench/norms_vs_torch.py
// runs this binary and compares with torch eager in the same invocation.
//
// Timing: CUDA events around back-to-back calls (each call allocates its output, as torch
// eager does); the median over 5 rounds of the mean time of --iters calls, after 3 warmup
// calls. Bytes: every tensor read once plus every tensor written once (x and out; weight
// and bias; targets and the f32 loss), so online softmax's second read of x is not counted.
//
// Configs (rows = Config::block_sizes[0], the row tile; softmax_two_pass: {rows, column
// chunk}). Long rows take one row per program and more warps, so that each thread holds
// 8 to 32 elements of the row:
//   softmax, layer_norm, rms_norm, cross_entropy:
//     N <= 256    rows 4/8/16/32 with 4/4/8/8 warps
//     N <= 1024   rows 1/2/4/8 with 4/4/8/8 warps
//     N <= 4096   rows 1 with 2, 4, 8, 16 warps; rows 2 with 8, 16 warps; rows 1 with
//                 4 warps and maxnreg 128, 8 warps and maxnreg 64; persistent with 2
//                 stages (the next row loaded early): 4 warps maxnreg 128, 8 warps
//     N  > 4096   rows 1 with 8, 16, 32 warps; rows 1 with reduction_loops {4096} and
//                 16 warps, {2048} and 8 warps (also with num_stages 2); rows 1 with
//                 8 warps and maxnreg 128 or 80, 16 warps and maxnreg 64; persistent with 2
//                 stages: 8 warps maxnreg 128, 16 warps maxnreg 64, 32 warps; looped with x
//                 kept in L2 (x_kept): {2048}/8 warps/2 stages, {4096}/8/3, {1024}/4/3;
//                 rows 1 with 16 warps and maxnreg 40; persistent with 2 stages, 16 warps
//                 and maxnreg 48; rows 2 with 16 warps
//   softmax_online (per-lane statistics) {rows, chunk}/warps: as softmax_two_pass up to
//     N = 1024; longer rows {1,1024}/4 {1,2048}/8 {1,4096}/16 {2,1024}/8 with 2 stages,
//     and kept (first pass's loads evict_last, second's evict_first): {1,1024}/4,
//     {1,2048}/8, {2,1024}/8, {1,512}/2, and {1,1024}/4 and {1,2048}/8 with maxnreg 64;
//     {1,4096}/8, {1,8192}/16, {1,8192}/32 with 2 stages, {1,4096}/16 with 3; kept
//     {1,4096}/16 and {1,8192}/16; 4 stages: {1,4096}/16, {1,2048}/8, {1,2048}/16;
//     3 stages: kept {1,4096}/16, {1,4096}/32; the whole row as one chunk {1,N}/16 and
//     {1,N}/32, also kept
//   cross_entropy_online {rows, chunk}/warps/stages: as softmax_online up to N = 1024;
//     longer rows {1,1024}/4/2 {1,1024}/4/3 {1,1024}/2/3 {1,512}/2/3 {1,2048}/8/2
//     {1,2048}/8/3 {1,2048}/4/3 {1,4096}/16/2 {1,4096}/8/2 {1,4096}/16/3 {2,1024}/8/2
//     {1,8192}/16/2 {1,8192}/32/2 {1,N}/16/1 {1,N}/32/1
//   softmax_two_pass {rows, chunk}/warps:
//     N <= 256    {4,256}/4 {8,256}/4 {16,256}/8
//     N <= 1024   {1,1024}/4 {2,1024}/8 {4,1024}/8
//     N <= 4096   {1,1024}/4 {1,2048}/8 {1,4096}/16, and the first two with num_stages 2;
//                 {1,2048}/8 with 2 stages and the first pass kept in L2 (kept:
//                 load_eviction_policies {last, first})
//     N  > 4096   {1,2048}/8 {1,4096}/16 {1,8192}/32, and the first two with num_stages 2;
//                 {1,4096}/8 with 2 stages; {1,2048}/8 and {1,1024}/4 with 2 stages and
//                 maxnreg 48; and the 2-stage {1,4096}/8, {1,2048}/8 and the two capped
//                 ones kept; kept with more stages: {1,2048}/8 3 and 4, {1,1024}/4 4,
//                 {1,4096}/8 3; {1,4096}/16 with 3 stages, and kept with 2 and 3 (57 and
//                 60 registers at 3 stages: two programs of 512 threads per SM, where the
//                 2-stage one's 40 fit three; ptxas -v, f32 at N = 16384); {1,8192}/16
//                 with 2 stages
//
// Before timing a shape, every candidate's CUDA is generated and compiled with NVRTC in
// parallel (--jobs) into tessel's on-disk cubin cache, so the timed calls find it there.
//
//   norms_bench [--iters N] [--kernels softmax,layer_norm] [--dtypes f32,bf16]
//               [--shapes 4096x256,32768x16384] [--jobs J] [--verbose] [--compile-only]
//               [--static-shapes]
// --static-shapes specializes every kernel on exact sizes (Settings::static_shapes, Helion's
// default); without it kernels take sizes as arguments.
// --compile-only needs no GPU: it generates and compiles every candidate for sm_90 and exits.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <future>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/gpu_timer.hpp"
#include "codegen/embedded.hpp"
#include "driver/cubin_cache.hpp"
#include "driver/cuda_api.hpp"
#include "examples/kernels/norms.hpp"

namespace ts = tessel;

namespace {

int iters = 50;
bool verbose = false;
bool static_shapes = false;  // --static-shapes: Settings::static_shapes for every kernel
constexpr double kEps = 1e-5;

/// GPU time per call of `f`, in ms (bench/gpu_timer.hpp).
double time_ms(const std::function<void()>& f) { return bench::gpu_time_ms(f, iters); }

struct Shape {
  int64_t m, n;
};

/// The inputs of one (dtype, shape): x [M, N]; weight, bias [N]; targets [M] (i64).
struct Inputs {
  ts::Buffer x, w, b, target;
};

Inputs make_inputs(Shape s, ts::DType dt, ts::Device dev) {
  Inputs in;
  in.x = ts::Buffer::randn({s.m, s.n}, dt, dev, 1);
  in.w = ts::Buffer::randn({s.n}, dt, dev, 2);
  in.b = ts::Buffer::randn({s.n}, dt, dev, 3);
  std::vector<double> t(s.m);
  for (int64_t i = 0; i < s.m; ++i) t[i] = static_cast<double>((i * 7919 + 13) % s.n);
  in.target = ts::Buffer::from_vector(t, {s.m}, ts::i64, dev);
  return in;
}

const std::vector<std::string> kKernels = {
    "softmax",  "softmax_two_pass", "softmax_online",      "layer_norm",
    "rms_norm", "cross_entropy",    "cross_entropy_online"};

bool is_softmax(const std::string& k) {
  return k == "softmax" || k == "softmax_two_pass" || k == "softmax_online";
}
bool is_cross_entropy(const std::string& k) {
  return k == "cross_entropy" || k == "cross_entropy_online";
}

/// A kernel of norms.hpp with one config, called on Inputs.
struct Runner {
  std::function<ts::Buffer(const Inputs&)> call;
  std::function<std::vector<std::string>(const Inputs&)> sources;  // generated CUDA, not compiled
};

Runner make_runner(const std::string& kernel, const ts::Config& c) {
  ts::Settings s{.static_shapes = static_shapes, .config = c};
  if (kernel == "softmax") {
    auto k = examples::make_softmax(s);
    return {[k](const Inputs& in) { return k(in.x); },
            [k](const Inputs& in) { return k.cuda(false, in.x); }};
  }
  if (kernel == "softmax_two_pass") {
    auto k = examples::make_softmax_two_pass(s);
    return {[k](const Inputs& in) { return k(in.x); },
            [k](const Inputs& in) { return k.cuda(false, in.x); }};
  }
  if (kernel == "softmax_online") {
    auto k = examples::make_softmax_online(s);
    return {[k](const Inputs& in) { return k(in.x); },
            [k](const Inputs& in) { return k.cuda(false, in.x); }};
  }
  if (kernel == "layer_norm") {
    auto k = examples::make_layer_norm(s);
    return {[k](const Inputs& in) { return k(in.x, in.w, in.b, kEps); },
            [k](const Inputs& in) { return k.cuda(false, in.x, in.w, in.b, kEps); }};
  }
  if (kernel == "rms_norm") {
    auto k = examples::make_rms_norm(s);
    return {[k](const Inputs& in) { return k(in.x, in.w, kEps); },
            [k](const Inputs& in) { return k.cuda(false, in.x, in.w, kEps); }};
  }
  if (kernel == "cross_entropy") {
    auto k = examples::make_cross_entropy(s);
    return {[k](const Inputs& in) { return k(in.x, in.target); },
            [k](const Inputs& in) { return k.cuda(false, in.x, in.target); }};
  }
  if (kernel == "cross_entropy_online") {
    auto k = examples::make_cross_entropy_online(s);
    return {[k](const Inputs& in) { return k(in.x, in.target); },
            [k](const Inputs& in) { return k.cuda(false, in.x, in.target); }};
  }
  throw std::runtime_error("unknown kernel " + kernel);
}

/// Bytes read once plus bytes written once.
double bytes_moved(const std::string& kernel, Shape s, ts::DType dt) {
  double es = ts::dtype_size(dt);
  double x = static_cast<double>(s.m) * s.n * es, vec = s.n * es;
  if (kernel == "layer_norm") return 2 * x + 2 * vec;
  if (kernel == "rms_norm") return 2 * x + vec;
  if (is_cross_entropy(kernel)) return x + s.m * 8.0 + s.m * 4.0;
  return 2 * x;  // softmax, softmax_two_pass, softmax_online
}

ts::Config rows_cfg(int64_t rows, int warps) {
  return ts::Config{.block_sizes = std::vector<int64_t>{rows}, .num_warps = warps};
}
ts::Config looped_cfg(int64_t rows, int warps, int64_t chunk, int stages = 1) {
  return ts::Config{.block_sizes = std::vector<int64_t>{rows},
                    .num_warps = warps,
                    .num_stages = stages,
                    .reduction_loops = std::vector<std::optional<int64_t>>{chunk}};
}
ts::Config two_pass_cfg(int64_t rows, int64_t chunk, int warps, int stages = 1) {
  return ts::Config{
      .block_sizes = std::vector<int64_t>{rows, chunk}, .num_warps = warps, .num_stages = stages};
}

/// `c` with at most `regs` registers per thread (Config::maxnreg: more programs per SM).
ts::Config capped(ts::Config c, int regs) {
  c.maxnreg = regs;
  return c;
}

/// The online softmax's `c` with its first pass's loads kept in L2 for the second
/// (load_eviction_policies {last, first}).
ts::Config kept(ts::Config c) {
  c.load_eviction_policies =
      std::vector<ts::EvictionPolicy>{ts::EvictionPolicy::last, ts::EvictionPolicy::first};
  return c;
}

/// `c` with the loads of x marked evict_last (kept in L2: a looped reduction reads x once
/// per pass), the kernel's other loads unmarked. Loads in source order: softmax {x},
/// layer_norm {x, weight, bias}, rms_norm {x, weight}, cross_entropy {target, the target
/// logit, x}.
ts::Config x_kept(const std::string& kernel, ts::Config c) {
  using E = ts::EvictionPolicy;
  if (kernel == "softmax") c.load_eviction_policies = std::vector<E>{E::last};
  if (kernel == "layer_norm") c.load_eviction_policies = std::vector<E>{E::last, E::none, E::none};
  if (kernel == "rms_norm") c.load_eviction_policies = std::vector<E>{E::last, E::none};
  if (kernel == "cross_entropy")
    c.load_eviction_policies = std::vector<E>{E::none, E::none, E::last};
  return c;
}

/// `c` as a persistent kernel (programs loop over rows) whose next row's loads are
/// issued before this row's work (num_stages 2).
ts::Config pipelined(ts::Config c) {
  c.num_stages = 2;
  c.pid_type = ts::PidType::persistent_interleaved;
  return c;
}

/// The hand-picked configs of a kernel for rows of n elements (see the file comment).
std::vector<ts::Config> candidates(const std::string& kernel, int64_t n) {
  if (kernel == "softmax_online") {
    if (n <= 256)
      return {two_pass_cfg(4, 256, 4), two_pass_cfg(8, 256, 4), two_pass_cfg(16, 256, 8)};
    if (n <= 1024)
      return {two_pass_cfg(1, 1024, 4), two_pass_cfg(2, 1024, 8), two_pass_cfg(4, 1024, 8)};
    return {two_pass_cfg(1, 1024, 4, 2),
            two_pass_cfg(1, 2048, 8, 2),
            two_pass_cfg(1, 4096, 16, 2),
            two_pass_cfg(2, 1024, 8, 2),
            kept(two_pass_cfg(1, 1024, 4, 2)),
            kept(two_pass_cfg(1, 2048, 8, 2)),
            kept(two_pass_cfg(2, 1024, 8, 2)),
            kept(capped(two_pass_cfg(1, 1024, 4, 2), 64)),
            kept(capped(two_pass_cfg(1, 2048, 8, 2), 64)),
            kept(two_pass_cfg(1, 512, 2, 2)),
            two_pass_cfg(1, 4096, 8, 2),
            two_pass_cfg(1, 8192, 16, 2),
            two_pass_cfg(1, 4096, 16, 3),
            kept(two_pass_cfg(1, 4096, 16, 2)),
            kept(two_pass_cfg(1, 8192, 16, 2)),
            two_pass_cfg(1, 8192, 32, 2),
            two_pass_cfg(1, 4096, 16, 4),
            two_pass_cfg(1, 2048, 8, 4),
            two_pass_cfg(1, 2048, 16, 4),
            kept(two_pass_cfg(1, 4096, 16, 3)),
            two_pass_cfg(1, 4096, 32, 3),
            two_pass_cfg(1, n, 16),
            two_pass_cfg(1, n, 32),
            kept(two_pass_cfg(1, n, 16)),
            kept(two_pass_cfg(1, n, 32))};
  }
  if (kernel == "cross_entropy_online") {
    if (n <= 1024) return candidates("softmax_online", n);
    return {
        two_pass_cfg(1, 1024, 4, 2),  two_pass_cfg(1, 1024, 4, 3),  two_pass_cfg(1, 1024, 2, 3),
        two_pass_cfg(1, 512, 2, 3),   two_pass_cfg(1, 2048, 8, 2),  two_pass_cfg(1, 2048, 8, 3),
        two_pass_cfg(1, 2048, 4, 3),  two_pass_cfg(1, 4096, 16, 2), two_pass_cfg(1, 4096, 8, 2),
        two_pass_cfg(1, 4096, 16, 3), two_pass_cfg(2, 1024, 8, 2),  two_pass_cfg(1, 8192, 16, 2),
        two_pass_cfg(1, 8192, 32, 2), two_pass_cfg(1, n, 16),       two_pass_cfg(1, n, 32)};
  }
  if (kernel == "softmax_two_pass") {
    if (n <= 256)
      return {two_pass_cfg(4, 256, 4), two_pass_cfg(8, 256, 4), two_pass_cfg(16, 256, 8)};
    if (n <= 1024)
      return {two_pass_cfg(1, 1024, 4), two_pass_cfg(2, 1024, 8), two_pass_cfg(4, 1024, 8)};
    if (n <= 4096)
      return {two_pass_cfg(1, 1024, 4),    two_pass_cfg(1, 2048, 8),
              two_pass_cfg(1, 4096, 16),   two_pass_cfg(1, 1024, 4, 2),
              two_pass_cfg(1, 2048, 8, 2), kept(two_pass_cfg(1, 2048, 8, 2))};
    return {two_pass_cfg(1, 2048, 8),
            two_pass_cfg(1, 4096, 16),
            two_pass_cfg(1, 8192, 32),
            two_pass_cfg(1, 2048, 8, 2),
            two_pass_cfg(1, 4096, 16, 2),
            two_pass_cfg(1, 4096, 8, 2),
            capped(two_pass_cfg(1, 2048, 8, 2), 48),
            capped(two_pass_cfg(1, 1024, 4, 2), 48),
            kept(two_pass_cfg(1, 4096, 8, 2)),
            kept(two_pass_cfg(1, 2048, 8, 2)),
            kept(capped(two_pass_cfg(1, 2048, 8, 2), 48)),
            kept(capped(two_pass_cfg(1, 1024, 4, 2), 48)),
            kept(two_pass_cfg(1, 2048, 8, 3)),
            kept(two_pass_cfg(1, 2048, 8, 4)),
            kept(two_pass_cfg(1, 1024, 4, 4)),
            kept(two_pass_cfg(1, 4096, 8, 3)),
            two_pass_cfg(1, 4096, 16, 3),
            kept(two_pass_cfg(1, 4096, 16, 2)),
            kept(two_pass_cfg(1, 4096, 16, 3)),
            two_pass_cfg(1, 8192, 16, 2)};
  }
  if (n <= 256) return {rows_cfg(4, 4), rows_cfg(8, 4), rows_cfg(16, 8), rows_cfg(32, 8)};
  if (n <= 1024) return {rows_cfg(1, 4), rows_cfg(2, 4), rows_cfg(4, 8), rows_cfg(8, 8)};
  if (n <= 4096)
    return {rows_cfg(1, 2),
            rows_cfg(1, 4),
            rows_cfg(1, 8),
            rows_cfg(1, 16),
            rows_cfg(2, 8),
            rows_cfg(2, 16),
            capped(rows_cfg(1, 4), 128),
            capped(rows_cfg(1, 8), 64),
            pipelined(capped(rows_cfg(1, 4), 128)),
            pipelined(rows_cfg(1, 8))};
  return {rows_cfg(1, 8),
          rows_cfg(1, 16),
          rows_cfg(1, 32),
          looped_cfg(1, 16, 4096),
          looped_cfg(1, 8, 2048),
          looped_cfg(1, 8, 2048, 2),
          capped(rows_cfg(1, 8), 128),
          capped(rows_cfg(1, 8), 80),
          capped(rows_cfg(1, 16), 64),
          pipelined(capped(rows_cfg(1, 8), 128)),
          pipelined(capped(rows_cfg(1, 16), 64)),
          pipelined(rows_cfg(1, 32)),
          x_kept(kernel, looped_cfg(1, 8, 2048, 2)),
          x_kept(kernel, looped_cfg(1, 8, 4096, 3)),
          x_kept(kernel, looped_cfg(1, 4, 1024, 3)),
          capped(rows_cfg(1, 16), 40),
          pipelined(capped(rows_cfg(1, 16), 48)),
          rows_cfg(2, 16)};
}

/// Runners, one per (kernel, config), shared by every shape and dtype (each keeps its
/// specializations).
Runner& runner(const std::string& kernel, const ts::Config& c) {
  static std::map<std::string, Runner> runners;
  std::string key = kernel + " " + c.to_json();
  auto it = runners.find(key);
  if (it == runners.end()) it = runners.emplace(key, make_runner(kernel, c)).first;
  return it->second;
}

/// The __global__ function a generated source defines (the program name NVRTC and the
/// cubin cache see is "<name>.cu", as in rt::GpuProgram).
std::string function_name(const std::string& src) {
  static const std::regex re(
      R"(__global__\s+void\s+(?:__(?:launch_bounds|maxnreg)__\([^)]*\)\s+)?(\w+)\s*\()");
  std::smatch m;
  if (!std::regex_search(src, m, re)) return "";
  return m[1];
}

/// Generates every (kernel, config)'s CUDA for `in` (on this thread: code generation is
/// not shared between threads), then compiles all of it with NVRTC on `jobs` threads
/// through the on-disk cubin cache. Returns the number of failures (printed).
int precompile(const std::vector<std::pair<std::string, ts::Config>>& work, const Inputs& in,
               int arch, int jobs) {
  struct Job {
    std::string what, source, name;
  };
  std::vector<Job> all;
  int failures = 0;
  for (const auto& [kernel, cfg] : work) {
    try {
      for (std::string& src : runner(kernel, cfg).sources(in))
        all.push_back({kernel + " " + cfg.to_json(), src, function_name(src)});
    } catch (const std::exception& e) {
      std::fprintf(stderr, "codegen failed: %s %s: %s\n", kernel.c_str(), cfg.to_json().c_str(),
                   e.what());
      ++failures;
    }
  }
  ts::rt::CompileOptions opts;
  opts.arch = arch;
  opts.headers = ts::embedded_headers();
  std::vector<std::future<std::string>> running;
  size_t next = 0;
  auto launch = [&] {
    const Job& j = all[next++];
    running.push_back(std::async(std::launch::async, [&j, &opts]() -> std::string {
      try {
        ts::rt::compile_cached(j.source, j.name + ".cu", opts);
        return "";
      } catch (const std::exception& e) {
        return j.what + ": " + e.what();
      }
    }));
  };
  // A window of `jobs` compilations at a time.
  size_t done = 0;
  while (done < all.size()) {
    while (next < all.size() && running.size() - done < static_cast<size_t>(std::max(1, jobs)))
      launch();
    std::string err = running[done++].get();
    if (!err.empty()) {
      std::fprintf(stderr, "NVRTC failed: %s\n", err.c_str());
      ++failures;
    }
  }
  return failures;
}

// ---- a check of the best config on the first and last rows, in double precision ----

std::vector<double> row_of(const ts::Buffer& t, int64_t r) {
  return t.narrow(0, r, 1).to(ts::cpu()).to_vector();
}

/// Expected output row r (or the one loss value for cross_entropy).
std::vector<double> reference_row(const std::string& kernel, const Inputs& in, int64_t r) {
  std::vector<double> x = row_of(in.x, r);
  size_t n = x.size();
  std::vector<double> out(n);
  double mx = *std::max_element(x.begin(), x.end());
  if (is_softmax(kernel)) {
    double s = 0;
    for (double v : x) s += std::exp(v - mx);
    for (size_t j = 0; j < n; ++j) out[j] = std::exp(x[j] - mx) / s;
  } else if (kernel == "layer_norm" || kernel == "rms_norm") {
    std::vector<double> w = in.w.to(ts::cpu()).to_vector(), b = in.b.to(ts::cpu()).to_vector();
    double mean = 0, var = 0;
    if (kernel == "layer_norm")
      for (double v : x) mean += v / n;
    for (double v : x) var += (v - mean) * (v - mean) / n;
    double inv = 1 / std::sqrt(var + kEps);
    for (size_t j = 0; j < n; ++j)
      out[j] = (x[j] - mean) * inv * w[j] + (kernel == "layer_norm" ? b[j] : 0.0);
  } else {  // cross_entropy
    double s = 0;
    for (double v : x) s += std::exp(v - mx);
    int64_t t = static_cast<int64_t>(in.target.narrow(0, r, 1).to(ts::cpu()).item());
    out = {mx + std::log(s) - x[t]};
  }
  return out;
}

bool check_rows(const std::string& kernel, const Inputs& in, const ts::Buffer& out, ts::DType dt) {
  // f32 (and the f32 loss): 1e-4; bf16 outputs: 2e-2 (one rounding). Softmax outputs are
  // probabilities of about 1/N: a small atol so that the relative tolerance does the work.
  double rtol = (dt == ts::f32 || is_cross_entropy(kernel)) ? 1e-4 : 2e-2;
  double atol = is_softmax(kernel) ? 1e-6 : rtol;
  for (int64_t r : {int64_t{0}, in.x.size(0) - 1}) {
    std::vector<double> want = reference_row(kernel, in, r);
    std::vector<double> got = is_cross_entropy(kernel)
                                  ? std::vector<double>{out.narrow(0, r, 1).to(ts::cpu()).item()}
                                  : row_of(out, r);
    for (size_t j = 0; j < want.size(); ++j)
      if (!(std::abs(got[j] - want[j]) <= atol + rtol * std::abs(want[j]))) {
        std::fprintf(stderr, "MISMATCH %s %s row %lld col %zu: got %.8g want %.8g\n",
                     kernel.c_str(), ts::dtype_name(dt).c_str(), static_cast<long long>(r), j,
                     got[j], want[j]);
        return false;
      }
  }
  return true;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tessel reduction / normalization benchmark (JSON lines on stdout)"};
  std::string kernels_opt =
      "softmax,softmax_two_pass,softmax_online,layer_norm,rms_norm,cross_entropy,cross_entropy_"
      "online";
  std::string dtypes_opt = "f32,bf16";
  std::string shapes_opt = "4096x256,4096x1024,4096x4096,4096x16384,32768x16384";
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  bool compile_only = false;
  app.add_option("--iters", iters, "calls per timed round");
  app.add_option("--kernels", kernels_opt, "comma-separated kernels");
  app.add_option("--dtypes", dtypes_opt, "comma-separated dtypes (f32, bf16, f16)");
  app.add_option("--shapes", shapes_opt, "comma-separated MxN shapes");
  app.add_option("--jobs", jobs,
                 "parallel NVRTC compilations before timing (1 = compile at the first call)");
  app.add_flag("--verbose", verbose, "print every config's time to stderr");
  app.add_flag("--static-shapes", static_shapes,
               "Settings::static_shapes = true (sizes are constants of the generated code, as "
               "Helion's default)");
  app.add_flag("--compile-only", compile_only,
               "generate and compile every candidate for sm_90 (no GPU), then exit");
  CLI11_PARSE(app, argc, argv);

  std::vector<std::string> kernels = split(kernels_opt);
  for (const std::string& k : kernels)
    if (std::find(kKernels.begin(), kKernels.end(), k) == kKernels.end()) {
      std::fprintf(stderr, "unknown kernel '%s'\n", k.c_str());
      return 2;
    }
  std::vector<ts::DType> dtypes;
  for (const std::string& d : split(dtypes_opt)) dtypes.push_back(ts::dtype_from_name(d));
  std::vector<Shape> shapes;
  for (const std::string& s : split(shapes_opt)) {
    size_t x = s.find('x');
    if (x == std::string::npos) {
      std::fprintf(stderr, "bad shape '%s' (want MxN)\n", s.c_str());
      return 2;
    }
    shapes.push_back({std::stoll(s.substr(0, x)), std::stoll(s.substr(x + 1))});
  }

  if (compile_only) {
    // Source depends on N and on which sizes are 1, not on M: 64 CPU rows stand for M.
    int failures = 0, count = 0;
    auto t0 = std::chrono::steady_clock::now();
    for (ts::DType dt : dtypes)
      for (Shape s : shapes) {
        Inputs in = make_inputs({std::min<int64_t>(s.m, 64), s.n}, dt, ts::cpu());
        std::vector<std::pair<std::string, ts::Config>> work;
        for (const std::string& k : kernels)
          for (const ts::Config& c : candidates(k, s.n)) {
            work.emplace_back(k, c);
            std::fprintf(stderr, "%-16s %-4s %6lldx%-6lld %s\n", k.c_str(),
                         ts::dtype_name(dt).c_str(), static_cast<long long>(s.m),
                         static_cast<long long>(s.n), c.to_json().c_str());
          }
        count += static_cast<int>(work.size());
        failures += precompile(work, in, 90, jobs);
      }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "compiled %d candidates (%d failed) in %.1f s on %d threads\n", count,
                 failures, secs, jobs);
    return failures ? 1 : 0;
  }

  if (!ts::rt::cuda_available()) {
    std::fprintf(stderr, "no GPU: %s\n", ts::rt::cuda_unavailable_reason().c_str());
    return 1;
  }
  const int arch = ts::rt::compute_capability(0);
  std::fprintf(stderr, "device: %s, %d SMs, sm_%d; iters %d, jobs %d\n",
               ts::rt::device_name(0).c_str(), ts::rt::sm_count(0), arch, iters, jobs);

  int64_t compiles_while_timing = 0;
  for (ts::DType dt : dtypes)
    for (Shape s : shapes) {
      Inputs in = make_inputs(s, dt, ts::cuda(0));
      if (jobs > 1) {
        std::vector<std::pair<std::string, ts::Config>> work;
        for (const std::string& k : kernels)
          for (const ts::Config& c : candidates(k, s.n)) work.emplace_back(k, c);
        auto t0 = std::chrono::steady_clock::now();
        int failed = precompile(work, in, arch, jobs);
        std::fprintf(stderr, "%s [%lld, %lld]: precompiled %zu configs in %.1f s (%d failed)\n",
                     ts::dtype_name(dt).c_str(), static_cast<long long>(s.m),
                     static_cast<long long>(s.n), work.size(),
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                     failed);
      }
      for (const std::string& kernel : kernels) {
        double best_ms = 0;
        ts::Config best;
        int64_t compiles_before = ts::rt::compile_count();
        for (const ts::Config& c : candidates(kernel, s.n)) {
          Runner& r = runner(kernel, c);
          double ms;
          try {
            ms = time_ms([&] { r.call(in); });
          } catch (const std::exception& e) {
            std::fprintf(stderr, "FAILED %s %s %s: %s\n", kernel.c_str(),
                         ts::dtype_name(dt).c_str(), c.to_json().c_str(), e.what());
            continue;
          }
          if (verbose)
            std::fprintf(stderr, "  %-16s %-4s [%lld, %lld] %-70s %9.4f ms %8.1f GB/s\n",
                         kernel.c_str(), ts::dtype_name(dt).c_str(), static_cast<long long>(s.m),
                         static_cast<long long>(s.n), c.to_json().c_str(), ms,
                         bytes_moved(kernel, s, dt) / ms / 1e6);
          if (best_ms == 0 || ms < best_ms) {
            best_ms = ms;
            best = c;
          }
        }
        if (best_ms == 0) continue;
        bool ok = check_rows(kernel, in, runner(kernel, best).call(in), dt);
        compiles_while_timing += ts::rt::compile_count() - compiles_before;
        if (verbose && ts::rt::compile_count() > compiles_before)
          std::fprintf(stderr, "  (%lld NVRTC compilations while timing %s)\n",
                       static_cast<long long>(ts::rt::compile_count() - compiles_before),
                       kernel.c_str());
        std::printf(
            "{\"kernel\":\"%s\",\"dtype\":\"%s\",\"M\":%lld,\"N\":%lld,\"ms\":%.6f,\"gbs\":%.2f,"
            "\"config\":%s,\"ok\":%s}\n",
            kernel.c_str(), ts::dtype_name(dt).c_str(), static_cast<long long>(s.m),
            static_cast<long long>(s.n), best_ms, bytes_moved(kernel, s, dt) / best_ms / 1e6,
            best.to_json().c_str(), ok ? "true" : "false");
        std::fflush(stdout);
      }
    }
  std::fprintf(stderr,
               "NVRTC compilations while timing: %lld (0: every kernel came from the precompiled "
               "cubin cache)\n",
               static_cast<long long>(compiles_while_timing));
  return 0;
}
