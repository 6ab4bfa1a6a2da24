// Elementwise, conversion and reduction ops of the interpreter, on concrete tile values.
// Semantics are the IR's (src/ir/ir.hpp), which follow PyTorch: true division, floor
// division and a remainder with the sign of the divisor, NaN-propagating maximum and
// minimum, integer division by zero giving 0. Every function writes into `out`, which the
// caller has reset to the node's dtype and extents; results are rounded to that dtype.
#pragma once

#include "interp/tile_value.hpp"
#include "ir/ir.hpp"

namespace tessel::interp {

/// out = fn(a). `a` has out's dtype, except logical_not (bool operand).
void eval_unary(ir::UnaryFn fn, const TileValue& a, TileValue& out);

/// out = fn(a, b), broadcast. `a` and `b` share a dtype (the frontend inserts casts);
/// comparisons and logical ops give bool.
void eval_binary(ir::BinaryFn fn, const TileValue& a, const TileValue& b, TileValue& out);

/// out = cond ? a : b, broadcast. `cond` is bool; `a` and `b` have out's dtype.
void eval_where(const TileValue& cond, const TileValue& a, const TileValue& b, TileValue& out);

/// out = a converted to out's dtype (broadcast to out's extents): float to integer
/// truncates toward zero and saturates (NaN gives 0, as CUDA's cvt.rzi), to bool is != 0,
/// integer to narrower integer wraps.
void eval_cast(const TileValue& a, TileValue& out);

/// out = fn over axis `axis` of `a`, where only the first `valid` coordinates along the
/// axis take part (the others are masked: past a ragged tile edge or a padded extent).
/// `out` has a's extents without the axis (or with 1 there: keepdim). Sums and products
/// accumulate in double (floats) or int64; argmax/argmin give the first index of the
/// extreme value (NaN counts as the extreme, as torch); an empty reduction gives the
/// identity (0, 1, -inf, +inf, index 0, false, true).
void eval_reduce(ir::ReduceFn fn, const TileValue& a, int axis, int64_t valid, TileValue& out);

}  // namespace tessel::interp
