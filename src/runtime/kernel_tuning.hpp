// Tuning a kernel for a call without changing what its later calls use: for tools and
// benchmarks (bench/autotune_bench.cpp) that compare searches. Internal to tessel.
#pragma once

#include <vector>

#include "autotune/autotuner.hpp"
#include "tessel/kernel.hpp"

namespace tessel::rt {

/// Tunes `k` for a call with `args` (GPU Buffers, or anything with options.backend) as
/// its first call would, with `options` (search kind, configs of a list search, budget,
/// cache use, backend), and returns the result. With `apply`, later calls of that
/// specialization use the result; else they keep their configs. Errors: UserError for
/// CPU Buffers without options.backend, or an invalid call.
autotune::TuneResult tune_kernel(detail::KernelImpl& k, std::vector<detail::CallArg> args,
                                 const autotune::TuneOptions& options, bool apply = false);

/// The graph `k` traced for a call with `args` (for tests and tools), and the config
/// that call would use.
const ir::Graph& traced_graph(detail::KernelImpl& k, std::vector<detail::CallArg> args);
Config specialization_config(detail::KernelImpl& k, std::vector<detail::CallArg> args);

}  // namespace tessel::rt
