// tessel's device header library, included by every generated kernel. Compiles under
// NVRTC (no host headers) and nvcc. Embedded into libtessel at build time.
//
// Conventions of generated code: tile values live in per-thread register arrays; f16
// and bf16 values are held as float and rounded to their dtype after every op (so the
// GPU computes what the CPU interpreter computes); memory accesses go through ld/st
// below, with 16-byte vector accesses where the addresses allow.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace ts {

typedef long long i64;
typedef unsigned long long u64;

// ---- rounding of register values to a dtype's precision ----
// A barrier of the program's first n threads (a multiple of 32; named barrier 1): where a
// producer warpgroup past them runs on its own (Config::warp_specialize).
__device__ __forceinline__ void sync_threads_of(int n) {
  asm volatile("bar.sync 1, %0;" ::"r"(n) : "memory");
}
__device__ __forceinline__ float round_f16(float x) { return __half2float(__float2half_rn(x)); }
__device__ __forceinline__ float round_bf16(float x) {
  return __bfloat162float(__float2bfloat16_rn(x));
}
/// To TF32 (ts::dot's f32 operands): toward zero, the 13 low mantissa bits cleared, as the
/// tensor cores read f32 bits (the interpreter's truncate_tf32 computes the same bits). NaN
/// and infinities are kept.
__device__ __forceinline__ float truncate_tf32(float x) {
  unsigned u = __float_as_uint(x);
  if ((u & 0x7f800000u) != 0x7f800000u) u &= 0xffffe000u;
  return __uint_as_float(u);
}

// ---- element conversion between memory and registers ----
// Float to integer as tessel defines it (the interpreter's eval_cast): truncation toward
// zero, saturating at the type's range, NaN -> 0, negative -> 0 for u64. CUDA's own
// conversions turn NaN into the lowest value (0x8000000000000000 for 64 bits, INT_MIN
// from a double).
template <class F>
__device__ __forceinline__ int to_i32(F x) {
  if (x != x) return 0;
  if (x >= F(2147483647.0)) return 0x7fffffff;
  if (x <= F(-2147483648.0)) return -0x7fffffff - 1;
  return static_cast<int>(x);
}
template <class F>
__device__ __forceinline__ signed char to_i8(F x) {
  if (x != x) return 0;
  if (x >= F(127.0)) return 127;
  if (x <= F(-128.0)) return -128;
  return static_cast<signed char>(x);
}
template <class F>
__device__ __forceinline__ long long to_i64(F x) {
  if (x != x) return 0LL;
  if (x >= F(9.2233720368547758e18)) return 0x7fffffffffffffffLL;
  if (x <= F(-9.2233720368547758e18)) return -0x7fffffffffffffffLL - 1;
  return static_cast<long long>(x);
}
template <class F>
__device__ __forceinline__ unsigned long long to_u64(F x) {
  if (!(x > F(0))) return 0ULL;  // NaN too
  if (x >= F(1.8446744073709552e19)) return ~0ULL;
  return static_cast<unsigned long long>(x);
}

template <class M>
struct Mem;  // M: the dtype's storage type in memory
template <>
struct Mem<float> {
  typedef float reg;
  static __device__ __forceinline__ float to_reg(float v) { return v; }
  static __device__ __forceinline__ float from_reg(float v) { return v; }
};
template <>
struct Mem<__half> {
  typedef float reg;
  static __device__ __forceinline__ float to_reg(__half v) { return __half2float(v); }
  static __device__ __forceinline__ __half from_reg(float v) { return __float2half_rn(v); }
};
template <>
struct Mem<__nv_bfloat16> {
  typedef float reg;
  static __device__ __forceinline__ float to_reg(__nv_bfloat16 v) { return __bfloat162float(v); }
  static __device__ __forceinline__ __nv_bfloat16 from_reg(float v) {
    return __float2bfloat16_rn(v);
  }
};
template <>
struct Mem<double> {
  typedef double reg;
  static __device__ __forceinline__ double to_reg(double v) { return v; }
  static __device__ __forceinline__ double from_reg(double v) { return v; }
};
template <>
struct Mem<int> {
  typedef int reg;
  static __device__ __forceinline__ int to_reg(int v) { return v; }
  static __device__ __forceinline__ int from_reg(int v) { return v; }
  static __device__ __forceinline__ int from_reg(float v) { return to_i32(v); }
  static __device__ __forceinline__ int from_reg(double v) { return to_i32(v); }
};
template <>
struct Mem<signed char> {  // i8: arithmetic wraps modulo 2^8 (a narrowing conversion)
  typedef signed char reg;
  static __device__ __forceinline__ signed char to_reg(signed char v) { return v; }
  static __device__ __forceinline__ signed char from_reg(signed char v) { return v; }
  static __device__ __forceinline__ signed char from_reg(int v) { return (signed char)v; }
  static __device__ __forceinline__ signed char from_reg(float v) { return to_i8(v); }
  static __device__ __forceinline__ signed char from_reg(double v) { return to_i8(v); }
};
template <>
struct Mem<long long> {
  typedef long long reg;
  static __device__ __forceinline__ long long to_reg(long long v) { return v; }
  static __device__ __forceinline__ long long from_reg(long long v) { return v; }
  static __device__ __forceinline__ long long from_reg(float v) { return to_i64(v); }
  static __device__ __forceinline__ long long from_reg(double v) { return to_i64(v); }
};
template <>
struct Mem<unsigned long long> {
  typedef unsigned long long reg;
  static __device__ __forceinline__ unsigned long long to_reg(unsigned long long v) { return v; }
  static __device__ __forceinline__ unsigned long long from_reg(unsigned long long v) { return v; }
  static __device__ __forceinline__ unsigned long long from_reg(float v) { return to_u64(v); }
  static __device__ __forceinline__ unsigned long long from_reg(double v) { return to_u64(v); }
};
template <>
struct Mem<bool> {
  typedef bool reg;
  static __device__ __forceinline__ bool to_reg(bool v) { return v; }
  static __device__ __forceinline__ bool from_reg(bool v) { return v; }
};

// Two adjacent 16-bit elements as one 32-bit word (element 0 in the low half): bf16
// widens with a shift and a mask (exact, one instruction per element instead of two);
// both narrow with one cvt.rn.{bf16,f16}x2.f32 per pair (the same rounding as two
// cvt.rn, in half the instructions).
template <class M>
struct Pair {
  static constexpr bool packed = false;
};
template <>
struct Pair<__nv_bfloat16> {
  static constexpr bool packed = true;
  static __device__ __forceinline__ void widen(unsigned w, float& lo, float& hi) {
    lo = __uint_as_float(w << 16);
    hi = __uint_as_float(w & 0xffff0000u);
  }
  static __device__ __forceinline__ unsigned narrow(float lo, float hi) {
    __nv_bfloat162 p = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<unsigned*>(&p);
  }
};
template <>
struct Pair<__half> {
  static constexpr bool packed = true;
  static __device__ __forceinline__ void widen(unsigned w, float& lo, float& hi) {
    float2 f = __half22float2(*reinterpret_cast<__half2*>(&w));
    lo = f.x;
    hi = f.y;
  }
  static __device__ __forceinline__ unsigned narrow(float lo, float hi) {
    __half2 p = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<unsigned*>(&p);
  }
};

// ---- loads and stores ----

/// L2 eviction priority of a load (ts::EvictionPolicy): none, first, last.
enum class Evict { none, first, last };

/// The L2 cache policy of E (createpolicy.fractional over all of the access, PTX ISA
/// "createpolicy", sm_80+). Not volatile: the compiler keeps one per kernel.
template <Evict E>
__device__ __forceinline__ unsigned long long l2_policy() {
  unsigned long long pol;
  if constexpr (E == Evict::first)
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  else
    asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
  return pol;
}

/// *p, a global load of 1, 2, 4, 8 or 16 bytes with eviction priority E
/// (ld.global.L2::cache_hint; a plain load for Evict::none).
template <Evict E, class W>
__device__ __forceinline__ W ld_global(const W* p) {
  if constexpr (E == Evict::none) {
    return *p;
  } else {
    const unsigned long long pol = l2_policy<E>();
    W w;  // asm volatile: ordered with the thread's other memory accesses
    if constexpr (sizeof(W) == 16) {
      uint4 v;
      asm volatile("ld.global.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                   : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                   : "l"(p), "l"(pol));
      w = *reinterpret_cast<const W*>(&v);
    } else if constexpr (sizeof(W) == 8) {
      unsigned long long v;
      asm volatile("ld.global.L2::cache_hint.u64 %0, [%1], %2;" : "=l"(v) : "l"(p), "l"(pol));
      w = *reinterpret_cast<const W*>(&v);
    } else if constexpr (sizeof(W) == 4) {
      unsigned v;
      asm volatile("ld.global.L2::cache_hint.u32 %0, [%1], %2;" : "=r"(v) : "l"(p), "l"(pol));
      w = *reinterpret_cast<const W*>(&v);
    } else if constexpr (sizeof(W) == 2) {
      unsigned short v;
      asm volatile("ld.global.L2::cache_hint.u16 %0, [%1], %2;" : "=h"(v) : "l"(p), "l"(pol));
      w = *reinterpret_cast<const W*>(&v);
    } else {
      static_assert(sizeof(W) == 1, "ld_global: 1, 2, 4, 8 or 16 bytes");
      unsigned short v;
      asm volatile("ld.global.L2::cache_hint.u8 %0, [%1], %2;" : "=h"(v) : "l"(p), "l"(pol));
      const unsigned char b = (unsigned char)v;
      w = *reinterpret_cast<const W*>(&b);
    }
    return w;
  }
}

/// One element, or 0 when !ok (the address is not touched).
template <Evict E = Evict::none, class M>
__device__ __forceinline__ typename Mem<M>::reg ld(const M* p, bool ok) {
  return ok ? Mem<M>::to_reg(ld_global<E>(p)) : typename Mem<M>::reg(0);
}
template <class M>
__device__ __forceinline__ void st(M* p, bool ok, typename Mem<M>::reg v) {
  if (ok) *p = Mem<M>::from_reg(v);
}

template <int Bytes>
struct VecWord;
template <>
struct VecWord<16> {
  typedef uint4 type;
};
template <>
struct VecWord<8> {
  typedef uint2 type;
};
template <>
struct VecWord<4> {
  typedef unsigned int type;
};

/// V consecutive elements p[0..V) into raw[0..V), in memory format (no conversion): one
/// vector access when all are valid (n >= V) and p is aligned to the vector size, element
/// by element otherwise (elements at or past n read as 0). Generated code loads every
/// vector of a tile this way first and converts afterwards (to_regs), so that all of a
/// thread's loads are in flight before the first use of one.
/// Whole: the caller guarantees n >= V or n <= 0 (index and limit multiples of V);
/// Aligned: that p is aligned to the vector size. Both make one predicated vector access.
/// E: the L2 eviction priority of the accesses.
template <class M, int V, bool Whole = false, bool Aligned = false, Evict E = Evict::none>
__device__ __forceinline__ void ld_vec(const M* p, int n, M* raw) {
  constexpr int bytes = V * (int)sizeof(M);
  if constexpr (bytes == 16 || bytes == 8 || bytes == 4) {
    typedef typename VecWord<bytes>::type W;
    if constexpr (Whole && Aligned) {
      *reinterpret_cast<W*>(raw) = n > 0 ? ld_global<E>(reinterpret_cast<const W*>(p)) : W{};
      return;
    }
    if (n >= V && (Aligned || (reinterpret_cast<unsigned long long>(p) % bytes) == 0)) {
      *reinterpret_cast<W*>(raw) = ld_global<E>(reinterpret_cast<const W*>(p));
      return;
    }
  }
#pragma unroll
  for (int i = 0; i < V; ++i) raw[i] = i < n ? ld_global<E>(p + i) : M(0);
}

/// Memory format to register format; raw is 16-byte aligned. 16-bit dtypes convert by
/// pairs (Pair).
template <class M, int N>
__device__ __forceinline__ void to_regs(const M* raw, typename Mem<M>::reg* out) {
  if constexpr (Pair<M>::packed && N % 2 == 0) {
    const unsigned* w = reinterpret_cast<const unsigned*>(raw);
#pragma unroll
    for (int i = 0; i < N / 2; ++i) Pair<M>::widen(w[i], out[2 * i], out[2 * i + 1]);
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) out[i] = Mem<M>::to_reg(raw[i]);
  }
}

/// in[0..V) into p[0..n) (n clamped to [0, V]); Whole and Aligned as for ld_vec.
template <class M, int V, bool Whole = false, bool Aligned = false>
__device__ __forceinline__ void st_vec(M* p, int n, const typename Mem<M>::reg* in) {
  constexpr int bytes = V * (int)sizeof(M);
  if constexpr (bytes == 16 || bytes == 8 || bytes == 4) {
    if ((Whole && Aligned)
            ? n > 0
            : (n >= V && (Aligned || (reinterpret_cast<unsigned long long>(p) % bytes) == 0))) {
      typedef typename VecWord<bytes>::type W;
      W w;
      if constexpr (Pair<M>::packed && V % 2 == 0) {
        unsigned* e = reinterpret_cast<unsigned*>(&w);
#pragma unroll
        for (int i = 0; i < V / 2; ++i) e[i] = Pair<M>::narrow(in[2 * i], in[2 * i + 1]);
      } else {
        M* e = reinterpret_cast<M*>(&w);
#pragma unroll
        for (int i = 0; i < V; ++i) e[i] = Mem<M>::from_reg(in[i]);
      }
      *reinterpret_cast<W*>(p) = w;
      return;
    }
    if constexpr (Whole && Aligned) return;
  }
#pragma unroll
  for (int i = 0; i < V; ++i) st(p + i, i < n, in[i]);
}

/// A 64-bit limit as a 32-bit one (limits past INT_MAX become INT_MAX, which no 32-bit
/// index reaches), so that masks compare 32-bit values.
__device__ __forceinline__ int clamp_int(long long lim) {
  return lim > 2147483647LL ? 2147483647 : (int)lim;
}

/// Number of valid elements of a vector starting at index `i` below limit `lim`, in [0, V].
template <int V, class I>
__device__ __forceinline__ int nvalid(I i, I lim) {
  I n = lim - i;
  return n <= 0 ? 0 : (n >= V ? V : (int)n);
}

// ---- arithmetic with PyTorch semantics ----
template <class T>
__device__ __forceinline__ T floordiv(T a, T b) {
  if (b == 0) return 0;
  T q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
__device__ __forceinline__ float floordiv(float a, float b) { return floorf(a / b); }
__device__ __forceinline__ double floordiv(double a, double b) { return floor(a / b); }
template <class T>
__device__ __forceinline__ T mod(T a, T b) {
  if (b == 0) return 0;
  T r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
__device__ __forceinline__ float mod(float a, float b) { return a - floorf(a / b) * b; }
__device__ __forceinline__ double mod(double a, double b) { return a - floor(a / b) * b; }
template <class T>
__device__ __forceinline__ T div(T a, T b) {
  return a / b;
}
template <class T>
__device__ __forceinline__ T maximum(T a, T b) {
  return a > b ? a : b;
}
template <class T>
__device__ __forceinline__ T minimum(T a, T b) {
  return a < b ? a : b;
}
// torch.maximum / minimum propagate NaN.
// On sm_80 and later one instruction does it (PTX ISA: max.NaN / min.NaN, "if either
// input is NaN, the result is canonical NaN").
__device__ __forceinline__ float maximum(float a, float b) {
#if __CUDA_ARCH__ >= 800
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
#else
  return (a != a || b != b) ? __int_as_float(0x7fc00000) : fmaxf(a, b);
#endif
}
__device__ __forceinline__ float minimum(float a, float b) {
#if __CUDA_ARCH__ >= 800
  float r;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
#else
  return (a != a || b != b) ? __int_as_float(0x7fc00000) : fminf(a, b);
#endif
}
__device__ __forceinline__ double maximum(double a, double b) {
  return (a != a || b != b) ? __longlong_as_double(0x7ff8000000000000LL) : fmax(a, b);
}
__device__ __forceinline__ double minimum(double a, double b) {
  return (a != a || b != b) ? __longlong_as_double(0x7ff8000000000000LL) : fmin(a, b);
}
template <class T>
__device__ __forceinline__ T ipow(T a, T b) {
  T r = 1;
  for (T k = 0; k < b; ++k) r *= a;
  return r;
}
// exp and exp2 of f32 as Triton lowers them (ElementwiseOpToLLVM: exp = one
// multiplication by log2(e), then ex2.approx; exp2 = ex2.approx.ftz): MUFU.EX2 has a max
// relative error of 2^-22 on exp2 itself; the product's rounding adds up to |x| * 2^-24.
// Results below 2^-126 (exp(x) for x < -87.3) flush to 0: the non-ftz form costs 3 more
// instructions per element to produce subnormals. exp(-inf) = 0, exp(+inf) = +inf, NaN
// stays NaN. f64 keeps exp/exp2.
__device__ __forceinline__ float exp2_(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ float exp_(float x) { return exp2_(x * 1.4426950408889634f); }
__device__ __forceinline__ double exp2_(double x) { return exp2(x); }
__device__ __forceinline__ double exp_(double x) { return exp(x); }
__device__ __forceinline__ float sigmoid(float x) { return 1.0f / (1.0f + exp_(-x)); }
__device__ __forceinline__ double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
template <class T>
__device__ __forceinline__ T abs_(T x) {
  return x < 0 ? -x : x;
}

// ---- reductions ----
/// The bits of r outside `mask`, packed toward bit 0 (a register's dense number among
/// those with the mask bits clear). r is a constant in unrolled loops, so this folds.
__device__ __forceinline__ constexpr int squeeze_bits(int r, unsigned mask) {
  int out = 0, k = 0;
  for (int b = 0; b < 31; ++b)
    if (!((mask >> b) & 1u)) out |= ((r >> b) & 1) << k++;
  return out;
}
/// The bits of j placed, low first, at the set bits of `mask` (the register whose bits in
/// `mask` are j and whose others are 0); squeeze_bits(r, ~mask) is the inverse.
__device__ __forceinline__ constexpr int spread_bits(int j, unsigned mask) {
  int out = 0, k = 0;
  for (int b = 0; b < 31; ++b)
    if ((mask >> b) & 1u) out |= ((j >> k++) & 1) << b;
  return out;
}
struct SumOp {
  template <class T>
  static __device__ __forceinline__ T combine(T a, T b) {
    return a + b;
  }
};
struct ProdOp {
  template <class T>
  static __device__ __forceinline__ T combine(T a, T b) {
    return a * b;
  }
};
struct MaxOp {
  template <class T>
  static __device__ __forceinline__ T combine(T a, T b) {
    return maximum(a, b);
  }
};
struct MinOp {
  template <class T>
  static __device__ __forceinline__ T combine(T a, T b) {
    return minimum(a, b);
  }
};
struct AnyOp {
  template <class T>
  static __device__ __forceinline__ T combine(T a, T b) {
    return a || b;
  }
};
struct AllOp {
  template <class T>
  static __device__ __forceinline__ T combine(T a, T b) {
    return a && b;
  }
};

/// Combines the values of the lanes whose lane ids differ in the bits of `mask`
/// (a butterfly over those bits): every lane ends with the combination.
template <class Op, class T>
__device__ __forceinline__ T warp_allreduce(T v, unsigned mask) {
#pragma unroll
  for (unsigned b = 1; b < 32; b <<= 1)
    if (mask & b) v = Op::combine(v, static_cast<T>(__shfl_xor_sync(0xffffffffu, v, b)));
  return v;
}

/// Argmax/argmin pair combine: the larger (smaller) value, the smaller index on ties;
/// NaN counts as the largest (as torch.argmax).
template <bool IsMax, class T>
__device__ __forceinline__ void arg_combine(T& v, long long& i, T v2, long long i2) {
  bool nan1 = v != v, nan2 = v2 != v2;
  bool take;
  if (IsMax)
    take = (nan2 && !nan1) || (!nan1 && !nan2 && (v2 > v || (v2 == v && i2 < i))) ||
           (nan1 && nan2 && i2 < i);
  else
    take = (nan2 && !nan1) || (!nan1 && !nan2 && (v2 < v || (v2 == v && i2 < i))) ||
           (nan1 && nan2 && i2 < i);
  if (take) {
    v = v2;
    i = i2;
  }
}

template <bool IsMax, class T>
__device__ __forceinline__ void warp_arg_allreduce(T& v, long long& i, unsigned mask) {
#pragma unroll
  for (unsigned b = 1; b < 32; b <<= 1)
    if (mask & b) {
      T v2 = static_cast<T>(__shfl_xor_sync(0xffffffffu, v, b));
      long long i2 = __shfl_xor_sync(0xffffffffu, i, b);
      arg_combine<IsMax>(v, i, v2, i2);
    }
}

/// Settings::check_bounds: records an out-of-range index in the call's bounds record
/// (rt::BoundsRecord, driver/bounds_report.hpp: access = Load/Store node id + 1, tensor
/// dim, index, size) unless a violation is recorded already: the first one to claim word
/// 0 wins. The host reads the record after the call.
static __device__ __noinline__ void report_oob(long long* rec, long long access, long long dim,
                                               long long index, long long size) {
  if (atomicCAS(reinterpret_cast<unsigned long long*>(rec), 0ull,
                static_cast<unsigned long long>(access)) == 0ull) {
    rec[1] = dim;
    rec[2] = index;
    rec[3] = size;
  }
}

}  // namespace ts
