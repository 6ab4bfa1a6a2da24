// The key of a tuned config in the on-disk cache: what must be equal for a config tuned
// in one process to be the right answer in another.
#pragma once

#include <string>

#include "ir/ir.hpp"
#include "tessel/config.hpp"

namespace tessel::autotune {

/// The parts of a tuned-config key, kept as text in the cache record so a lookup can
/// check them (and a person can read them).
struct ConfigKeyParts {
  std::string kernel_hash;     // kernel_content_hash(graph)
  std::string spec_key;        // the specialization key (dtypes, ranks, pow2 sizes, ...)
  std::string gpu;             // device name and compute capability, e.g. "NVIDIA H200 sm_90"
  std::string tessel_version;  // TESSEL_VERSION
  std::string nvrtc;           // rt::nvrtc_identity()
  std::string tuning;          // effort and forced keys (autotune_config_overrides)
  bool operator==(const ConfigKeyParts&) const = default;
};

/// Version of tessel's code generation, part of every kernel hash: a constant bumped by
/// hand when generated code changes in a way that changes which config is fastest, plus
/// a hash of the embedded device headers.
std::string codegen_version();

/// XXH3-128 (32 hex digits) of the kernel's content: the printed IR (ir::print without
/// names, which holds every node and the graph's facts: block sizes, tunables, index dtype,
/// argument facts, reduction dims; the user's names and source lines change no generated
/// instruction) and codegen_version(). Equal for two Kernel objects traced from the same
/// code and arguments.
std::string kernel_content_hash(const ir::Graph& g);

/// The name and compute capability of `device`, as keys hold it ("NVIDIA H200 sm_90").
/// Needs CUDA (RuntimeError without it).
std::string gpu_description(int device);

/// The parts for a specialization traced as `g` under key `spec_key`, tuned on the GPU
/// described by `gpu` (gpu_description) with `settings`.
ConfigKeyParts config_key_parts(const ir::Graph& g, const std::string& spec_key,
                                const Settings& settings, const std::string& gpu);

/// The file name stem of a key: XXH3-128 (32 hex digits) of all parts.
std::string config_key(const ConfigKeyParts& parts);

}  // namespace tessel::autotune
