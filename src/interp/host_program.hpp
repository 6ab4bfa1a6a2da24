// Runs a traced kernel's host block for one call: allocations, shape checks, and one
// launch per top-level loop (on the GPU, or on the CPU interpreter).
#pragma once

#include <cstdint>
#include <vector>

#include "driver/host_env.hpp"
#include "ir/ir.hpp"
#include "tessel/buffer.hpp"
#include "tessel/config.hpp"

namespace tessel::rt {

class GpuProgram;

/// The bytes of allocation `alloc` of `g` with `shape` (its sizes on a call).
/// Errors: UserError at the allocation's line for a negative size, or for a byte count
/// past 2^63 - 1 (stating the shape and that the count overflows).
int64_t check_alloc_shape(const ir::Graph& g, const ir::Node* alloc,
                          const std::vector<int64_t>& shape);

/// Returns the kernel's outputs. `gpu` null = run the loops on the interpreter (GPU
/// Buffers are then copied to the host and back, for TESSEL_INTERPRET=1).
/// Errors: UserError when a shape check fails (sizes that must be equal differ), or an
/// allocation cannot be made (check_alloc_shape; out of memory), at the line of the
/// check or allocation.
std::vector<Buffer> run_host_program(const ir::Graph& g, const Config& config, HostEnv& env,
                                     GpuProgram* gpu);

}  // namespace tessel::rt
