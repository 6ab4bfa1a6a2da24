// TESSEL_OVERRIDE_DIR=<dir>: a CUDA or PTX file there, named as TESSEL_DUMP_DIR names it
// (driver/code_dump.hpp), is compiled or loaded in place of what tessel generated, for
// debugging (Triton's TRITON_KERNEL_OVERRIDE with TRITON_OVERRIDE_DIR):
//   <kernel>_loop<i>-spec_<hex>-config_<hex>.sm_XX.cu    NVRTC compiles it instead of the
//                                                         CUDA generated for sm_XX
//   <kernel>_loop<i>-spec_<hex>-config_<hex>.sm_XX.ptx   the driver loads (JIT-compiles) it
//                                                         instead of NVRTC's cubin
// The PTX file wins when both exist. The file must keep the kernel's name and parameters
// (the launch passes the generated kernel's). Each use is said on stderr. The directory
// must not be TESSEL_DUMP_DIR (the dump would overwrite an edit, or its PTX would hide an
// edit of the CUDA): copy the files to edit into a directory of their own.
#pragma once

#include <string>

#include "codegen/cuda_kernel.hpp"
#include "tessel/error.hpp"

namespace tessel::rt {

/// TESSEL_OVERRIDE_DIR, or "" when unset or empty.
std::string override_dir();

/// What the driver loads for one generated kernel.
struct KernelImage {
  std::string image;          // a cubin, or PTX text (ptx_override) that the driver compiles
  std::string ptx;            // NVRTC's PTX (with `want_ptx`), or the PTX override's text
  std::string override;       // the file used in place of generated code ("": none)
  std::string override_text;  // its text (CUDA or PTX)
  bool ptx_override = false;
};

/// Compiles generated kernel `k` of kernel `kernel` (its loop at `at`) for sm_`arch`, or takes
/// its override (file names end in `tag`, CodeDump::tag()); files there named for another
/// target are said on stderr. With `want_ptx` NVRTC runs past the cubin
/// cache so that its PTX is returned; otherwise through it (compile_cached). Errors:
/// CompileError when NVRTC rejects the generated CUDA; UserError naming `kernel` and the
/// file when NVRTC rejects an override (with NVRTC's log) or the file cannot be read, and
/// when TESSEL_OVERRIDE_DIR is TESSEL_DUMP_DIR.
KernelImage compile_kernel(const std::string& kernel, SourceLoc at, const codegen::CudaKernel& k,
                           const std::string& tag, int arch, bool want_ptx);

/// Throws the UserError (naming `kernel` and `file`) for a PTX override the driver refused
/// to load (`why`: the driver's message and JIT log).
[[noreturn]] void fail_ptx_override(const std::string& kernel, SourceLoc at,
                                    const std::string& file, const std::string& why);

}  // namespace tessel::rt
