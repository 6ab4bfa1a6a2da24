// Memory order inside a program: the loads, stores, atomics and device loops of a loop
// nest that must wait at a barrier for the program's earlier accesses to memory they may
// share, made by other threads (memory_order.cpp says when). A pass of the kernel_ir stage
// (passes/kernel_ir.hpp); code generation prints the barriers.
#pragma once

#include <set>

#include "ir/ir.hpp"
#include "passes/kernel_ir.hpp"

namespace tessel::passes {

/// The accesses and device loops of nir's nest (a top-level loop of `g`) that need a
/// barrier before them; nir's liveness, layouts and own layouts set.
std::set<const ir::Node*> memory_order_barriers(const ir::Graph& g, const NestIr& nir);

}  // namespace tessel::passes
