// How a reduction combines in a nest's register layout (passes/layout.hpp): the bits of the
// flat element index its Sym's slot spans are combined in registers (register bits), with
// warp shuffles (lane bits) and through shared memory (warp bits). Code generation
// (codegen/emit_reduce.cpp) prints these steps; the shared memory plan
// (passes/shared_plan.hpp) sizes the reduction's stage from them.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/ir.hpp"
#include "passes/layout.hpp"

namespace tessel::passes {

/// Reduction `n` (Op::Reduce of an array along dim n->ival) in layout L: the flat-index
/// bits of its Sym's slot (and, for a scalar result, the inactive threads' bits, which hold
/// the identity), as register, lane and warp masks. With warp bits, its shared memory: one
/// value per warp (per_warp: whole warps hold one value) or per thread, for each distinct
/// register; `elem` bytes per value (8 for 64-bit registers, else 4), `values_bytes` of
/// values, then (argmax, argmin) 8 bytes of index per value; `bytes` in all, rounded to 16.
struct ReduceSteps {
  std::vector<int> bits;
  unsigned reg_mask = 0, lane_mask = 0, warp_mask = 0;
  bool per_warp = false, contiguous = false;
  int low = 0, elem = 4;  // low: the lowest warp bit
  int64_t distinct_regs = 0, values_bytes = 0, bytes = 0;
};

/// The steps of reduction `n` in layout L (empty for a size-1 dim or a scalar operand).
ReduceSteps reduce_steps(const Layout& L, const ir::Node* n);

}  // namespace tessel::passes
