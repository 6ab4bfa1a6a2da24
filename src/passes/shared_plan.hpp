// The shared memory of a loop nest's kernel IR (passes/kernel_ir.hpp), planned before its
// code is printed. Every op that stages values in shared memory writes them, waits at a
// barrier, then reads them. A barrier before its writes is needed only where an op that
// may run just before it (no barrier between them) reads bytes that its writes overlap: the
// previous such op in program order, the last one of a loop body before the body's first
// (the back edge), the ones before a loop that may run no iteration. Any op in between has
// its own barrier after the earlier op's reads. The plan walks the nest in program order,
// collects those neighbours, gives each op the lowest offset disjoint from its neighbours'
// bytes while the nest's total stays within max(its largest op, kFreeSharedBytes), and then
// marks the ops whose neighbours overlap them.
//
//   two reductions back to back (a row's max, then its sum):  max at 0, barrier;
//                                                             sum at 64, no barrier
//   a matmul's contraction in its loop over k:                at 0, barrier (itself, the
//                                                             previous iteration)
//   a transpose's conversion, one tile per program:           at 0, no barrier
//   a load by tensor descriptor in a loop over k:              at 0 (a multiple of 128),
//                                                             barrier (the previous
//                                                             iteration's reads)
#pragma once

#include <map>
#include <set>
#include <string>

#include "passes/kernel_ir.hpp"

namespace tessel::passes {

/// The shared memory a nest may take to place neighbours apart (beyond its largest op's):
/// 32 KiB still lets 7 programs share an SM's 228 KiB, more than its 64 warps hold at 8
/// warps each.
inline constexpr int64_t kFreeSharedBytes = 32 * 1024;

/// Per staging op of `nir` (its `shared` entries' keys, bytes set), the ops that may run
/// just before it with no barrier between (itself, across a loop's back edge).
std::map<const ir::Node*, std::set<const ir::Node*>> shared_neighbours(const NestIr& nir);

/// Sets the offsets and barriers of nir.shared (kinds and bytes set) and nir.shared_bytes.
void plan_shared(NestIr& nir);

/// Places the tma stages' mbarriers (8 bytes each, in node order) past every stage's
/// bytes, where no stage reuses them, and sets nir.shared_bytes to their end.
void place_mbarriers(NestIr& nir);

/// Why the plan of `nir` is wrong ("" when it is right): a stage overlapping a neighbour's
/// bytes without a barrier, an offset that is not a multiple of 16, a stage past
/// kSharedBytesLimit, or shared_bytes other than the end of the last stage.
std::string shared_plan_error(const NestIr& nir);

}  // namespace tessel::passes
