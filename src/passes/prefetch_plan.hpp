// Software pipelining's choice (Config::num_stages = S >= 2; Triton's num_stages): which
// loads of a loop are issued early, and how many tiles ahead. Code generation
// (codegen/emit_pipeline.cpp) holds them in S - 1 register buffers per load, in their
// memory dtype.
//
// A load qualifies where it stands at its loop's own level (not under a nested loop),
// is a vector load (passes/access_plan.hpp) in the nest's layout or a contraction
// factor's, its indices are the loop's tile or values from outside the loop, and no store
// of the program may reach memory it reads (ir::may_alias): an early load would pass the
// store, or the memory barrier ordering them. Loops: device loops of one dim that are not
// flattened, num_stages - 1 tiles ahead (at most 3: more stages act as 4); and in a
// persistent kernel the program loop over tiles (any number of dims), one tile ahead (the
// next program id's). Bounds-checking mode checks each access where it runs: none.
#pragma once

#include <map>
#include <vector>

#include "ir/ir.hpp"

namespace tessel::passes {

struct NestIr;
struct KernelPlan;

struct Prefetch {
  int tiles_ahead = 1;
  std::vector<const ir::Node*> loads;  // in body order
};

/// Whether load n of `loop` (a device loop in the nest of top-level loop `nest`) may be
/// issued tiles ahead: it stands at the loop's own level, its indices are the loop's tile or
/// values from outside the loop, and no store of the nest may reach memory it reads.
bool may_load_ahead(const ir::Graph& g, const ir::Node* nest, const ir::Node* loop,
                    const ir::Node* n);

/// Whether load n of `loop` may also be issued during the program before: may_load_ahead,
/// `loop` stands in the body of `nest` (a persistent program loop) itself, and its bounds
/// and n's indices other than the tiles of `loop` and `nest` are values from outside the
/// nest (the same in every program), so the next program's tiles of n are known from its
/// program id alone. With `tile_begins`, an index that is the begin of one of `nest`'s tiles
/// (t.begin(), a batch tile of one element: passes/unit_tiles.hpp) qualifies too, for code
/// that computes it from the program id where it loads (a wgmma ring's TMA copies).
bool may_load_across_programs(const ir::Graph& g, const ir::Node* nest, const ir::Node* loop,
                              const ir::Node* n, bool tile_begins = false);

/// Per loop of nir's nest with loads to issue early (its accesses planned), the prefetch.
std::map<const ir::Node*, Prefetch> plan_prefetch(const ir::Graph& g, const KernelPlan& plan,
                                                  const NestIr& nir);

}  // namespace tessel::passes
