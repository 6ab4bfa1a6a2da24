// Reading and writing one element of any dtype on the host, and rounding a value to a
// dtype's precision. Used by Buffer, the interpreter and tests.
#pragma once

#include <cstdint>
#include <cstring>

#include "tessel/dtype.hpp"

namespace tessel {

/// IEEE binary16 <-> float, round to nearest even (as CUDA's __float2half_rn).
uint16_t float_to_f16_bits(float f);
float f16_bits_to_float(uint16_t h);
/// bfloat16 <-> float, round to nearest even (as CUDA's __float2bfloat16_rn).
uint16_t float_to_bf16_bits(float f);
float bf16_bits_to_float(uint16_t h);

/// Reads element `ptr` of dtype `t` as double (integers exactly up to 2^53).
double read_element(const void* ptr, DType t);
/// Writes `v` converted to `t` (floats rounded to nearest even; integers truncated toward
/// zero as a C++ cast does; bool is v != 0).
void write_element(void* ptr, DType t, double v);
/// Integer read without the double round trip (i64/u64 beyond 2^53).
int64_t read_element_int(const void* ptr, DType t);
void write_element_int(void* ptr, DType t, int64_t v);

/// Rounds a value computed in higher precision to what dtype `t` can hold
/// (f16/bf16/f32 rounding, integer wrap-around, bool normalization).
double round_to(DType t, double v);

}  // namespace tessel
