// What tessel shows of the code it generates: TESSEL_PRINT_CODE (Settings::print_output_code)
// prints the CUDA to stderr; TESSEL_DUMP_DIR=<dir> writes, per specialization and config,
// the IR and, per top-level loop, the CUDA, PTX and cubin (Triton's TRITON_CACHE_DIR and
// MLIR_ENABLE_DUMP, in one place). On the interpreter both show the CUDA a GPU would
// compile for the specialization's config (compiled for rt::target_arch() where NVRTC is present),
// or say why there is none.
//
// Files (<stem> = <kernel>-spec_<8 hex of the specialization key>-config_<8 hex of the
// config's JSON>.sm_XX, the target: rt::target_arch()):
//   <stem>.ir                      the program the backend lowers (ir::print), headed by
//                                  the specialization key and the config
//   <stem>.stages/<NN>-<stage>.ir  the IR after each stage of codegen::compile_pipeline,
//                                  numbered in stage order (01-traced ... 08-emit)
//   <stem>.stages/failure.txt      a config that fails: the error (the stages before it
//                                  are written too)
//   <kernel>_loop<i>-<...>.sm_XX.cu   the CUDA of top-level loop i, as lowered for sm_XX
//                                  (the target: rt::target_arch()) and compiled
//   <kernel>_loop<i>-<...>.sm_XX.ptx / .sm_XX.cubin   what NVRTC made of it
// An edited copy of a .cu or .ptx file in TESSEL_OVERRIDE_DIR is used in its place
// (driver/code_override.hpp).
#pragma once

#include <string>

#include "codegen/compile_pipeline.hpp"
#include "codegen/cuda_kernel.hpp"
#include "ir/ir.hpp"
#include "tessel/config.hpp"

namespace tessel::rt {

/// TESSEL_DUMP_DIR, or "" when unset or empty.
std::string dump_dir();

/// Names and writes the files of one specialization and config (see above). Errors (of
/// each write): UserError naming the kernel, the path and the OS error when the directory
/// cannot be created or written (a file, no write permission).
class CodeDump {
 public:
  /// `spec_key`: the specialization's key (KernelImpl::key). Write errors (UserError) name
  /// g's kernel and its first loop's line.
  CodeDump(const ir::Graph& g, const std::string& spec_key, const Config& config);
  /// Writes the IR of `g` (no-op without TESSEL_DUMP_DIR).
  void ir(const ir::Graph& g) const;
  /// Writes the IR after each stage that `stages` recorded (PipelineOptions::record_ir).
  void stages(const codegen::CompiledStages& stages) const;
  /// Writes the IR of the stages a failing pipeline made before `error`, and the error in
  /// <stem>.stages/failure.txt.
  void failure(const codegen::CompiledStages& stages, const std::string& error) const;
  /// Writes the CUDA of `k`, and with a non-empty `cubin` its PTX and cubin for sm_`arch`
  /// (no-op without TESSEL_DUMP_DIR).
  void cuda(const codegen::CudaKernel& k) const;
  void binary(const codegen::CudaKernel& k, int arch, const std::string& ptx,
              const std::string& cubin) const;
  /// The suffix of every file name: "-spec_<hex>-config_<hex>".
  const std::string& tag() const { return tag_; }

 private:
  std::string stem() const;  // "<kernel>" + tag() + ".sm_XX"
  std::string dir_, kernel_;
  SourceLoc at_;
  std::string spec_key_, config_json_, tag_, target_;
};

/// PipelineOptions for a compile for rt::target_arch() whose stages TESSEL_DUMP_DIR (when
/// set) writes, the stages of a failing one included (CodeDump::failure), under
/// specialization key `spec_key`.
codegen::PipelineOptions dumped_pipeline(codegen::PipelineOptions::Emit emit,
                                         const std::string& spec_key);

/// TESSEL_PRINT_CODE / TESSEL_DUMP_DIR on the interpreter (once per specialization): the
/// CUDA of each top-level loop of traced graph `g` under `config` (compile_pipeline, as a
/// GPU call would run it), printed to stderr with a line saying
/// that a GPU would compile it (and that with `tunes` it would autotune first and may pick
/// another config), and dumped with its IR, PTX and cubin (for rt::target_arch(), where NVRTC is
/// present). A loop the backend cannot lower is reported with the reason, not raised: the
/// interpreter runs it.
void show_interpreted_code(const ir::Graph& g, const Config& config, const Settings& settings,
                           const std::string& spec_key, bool tunes);

}  // namespace tessel::rt
