// The CPU reference interpreter: executes a top-level loop nest of the IR (the same IR
// the GPU path lowers) program by program, tile by tile, with the same block sizes and
// masks as the generated code. It is the oracle of the GPU tests.
#pragma once

#include "driver/host_env.hpp"
#include "interp/unwritten.hpp"
#include "ir/ir.hpp"
#include "tessel/config.hpp"

namespace tessel::interp {

/// Runs top-level Loop `loop` of `g` on the CPU: every program of the launch grid in
/// order, reading and writing the CPU Buffers of `env`. Block sizes come from `config`
/// (complete: see passes::complete_config).
/// With the environment variable TESSEL_CHECK_RACES set (not 0; its value, a number, is
/// the seed), the programs run in a shuffled order and every stored element is logged
/// (interp/write_log.hpp): two programs writing different values to one element (or one
/// store writing an element twice with different values), or one program reading an
/// element another writes, raise a UserError. The test
/// suites run with it on.
/// `unwritten` (one per call, shared by its launches) tracks the elements of the call's
/// ts::empty allocations written so far: a read of one not written is a UserError
/// (interp/unwritten.hpp).
/// Errors: UserError for out-of-range device reads that the GPU would also reject
/// (e.g. a device scalar index out of its tensor), and for races under the check,
/// naming the kernel and line.
void run_loop(const ir::Graph& g, const ir::Node* loop, rt::HostEnv& env, const Config& config,
              UnwrittenMemory& unwritten);

}  // namespace tessel::interp
