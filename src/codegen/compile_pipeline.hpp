// The compile pipeline: from a traced graph and a config to the CUDA of each top-level
// loop, as the list of its stages (Halide's Lower.cpp). Every caller runs it: kernel calls
// (on the GPU and on the interpreter), kernel.cuda(), autotuning candidates (GPU and CPU
// backends), the config space's validity check, TESSEL_PRINT_CODE and TESSEL_DUMP_DIR.
// Where callers need different behaviour it is a PipelineOptions field, not another
// assembly of the stages.
//
// Stages, in order (stage_names()):
//   1. traced           the input graph: traced, verified and race-checked
//                       (passes::check_races, config-independent, runs at trace time)
//   2. complete_config  passes::complete_config: the user's or candidate's keys checked,
//                       the rest defaulted
//   3. roll_reductions  passes::roll_reductions for Config::reduction_loops; where the
//                       input config leaves reduction_loops unset and the default chunking
//                       of a long reduction cannot be rolled, the reduction stays unchunked
//                       (the config's reduction_loops is then unset)
//   4. unit_tiles       passes::squeeze_unit_tiles: tile dims of block size 1 dropped from
//                       the values' shapes, their accesses indexed by the tile's begin
//   5. index_bounds     with a forced 32-bit index dtype, no constant loop bound beyond
//                       32 bits (tile indices are computed in the index dtype)
//   6. layout           passes::plan_kernel of each top-level loop (the config applied
//                       once for PipelineOptions::arch: blocks, loop knobs, program map;
//                       code generation reads nothing else of the config), passes::compute_layout,
//                       refused past kMaxRegistersPerTileValue registers per thread; then
//                       passes::assign_access_layouts: loads and stores contiguous along
//                       another dimension than the nest's innermost get their own layout
//   7. kernel_ir        per top-level loop: passes::lower_nest, its kernel IR: the live
//                       nodes, each value's layout and memory space, the shared memory
//                       stages with their offsets and barriers; only with
//                       PipelineOptions::emit
//   8. emit             per top-level loop: grid and CUDA C++ from its plan and kernel IR
//                       (codegen::generate_cuda); only with PipelineOptions::emit
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "codegen/cuda_kernel.hpp"
#include "ir/ir.hpp"
#include "passes/kernel_ir.hpp"
#include "passes/kernel_plan.hpp"
#include "passes/layout.hpp"
#include "tessel/config.hpp"

namespace tessel::codegen {

/// Registers per thread one tile value may take (passes::Layout::regs()); a config past it
/// is refused by every caller (docs/DECISIONS.md, "One register budget").
inline constexpr int kMaxRegistersPerTileValue = 256;

struct CompiledStages;

struct PipelineOptions {
  enum class Emit : uint8_t {
    none,  // stop after the layout stage (config checks, the interpreter)
    all,   // CUDA for every top-level loop; a loop the backend cannot lower throws
    /// CUDA for every loop that the backend can lower; the others keep their UserError's
    /// message in LoopStages::failure (TESSEL_PRINT_CODE on the interpreter, which runs them)
    all_reporting_failures,
  };
  Emit emit = Emit::all;
  /// The compute capability of the GPU the code is for (passes::KernelPlan::arch): which
  /// tensor-core instructions and copies the layout stage may choose (passes::has_wgmma,
  /// has_mma_sync, has_tma). Callers pass the device's (rt::target_arch()).
  int arch = passes::kDefaultArch;
  /// Keep the IR after each stage (CompiledStages::stage_ir; TESSEL_DUMP_DIR writes it).
  bool record_ir = false;
  /// Called with the stages made before a stage threw a UserError, and its message; the
  /// error is then rethrown (TESSEL_DUMP_DIR writes what a failing config got to).
  std::function<void(const CompiledStages&, const std::string& error)> on_failure = nullptr;
};

/// What the stages made of one top-level loop.
struct LoopStages {
  const ir::Node* loop = nullptr;  // in CompiledStages::program()
  passes::KernelPlan plan;
  passes::Layout layout;
  passes::NestIr nir;   // kernel_ir stage (null loop: not made)
  CudaKernel kernel;    // emit stage (empty name: not emitted)
  std::string failure;  // Emit::all_reporting_failures: why the loop has no kernel
};

/// One stage's IR (PipelineOptions::record_ir): its 1-based number, its name and the
/// program after it (ir::print), headed by the config at that point.
struct StageIr {
  int number;
  std::string stage;
  std::string ir;
};

struct CompiledStages {
  const ir::Graph* traced = nullptr;   // the input graph (it must outlive this)
  std::unique_ptr<ir::Graph> lowered;  // after roll_reductions and unit_tiles (null: as traced)
  Config config;                       // complete
  std::vector<LoopStages> loops;       // per top-level loop, in host order
  std::vector<StageIr> stage_ir;
  /// The program every later stage and the launcher use.
  const ir::Graph& program() const { return lowered ? *lowered : *traced; }
};

/// The stages' names, in order (the numbering of StageIr and TESSEL_DUMP_DIR's files).
const std::vector<std::string>& stage_names();

/// Runs the stages on `traced` (kernel traced, verified, race-checked) under `config`
/// (a user's, a candidate's or a complete one: completing a complete config changes
/// nothing). Errors: UserError naming the kernel and the user's line for an invalid config
/// (complete_config), a reduction that cannot be chunked as asked, a loop bound beyond
/// 32-bit indices, a tile value past kMaxRegistersPerTileValue registers per thread, and
/// (Emit::all) IR the CUDA backend cannot lower yet; options.on_failure sees the stages
/// made before such an error.
CompiledStages compile_pipeline(const ir::Graph& traced, const Config& config,
                                const PipelineOptions& options);

}  // namespace tessel::codegen
