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
//   a ts::dot's ring, then a transposed store after its loop:   ring at 0; the store's
//                                                             conversion at 0 too (the ring
//                                                             is free), barrier before
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

/// Whether the bytes of ring stage `ring` (a ts::dot's ring, TMA or cp.async) are free when
/// staging op `n` runs: the nest's body runs once per program (not persistent) and `n`
/// stands in a statement of it after the one holding the ring's loop over K. Every TMA copy
/// into the ring has then been read, and every thread has waited for its last wgmma (after
/// the loop: codegen's emit_ring_last), or for its last cp.async copy (the groups after the
/// last tile's are empty); a barrier before n's writes (a ring is its neighbour) makes that
/// true of all threads.
bool ring_free_at(const NestIr& nir, const ir::Node* ring, const ir::Node* n);

/// Sets the offsets and barriers of nir.shared (kinds and bytes set) and nir.shared_bytes.
/// Rings take the first bytes; a stage where every ring is free (ring_free_at) may reuse
/// them (an epilogue's layout conversion after the loop over K), the others come after.
void plan_shared(NestIr& nir);

/// Places the tma stages' mbarriers (8 bytes each, in node order) past every stage's
/// bytes, where no stage reuses them, and sets nir.shared_bytes to their end.
void place_mbarriers(NestIr& nir);

/// Why the plan of `nir` is wrong ("" when it is right): a stage overlapping a neighbour's
/// bytes without a barrier, an offset that is not a multiple of 16, a stage past
/// the nest layout's shared_limit, or shared_bytes other than the end of the last stage.
std::string shared_plan_error(const NestIr& nir);

}  // namespace tessel::passes
