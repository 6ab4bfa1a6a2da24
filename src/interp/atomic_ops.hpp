// Atomics, signals and waits of the interpreter (ts::atomic_*, ts::signal, ts::wait):
// every valid indexed element, addressed as loads and stores address it
// (interp/memory_ops.hpp for_each_element), is updated once, in row-major order of the
// indexed shape, and its previous value is the result (0 where masked off). When the
// launch's programs run concurrently (Frame::sync), each op holds the launch's lock and a
// wait sleeps until another program writes (interp/program_sync.hpp).
#pragma once

#include "interp/frame.hpp"

namespace tessel::interp {

/// Runs Atomic `n` into `out` (the previous values).
void exec_atomic(Frame& f, const ir::Node* n, TileValue& out);

/// Runs Signal `n` into `out` (the previous values): an exchange, or with wait_for a
/// compare-and-swap retried until the element holds wait_for.
void exec_signal(Frame& f, const ir::Node* n, TileValue& out);

/// Runs Wait `n`: until each element holds the signal (then, with update, swaps it in).
/// Errors: UserError naming the kernel, the line and the pad element when no program of
/// the launch can change the element any more.
void exec_wait(Frame& f, const ir::Node* n);

}  // namespace tessel::interp
