// Measures candidates on the CPU interpreter: for tests of the autotuner on machines
// without a GPU (and as the executable specification of what the GPU backend checks).
// Each config runs the host program on fresh copies of the arguments; its outputs are
// checked against the reference config's like on the GPU; its "time" is the wall time of
// the interpreter or a cost model given by the test.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "autotune/backend.hpp"
#include "autotune/candidate_compiler.hpp"
#include "tessel/kernel.hpp"

namespace tessel::autotune {

struct CpuBackendOptions {
  GraphFor graph_for;
  /// The time of a config in microseconds; unset: the interpreter's wall time.
  std::function<double(const Config&)> cost;
  /// Test hook: may change a config's outputs (returned tensors, then written
  /// arguments) before they are checked, e.g. to make one candidate wrong.
  std::function<void(const Config&, std::vector<Buffer>& outputs)> corrupt;
  /// The user's reference for the returned tensors; empty: the reference config's.
  std::vector<Buffer> reference;
};

class CpuBackend : public Backend {
 public:
  /// `args`: CPU Buffers and numbers of one call of kernel `kernel` traced as `g`.
  CpuBackend(const ir::Graph& g, detail::CallArgs args, Config reference_config, std::string kernel,
             CpuBackendOptions options);
  /// See Backend. RuntimeError when the reference config itself fails.
  std::vector<Measurement> measure(const std::vector<Config>& configs, const Done& done) override;

 private:
  /// Runs `config` (the program codegen::compile_pipeline makes of graph_for(config)):
  /// its outputs to check; throws what the pipeline or the run throws.
  std::vector<Buffer> run(const Config& config);

  const ir::Graph& graph_;
  std::vector<detail::CallArg> args_;
  Config reference_config_;
  std::string kernel_;
  CpuBackendOptions options_;
  std::vector<Buffer> reference_;
  bool have_reference_ = false;
};

}  // namespace tessel::autotune
