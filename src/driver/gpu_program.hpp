// The GPU form of one specialization: one generated CUDA kernel per top-level loop,
// compiled with NVRTC on first use and launched with the driver API.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "codegen/compile_pipeline.hpp"
#include "codegen/cuda_kernel.hpp"
#include "driver/code_dump.hpp"
#include "driver/cuda_api.hpp"
#include "driver/host_env.hpp"
#include "driver/launch_abi.hpp"
#include "ir/ir.hpp"
#include "tessel/config.hpp"

namespace tessel::rt {

/// Programs of a persistent launch on a GPU with `sms` SMs: SMs x num_sm_multiplier
/// (unset: SMs x `programs_per_sm`, the kernel's occupancy), or,
/// when Settings::max_sms or reserved_sms is set, min(max_sms, SMs - reserved_sms)
/// programs (one per SM at most: the multiplier is not applied, so the kernel occupies
/// at most that many SMs). Errors: UserError (naming `kernel`) when the caps leave no SM.
int persistent_grid(const Settings& settings, const Config& config, int sms,
                    const std::string& kernel, int programs_per_sm = 1);

/// The UserError message for an NVRTC failure of generated `source`: NVRTC's log, the
/// generated line it names and the user's source line that line comes from.
std::string compile_error_message(const std::string& kernel, const CompileError& e,
                                  const std::string& source);

/// Settings::print_output_code or TESSEL_PRINT_CODE=1 (not "0"): generated CUDA is
/// printed to stderr when it is compiled (on the interpreter: show_interpreted_code).
bool print_code_requested(const Settings& s);

/// One launch as GpuProgram issued it: the function, grid, block, the packed parameter
/// block and each parameter's offset in it, so a benchmark can issue the same launch bare.
struct LaunchRecord {
  Function fn;
  unsigned grid[3] = {1, 1, 1};
  unsigned threads = 0;
  int shared_bytes = 0;
  std::vector<unsigned char> block;
  std::vector<uint32_t> offsets;
};

/// A hook for benchmarks and tests, per thread (observe_launches). `record`: each launch is
/// appended there. `dry`: GPU calls on this thread run their whole host path (key, lookup,
/// host program, parameter packing, grid) with no driver call: the kernel is neither
/// compiled, loaded nor launched, a persistent grid assumes 132 SMs of one program each,
/// and CPU Buffers stand in for GPU ones (tessel calls with them take the GPU path).
struct LaunchObserver {
  bool dry = false;
  std::vector<LaunchRecord>* record = nullptr;
  int64_t launches = 0;  // launches seen
};
/// Sets this thread's observer (nullptr: none); returns the previous one.
LaunchObserver* observe_launches(LaunchObserver* observer);
/// This thread's observer, or nullptr.
LaunchObserver* launch_observer();

class GpuProgram {
 public:
  /// `stages`: the specialization's compile_pipeline result with its CUDA emitted
  /// (PipelineOptions::Emit::all); it must outlive this. `spec_key`: the specialization's
  /// key, naming TESSEL_DUMP_DIR's files (code_dump.hpp), which are written here.
  GpuProgram(const codegen::CompiledStages& stages, const Settings& settings,
             const std::string& spec_key = "");
  /// Launches top-level loop `loop` for the call in `env` (asynchronous, on env.stream).
  /// Compiles on the first launch. Errors: UserError with the generated line when NVRTC
  /// rejects the code; RuntimeError when the driver fails.
  void launch(const ir::Node* loop, HostEnv& env);
  /// Programs of a persistent launch: SMs x num_sm_multiplier, or, when Settings::max_sms
  /// or reserved_sms is set, min(max_sms, SMs - reserved_sms) programs (one per SM at
  /// most: the multiplier is not applied, so the kernel occupies at most that many SMs).
  /// SMs: those of the SM partition active on this thread (rt::ContextScope), else the
  /// device's. Errors: UserError when the caps leave no SM.
  int persistent_programs(int device) const;
  /// The generated CUDA of a loop of stages.program().
  const codegen::CudaKernel& kernel(const ir::Node* loop);

 private:
  struct Compiled;
  /// Programs of a persistent launch of `fn`: with num_sm_multiplier unset, as many as
  /// fit on the GPU (or the active SM partition) at once (SMs x the occupancy of the
  /// kernel), so that the loop over tiles keeps every SM as busy as a one-program-per-tile
  /// launch would.
  int persistent_programs(const Compiled& c, const Function& fn, int device) const;
  struct Compiled {
    codegen::CudaKernel kernel;
    std::string cubin;         // compiled for compute capability `arch` (empty: not yet), or PTX
    std::string ptx_override;  // the TESSEL_OVERRIDE_DIR file `cubin` holds ("": none)
    int arch = 0;
    LaunchAbi abi;  // of `kernel`, computed once
    /// The function loaded in each context (rt::current_context_id): the device's primary
    /// context and any SM partition the loop was launched in.
    std::vector<Function> fns;
    std::vector<int> persistent;  // per entry of fns: programs of a persistent launch there
  };
  /// The loop's function in the current context of `device` (compiling and loading on
  /// first use), and the programs of a persistent launch of it there.
  struct Loaded {
    Compiled* c;
    Function fn;
    int persistent;
  };
  Loaded compiled(const ir::Node* loop, int device);
  /// compiled's work under the lock (context: rt::current_context_id(device)).
  Loaded load(const ir::Node* loop, int device, uint64_t context);

  const codegen::CompiledStages& stages_;
  const ir::Graph& graph_;
  Config config_;
  Settings settings_;
  CodeDump dump_;
  std::mutex mu_;
  std::map<const ir::Node*, std::unique_ptr<Compiled>> loops_;
  /// This program's number, never reused: a thread's recent loads (compiled) name it.
  const uint64_t serial_ = next_serial_.fetch_add(1, std::memory_order_relaxed);
  static inline std::atomic<uint64_t> next_serial_{1};
};

}  // namespace tessel::rt
