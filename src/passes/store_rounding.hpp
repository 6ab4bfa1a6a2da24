// Which f16/bf16 values a store rounds: a cast or elementwise op of dtype f16 or bf16 is
// held as float and rounded to its dtype after the op, unless every use of it stores it
// into a tensor of that dtype; the store rounds (the device header's Mem::from_reg), so
// the op does not: one rounding, the same value (rounding is idempotent).
#pragma once

#include <set>

#include "ir/ir.hpp"

namespace tessel::passes {

/// The values among `live` (a nest's live nodes) whose only uses are such stores.
std::set<const ir::Node*> values_rounded_by_stores(const ir::Graph& g,
                                                   const std::set<const ir::Node*>& live);

}  // namespace tessel::passes
