// Runs a traced kernel's host block for one call: allocations, shape checks, and one
// launch per top-level loop (on the GPU, or on the CPU interpreter).
#pragma once

#include <vector>

#include "driver/host_env.hpp"
#include "ir/ir.hpp"
#include "tessel/buffer.hpp"
#include "tessel/config.hpp"

namespace tessel::rt {

class GpuProgram;

/// Returns the kernel's outputs. `gpu` null = run the loops on the interpreter (GPU
/// Buffers are then copied to the host and back, for TESSEL_INTERPRET=1).
/// Errors: UserError when a shape check fails (sizes that must be equal differ).
std::vector<Buffer> run_host_program(const ir::Graph& g, const Config& config, HostEnv& env,
                                     GpuProgram* gpu);

}  // namespace tessel::rt
