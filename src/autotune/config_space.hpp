// The space of configs the autotuner searches, derived from a traced kernel.
//
// Knobs (each an ordered list of choices; a point picks one index per knob):
// - block_sizes[i], one per tunable tile dimension: powers of two from 16 up to
//   min(next_pow2(traced extent), 8192) (1024 when the extent is only known on the
//   device). The lower end is 1 instead of 16 when the extent is small (<= 16) or when
//   the loop nest's values carry ts::all extents of 16 or more elements (one row per
//   program is then a real option, e.g. softmax). ts::register_block_size's [min, max]
//   is respected, and the default block size is always a choice.
// - num_warps: 1, 2, 4, 8, 16.
// - num_stages: 1, 2 (2 issues a device loop's loads one iteration early, and a
//   persistent program's next tile loads before its current tile's work,
//   codegen/emit_pipeline.cpp); canonical points have 1 where neither loop exists.
// - maxnreg: unset (0), 64, 128 for kernels with reductions (Triton's register cap:
//   more programs per SM, or spills), unordered; unset only otherwise.
// - pid_type: flat, xyz (when every top-level loop has at most 3 dims),
//   persistent_blocked, persistent_interleaved; only the persistent two when a
//   top-level loop is persistent (a bound read on the device). Unordered.
// - num_sm_multiplier: 1, 2, 4, 8 (only varies with a persistent pid_type; 1 otherwise).
// - reduction_loops[i], one per reduction dimension (Graph::reduction_syms: those of
//   ts::register_reduction_dim, then other reduced extents): powers of two from 16
//   below the extent's next power of two, then "none" (a persistent reduction) last.
// - tunables.<name>, one per ts::register_tunable: its choices, unordered.
// - load_eviction_policies[i], one per load (Graph::num_loads): none, first, last
//   (EvictionPolicy values), unordered; the field is left unset when all are none.
//   Only for kernels that can read data again (reduction dims, nested loops, or a tensor
//   read by two loads): a one-pass kernel such as add has no such knobs.
// - loop_orders[i], one per loop of two or more dims (passes::multi_dim_loops): the
//   permutations of its dims in lexicographic order (a choice is a permutation's rank,
//   0 = identity), unordered; loops of more than 4 dims keep the identity (k! grows fast).
// - flatten_loops[i], same loops: false, true; only false where flattening is invalid
//   (passes::flatten_blocker) or the loop's l2 grouping is forced above 1.
// - l2_groupings[j], one per top-level loop of two or more dims (passes::grouped_loops):
//   1, 2, 4, ..., 64; only 1 when pid_type is forced to xyz or the loop is forced flat.
//   Kernels without loops of two or more dims have none of these three knobs.
// - split_k: 1, 2, 4, for kernels with a sum of products (a ts::dot) whose pid_type may be
//   flat; canonically 1 with another pid_type.
// - warp_specialize: false, true, for kernels with a sum of products (Config::warp_specialize:
//   a producer warpgroup for a dot on wgmma; not applied elsewhere).
// - indexing[i], one per load (Graph::num_loads) that the TMA may move
//   (passes::tma_may_move) and that is not a factor of a ts::dot, when the space is made
//   for a GPU with the TMA (sm_90 and later): pointer, tensor_descriptor (Helion's
//   indexing strategies), unordered; Config::indexing is left unset when all are pointer,
//   and stores keep pointer. Forced indexing fixes every entry (no knobs).
//
// Constraint: a point is skipped when its maxnreg times its threads exceeds an SM's 65536
// registers, or when the compile pipeline a call would run refuses its config
// (codegen::compile_pipeline up to its layout stage throws: e.g. one tile value of a
// top-level loop would need more than codegen::kMaxRegistersPerTileValue = 256 registers
// per thread on the program lowered for the point's reduction_loops, or its
// reduction_loops cannot be lowered). The default point is always valid.
// Keys set in Settings::autotune_config_overrides are fixed to their value.
// Canonical form: the SM multiplier of a non-persistent pid_type is 1; l2 groupings are 1
// with pid_type xyz and on flattened loops (where they would be invalid).
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ir/ir.hpp"
#include "passes/contractions.hpp"
#include "passes/kernel_plan.hpp"
#include "tessel/config.hpp"

namespace tessel::autotune {

/// One tuned knob.
struct Knob {
  enum Kind : uint8_t {
    block_size,
    num_warps,
    num_stages,
    maxnreg,
    pid_type,
    num_sm_multiplier,
    reduction_loop,
    tunable,
    load_eviction,
    loop_order,
    flatten_loop,
    l2_grouping,
    indexing,
    split_k,
    warp_specialize
  };
  Kind kind;
  int index = 0;     // block id, reduction dim, tunable position, load or loop index
  std::string name;  // "block_sizes[0]", "num_warps", "tunables.unroll", ...
  /// pid_type: PidType values; reduction_loop: 0 = none; loop_order: permutation ranks
  /// (passes::permutation_of_rank); flatten_loop: 0 = false, 1 = true; indexing: 0 =
  /// "pointer", 1 = "tensor_descriptor".
  std::vector<int64_t> choices;
  bool ordered = true;  // neighbours are one step away; else any other choice
};

/// A point of the space: one choice index per knob, in knobs() order.
using Point = std::vector<int>;

class ConfigSpace {
 public:
  /// The space of traced kernel `g` (which must outlive the space), with the fields set
  /// in `forced` fixed. Errors: UserError (naming `kernel`) when `forced` is not a valid
  /// config for `g` (passes::complete_config's checks). `gpu_arch`: the compute capability
  /// of the GPU the configs are for (rt::target_arch()): configs are checked as lowered for
  /// it, and loads get indexing knobs where it has the Tensor Memory Accelerator
  /// (passes::has_tma). Unset: no GPU (a custom backend): checked as lowered for
  /// passes::kDefaultArch, no indexing knobs.
  ConfigSpace(const ir::Graph& g, const Config& forced, const std::string& kernel,
              std::optional<int> gpu_arch = std::nullopt);

  const std::vector<Knob>& knobs() const { return knobs_; }
  /// The complete config of a point (valid for passes::complete_config).
  Config config(const Point& p) const;
  /// The point whose config is nearest to `c` (knob by knob; unset fields take the
  /// default's choice).
  Point point(const Config& c) const;
  /// The default config's point (passes::complete_config of the forced keys).
  const Point& default_point() const { return default_; }
  /// Canonical form: choices that do not change the config or would make it invalid are
  /// reset (the SM multiplier of a non-persistent pid_type is 1; l2 groupings are 1 with
  /// pid_type xyz and on flattened loops; num_stages is 1 without a device loop and
  /// without a persistent pid_type).
  Point canonical(Point p) const;
  /// Whether `p` satisfies the register constraint (see the file comment).
  bool valid(const Point& p) const;
  /// Product of the knobs' choice counts (before constraints), saturating at 2^62.
  int64_t size() const;
  /// A uniformly drawn valid point (retries; the default point when none is found).
  Point random_point(std::mt19937_64& rng) const;
  /// Canonical valid points that differ from `p` in exactly `radius` knobs (1 or 2), each
  /// moved one step (ordered knobs) or to any other choice (unordered), without
  /// duplicates, knobs in order.
  std::vector<Point> neighbors(const Point& p, int radius = 1) const;
  /// Known-good matrix-product points: for each 2-D sum of products of a top-level loop
  /// (a ts::dot; passes/contractions.hpp), or batched one ([B, M, N], its batch block set
  /// to 1 where tuned), its M, N and K block sizes and warps set to
  /// tiles that led bench/dot_bench on the H200: for mma.sync (two stages) 128 x 128 x 32 on
  /// 4 warps for large squares, 128 x 64 x 32 for small ones, 64 x 64 x 32, 128 x 256 x 32 on
  /// 8 warps, 16 x 32 x 128 on 2 warps for M = 16; for wgmma 128 x 256 x 64 on 8 warps with
  /// 4 stages, 128 x 128 x 64 on 4 with 4, 256 x 128 x 64 on 8 with 3; the other knobs as the
  /// default point; 128 x 256 x 64 on 8 warps with 4 stages in persistent_blocked programs,
  /// with and without warp_specialize; for M = 16, 64 x 128 x 64 on 4 warps with 4 stages and
  /// split_k 2, and 64 x 256 x 64 on 8 warps (two warpgroups along N) with 4 stages and
  /// split_k 4; 256 x 128 x 64 on 8 warps with 4 stages and warp_specialize (TF32 with a
  /// row-major y, copied K-major by the consumers);
  /// nearest choices, canonical, valid only, without duplicates. A dim whose block the
  /// kernel fixes (a grouped GEMM's 64 rows: no knob) keeps it, the others are set. The
  /// quick search starts from them too (pattern_search).
  std::vector<Point> matmul_points() const;
  /// `p` with every knob of `kind` moved by `steps` (clamped), canonical.
  Point shifted(const Point& p, Knob::Kind kind, int steps) const;
  const std::string& kernel() const { return kernel_; }

 private:
  // The loop_orders, flatten_loops and l2_groupings knobs, after the others.
  void add_loop_knobs(const Config& forced, const std::vector<int64_t>& pids);

  const ir::Graph& graph_;
  std::string kernel_;
  int arch_ = passes::kDefaultArch;  // what valid() lowers for
  /// Per top-level loop (in host order): its sums of products (passes::find_contractions),
  /// found once for the knobs and matmul_points.
  std::vector<std::pair<const ir::Node*, std::vector<passes::ContractionMatch>>> contractions_;
  bool nested_loops_ = false;  // the traced kernel has a loop inside a top-level loop
  Config base_;                // forced fields not covered by knobs (indexing when forced)
  int num_stores_ = 0;         // the kernel's stores (Config::indexing's last entries)
  std::vector<Knob> knobs_;
  std::vector<int> loop_dims_;   // per loop of loop_orders: its number of dims
  std::vector<int> grouped_at_;  // per l2_groupings entry: its loop's loop_orders index
  Point default_;
};

}  // namespace tessel::autotune
