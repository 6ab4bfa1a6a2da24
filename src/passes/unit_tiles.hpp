// Unit tiles: a tile dim whose block size is 1 (TileOptions::block_size 1, Helion's
// block_size=[1, None], or a config's block of 1) holds one element, always valid. The
// pass drops it from every value's shape and indexes it with the tile's first index, so
// that the layout stage gives it no slot and a batched ts::dot ([B, M, K] x [B, K, N] with
// a batch tile of one) is the 2-D dot of each program, on tensor cores where it fits
// (passes/tensor_cores.hpp). See the .cpp for the before/after example.
#pragma once

#include <memory>

#include "ir/ir.hpp"
#include "tessel/config.hpp"

namespace tessel::passes {

/// A new graph in which each tile dim and BlockSize block of size 1 under complete config
/// `c`, in a top-level loop nest that holds a ts::dot (a sum over a product of three or more
/// dims; elsewhere such a dim costs no register, and the nest keeps the code its benchmarks
/// measured), is dropped from every shape: an access by such a tile indexes its tensor with the
/// tile's begin (a scalar index), t.index() becomes t.begin(), reductions and permutes
/// count their dims without it. A dim is kept where the program uses it otherwise: a
/// reduction over it, an arange along it, a gather index or multicast access spanning it,
/// or a flattened loop (Config::flatten_loops) of it. nullptr when no dim is dropped (use
/// g as is). Values are unchanged: the interpreter runs the new graph too.
std::unique_ptr<ir::Graph> squeeze_unit_tiles(const ir::Graph& g, const Config& c);

}  // namespace tessel::passes
