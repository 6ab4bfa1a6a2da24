// The autotuner: finds the fastest correct config of one specialization of a kernel.
//
// README
// ------
// When a kernel with Settings::autotune_effort quick or full (and no Settings::config) is
// first called on a GPU for a specialization, KernelImpl asks tune_for_call():
//  1. Cache: the best config is looked up on disk (config_cache.hpp) under the kernel's
//     content hash (printed IR + codegen version), the specialization key, the GPU's
//     name and compute capability, TESSEL_VERSION, the NVRTC library and the tuning
//     settings. A hit is used as is: no tuning, and with the cubin cache
//     (driver/cubin_cache.hpp) no NVRTC call either. TESSEL_CACHE_DIR, else
//     $XDG_CACHE_HOME/tessel, else ~/.cache/tessel; TESSEL_SKIP_CACHE=1 bypasses it.
//  2. Space: config_space.hpp derives the knobs from the traced IR; forced keys
//     (Settings::autotune_config_overrides) are fixed.
//  3. Search: search.hpp. Default: pattern search from the default config (why: see
//     search.hpp). quick: at most 40 configs and 60 s; full: 400 configs and 600 s, a
//     wider search, more timing repeats. Random search and an explicit list are there
//     for tools and benchmarks.
//  4. Compilation: each batch of candidates is generated on the calling thread and
//     compiled by NVRTC in parallel (std::async, one per hardware thread), through the
//     cubin cache; a candidate that fails to generate or compile scores infinity with
//     its reason.
//  5. Timing, in a child process (gpu_backend.hpp, worker_main.cpp, worker_protocol.hpp):
//     the user's process holds a CUDA context, which a fork()ed child cannot use, so the
//     autotuner posix_spawn()s the helper executable tessel_bench_worker
//     (TESSEL_BENCH_WORKER overrides its path). The call's tensors are copied once into
//     cuMemAlloc'd memory and shared with the worker through CUDA IPC (no copy, the same
//     data; the user's Buffers are never written by a candidate). Per candidate the
//     parent sends the cubins, the launch geometry and the parameters (pointers as
//     buffer + offset); the worker restores the tensors the kernel writes (and the
//     filled allocations) from snapshots, runs once and reports; the parent compares the
//     outputs, in the shared memory, with the reference on the GPU; then the worker runs
//     it `reps` times (about 60 ms of kernel time, 5 to 100 repeats), each after
//     restoring the written tensors and writing 256 MiB to flush the L2 cache, timed with
//     CUDA events; the score is the median (a candidate whose single run is already 3x
//     slower than the best so far is scored by that run, without repeats). The parent
//     waits with a timeout (10 s per run, TESSEL_AUTOTUNE_TIMEOUT) and kills a hung
//     worker; a worker that dies (a crash, a sticky CUDA error: it exits after reporting
//     one) fails only that candidate, with its reason and output; the next candidate
//     starts a new worker, after the shared tensors are reset from the user's Buffers.
//     So the user's process survives whatever a candidate does. Why not fork(): CUDA
//     cannot be used in a child forked from a process with a CUDA context, and exec'ing
//     the user's own binary is not generally possible. Why IPC rather than sending the
//     data: no copy through the host, and the worker sees bit-identical inputs. Cost:
//     the inputs and outputs exist twice on the GPU while tuning (plus 256 MiB).
//  6. Accuracy: the reference is the default config's outputs (returned tensors, then
//     written arguments), or the user's; a candidate whose outputs differ beyond
//     accuracy.hpp's tolerances is rejected and reported. If the default config itself
//     fails, tuning stops (the candidates could not be checked) and the kernel keeps the
//     default config, whose error the call then reports.
//  7. Report: progress.hpp draws a progress line on a terminal, then prints one line
//     with the best config as a pasteable ts::Config initializer. TESSEL_AUTOTUNE_LOG=
//     <file> writes every trial (config, time or reason) as JSON.
// Effort none (the default, see tessel/config.hpp) skips all of this.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "autotune/backend.hpp"
#include "autotune/candidate_compiler.hpp"
#include "autotune/config_space.hpp"
#include "autotune/progress.hpp"
#include "autotune/trials.hpp"
#include "tessel/kernel.hpp"

namespace tessel::autotune {

enum class SearchKind : uint8_t { pattern, random, list };

struct CallToTune;

struct TuneOptions {
  AutotuneEffort effort = AutotuneEffort::quick;
  SearchKind search = SearchKind::pattern;
  std::vector<Config> list;      // SearchKind::list: the configs to measure
  std::optional<Budget> budget;  // default: budget_for(effort)
  uint64_t seed = 0;             // SearchKind::random
  /// Read and write the tuned-config cache (tune_for_call only).
  bool use_cache = true;
  /// The user's reference outputs (the kernel's returned tensors, in order).
  std::vector<Buffer> reference;
  /// Measures with this backend instead of the GPU's (tests: a CpuBackend on CPU
  /// Buffers). Called with the call and the reference config (the default point).
  std::function<std::unique_ptr<Backend>(const CallToTune&, const Config& reference)> backend;
};

struct TuneResult {
  std::optional<Config> best;  // unset when no config succeeded
  double best_us = 0;          // its time, microseconds per call
  std::vector<Trial> trials;   // every measured config, in order
  int failed = 0, rejected = 0;
  double seconds = 0;       // wall time of the search
  bool from_cache = false;  // tune_for_call: found in the disk cache, nothing measured
  std::string note;         // why tuning stopped early, if it did
};

/// The default budget of an effort: quick 40 configs / 60 s, full 400 configs / 600 s.
Budget budget_for(AutotuneEffort effort);

/// `c` with every field that `forced` sets replaced by forced's value.
Config apply_overrides(Config c, const Config& forced);

/// Runs the search chosen by `options` over `space`, measuring with `backend`, and
/// reports through `progress` (may be null). A backend failure that makes measuring
/// impossible ends the search early (TuneResult::note). Never throws for a candidate.
TuneResult tune(const ConfigSpace& space, Backend& backend, const TuneOptions& options,
                Progress* progress);

/// Number of searches tune() has run in this process (tests check that a call did not
/// tune again; disk cache hits run no search).
int64_t tune_count();

/// What KernelImpl needs to tune one specialization for a call on the GPU.
struct CallToTune {
  std::string kernel;
  const ir::Graph* graph = nullptr;  // as traced for the call (first tunable choices)
  GraphFor graph_for;                // traces again for other tunables
  detail::CallArgs args;             // the call's arguments (GPU Buffers, numbers)
  Settings settings;
  std::string spec_key;
};

/// Tunes a specialization on the GPU: the disk cache first, else the search with the
/// GPU backend (or options.backend), the result stored in the cache. Returns the result; `best`
/// unset when nothing was found (the caller keeps the default config). Errors: UserError for an
/// invalid call or invalid overrides; problems of the tuning machinery itself (no
/// worker, IPC unsupported) end up in TuneResult::note, never as an exception.
TuneResult tune_for_call(const CallToTune& call, const TuneOptions& options);

}  // namespace tessel::autotune
