// Wider vectors for a store of a tensor-core accumulator, by exchanging lane bits for
// register bits within each warp.
//
// An mma.sync or wgmma accumulator fragment gives each thread two consecutive columns: the
// four lanes of a quad hold columns 2 l .. 2 l + 1 of 8, and registers hold the next groups
// of 8 columns. Stored as it is, each thread writes 4 bytes (bf16) or 8 (f32) per column
// pair, and a warp's store touches 8 rows in 16- or 32-byte pieces. Exchanging the quad's
// lane bits with the register bits of higher columns (a butterfly of warp shuffles per
// exchanged bit, no shared memory) gives each thread 16 consecutive bytes of a row and the
// quad 64: a quarter of the store instructions, whole sectors. The exchanged layout is the
// store's own layout (NestIr::own, NestIr::exchanged); codegen/emit_convert.cpp prints the
// shuffles. Triton makes the same move with its warp-local layout conversions (shuffles
// where the layouts differ only within a warp).
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "passes/layout.hpp"

namespace tessel::passes {

/// L (every thread active, each input bit holding one coordinate bit) with lane bits
/// exchanged for register bits so that each thread's low log2(vec) register bits hold
/// slot `slot`'s coordinate bits 0 .. log2(vec) - 1 in order (vec-wide vectors along it):
/// each lane bit holding one of those bits is exchanged for the register bit holding the
/// slot's lowest coordinate bit at or above log2(vec), and the registers are renumbered,
/// the vector's first. None when a warp bit holds one of those bits, no register bit is
/// left to exchange, or the slot's block is below vec.
std::optional<Layout> lanes_exchanged(const Layout& L, int slot, int vec);

/// How values in layout `from` move to layout `to` (lanes_exchanged of it): first, per
/// (lane bit, register bit) of `swaps`, the registers whose register bit is 0 and 1 trade
/// places across the lanes that differ in the lane bit; then register bit i of the result
/// is register bit `reg_to[i]` of `to`. Throws InternalError when the layouts differ in
/// any other way.
struct LaneExchange {
  std::vector<std::pair<int, int>> swaps;
  std::vector<int> reg_to;
};
LaneExchange lane_exchange(const Layout& from, const Layout& to);

}  // namespace tessel::passes
