// Compiled cubins cached on disk, so a second process (and a second call of the
// autotuner) does not run NVRTC again. Used by rt::GpuProgram, the device utilities and
// the autotuner's candidates.
//
// Key: XXH3-128 of the CUDA source, the program name, every NVRTC option, the embedded
// headers (names and text) and rt::nvrtc_identity(). File: <cache_dir>/cubins/<key>.cubin,
// holding a header line with the XXH3-64 of the cubin, then the cubin; a file whose hash
// does not match is ignored (and replaced on the next compile).
#pragma once

#include <string>

#include "driver/cuda_api.hpp"

namespace tessel::rt {

/// The cache key of a compilation (32 hex digits). Cheap: no NVRTC call.
std::string cubin_key(const std::string& source, const std::string& program_name,
                      const rt::CompileOptions& options);

/// rt::compile_cuda through the disk cache: returns the cached cubin when present (no
/// NVRTC call: rt::compile_count() does not grow), else compiles and stores it. With
/// TESSEL_SKIP_CACHE=1 or no cache directory it just compiles. Errors: as
/// rt::compile_cuda (CompileError, RuntimeError); a cache that cannot be written is
/// ignored.
std::string compile_cached(const std::string& source, const std::string& program_name,
                           const rt::CompileOptions& options);

}  // namespace tessel::rt
