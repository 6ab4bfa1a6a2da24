// The three searches over a ConfigSpace. Each measures through Trials (which enforce the
// budget and never measure a config twice) and leaves the best in Trials::best().
//
// The default is a pattern search (coordinate descent over the knobs), chosen because
// the knobs of a tile kernel are few (block sizes, warps, pid type, ...), ordered, and
// their cost surface is close to unimodal along each knob (too small a tile wastes
// bandwidth, too big spills registers or starves the grid). Starting from the default
// config (passes::complete_config, already a good guess) and a handful of seeds around it,
// one-knob moves reach a local optimum in a few rounds, each round a batch whose members
// compile in parallel. That finds, in tens of configs, what a genetic or differential
// evolution search (Helion's former default, thousands of configs) finds in minutes;
// effort full widens it (a frontier of the 3 best points, seeds two steps away, and
// two-knob moves once one-knob moves stop improving) to step over ridges between knobs.
#pragma once

#include <cstdint>
#include <vector>

#include "autotune/trials.hpp"

namespace tessel::autotune {

struct PatternSearchOptions {
  /// How many of the best points are expanded each round.
  int frontier = 1;
  /// Also seed with block sizes two steps from the default.
  bool wide_seeds = false;
  /// When no one-knob move improves, try moves of two knobs at once before stopping.
  bool two_knob_moves = false;
};

/// Pattern search: measures the seeds (the default point; block sizes one step up and
/// down; num_warps one step up and down; both together; every pid_type), then in rounds
/// the unmeasured neighbours (one knob moved one step, or to any other choice for
/// unordered knobs) of the `frontier` best points, followed by Hooke and Jeeves' moves
/// from the best point (every improving knob move at once, and each continued one step
/// further), until a round leaves the best points unchanged or the budget is used up.
void pattern_search(Trials& trials, const PatternSearchOptions& options = {});

/// Random search: uniformly drawn valid points (deterministic in `seed`), in batches of
/// `batch`, until the budget is used up or no unmeasured point is found.
void random_search(Trials& trials, uint64_t seed, int batch = 16);

/// Measures each config of `configs` (in order, until the budget is used up).
void list_search(Trials& trials, const std::vector<Config>& configs);

}  // namespace tessel::autotune
