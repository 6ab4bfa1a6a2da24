// Powers of two for block sizes and size buckets.
#pragma once

#include <cstdint>

namespace tessel {

/// The smallest power of two >= v (1 for v <= 1), saturating at 2^62 for larger v (a
/// loop bound or size past 2^62 must not overflow the doubling).
inline int64_t next_pow2(int64_t v) {
  int64_t p = 1;
  while (p < v && p < (int64_t{1} << 62)) p *= 2;
  return p;
}

/// The largest power of two <= v (1 for v <= 1).
inline int64_t prev_pow2(int64_t v) {
  int64_t p = 1;
  while (p <= v / 2) p *= 2;
  return p;
}

/// The number of bits of a power of two v (log2 v); for another v, that of next_pow2(v).
inline int ceil_log2(int64_t v) {
  int l = 0;
  while (l < 62 && (int64_t{1} << l) < v) ++l;
  return l;
}

}  // namespace tessel
