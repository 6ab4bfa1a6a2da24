// Reading and writing one element of any dtype on the host, and rounding a value to a
// dtype's precision. Used by Buffer, the interpreter and tests.
#pragma once

#include <cstdint>
#include <cstring>

#include "tessel/dtype.hpp"

namespace tessel {

/// A double rounded to f32, to nearest even, IEEE's overflow included: a finite value
/// beyond f32's range becomes the largest finite f32 or, from halfway to the next power of
/// two on, an infinity (as the GPU's cvt.rn.f32.f64; C++ leaves static_cast undefined there).
inline float to_f32(double d) {
  constexpr double kMax = 0x1.fffffep127, kOverflow = 0x1.ffffffp127;  // FLT_MAX, + half an ulp
  if (!(d > kMax || d < -kMax)) return static_cast<float>(d);          // in range, or NaN
  const float huge = d >= kOverflow || d <= -kOverflow ? __builtin_inff() : 0x1.fffffep127f;
  return d > 0 ? huge : -huge;
}

/// IEEE binary16 <-> float, round to nearest even (as CUDA's __float2half_rn).
uint16_t float_to_f16_bits(float f);
float f16_bits_to_float(uint16_t h);
/// bfloat16 <-> float, round to nearest even (as CUDA's __float2bfloat16_rn).
uint16_t float_to_bf16_bits(float f);
float bf16_bits_to_float(uint16_t h);
/// An 8-bit float (t: f8e4m3 or f8e5m2, tessel/dtype.hpp) from an f32: to nearest even,
/// saturating at the largest finite value (infinities too), NaN to 0x7f; what CUDA's
/// __nv_fp8_e4m3(float) / __nv_fp8_e5m2(float) compute (__NV_SATFINITE).
uint8_t float_to_f8_bits(float f, DType t);
/// The value of 8-bit float bits b of dtype t (exact in f32).
float f8_bits_to_float(uint8_t b, DType t);

/// f32 truncated to TF32 (10 mantissa bits, toward zero): the f32 with its 13 low mantissa
/// bits cleared, what the tensor cores read from f32 bits (wgmma's TF32 operands in shared
/// memory, PTX ISA). NaN and infinities are kept. Generated code's ts::truncate_tf32
/// computes the same bits.
float truncate_tf32(float f);

/// Reads element `ptr` of dtype `t` as double (integers exactly up to 2^53).
double read_element(const void* ptr, DType t);
/// Writes `v` converted to `t` (floats rounded to nearest even; integers truncated toward
/// zero, saturating at t's range and NaN -> 0, as a kernel's cast; bool is v != 0).
void write_element(void* ptr, DType t, double v);
/// Integer read without the double round trip (i64/u64 beyond 2^53).
int64_t read_element_int(const void* ptr, DType t);
void write_element_int(void* ptr, DType t, int64_t v);

/// Whether integer dtype `t` holds host value `v`, as torch's checked scalar conversion
/// decides (c10::overflows): a fractional value must lie in [lowest, max] and truncates
/// toward 0; an integral value may also be negative for u64, and wraps as two's complement
/// (torch accepts -1 for an unsigned dtype); NaN and infinities never fit. True for every
/// value when `t` is not an integer dtype.
bool holds_integer_value(DType t, double v);
/// Whether dtype `t` holds host value `v` for torch.full and fill_ ("cannot be converted
/// without overflow"): integers as holds_integer_value says; f16, bf16 and f32 a value
/// that does not round from finite to infinite; 8-bit floats (saturating by design) and
/// f64 every value.
bool holds_value(DType t, double v);
/// The 64 bits of integer value `v` (truncated toward 0) as an int64_t: two's complement
/// for negatives, and values in [2^63, 2^64) (u64) as their bit pattern. `v` must be held
/// by i64 or u64 (holds_integer_value).
int64_t integer_bits(double v);

/// Rounds a value computed in higher precision to what dtype `t` can hold
/// (f16/bf16/f32 rounding, integer wrap-around, bool normalization).
double round_to(DType t, double v);

}  // namespace tessel
