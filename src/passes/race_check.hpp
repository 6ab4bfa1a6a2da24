// Races between programs, refused at trace time.
//
// The programs of a launch (one per tile or grid index of a top-level loop: its launch
// dims, persistent kernels included) run in no fixed order. A store whose indices do not
// depend on a launch dim writes the same elements from every program along that dim:
//
//   for (auto [tm, tn] : ts::tile(m, n))
//     out(tm) = ts::sum(x(tm, tn), 1);     // every tn program writes out(tm): refused
//     out(tm) += ts::sum(x(tm, tn), 1);    // a load-add-store from every tn: refused
//     flag(tm) = 1;                        // the same value from every tn: allowed
//
// A store "covers" launch dim d when one of its indices depends, through data flow, on
// d's position: its tile (tile index, begin, end, id), its grid index, ts::program_id, or
// a nested loop whose bounds do. A store missing a launch dim is allowed only when the
// stored value does not depend on that dim either (every program writes the same value)
// and does not read the tensor it stores to (no read-modify-write). A dim that has one
// program under every config (`ts::grid(1)`, constant bounds within a fixed block size)
// needs no covering. Indices that depend
// on a dim without separating the programs (`out(tm.index() % 2)`) pass this check; the
// interpreter's race check (interp/write_log.hpp) finds their conflicting writes.
#pragma once

#include "ir/ir.hpp"

namespace tessel::passes {

/// Checks every store of every top-level loop of traced graph `g` (canonical Syms).
/// Errors: UserError at the first offending store's line, naming the launch dims its
/// indices do not cover and what to do (index with every tile, reduce inside one program,
/// or use an atomic). Atomics, signals and waits (ts::atomic_*, ts::signal, ts::wait) are
/// not checked: several programs updating one element is what they are for.
void check_races(const ir::Graph& g);

/// Whether store `n`'s value reads the memory it stores to (a load or device scalar of
/// its tensor, or of a tensor that may alias it: ir::may_alias): a read-modify-write,
/// which loses updates when two threads or programs run it on one element.
bool is_read_modify_write(const ir::Graph& g, const ir::Node* n);

}  // namespace tessel::passes
