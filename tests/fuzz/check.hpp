// The oracles: one program checked on the CPU (the interpreter against the naive
// evaluator; NVRTC compiles its CUDA for sm_90) or on the GPU (against the interpreter).
#pragma once

#include <string>

#include "fuzz/program.hpp"

namespace fuzz {

struct Outcome {
  enum Kind { ok, naive_mismatch, gpu_mismatch, compile_error, error };
  Kind kind = ok;
  std::string detail;
  bool failed() const { return kind != ok; }
};
const char* kind_name(Outcome::Kind k);

/// Draws p.config from the kernel's config space (a generator seeded with p.seed).
/// Returns an error outcome when tracing the kernel fails.
Outcome prepare(Program& p);

/// Interpreter vs naive evaluator, then (with `compile`) NVRTC compiles the CUDA.
Outcome check_cpu(const Program& p, bool compile);

/// GPU vs interpreter (needs a GPU).
Outcome check_gpu(const Program& p);

}  // namespace fuzz
