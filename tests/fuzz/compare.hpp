// Comparison of a program's outputs between two evaluators, with per-dtype tolerances.
#pragma once

#include <string>
#include <vector>

#include "fuzz/program.hpp"

namespace fuzz {

/// "" when `actual` matches `expected` for every output of `p`, else a description of
/// the first differing elements. Integer and bool outputs, and float outputs computed
/// without fuzzy operations (generate.cpp), must be equal (NaN matches NaN, -0 matches
/// 0); fuzzy float outputs may differ by a relative tolerance of the narrowest float
/// dtype among the fuzzy values they are computed from (f64 1e-9 on
/// the CPU, 1e-5 on the GPU; f32 2e-4; f16 4e-3; bf16 3e-2) of max(|expected|, 1, the
/// output's RMS magnitude), and values beyond half the dtype's largest finite value match
/// any other such value or infinity of the same sign.
std::string compare_outputs(const Program& p, const std::vector<std::vector<double>>& expected,
                            const std::vector<std::vector<double>>& actual, bool gpu);

}  // namespace fuzz
