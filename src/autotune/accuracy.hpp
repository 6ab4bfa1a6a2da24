// The accuracy check of autotune candidates: every output of a candidate is compared
// with the reference (the default config's outputs, or the user's) at a tolerance per
// dtype; a candidate with any mismatching element is rejected.
#pragma once

#include <string>
#include <vector>

#include "tessel/buffer.hpp"

namespace tessel::autotune {

/// |actual - expected| <= atol + rtol * |expected| (ts::count_mismatches).
struct Tolerance {
  double atol = 0, rtol = 0;
};

/// The tolerance for outputs of dtype `t`: f32 1e-4 / 1e-4 (block sizes change the
/// order of reductions and NVRTC fuses multiply-adds differently), f64 1e-8 / 1e-8,
/// f16 and bf16 1e-2 / 1e-2, integers and bool exact.
Tolerance tolerance_for(DType t);

/// Compares `actual[i]` with `expected[i]` for every i (same shapes and devices; on the
/// GPU for cuda Buffers). Returns "" when all match, else what differs, e.g. "output 0
/// (f32[4096, 4096] cuda:0): 12 of 16777216 elements differ by more than atol 1e-4 +
/// rtol 1e-4 * |expected|".
std::string compare_outputs(const std::vector<Buffer>& actual, const std::vector<Buffer>& expected);

}  // namespace tessel::autotune
