// Looped reductions (Config::reduction_loops, Helion's meaning). See the .cpp for the
// before/after example.
#pragma once

#include <memory>

#include "ir/ir.hpp"
#include "tessel/config.hpp"

namespace tessel::passes {

/// A new graph in which each reduction dimension i of g.reduction_syms with
/// reduction_loops[i] = C (a power of two below the dimension's padded extent) is
/// processed in chunks of C; nullptr when the config chunks nothing (use g as is).
/// Errors: UserError for a malformed reduction_loops, a kernel whose chunked values
/// are consumed by something other than a reduction or a store, or one whose chunks would
/// read a tensor again after a store into it (or into an argument sharing its memory)
/// changed it.
std::unique_ptr<ir::Graph> roll_reductions(const ir::Graph& g, const Config& c);

/// The reduction dimensions of a traced graph, in Config::reduction_loops order: those
/// declared with ts::register_reduction_dim, then every other ts::all/arange extent that
/// a reduction runs over, in trace order.
std::vector<ir::Sym*> reduction_dims(const ir::Graph& g);

}  // namespace tessel::passes
