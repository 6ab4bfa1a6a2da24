// The kernel IR of one top-level loop nest (one CUDA kernel), made by the kernel_ir stage
// from the nest's plan and layouts: which nodes are live, each value's tile type (its
// layout and memory space), and the shared memory stages the layouts add (layout
// conversions, cross-warp reductions, contractions' factors, atomics' old values), each
// with its bytes, its offset and whether a barrier precedes it. Code generation prints
// this and decides none of it.
//
// A value of the nest is held in one of its layouts: the nest's (layout 0, passes/layout.hpp),
// an access's own (passes/access_layouts.hpp: the load's elements before they convert, the
// store's after), or a contraction factor's (passes/contractions). Its memory space says
// where: registers (a tile value, per thread as its layout says), uniform (a scalar: one
// value every thread holds), shared (a contraction's factor, staged there for its sum),
// global (a tensor), none (a contraction's product, summed from the staged factors without
// being held). Triton's TTGIR gives every tensor such an encoding; here the nest's layout
// is the one most values share, and the other layouts are named per value.
//
// TESSEL_DUMP_DIR's 07-kernel_ir.ir prints it (describe), e.g. a transpose:
//
//   // kernel IR of loop %6: layouts: L0 the nest's; L1 %9's own
//   //   %7 load f32[t0, t1]: registers L0; access L0 vector dim 1, 4 wide, whole, aligned
//   //   %8 permute f32[t1, t0]: registers L0
//   //   %9 store: access L1 vector dim 1, 4 wide, whole, aligned; shared stage convert L0 -> L1
//   //     at 0, 4224 bytes, no barrier before     (one line)
//   //   shared memory: 4224 bytes
//
// Each memory op's access (passes/access_plan.hpp) says how it moves its elements. An
// access or device loop that must wait for the program's earlier accesses to the same
// memory by other threads says so: `//   %12 load f32[t0]: registers L0; ...; memory
// barrier`. A loop whose loads are issued early lists them (`//   %12 loop: prefetch %14,
// 2 tiles ahead`, passes/prefetch_plan.hpp), and an f16/bf16 value its stores round says
// `rounded by its store` (passes/store_rounding.hpp). parse_kernel_ir reads the lines back
// (an edited offset, barrier, access, prefetch or rounding is what code generation prints),
// checked by shared_plan_error, memory_order_barriers and the passes' own plans.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/ir.hpp"
#include "passes/access_plan.hpp"
#include "passes/kernel_plan.hpp"
#include "passes/layout.hpp"
#include "passes/prefetch_plan.hpp"

namespace tessel::passes {

enum class MemorySpace : uint8_t { registers, uniform, shared, global, none };
const char* memory_space_name(MemorySpace s);

struct TileType {
  int layout = -1;  // into NestIr::layouts; -1: none (uniform, global, none)
  MemorySpace space = MemorySpace::none;
};

/// An op that stages values in shared memory: it writes them, waits at a barrier, reads
/// them. `barrier`: a barrier before its writes too (an op that may run just before it
/// reads bytes its writes overlap). A tma stage (a load by tensor descriptor) is written
/// by the Tensor Memory Accelerator and waited for on its mbarrier, which orders no
/// thread's accesses after another's: the ops before it stay neighbours of the ops after.
/// A ring stage (a contraction on wgmma, passes/tensor_cores.hpp) holds its factors' tiles
/// for the whole loop over K, `stages` tiles in flight: it has bytes of its own, before
/// every other stage's (1024-byte aligned, the swizzle's period), guarded by two mbarriers
/// per buffer (filled; read by every warp) rather than by barriers.
struct SharedStage {
  enum class Kind : uint8_t { reduce, convert, contract, broadcast, tma, ring };
  Kind kind = Kind::reduce;
  /// Bytes into the program's shared memory: a multiple of 16 (tma: of 128, as the TMA
  /// asks of a box it writes).
  int64_t offset = 0, bytes = 0;
  bool barrier = false;
  int from = 0, to = 0;   // convert: layouts (NestIr::layouts)
  int64_t mbarrier = -1;  // tma: its mbarrier's offset (8 bytes past every stage's bytes);
                          // ring: its 2 x stages mbarriers' (filled ones, then read ones)
  int stages = 0;         // ring: its buffers
  bool cp_async = false;  // ring: an mma.sync's, filled by cp.async (Mma::copy_stages): no
                          // mbarriers, a barrier of the threads at each tile
};
const char* stage_kind_name(SharedStage::Kind k);

struct NestIr {
  const ir::Node* loop = nullptr;
  bool persistent = false;         // the body runs once per tile of a program loop
  std::set<const ir::Node*> live;  // nodes with an effect or used by one
  std::set<const ir::Node*> used;  // nodes whose value a live node of the nest uses
  /// [0]: the nest's; then each access's own layout (in node id order, `own`), then each
  /// contraction's two factor layouts (in the order of layouts[0].contractions).
  std::vector<Layout> layouts;
  std::vector<std::string> layout_names;  // "the nest's", "%9's own", "factor 0 of %15"
  std::map<const ir::Node*, int> own;     // access -> its own layout
  /// Stores whose own layout is the nest's with lanes exchanged for registers
  /// (passes/lane_exchange.hpp): converted by warp shuffles, no shared memory.
  std::set<const ir::Node*> exchanged;
  std::map<const ir::Node*, TileType> types;  // every live node with a value
  std::map<const ir::Node*, SharedStage> shared;
  int64_t shared_bytes = 0;
  /// Accesses and device loops that wait at a barrier for the program's earlier accesses
  /// to memory they may share (passes/memory_order.hpp).
  std::set<const ir::Node*> barrier_before;  // the program's: the end of its last stage
  /// Every live load, store, atomic, signal and wait: how it moves its elements
  /// (passes/access_plan.hpp).
  std::map<const ir::Node*, Access> accesses;
  /// Loops whose loads are issued tiles ahead (passes/prefetch_plan.hpp).
  std::map<const ir::Node*, Prefetch> prefetch;
  /// f16/bf16 values that the stores using them round (passes/store_rounding.hpp).
  std::set<const ir::Node*> rounded_by_store;
  const Layout& nest() const { return layouts.front(); }
  /// Access n's own layout, or null.
  const Layout* own_layout(const ir::Node* n) const;
  /// The stage of op n, or null.
  const SharedStage* stage(const ir::Node* n) const;
  /// The access of memory op n. Errors: InternalError for another node.
  const Access& access(const ir::Node* n) const;
  /// The loads of `loop` issued early, or null.
  const Prefetch* prefetched(const ir::Node* loop) const;
};

/// The kernel IR of the nest of `plan` (its loop, a top-level loop of `g`) in layout L
/// (compute_layout, assign_access_layouts). Errors: UserError (the kernel's line) for an op
/// whose stage needs more than the target's shared memory (KernelPlan::shared_limit).
NestIr lower_nest(const ir::Graph& g, const KernelPlan& plan, const Layout& L);

/// Whether access n (load, store, atomic, signal, wait) reaches one element: only scalar
/// indices and no stacked buffers.
bool reaches_one_element(const ir::Node* n);
/// The slots of L that access n's indices (tiles, gathers' operands) and stacked buffers
/// cover.
std::set<int> covered_slots(const Layout& L, const ir::Node* n);
/// The slots of L along which it holds copies of the elements access n reaches (those its
/// indices and stacked buffers do not cover, of more than one element).
std::vector<int> copy_slots(const Layout& L, const ir::Node* n);

/// Whether a live node of nir's nest uses n's value.
bool value_used(const NestIr& nir, const ir::Node* n);

/// The kernel IR as comment lines for stage dumps (above).
std::string describe(const NestIr& nir);

/// The shared memory plan of `nir` (offsets, barriers), its memory barriers, accesses,
/// prefetches and store roundings as `text` (describe's lines, within a dump) gives them. A
/// node's line in the loop's `kernel IR of loop %L` section is `%N op [type]: part; part`;
/// its parts: `shared stage KIND ... at OFFSET, BYTES bytes, barrier before|no barrier
/// before` (op N's offset and barrier; the bytes and kind must be the computed ones);
/// `memory barrier` (every one the analysis requires; `g`: the nest's graph); `access ...`
/// (every memory op's, no stronger than planned: weaker_access_error); `prefetch %A, %B,
/// K tiles ahead` (planned loads that are vector accesses, the planned K); `rounded by its
/// store` (a planned one). Throws ir::ParseError at the line for another loop, node, kind
/// or size, a plan shared_plan_error refuses, a missing memory barrier, stage or access,
/// or a part stronger than planned.
void parse_kernel_ir(const std::string& text, const ir::Graph& g, NestIr& nir);

}  // namespace tessel::passes
