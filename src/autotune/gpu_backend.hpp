// Measures candidates on the GPU, in a child process (tessel_bench_worker), on copies
// of the call's tensors shared through CUDA IPC. See autotuner.hpp for the design.
#pragma once

#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "autotune/backend.hpp"
#include "autotune/candidate_compiler.hpp"
#include "autotune/shared_tensors.hpp"
#include "autotune/worker_process.hpp"

namespace tessel::autotune {

struct GpuBackendOptions {
  GraphFor graph_for;
  /// The user's reference for the kernel's returned tensors (in order); empty: the
  /// reference config's outputs.
  std::vector<Buffer> reference;
  /// Seconds one candidate may take to load and run once (TESSEL_AUTOTUNE_TIMEOUT
  /// overrides); timing gets this plus four times the expected time of its repeats.
  double timeout_s = 10;
  /// Timed repeats per candidate: about target_ms of kernel time, within [min, max].
  double target_ms = 60;
  int min_reps = 5, max_reps = 100;
  /// Bytes written between repeats to flush the L2 cache (50 MiB on an H100/H200).
  int64_t flush_bytes = int64_t{256} << 20;
  /// NVRTC compilations at once (default: the hardware threads).
  int compile_threads = 0;
  /// Test hook: may change a built candidate (e.g. swap its cubin for one that faults)
  /// before it is run.
  std::function<void(BuiltCandidate&)> tamper;
};

/// TESSEL_AUTOTUNE_TIMEOUT: seconds one candidate may take to load and run once, `fallback`
/// where it is unset or empty. Errors: UserError naming kernel `g` at its first loop when it
/// is not a number of seconds above 0 (from_chars: no sign, unit or trailing text).
double autotune_timeout_s(const ir::Graph& g, double fallback);

class GpuBackend : public Backend {
 public:
  /// Tunes kernel `kernel` (traced as `g`, with `settings`) for a call with `args`
  /// (GPU Buffers on one device). The outputs of `reference_config` (or options.reference) are what
  /// every candidate must reproduce. Errors: UserError when the call itself is invalid (shape
  /// checks); RuntimeError when the GPU memory or IPC handles cannot be had.
  GpuBackend(const ir::Graph& g, detail::CallArgs args, const Settings& settings,
             Config reference_config, std::string kernel, GpuBackendOptions options);
  ~GpuBackend() override;

  /// See Backend. Throws RuntimeError when the worker cannot be started, or when the
  /// reference config fails (candidates could not be checked).
  std::vector<Measurement> measure(const std::vector<Config>& configs, const Done& done) override;

 private:
  void ensure_reference();
  void start_worker();
  /// Sends `m` and waits for the reply; on a timeout, crash or error returns nullopt
  /// with `failure` set (and drops the worker when it is gone or unusable).
  std::optional<Message> exchange(const Message& m, double timeout_s, std::string& failure);
  /// The run message of a built candidate, or "" in `failure`.
  std::optional<Message> run_message(const BuiltCandidate& c, std::string& failure);
  Measurement measure_one(const BuiltCandidate& c);

  const ir::Graph& graph_;
  Settings settings_;
  std::string kernel_;
  Config reference_config_;
  GpuBackendOptions options_;
  int device_ = 0, arch_ = 90, sms_ = 1;
  std::string worker_path_;
  SharedTensors shared_;
  bool shared_dirty_ = false;  // a worker died: reset the copies before the next one
  std::unique_ptr<WorkerProcess> worker_;
  std::vector<Buffer> reference_;
  bool have_reference_ = false;
  int64_t next_id_ = 1;
  double best_us_ = std::numeric_limits<double>::infinity();  // fastest timed candidate
};

}  // namespace tessel::autotune
