#include "common/element.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tessel {

uint16_t float_to_f16_bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t mant = x & 0x7fffffu;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xffu);
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
  int32_t e = exp - 127 + 15;
  if (e >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (e <= 0) {                                                 // subnormal or zero
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1u);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;  // may carry into exp: ok
  return static_cast<uint16_t>(half);
}

float f16_bits_to_float(uint16_t h) {
  uint32_t sign = (static_cast<uint32_t>(h) & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {  // subnormal: normalize
      exp = 127 - 15 + 1;
      while (!(mant & 0x400u)) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ffu;
      x = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 0x1f) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

uint16_t float_to_bf16_bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // NaN
  uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb;
  return static_cast<uint16_t>(x >> 16);
}

float bf16_bits_to_float(uint16_t h) {
  uint32_t x = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

template <class T>
static T load(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <class T>
static void store(void* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

uint8_t float_to_f8_bits(float f, DType t) {
  const bool e4 = t == DType::f8e4m3;
  const int mant = e4 ? 3 : 2, min_exp = e4 ? -6 : -14;  // mantissa bits, smallest normal
  const double largest = e4 ? 448.0 : 57344.0;
  const uint8_t sign = std::signbit(f) ? 0x80 : 0;
  if (std::isnan(f)) return 0x7f;
  const double a = std::fabs(static_cast<double>(f));
  if (a >= largest) return sign | (e4 ? 0x7e : 0x7b);
  // The spacing of a's binade (the subnormals' below 2^min_exp), then to nearest even.
  int e = 0;
  std::frexp(a, &e);
  const double r = std::nearbyint(std::ldexp(a, mant - std::max(e - 1, min_exp)));
  if (r < std::ldexp(1.0, mant)) return sign | static_cast<uint8_t>(r);  // subnormal or 0
  // A normal of binade e - 1; a carry past 2^(mant + 1) starts the next binade.
  const int be = std::max(e - 1, min_exp) + (r >= std::ldexp(1.0, mant + 1) ? 1 : 0);
  const double m = r >= std::ldexp(1.0, mant + 1) ? r / 2 : r;
  return sign | static_cast<uint8_t>((be - min_exp + 1) << mant) |
         static_cast<uint8_t>(m - std::ldexp(1.0, mant));
}

float f8_bits_to_float(uint8_t b, DType t) {
  const bool e4 = t == DType::f8e4m3;
  const int mant = e4 ? 3 : 2, min_exp = e4 ? -6 : -14;
  const int exp = (b & 0x7f) >> mant, m = b & ((1 << mant) - 1);
  const float sign = b & 0x80 ? -1.0f : 1.0f;
  if (e4 && exp == 15 && m == 7) return std::numeric_limits<float>::quiet_NaN();
  if (!e4 && exp == 31)
    return m ? std::numeric_limits<float>::quiet_NaN()
             : sign * std::numeric_limits<float>::infinity();
  if (exp == 0) return sign * static_cast<float>(std::ldexp(m, min_exp - mant));
  return sign * static_cast<float>(std::ldexp(m + (1 << mant), exp - 1 + min_exp - mant));
}

double read_element(const void* p, DType t) {
  switch (t) {
    case DType::boolean:
      return load<uint8_t>(p) ? 1.0 : 0.0;
    case DType::i8:
      return load<int8_t>(p);
    case DType::i32:
      return load<int32_t>(p);
    case DType::i64:
      return static_cast<double>(load<int64_t>(p));
    case DType::u64:
      return static_cast<double>(load<uint64_t>(p));
    case DType::f16:
      return f16_bits_to_float(load<uint16_t>(p));
    case DType::bf16:
      return bf16_bits_to_float(load<uint16_t>(p));
    case DType::f32:
      return load<float>(p);
    case DType::f64:
      return load<double>(p);
    case DType::f8e4m3:
    case DType::f8e5m2:
      return f8_bits_to_float(load<uint8_t>(p), t);
  }
  return 0;
}

static int64_t to_int(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2233720368547758e18) return INT64_MAX;
  if (v <= -9.2233720368547758e18) return INT64_MIN;
  return static_cast<int64_t>(v);
}

void write_element(void* p, DType t, double v) {
  switch (t) {
    case DType::boolean:
      store<uint8_t>(p, v != 0.0 ? 1 : 0);
      break;
    case DType::i8:  // saturating, as a kernel's cast
      store<int8_t>(p, static_cast<int8_t>(std::clamp<int64_t>(to_int(v), INT8_MIN, INT8_MAX)));
      break;
    case DType::i32:
      store<int32_t>(p, static_cast<int32_t>(std::clamp<int64_t>(to_int(v), INT32_MIN, INT32_MAX)));
      break;
    case DType::i64:
      store<int64_t>(p, to_int(v));
      break;
    case DType::u64:
      store<uint64_t>(p, v < 0 ? static_cast<uint64_t>(to_int(v)) : static_cast<uint64_t>(v));
      break;
    case DType::f16:
      store<uint16_t>(p, float_to_f16_bits(to_f32(v)));
      break;
    case DType::bf16:
      store<uint16_t>(p, float_to_bf16_bits(to_f32(v)));
      break;
    case DType::f32:
      store<float>(p, to_f32(v));
      break;
    case DType::f64:
      store<double>(p, v);
      break;
    case DType::f8e4m3:
    case DType::f8e5m2:
      store<uint8_t>(p, float_to_f8_bits(to_f32(v), t));
      break;
  }
}

int64_t read_element_int(const void* p, DType t) {
  switch (t) {
    case DType::i8:
      return load<int8_t>(p);
    case DType::i32:
      return load<int32_t>(p);
    case DType::i64:
      return load<int64_t>(p);
    case DType::u64:
      return static_cast<int64_t>(load<uint64_t>(p));
    case DType::boolean:
      return load<uint8_t>(p) ? 1 : 0;
    case DType::f16:
    case DType::bf16:
    case DType::f32:
    case DType::f64:
    case DType::f8e4m3:
    case DType::f8e5m2:
      break;
  }
  return to_int(read_element(p, t));
}

void write_element_int(void* p, DType t, int64_t v) {
  switch (t) {
    case DType::i8:
      store<int8_t>(p, static_cast<int8_t>(v));
      break;
    case DType::i32:
      store<int32_t>(p, static_cast<int32_t>(v));
      break;
    case DType::i64:
      store<int64_t>(p, v);
      break;
    case DType::u64:
      store<uint64_t>(p, static_cast<uint64_t>(v));
      break;
    case DType::boolean:
      store<uint8_t>(p, v != 0 ? 1 : 0);
      break;
    case DType::f16:
    case DType::bf16:
    case DType::f32:
    case DType::f64:
    case DType::f8e4m3:
    case DType::f8e5m2:
      write_element(p, t, static_cast<double>(v));
  }
}

bool holds_value(DType t, double v) {
  const bool narrow_float = t == DType::f16 || t == DType::bf16 || t == DType::f32;
  return holds_integer_value(t, v) &&
         !(narrow_float && std::isfinite(v) && std::isinf(round_to(t, v)));
}

bool holds_integer_value(DType t, double v) {
  if (!is_integer(t)) return true;
  // [lo, end): end is the first value past the dtype's max (exact in a double).
  const double two63 = 9223372036854775808.0;
  const bool narrow = t == DType::i32 || t == DType::i8;
  const double half = t == DType::i8 ? 128.0 : 2147483648.0;  // 2^(bits - 1) of i8 and i32
  double lo = narrow ? -half : -two63;
  double end = narrow ? half : t == DType::u64 ? 2 * two63 : two63;
  bool integral = std::isfinite(v) && v == std::trunc(v);
  if (t == DType::u64 && !integral) lo = 0;
  return v >= lo && (narrow && !integral ? v <= half - 1 : v < end);
}

int64_t integer_bits(double v) {
  return v >= 9223372036854775808.0 ? static_cast<int64_t>(static_cast<uint64_t>(v))
                                    : static_cast<int64_t>(v);
}

float truncate_tf32(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7f800000u) != 0x7f800000u) u &= 0xffffe000u;  // finite: truncate
  std::memcpy(&f, &u, sizeof u);
  return f;
}

double round_to(DType t, double v) {
  switch (t) {
    case DType::boolean:
      return v != 0.0 ? 1.0 : 0.0;
    case DType::i8:
      return static_cast<int8_t>(static_cast<uint8_t>(static_cast<uint64_t>(to_int(v))));
    case DType::i32:
      return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(to_int(v))));
    case DType::i64:
      return static_cast<double>(to_int(v));
    case DType::u64:
      return v;
    case DType::f16:
      return f16_bits_to_float(float_to_f16_bits(to_f32(v)));
    case DType::bf16:
      return bf16_bits_to_float(float_to_bf16_bits(to_f32(v)));
    case DType::f32:
      return to_f32(v);
    case DType::f64:
      return v;
    case DType::f8e4m3:
    case DType::f8e5m2:
      return f8_bits_to_float(float_to_f8_bits(to_f32(v), t), t);
  }
  return v;
}

}  // namespace tessel
