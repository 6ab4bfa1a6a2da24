// What the specialization key (ir::ArgFacts of the call's tensors, static shapes) and an
// allocation's own arguments guarantee about the sizes and strides a kernel reads: the
// facts that decide whether an access moves whole, aligned 16-byte vectors
// (passes/access_plan.hpp) and which comparisons fold to constants (codegen).
#pragma once

#include <cstdint>
#include <optional>

#include "ir/ir.hpp"

namespace tessel::passes {

/// Whether integer node `n` (a constant or a tensor size) is a multiple of 16.
bool multiple_of_16(const ir::Graph& g, const ir::Node* n);
/// Whether size `dim` of tensor `t` is a multiple of 16.
bool size_multiple_of_16(const ir::Graph& g, const ir::Node* t, int dim);
/// Whether the data pointer of tensor `t` is 16-byte aligned and every stride but that of
/// dim `vdim` (the one vectors run along) is a multiple of 16 bytes (an allocation:
/// row-major, so from its innermost size).
bool outer_strides_aligned(const ir::Graph& g, const ir::Node* t, int vdim);
/// The value of integer node `n` where the key makes it a constant (a Const, or a size
/// known under static shapes or of an allocation of constant size).
std::optional<int64_t> known_int(const ir::Graph& g, const ir::Node* n);

}  // namespace tessel::passes
