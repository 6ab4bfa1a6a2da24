// The GPU form of one specialization: one generated CUDA kernel per top-level loop,
// compiled with NVRTC on first use and launched with the driver API.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "codegen/cuda_kernel.hpp"
#include "ir/ir.hpp"
#include "runtime/cuda_api.hpp"
#include "runtime/host_env.hpp"
#include "tessel/config.hpp"

namespace tessel::rt {

class GpuProgram {
 public:
  GpuProgram(const ir::Graph& g, const Config& config, const Settings& settings);
  /// Launches top-level loop `loop` for the call in `env` (asynchronous, on env.stream).
  /// Compiles on the first launch. Errors: UserError with the generated line when NVRTC
  /// rejects the code; RuntimeError when the driver fails.
  void launch(const ir::Node* loop, HostEnv& env);
  /// The generated CUDA of a loop (generating it if needed).
  const codegen::CudaKernel& kernel(const ir::Node* loop);

 private:
  struct Compiled {
    codegen::CudaKernel kernel;
    Function fn;
    bool loaded = false;
  };
  Compiled& compiled(const ir::Node* loop, int device);

  const ir::Graph& graph_;
  Config config_;
  Settings settings_;
  std::mutex mu_;
  std::map<const ir::Node*, std::unique_ptr<Compiled>> loops_;
};

}  // namespace tessel::rt
