#include "interp/tile_value.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

namespace tessel::interp {

void TileValue::reset(DType t, const Dims& d) {
  dtype = t;
  dims = d;
  int64_t n = numel(d);
  if (tessel::is_float(t)) {
    f.resize(n);
    i.clear();
  } else {
    i.resize(n);
    f.clear();
  }
}

int64_t TileValue::as_int(int64_t k) const {
  if (!is_float()) return i[k];
  double v = f[k];
  if (std::isnan(v)) return 0;
  if (v >= 9.2233720368547758e18) return INT64_MAX;
  if (v <= -9.2233720368547758e18) return INT64_MIN;
  return static_cast<int64_t>(v);
}

void TileValue::set_scalar_float(DType t, double v) {
  reset(t, {});
  if (is_float())
    f[0] = round_float(t, v);
  else
    i[0] = wrap_int(t, static_cast<int64_t>(v));
}

void TileValue::set_scalar_int(DType t, int64_t v) {
  reset(t, {});
  if (is_float())
    f[0] = round_float(t, static_cast<double>(v));
  else
    i[0] = wrap_int(t, v);
}

void round_in_place(TileValue& v) {
  double* f = v.f.data();
  int64_t* i = v.i.data();
  const int64_t n = v.size();
  switch (v.dtype) {
    case DType::f64:
    case DType::i64:
    case DType::u64:
      return;
    case DType::f32:
      for (int64_t k = 0; k < n; ++k) f[k] = to_f32(f[k]);
      return;
    case DType::f16:
    case DType::bf16:
    case DType::f8e4m3:
    case DType::f8e5m2:
      for (int64_t k = 0; k < n; ++k) f[k] = round_to(v.dtype, f[k]);
      return;
    case DType::i32:
    case DType::i8:
      for (int64_t k = 0; k < n; ++k) i[k] = wrap_int(v.dtype, i[k]);
      return;
    case DType::boolean:
      for (int64_t k = 0; k < n; ++k) i[k] = i[k] != 0;
      return;
  }
}

std::array<int64_t, kMaxRank> broadcast_strides(const Dims& out, const Dims& in) {
  std::array<int64_t, kMaxRank> st{};
  const int ro = static_cast<int>(out.size()), ri = static_cast<int>(in.size());
  if (ri > ro || ro > kMaxRank)
    throw InternalError(fmt::format("interpreter: extents [{}] do not broadcast to [{}]",
                                    fmt::join(in, ", "), fmt::join(out, ", ")));
  int64_t stride = 1;
  for (int k = ri - 1; k >= 0; --k) {
    int o = k + (ro - ri);
    if (in[k] == out[o]) {
      st[o] = in[k] == 1 ? 0 : stride;
    } else if (in[k] == 1) {
      st[o] = 0;
    } else {
      throw InternalError(fmt::format("interpreter: extents [{}] do not broadcast to [{}]",
                                      fmt::join(in, ", "), fmt::join(out, ", ")));
    }
    stride *= in[k];
  }
  return st;
}

}  // namespace tessel::interp
