// Loads and stores of the interpreter: how an indexed tensor access `x(i, t, ts::all,
// idx_tile, ts::newaxis)` addresses a CPU Buffer, with the masks of the generated code.
//
// The indexed shape is, in order, one dim per tile / ts::all / newaxis index, with the
// broadcast shape of all gather (integer tile Value) indices inserted at the position of
// the first gather index (PyTorch advanced indexing); scalar indices drop their dim.
// An element is valid when every index lies in [0, size) of its tensor dimension, a
// tile coordinate is before the tile's end (ragged edge), a ts::all coordinate is
// before the runtime extent (padding), and a coordinate of the gather block is valid
// along its own Sym (so `x(t.index() * 5 + pid)` is masked at t's ragged edge, as
// Helion masks every tile dimension of an access). Invalid loads read 0; invalid stores
// are skipped.
#pragma once

#include <functional>

#include "interp/frame.hpp"

namespace tessel::interp {

/// Runs Load `n` (args[0] tensor, args[1..] one operand per non-newaxis index) into `out`.
void exec_load(Frame& f, const ir::Node* n, TileValue& out);

/// Runs Store `n` (args[0] tensor, args[1] value, args[2..] index operands): the value
/// broadcasts to the indexed shape and is written at the valid elements.
void exec_store(Frame& f, const ir::Node* n);

/// The addressing of every access (Load, Store, Atomic, Signal, Wait; index operands from
/// ir::first_index(n)) of tensor `t`: calls fn(linear, element) for each valid element, in
/// row-major order of the indexed shape, with its position there and its address.
void for_each_element(Frame& f, const ir::Node* n, const Buffer& t,
                      const std::function<void(int64_t linear, char* element)>& fn);

/// The CPU Buffer of access n's tensor (args[0]). Errors: InternalError for a GPU buffer.
const Buffer& host_tensor(Frame& f, const ir::Node* n);

}  // namespace tessel::interp
