// Fills the unset fields of a Config with tessel's defaults for a traced kernel, and
// checks the set ones.
#pragma once

#include <set>
#include <string>

#include "ir/ir.hpp"
#include "tessel/config.hpp"

namespace tessel::passes {

/// Returns `user` with every field set: block_sizes (one per tunable tile dimension;
/// default from the traced extent: up to 1024 elements along the innermost dimension of
/// a loop and 4096 per loop level in all), num_warps 4 to 16 (about 16 elements of a tile
/// value per thread), num_stages 1, pid_type flat (or
/// persistent_interleaved for loops with device-resident bounds), num_sm_multiplier unset
/// (persistent grids then fill the GPU by occupancy), tunables (kernels with ts::register_tunable
/// only: each name's first choice), loop_orders / flatten_loops / l2_groupings (kernels with loops
/// of two or more dimensions only: identity, false, 1; see passes/loop_knobs.hpp). Errors:
/// UserError (naming `kernel` and its first loop's line) for a wrong number of block sizes, a block
/// size that is not a positive power of two, num_warps outside {1, ..., 32}, num_stages < 1,
/// maxnreg outside [24, 255] or above 65536 / threads per program (maxnreg stays unset by default),
/// a num_sm_multiplier that is not a positive power of two, indexing other than "pointer" or
/// "tensor_descriptor", a non-persistent pid_type for a persistent loop, a tunable the kernel does
/// not declare or a value that is not one of its choices, or invalid loop knobs
/// (complete_loop_knobs). Keys that spell out what leaving them out means are left unset (a
/// config spelling them out is the same complete config, one compiled kernel): split_k 1,
/// warp_specialize false, indexing all "pointer", load_eviction_policies all none,
/// num_sm_multiplier of a non-persistent pid_type, empty tunables and reduction_loops of a
/// kernel without any.
Config complete_config(const ir::Graph& g, Config user, const std::string& kernel);

/// The kernel's stores of tensors (Store nodes anywhere in its code): Config::indexing
/// has one entry per load (Graph::num_loads) and then one per store.
int num_stores(const ir::Graph& g);

/// Block size of a tile dimension under a complete config (grid dims: 1).
int64_t block_size(const ir::LoopDim& d, const Config& c);

/// Number of elements a Sym spans in a tile value: the block size of a tile, the padded
/// (power of two) extent of a ts::all / arange extent.
int64_t sym_block(const ir::Sym* s, const Config& c);

/// Largest product of padded ts::all / arange extents (next powers of two) in one value of
/// loop nest `b`, nested loops included, but for the nodes in `skip` (a contraction's
/// factors and product, which no register holds): the elements every tile index carries along.
int64_t extent_elems(const ir::Block& b, const std::set<const ir::Node*>& skip = {});

}  // namespace tessel::passes
