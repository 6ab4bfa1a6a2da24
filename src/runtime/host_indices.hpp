// Scalar indices of a kernel's loads and stores that the host computes (constants, scalar
// arguments, sizes and integer math on them: ir::host_computable), checked on every call
// against their tensor's size. Generated code and the interpreter mask a load or store
// past a tensor's end (a tile's edge is masked so); for a scalar index that is never
// meant, and the read 0 or the dropped store would be a silently wrong value. torch raises
// IndexError for `x[:, 5]` of a [4, 3] tensor likewise.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "ir/host_eval.hpp"
#include "ir/ir.hpp"

namespace tessel::rt {

/// One scalar index that the host computes: `index` addresses dim `dim` of `tensor` (an
/// argument or a kernel allocation) in access `access`.
struct HostIndex {
  const ir::Node* access = nullptr;
  const ir::Node* index = nullptr;
  const ir::Node* tensor = nullptr;
  int dim = 0;
};

/// The host-computed scalar indices of the accesses inside g's loops (an element read in
/// host code, `t(i)`, is checked where it runs). Multicast accesses are left out.
std::vector<HostIndex> collect_host_indices(const ir::Graph& g);

/// Checks each index against its tensor's size for the call of `args`. Errors: UserError
/// naming `g`'s kernel and the access's line, for an index outside [0, size).
void check_host_indices(const ir::Graph& g, std::span<const HostIndex> indices,
                        std::span<const ir::ArgValue> args);

}  // namespace tessel::rt
