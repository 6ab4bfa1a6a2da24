// The layout stage's second half: loads and stores that get a layout of their own.
//
// A loop nest holds its values in one register layout (passes::compute_layout) whose
// innermost slot is the dimension most often last in shapes. An access whose tensor is
// contiguous along another of the nest's dimensions (a transpose, out(tn, tm) = x(tm, tn))
// would then touch one element per thread at a stride: each of its 32 lanes a different
// memory segment. Such an access runs in the nest's layout with its own contiguous
// dimension's slot moved innermost (16-byte vectors along it), and its value converts
// between the two layouts through shared memory (codegen emit_convert.cpp). Triton does
// the same with a blocked layout per load and store and convert_layout between them.
//
// An access qualifies when it is a load or store of a tile value (not one element, not a
// gather, not a multicast tensor), its tensor has a dim of stride 1 for the
// specialization (ir::unit_stride_dim: the innermost of a row-major tensor, dim 0 of a
// transposed view x.t()), its index there is a tile or ts::all whose Sym fills a slot
// other than the nest's innermost, that slot holds at least a vector, the
// access also spans the nest's innermost slot (so the conversion is a permutation of its
// own elements, not a copy of a smaller value: the index Sym there fills the slot), no loop
// of the nest is flattened, the value fits in shared memory, and it is not a load by
// tensor descriptor (passes/tensor_descriptor.hpp: its box lands in shared memory, where
// the nest's layout reads it).
#pragma once

#include "ir/ir.hpp"
#include "passes/kernel_plan.hpp"
#include "passes/layout.hpp"
#include "tessel/config.hpp"

namespace tessel::passes {

/// Fills `L.own_order` (L: compute_layout(loop, config)) for the accesses of top-level
/// loop `loop` of `g` that qualify (above). Config complete.
void assign_access_layouts(const ir::Graph& g, const ir::Node* loop, const Config& config,
                           Layout& L);
/// The same with the nest's plan (plan_kernel(g, loop, config)) already made.
void assign_access_layouts(const ir::Graph& g, const ir::Node* loop, const Config& config,
                           const KernelPlan& plan, Layout& L);

/// Bytes of shared memory that converting a value of dtype `t` between layout `L` and an
/// access's own layout takes: every element of the nest's tile, one pad element per row
/// of L's innermost slot (no bank conflicts when a warp reads down a column).
int64_t conversion_bytes(const Layout& L, DType t);

}  // namespace tessel::passes
