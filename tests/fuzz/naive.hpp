// The naive evaluator: a program's expected outputs computed from its description with
// plain loops over host arrays (independent of tessel's IR and interpreter). Semantics:
// PyTorch's (promotion, true division, floor division, % with the divisor's sign, NaN
// propagation of max/min, argmax/argmin at the first extreme with NaN as the extreme),
// and tessel's documented choices (docs/DECISIONS.md): f16/bf16 values are f32 values
// rounded to their dtype after every op, integer division and % by 0 give 0, reductions
// over nothing give their identity, accesses past a tensor's extent read 0 and write
// nothing.
#pragma once

#include <cstdint>
#include <vector>

#include "fuzz/program.hpp"

namespace fuzz {

/// Input and initial output values of a program, row-major over their logical shapes
/// (full: M * N, row: M, col: N), as doubles (integers exact).
struct HostData {
  std::vector<std::vector<double>> inputs;
  std::vector<std::vector<double>> outputs;  // before the kernel runs
};

/// The values of `p`'s inputs (deterministic in p.seed, exactly representable in each
/// input's dtype) and its outputs' initial values (0, or the input written in place).
HostData make_data(const Program& p);

/// The outputs `p` computes from `data`, row-major, as doubles.
std::vector<std::vector<double>> evaluate(const Program& p, const HostData& data);

/// `x` rounded to dtype t as a value of that dtype holds it (floats via f32; integers
/// truncated to t's width). For tests of the evaluator itself.
double round_to(DType t, double x);

}  // namespace fuzz
