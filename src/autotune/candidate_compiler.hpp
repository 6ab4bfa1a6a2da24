// Turns candidate configs into cubins: code generation on the calling thread (it
// traces the kernel again for a config's tunables and the code generator is not meant
// to be shared between threads), then NVRTC in parallel through std::async, at most
// `threads` compilations at once (NVRTC is thread safe across programs), each through
// the on-disk cubin cache. A candidate that cannot be built carries the reason.
#pragma once

#include <functional>
#include <future>
#include <string>
#include <utility>
#include <vector>

#include "codegen/compile_pipeline.hpp"
#include "codegen/cuda_kernel.hpp"
#include "ir/ir.hpp"
#include "tessel/config.hpp"

namespace tessel::autotune {

/// The kernel traced for a config's tunables (the same Graph for equal tunables; it
/// must stay alive while the autotuner runs), which codegen::compile_pipeline compiles
/// for the config. May throw UserError.
using GraphFor = std::function<const ir::Graph&(const Config&)>;

/// One candidate, built: a generated kernel and its cubin per top-level loop.
struct BuiltCandidate {
  codegen::CompiledStages stages;    // codegen::compile_pipeline of graph_for(config)
  const ir::Graph* graph = nullptr;  // stages.program()
  Config config;                     // stages.config (complete)
  std::vector<std::pair<const ir::Node*, codegen::CudaKernel>> kernels;
  std::vector<std::string> cubins;
  std::string failure;  // non-empty: why it could not be built (then nothing else is set)
};

/// Starts building every config of `configs` for sm_`arch`; the futures become ready as
/// the compilations finish (in any order). Code generation errors (UserError) and NVRTC
/// errors (rt::CompileError) become the candidate's failure.
std::vector<std::future<BuiltCandidate>> build_candidates(const std::vector<Config>& configs,
                                                          const GraphFor& graph_for, int arch,
                                                          int threads);

}  // namespace tessel::autotune
