// The kernel_ir stage's accesses: how each load, store and atomic of a loop nest moves
// its elements, decided once from the nest's plan, the layout the access runs in and the
// specialization key's facts (passes/key_facts.hpp). Code generation (codegen
// emit_memory.cpp) prints the addressing each form asks for and decides none of it.
//
// Forms, as Triton's coalescing pass gives each load and store a vector width:
//   one         one element (scalar indices): every thread loads it; thread 0 writes it
//   per_thread  one element per thread, the same in all of its registers (no index or
//               stacked dim spans register bits): loaded once and copied, stored from
//               register 0 (not the memory space `uniform`: one value all threads hold)
//   elements    one element per register, each behind its own mask test
//   vector      16-byte vectors (the layout's vector width V) along tensor dim `vdim`, of
//               unit stride: its index a tile or ts::all on the layout's vector slot,
//               filling it, no gather, no flattened loop, no multicast tensor. `whole`:
//               every vector is wholly valid or wholly invalid (its index starts at and its
//               limit is a multiple of 16); `aligned`: every vector address is a multiple
//               of its size (its index starts at a multiple of 16, and the tensor's base
//               and other strides are 16-byte aligned).
//   tma         (a load, Config::indexing "tensor_descriptor") one box of the tensor copied
//               by the Tensor Memory Accelerator into its shared stage, each thread then
//               reading its elements there (passes/tensor_descriptor.hpp); the nest's
//               layout only. `vectors`: read from the box in the layout's vectors (where
//               a pointer load would be a vector access; vdim is the box's dim 0)
//
// TESSEL_DUMP_DIR's 07-kernel_ir.ir prints each access (describe in kernel_ir.hpp), e.g.
// `//   %9 store: access L1 vector dim 1, 4 wide, whole, aligned`; parse_kernel_ir reads
// it back, where a form may be weakened (vector to elements, whole or aligned dropped) but
// not strengthened past what the facts allow; a tma access keeps its box (its `vectors`
// may be dropped).
#pragma once

#include <cstdint>
#include <string>

#include "ir/ir.hpp"
#include "passes/kernel_plan.hpp"
#include "passes/layout.hpp"
#include "passes/tensor_descriptor.hpp"

namespace tessel::passes {

struct Access {
  enum class Form : uint8_t { one, per_thread, elements, vector, tma };
  Form form = Form::elements;
  int layout = 0;  // the layout it runs in (NestIr::layouts)
  int vdim = -1;   // vector, tma with vector reads: the tensor dim vectors run along
  bool whole = false, aligned = false;
  bool stacked = false;  // a multicast tensor: each element's buffer from its dev_ptrs tile
  TmaBox tma;            // tma: the box
};
const char* access_form_name(Access::Form f);

/// Whether `s` is a dim of a flattened loop of the plan's nest (its elements are not
/// contiguous in memory: per-register coordinates).
bool flattened(const KernelPlan& plan, const ir::Sym* s);
/// Whether the slot of `s` in L spans register bits (elements of one thread), or `s` is a
/// flattened loop's dim.
bool spans_registers(const KernelPlan& plan, const Layout& L, const ir::Sym* s);
/// Whether array `n` holds one value in all of a thread's registers in L: no dim of its
/// shape spans registers (e.g. a [rows] value with one row per thread).
bool same_in_every_register(const KernelPlan& plan, const Layout& L, const ir::Node* n);
/// Whether the index operands of the gathers of access `n` hold one value in all of a
/// thread's registers in L.
bool gathers_same_in_every_register(const KernelPlan& plan, const Layout& L, const ir::Node* n);

/// The access of memory op `n` (Load, Store, Atomic, Signal, Wait) of the plan's nest
/// running in L, layout number `layout` of the nest's kernel IR.
Access plan_access(const ir::Graph& g, const KernelPlan& plan, const Layout& L, int layout,
                   const ir::Node* n);

/// "access L<k> <form>[ dim D, V wide[, whole][, aligned]][, box [B0, B1][, vectors]][, stacked]"
/// (V: L's vector width; a tma access's box in the tensor's dim order).
std::string describe(const Access& a, const Layout& L);

/// Why access `given` cannot replace the planned `planned` ("" when it can: the same layout
/// and tensor, a weaker form or fewer guarantees; a vector only where planned).
std::string weaker_access_error(const Access& given, const Access& planned);

}  // namespace tessel::passes
