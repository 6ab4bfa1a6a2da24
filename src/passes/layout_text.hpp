// The layout stage's text (passes::describe, TESSEL_DUMP_DIR's 06-layout.ir) read back:
// a linear layout's one-line form, and the layouts of a kernel's loop nests, so that a test
// (or a debugging session) can give code generation a layout written as text, e.g. a nest
// placed as an mma fragment:
//
//   // layout of loop %7: 128 threads, vectors of 4, 8 groups, 32 registers per value; ...
//   //   as a linear layout: register[32]: (0, 1) (8, 0) ...; lane[32]: ...; warp[4]: ...;
//   //   -> t0[64], t1[64]
//   //   %12 (load) in its own layout: [t1: 32] [t0: 32]
//
// A nest's slots, blocks and contractions follow from the graph and the config
// (compute_layout); what the text chooses is the placement of its elements (the linear
// layout line) and which accesses run in layouts of their own.
#pragma once

#include <map>
#include <string>

#include "ir/ir.hpp"
#include "layout/linear_layout.hpp"
#include "passes/layout.hpp"
#include "tessel/config.hpp"

namespace tessel::passes {

/// The linear layout whose LinearLayout::to_string is `text`, its lines joined by newlines
/// or by "; " (as describe prints it): `NAME[SIZE]: (C, ...) ...` per input dim, then
/// `-> NAME[SIZE], ...`. Throws ir::ParseError at `line` (1-based, for the message) for
/// other text, a number of bases other than log2 of the size, or bases of another length
/// than the output dims; layout::LinearLayout's InternalError checks apply too.
layout::LinearLayout parse_linear_layout(const std::string& text, int line = 1);

/// The layouts of the top-level loops of `g` under complete config `config` that a
/// layout-stage text gives: for each `// layout of loop %N:` line, loop N's computed layout
/// (compute_layout, assign_access_layouts), placed as the following `as a linear layout`
/// line says (with_placement) and with the accesses the `%M (op) in its own layout: [...]`
/// lines name (slot orders by Sym names) in layouts of their own, and no others. Other
/// lines are skipped. Throws ir::ParseError (at the line) for a loop or node id the graph
/// lacks, slots or blocks other than the computed ones, a placement with_placement
/// refuses, or an own layout that is not an order of the nest's slots.
std::map<const ir::Node*, Layout> parse_layouts(const std::string& text, const ir::Graph& g,
                                                const Config& config);

}  // namespace tessel::passes
