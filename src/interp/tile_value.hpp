// The interpreter's tile value: a dense row-major array over the concrete extents of a
// node's symbolic shape (a tile dim spans its block size, a ts::all / arange extent its
// power-of-two padded size, a size-1 dim one element). Floats are held as double and
// rounded to their dtype after every op; integers and bool as int64 (i32 wraps, bool is
// 0/1). Also PyTorch's positional (right-aligned) broadcasting over such arrays.
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "common/element.hpp"
#include "tessel/dtype.hpp"
#include "tessel/error.hpp"

namespace tessel::interp {

/// Concrete extents of a tile value, outermost first.
using Dims = std::vector<int64_t>;

/// Largest rank the interpreter iterates over (tile values and tensors).
inline constexpr int kMaxRank = 16;

/// Number of elements of `d` (1 for a scalar).
inline int64_t numel(const Dims& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

/// Rounds `v` to what float dtype `t` holds (f32 / f16 / bf16 rounding; f64 unchanged).
inline double round_float(DType t, double v) {
  if (t == DType::f32) return to_f32(v);
  if (t == DType::f64) return v;
  return round_to(t, v);
}

/// Wraps `v` to integer dtype `t` (i32 and i8 two's complement wrap, bool to 0/1).
inline int64_t wrap_int(DType t, int64_t v) {
  if (t == DType::i32) return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
  if (t == DType::i8) return static_cast<int8_t>(static_cast<uint8_t>(static_cast<uint64_t>(v)));
  if (t == DType::boolean) return v != 0;
  return v;
}

/// A tile or scalar value. `f` holds the elements of float dtypes, `i` those of integer
/// and bool dtypes; the other vector is empty.
struct TileValue {
  DType dtype = DType::f32;
  Dims dims;
  std::vector<double> f;
  std::vector<int64_t> i;

  bool is_float() const { return tessel::is_float(dtype); }
  int64_t size() const {
    return is_float() ? static_cast<int64_t>(f.size()) : static_cast<int64_t>(i.size());
  }
  /// Gives the value dtype `t` and extents `d` (contents unspecified). Reuses capacity,
  /// so a slot rewritten with the same shape on every iteration does not allocate.
  void reset(DType t, const Dims& d);
  /// Element k as double / as int64 (floats truncate toward zero, saturating).
  double as_double(int64_t k) const {
    return is_float() ? f[k]
                      : (dtype == DType::u64 ? static_cast<double>(static_cast<uint64_t>(i[k]))
                                             : static_cast<double>(i[k]));
  }
  int64_t as_int(int64_t k) const;
  /// Makes this a scalar (dims {}) of dtype `t` holding `v` rounded / wrapped to `t`,
  /// reusing its storage.
  void set_scalar_float(DType t, double v);
  void set_scalar_int(DType t, int64_t v);
};

/// Rounds every element of `v` to its dtype (after an op computed in double / int64).
void round_in_place(TileValue& v);

/// Broadcast strides (elements) of an operand with extents `in` read at the positions of
/// an output with extents `out`, right-aligned as PyTorch: a size-1 or missing operand dim
/// has stride 0. Throws InternalError when the extents do not broadcast.
std::array<int64_t, kMaxRank> broadcast_strides(const Dims& out, const Dims& in);

/// Calls f(out_index, in_index[0], ..., in_index[K-1]) for every element of an output of
/// extents `out`, where in_index[k] is the linear index of operand k (of extents
/// *ins[k]) under broadcasting. Row-major order; no allocation.
template <int K, class F>
void for_each_broadcast(const Dims& out, const std::array<const Dims*, K>& ins, F&& f) {
  const int rank = static_cast<int>(out.size());
  if (rank > kMaxRank) throw InternalError("interpreter: tile rank above 16");
  std::array<std::array<int64_t, kMaxRank>, K> st;
  for (int k = 0; k < K; ++k) st[k] = broadcast_strides(out, *ins[k]);
  int64_t total = numel(out);
  if (rank == 0 || total == 0) {
    if (total) [&]<size_t... I>(std::index_sequence<I...>) {
        f(int64_t{0}, (static_cast<void>(I), int64_t{0})...);
      }
    (std::make_index_sequence<K>{});
    return;
  }
  std::array<int64_t, kMaxRank> coord{};
  std::array<int64_t, K> base{};
  const int last = rank - 1;
  const int64_t inner = out[last];
  int64_t linear = 0;
  while (true) {
    [&]<size_t... I>(std::index_sequence<I...>) {
      for (int64_t c = 0; c < inner; ++c) f(linear++, (base[I] + c * st[I][last])...);
    }
    (std::make_index_sequence<K>{});
    int r = last - 1;
    for (; r >= 0; --r) {
      ++coord[r];
      for (int k = 0; k < K; ++k) base[k] += st[k][r];
      if (coord[r] < out[r]) break;
      for (int k = 0; k < K; ++k) base[k] -= coord[r] * st[k][r];
      coord[r] = 0;
    }
    if (r < 0) break;
  }
}

}  // namespace tessel::interp
