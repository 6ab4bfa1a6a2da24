// The Buffer operations that the GPU runtime tests (tests/gpu/runtime_gpu_test.cpp) run on
// a GPU and compare with the host, written once: the CPU tests (tests/buffer_test.cpp) run
// the same calls on the host and check their values, so a host-side change that breaks
// these calls (a new argument check, a conversion rule) fails in CI, which has no GPU.
#pragma once

#include <cmath>
#include <vector>

#include "tessel/buffer.hpp"

namespace buffer_cases {

namespace ts = tessel;

inline const std::vector<ts::DType>& all_dtypes() {
  static const std::vector<ts::DType> all = {ts::boolean, ts::i8,     ts::i32,   ts::i64,
                                             ts::u64,     ts::f16,    ts::bf16,  ts::f32,
                                             ts::f64,     ts::f8e4m3, ts::f8e5m2};
  return all;
}

/// Values every dtype accepts from the host: an integral negative value wraps in u64
/// (two's complement, as torch's integer scalars), a fraction truncates toward 0.
inline std::vector<double> round_trip_values() { return {0, 1, -1, 2.5, 100, 0.25, 7, -3}; }

/// The value fill_pattern writes through a transposed narrow view: negative and
/// fractional, except for u64, which holds no negative fraction (torch refuses it too).
inline double strided_fill_value(ts::DType t) { return t == ts::u64 ? 1.5 : -1.5; }

/// The value fill_pattern writes through a view with gaps: 1e6; 120 for i8 and 6e4 for
/// f16 (whose ranges end at 127 and 65504: a value past them is an error, as in torch).
inline double large_fill_value(ts::DType t) { return t == ts::i8 ? 120 : t == ts::f16 ? 6e4 : 1e6; }

/// Fills `b` (shape [6, 10]) three times: whole with 3.75; columns 2..6 through a
/// transposed narrow view; a [3, 2] view with strides {20, 1} at offset 7 with
/// large_fill_value.
inline void fill_pattern(ts::Buffer b) {
  b.fill(3.75);
  b.narrow(1, 2, 5).transpose(0, 1).fill(strided_fill_value(b.dtype()));
  b.view_as_strided({3, 2}, {20, 1}, 7).fill(large_fill_value(b.dtype()));
}

/// Source values of the conversion tests: zeros, signs, fractions, values beyond i32,
/// f16 and i64, tiny values, NaN and infinities.
inline std::vector<double> conversion_values() {
  const double nan = std::nan(""), inf = INFINITY;
  return {0,     1,   -1,  2.5,  -2.5, 3e9, 1.0 / 3, 65504, 7e4,   -7e4, 0.1, 1e-6,
          1e-30, nan, inf, -inf, 255,  256, -129,    1e18,  -1e18, 4e19, 0.5, -0.5};
}

/// A [4, 6] tensor of dtype `st` on the host holding conversion_values() as a copy from
/// f64 converts them (what `.to(st)` gives in torch; an integer dtype cannot be given
/// NaN or 3e9 directly, as torch's tensor constructor refuses them). Floats convert to
/// integers as a kernel's cast does (saturating, NaN -> 0), u64 included.
inline ts::Buffer conversion_source(ts::DType st) {
  std::vector<double> vals = conversion_values();
  ts::Buffer src = ts::Buffer::empty({4, 6}, st);
  src.copy_from(ts::Buffer::from_vector(vals, {4, 6}, ts::f64));
  return src;
}

}  // namespace buffer_cases
