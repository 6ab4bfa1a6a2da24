// Tuning a kernel for a call without changing what its later calls use: for tools and
// benchmarks (bench/autotune_bench.cpp) that compare searches. Internal to tessel.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "autotune/autotuner.hpp"
#include "tessel/kernel.hpp"

namespace tessel::rt {

/// What the autotuner needs from one traced specialization of a kernel (KernelImpl).
struct TunableSpecialization {
  std::string kernel;
  const Settings& settings;
  std::string key;                        // the specialization key
  ir::Graph* graph;                       // as traced (tunables: `traced`)
  std::map<std::string, int64_t> traced;  // the tunables `graph` was traced with
  /// Traces the kernel for the call into an empty graph, with these settings (whose
  /// config's tunables give the values of ts::register_tunable).
  std::function<void(ir::Graph&, const Settings&)> retrace;
};

/// Tunes `s` for a call with `args` (autotune::tune_for_call: disk cache, then search),
/// giving the search the kernel traced again for other tunables (each candidate compiles
/// it through codegen::compile_pipeline). With `apply` and a result whose tunables differ from
/// `traced`, *s.graph is replaced by the graph traced for them (the caller then sets
/// the specialization's config to the result). Errors: as tune_for_call.
autotune::TuneResult tune_specialization(TunableSpecialization& s, detail::CallArgs args,
                                         const autotune::TuneOptions& options, bool apply);

/// Tunes `k` for a call with `args` (GPU Buffers, or anything with options.backend) as
/// its first call would, with `options` (search kind, configs of a list search, budget,
/// cache use, backend), and returns the result. With `apply`, later calls of that
/// specialization use the result; else they keep their configs. Errors: UserError for
/// CPU Buffers without options.backend, or an invalid call.
autotune::TuneResult tune_kernel(detail::KernelImpl& k, detail::CallArgs args,
                                 const autotune::TuneOptions& options, bool apply = false);

/// The graph `k` traced for a call with `args` (for tests and tools), and the config
/// that call would use.
const ir::Graph& traced_graph(detail::KernelImpl& k, detail::CallArgs args);
Config specialization_config(detail::KernelImpl& k, detail::CallArgs args);

}  // namespace tessel::rt
