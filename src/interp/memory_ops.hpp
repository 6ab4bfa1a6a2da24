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

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "interp/frame.hpp"

namespace tessel::interp {

/// One element of a multicast access: its address (nullptr where masked), its offset in
/// elements from its buffer's address `base`, and the live host memory holding the buffer.
struct MulticastElement {
  char* ptr = nullptr;
  int64_t offset = 0;
  uintptr_t base = 0;
  std::pair<uintptr_t, uintptr_t> range{0, 0};
};
struct MulticastAccess {
  std::vector<MulticastElement> elements;  // row-major over dims
  Dims dims;                               // dev_ptrs' dims, then the indexed dims
  int64_t per_buffer = 1;                  // elements per buffer (product of the indexed dims)
};

/// The addressing of a multicast tensor (ts::multicast_like), for any memory op on one
/// (`n` a Load/Store, its first index operand args[first]): element [s..., e...] of the
/// access is at dev_ptrs[s...] + offset(e) * element size, where offset(e) is the element
/// offset of the indexed element e in the example tensor (its strides; masks as for an
/// ordinary access), masked where a dev_ptrs coordinate is past its Sym's valid extent.
/// Errors: UserError (at n's line) for a buffer address that is misaligned, or whose
/// reached elements are not inside one live host Buffer's memory (rt::live_host_range).
void multicast_addresses(Frame& f, const ir::Node* n, int first, MulticastAccess& out);

/// Runs Load `n` (args[0] tensor, args[1..] one operand per non-newaxis index) into `out`.
void exec_load(Frame& f, const ir::Node* n, TileValue& out);

/// Runs Store `n` (args[0] tensor, args[1] value, args[2..] index operands): the value
/// broadcasts to the indexed shape and is written at the valid elements.
void exec_store(Frame& f, const ir::Node* n);

/// The addressing of every access (Load, Store, Atomic, Signal, Wait; index operands from
/// ir::first_index(n)) of tensor `t` (host_tensor(f, n)): calls fn(linear, element, offset)
/// for each valid element, in row-major order of the indexed shape, with its position
/// there, its address and its offset in elements in its buffer. A multicast access
/// (n->is_multicast_access()) is addressed by multicast_addresses: the indexed shape is
/// dev_ptrs' shape followed by one buffer's, masked buffers are skipped, and its errors.
void for_each_element(Frame& f, const ir::Node* n, const Buffer& t,
                      const std::function<void(int64_t linear, char* element, int64_t offset)>& fn);

/// The CPU Buffer of access n's tensor (args[0]; a multicast tensor's example, which
/// shapes every buffer). Errors: InternalError for a GPU buffer.
const Buffer& host_tensor(Frame& f, const ir::Node* n);

}  // namespace tessel::interp
