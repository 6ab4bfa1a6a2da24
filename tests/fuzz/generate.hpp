// Random well-typed programs (fuzz::Program) from a seed.
#pragma once

#include <cstdint>

#include "fuzz/program.hpp"

namespace fuzz {

/// What the generator may produce; constructs a tessel bug makes wrong are switched off
/// here (each with the bug it avoids).
struct GenOptions {
  int64_t max_elements = 4096;  // M * N at most
};

/// The program of `seed` (config left default: the runner draws it from the kernel's
/// config space). Deterministic in seed.
Program generate(uint64_t seed, const GenOptions& opts = {});

/// Recomputes dtype, shape, phase and fuzziness of every node from its operands (after
/// the shrinker edits a program); false when the program is no longer well formed.
bool retype(Program& p);

}  // namespace fuzz
