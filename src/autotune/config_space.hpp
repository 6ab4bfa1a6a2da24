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
// - num_stages: 1 only, for now (code generation does not pipeline loads yet).
// - pid_type: flat, xyz (when every top-level loop has at most 3 dims),
//   persistent_blocked, persistent_interleaved; only the persistent two when a
//   top-level loop is persistent (a bound read on the device). Unordered.
// - num_sm_multiplier: 1, 2, 4, 8 (only varies with a persistent pid_type; 1 otherwise).
// - reduction_loops[i], one per reduction dimension (Graph::reduction_syms: those of
//   ts::register_reduction_dim, then other reduced extents): powers of two from 16
//   below the extent's next power of two, then "none" (a persistent reduction) last.
// - tunables.<name>, one per ts::register_tunable: its choices, unordered.
// Not tuned yet: loop_orders, flatten_loops, l2_groupings, indexing (left at their
// defaults unless forced).
//
// Constraint: a point is skipped when one tile value of a top-level loop would need more
// than 256 registers per thread (passes::compute_layout(loop, config).regs() > 256, on the
// program lowered for the point's reduction_loops), or when its reduction_loops cannot
// be lowered (passes::roll_reductions throws). The default point is always valid.
// Keys set in Settings::autotune_config_overrides are fixed to their value.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ir/ir.hpp"
#include "tessel/config.hpp"

namespace tessel::autotune {

/// One tuned knob.
struct Knob {
  enum Kind : uint8_t {
    block_size,
    num_warps,
    num_stages,
    pid_type,
    num_sm_multiplier,
    reduction_loop,
    tunable
  };
  Kind kind;
  int index = 0;                 // block id, reduction dim or tunable position
  std::string name;              // "block_sizes[0]", "num_warps", "tunables.unroll", ...
  std::vector<int64_t> choices;  // pid_type: PidType values; reduction_loop: 0 = none
  bool ordered = true;           // neighbours are one step away; else any other choice
};

/// A point of the space: one choice index per knob, in knobs() order.
using Point = std::vector<int>;

class ConfigSpace {
 public:
  /// The space of traced kernel `g` (which must outlive the space), with the fields set
  /// in `forced` fixed. Errors: UserError (naming `kernel`) when `forced` is not a valid
  /// config for `g` (passes::complete_config's checks).
  ConfigSpace(const ir::Graph& g, const Config& forced, const std::string& kernel);

  const std::vector<Knob>& knobs() const { return knobs_; }
  /// The complete config of a point (valid for passes::complete_config).
  Config config(const Point& p) const;
  /// The point whose config is nearest to `c` (knob by knob; unset fields take the
  /// default's choice).
  Point point(const Config& c) const;
  /// The default config's point (passes::complete_config of the forced keys).
  const Point& default_point() const { return default_; }
  /// Canonical form: choices that do not change the config are reset (the SM multiplier
  /// of a non-persistent pid_type is 1).
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
  /// `p` with every knob of `kind` moved by `steps` (clamped), canonical.
  Point shifted(const Point& p, Knob::Kind kind, int steps) const;
  const std::string& kernel() const { return kernel_; }

 private:
  const ir::Graph& graph_;
  std::string kernel_;
  Config base_;  // forced fields not covered by knobs (loop_orders, ...)
  std::vector<Knob> knobs_;
  Point default_;
};

}  // namespace tessel::autotune
