// The barrier before a load, store, atomic or loop that the kernel IR says must wait for
// the program's earlier accesses (passes/memory_order.hpp).
#include <fmt/format.h>

#include "codegen/emitter_state.hpp"

namespace tessel::codegen {

using ir::Node;
using ir::Op;

void Emitter::emit_barrier(const Node* n) {
  const char* what = n->op == Op::Load    ? "load"
                     : n->op == Op::Store ? "store"
                     : n->op == Op::Loop  ? "loop"
                                          : "atomic";
  line(fmt::format("{};  // the {} below reads or writes memory another thread of the program "
                   "accessed before",
                   L_->threads <= 32 ? "__syncwarp()" : "__syncthreads()", what),
       n);
}

}  // namespace tessel::codegen
