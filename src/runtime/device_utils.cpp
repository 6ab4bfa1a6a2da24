// GPU fill/copy/random/arange/compare kernels (one CUDA module, compiled once per
// architecture with NVRTC) and the host side of the random number generator.
#include "runtime/device_utils.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <numbers>

#include "common/element.hpp"
#include "driver/cubin_cache.hpp"
#include "driver/cuda_api.hpp"
#include "tessel/error.hpp"

namespace tessel::rt {
namespace {

// Dtype codes shared with the CUDA source: the order of enum DType.
static_assert(static_cast<int>(DType::boolean) == 0 && static_cast<int>(DType::i32) == 1 &&
              static_cast<int>(DType::i64) == 2 && static_cast<int>(DType::u64) == 3 &&
              static_cast<int>(DType::f16) == 4 && static_cast<int>(DType::bf16) == 5 &&
              static_cast<int>(DType::f32) == 6 && static_cast<int>(DType::f64) == 7 &&
              static_cast<int>(DType::f8e4m3) == 8 && static_cast<int>(DType::f8e5m2) == 9 &&
              static_cast<int>(DType::i8) == 10);

// The kernels' common source: only device functions, cheap to compile. Each kernel is
// compiled on first use as this source plus a one-line __global__ wrapper (see
// kernel_source), because all 70 kernels in one program take seconds to compile.
// Conversions mirror common/element.cpp exactly; the generator mirrors
// random_bits/random_uniform/random_normal below. 64-bit indexing, grid-stride loops.
const char* kSource = R"CUDA(
typedef long long i64;
typedef unsigned long long u64;

// Dimensions innermost first; unused ones have size 1.
struct Layout { i64 sizes[6]; i64 strides[6]; int rank; int pad; };

__device__ __forceinline__ i64 offset_of(const Layout& l, i64 i) {
  if (l.rank == 1) return i * l.strides[0];
  i64 off = 0;
#pragma unroll
  for (int d = 0; d < 6; ++d) {
    if (d >= l.rank) break;
    i64 q = i / l.sizes[d];
    off += (i - q * l.sizes[d]) * l.strides[d];
    i = q;
  }
  return off;
}

__device__ __forceinline__ float h2f(unsigned short h) {
  float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f;
}
__device__ __forceinline__ unsigned short f2h(float f) {
  if (f != f) return (unsigned short)(((__float_as_uint(f) >> 16) & 0x8000u) | 0x7e00u);
  unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h;
}
__device__ __forceinline__ float bf2f(unsigned short h) {
  return __uint_as_float(((unsigned)h) << 16);
}
__device__ __forceinline__ unsigned short f2bf(float f) {
  unsigned x = __float_as_uint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return (unsigned short)(x >> 16);
}
// The 8-bit floats (e4: f8e4m3, else f8e5m2): to nearest even, saturating.
__device__ __forceinline__ unsigned char f2f8(float f, bool e4) {
  const int mant = e4 ? 3 : 2, min_exp = e4 ? -6 : -14;
  const double largest = e4 ? 448.0 : 57344.0;
  const unsigned char sign = (__float_as_uint(f) >> 31) ? 0x80 : 0;
  if (f != f) return 0x7f;
  const double a = fabs((double)f);
  if (a >= largest) return sign | (e4 ? 0x7e : 0x7b);
  int e = 0;
  frexp(a, &e);
  const double r = rint(ldexp(a, mant - max(e - 1, min_exp)));
  if (r < ldexp(1.0, mant)) return sign | (unsigned char)r;
  const bool carry = r >= ldexp(1.0, mant + 1);
  const int be = max(e - 1, min_exp) + (carry ? 1 : 0);
  const double m = carry ? r / 2 : r;
  return sign | (unsigned char)((be - min_exp + 1) << mant) | (unsigned char)(m - ldexp(1.0, mant));
}
__device__ __forceinline__ float f82f(unsigned char b, bool e4) {
  const int mant = e4 ? 3 : 2, min_exp = e4 ? -6 : -14;
  const int exp = (b & 0x7f) >> mant, m = b & ((1 << mant) - 1);
  const float sign = b & 0x80 ? -1.0f : 1.0f;
  if (e4 && exp == 15 && m == 7) return __int_as_float(0x7fc00000);
  if (!e4 && exp == 31) return m ? __int_as_float(0x7fc00000) : sign * __int_as_float(0x7f800000);
  if (exp == 0) return sign * (float)ldexp((double)m, min_exp - mant);
  return sign * (float)ldexp((double)(m + (1 << mant)), exp - 1 + min_exp - mant);
}
__device__ __forceinline__ i64 to_int(double v) {
  if (v != v) return 0;
  if (v >= 9.2233720368547758e18) return 0x7fffffffffffffffll;
  if (v <= -9.2233720368547758e18) return (i64)0x8000000000000000ull;
  return (i64)v;
}

template <int T> struct Ty;
template <> struct Ty<0> { typedef unsigned char S; enum { is_int = 1 }; };
template <> struct Ty<1> { typedef int S; enum { is_int = 1 }; };
template <> struct Ty<2> { typedef i64 S; enum { is_int = 1 }; };
template <> struct Ty<3> { typedef u64 S; enum { is_int = 1 }; };
template <> struct Ty<4> { typedef unsigned short S; enum { is_int = 0 }; };
template <> struct Ty<5> { typedef unsigned short S; enum { is_int = 0 }; };
template <> struct Ty<6> { typedef float S; enum { is_int = 0 }; };
template <> struct Ty<7> { typedef double S; enum { is_int = 0 }; };
template <> struct Ty<8> { typedef unsigned char S; enum { is_int = 0 }; };
template <> struct Ty<9> { typedef unsigned char S; enum { is_int = 0 }; };
template <> struct Ty<10> { typedef signed char S; enum { is_int = 1 }; };

template <int T> __device__ __forceinline__ double ld_d(const void* p) {
  typename Ty<T>::S v = *(const typename Ty<T>::S*)p;
  if constexpr (T == 0) return v ? 1.0 : 0.0;
  else if constexpr (T == 4) return h2f(v);
  else if constexpr (T == 5) return bf2f(v);
  else if constexpr (T == 8 || T == 9) return f82f(v, T == 8);
  else return (double)v;
}
template <int T> __device__ __forceinline__ i64 ld_i(const void* p) {
  typename Ty<T>::S v = *(const typename Ty<T>::S*)p;
  if constexpr (T == 0) return v ? 1 : 0;
  else return (i64)v;
}
template <int T> __device__ __forceinline__ void st_d(void* p, double v) {
  typedef typename Ty<T>::S S;
  if constexpr (T == 0) *(S*)p = v != 0.0 ? 1 : 0;
  else if constexpr (T == 1) *(S*)p = (S)max(min(to_int(v), (i64)2147483647), (i64)-2147483648ll);
  else if constexpr (T == 10) *(S*)p = (S)max(min(to_int(v), (i64)127), (i64)-128);
  else if constexpr (T == 2) *(S*)p = to_int(v);
  else if constexpr (T == 3) *(S*)p = !(v > 0) ? 0ull : v >= 18446744073709551615.0 ? ~0ull : (u64)v;
  else if constexpr (T == 4) *(S*)p = f2h((float)v);
  else if constexpr (T == 5) *(S*)p = f2bf((float)v);
  else if constexpr (T == 8 || T == 9) *(S*)p = f2f8((float)v, T == 8);
  else *(S*)p = (S)v;
}
template <int T> __device__ __forceinline__ void st_i(void* p, i64 v) {
  typedef typename Ty<T>::S S;
  if constexpr (T == 0) *(S*)p = v != 0 ? 1 : 0;
  else if constexpr (Ty<T>::is_int) *(S*)p = (S)v;
  else st_d<T>(p, (double)v);
}

__device__ double ld_any(const char* base, i64 i, int t) {
  switch (t) {
    case 0: return ld_d<0>(base + i);
    case 1: return ld_d<1>(base + i * 4);
    case 2: return ld_d<2>(base + i * 8);
    case 3: return ld_d<3>(base + i * 8);
    case 4: return ld_d<4>(base + i * 2);
    case 5: return ld_d<5>(base + i * 2);
    case 6: return ld_d<6>(base + i * 4);
    case 8: return ld_d<8>(base + i);
    case 9: return ld_d<9>(base + i);
    case 10: return ld_d<10>(base + i);
    default: return ld_d<7>(base + i * 8);
  }
}

// expected + add as computed in the expected tensor's dtype (floats round; others exact).
__device__ double round_any(double v, int t) {
  switch (t) {
    case 4: return (double)h2f(f2h((float)v));
    case 5: return (double)bf2f(f2bf((float)v));
    case 6: return (double)(float)v;
    case 8: return (double)f82f(f2f8((float)v, true), true);
    case 9: return (double)f82f(f2f8((float)v, false), false);
    default: return v;
  }
}

#define GRID_STRIDE(i, n) \
  for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < (n); i += (i64)gridDim.x * blockDim.x)

struct CopyArgs { char* dst; const char* src; i64 n; Layout dl; Layout sl; };

template <int S, int D> __device__ __forceinline__ void copy_body(const CopyArgs& a) {
  typedef typename Ty<S>::S SS;
  typedef typename Ty<D>::S DS;
  GRID_STRIDE(i, a.n) {
    const SS* s = (const SS*)a.src + offset_of(a.sl, i);
    DS* d = (DS*)a.dst + offset_of(a.dl, i);
    if constexpr (S == D) *d = *s;
    else if constexpr (Ty<S>::is_int && Ty<D>::is_int) st_i<D>(d, ld_i<S>(s));
    else st_d<D>(d, ld_d<S>(s));
  }
}

struct FillArgs { char* dst; i64 n; Layout l; u64 bits; };
template <class T> __device__ __forceinline__ void fill_body(const FillArgs& a) {
  T v = (T)a.bits;
  GRID_STRIDE(i, a.n) ((T*)a.dst)[offset_of(a.l, i)] = v;
}

__device__ __forceinline__ u64 mix64(u64 z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
__device__ __forceinline__ u64 random_bits(u64 seed, u64 counter) {
  return mix64(mix64(seed + 0x9e3779b97f4a7c15ull) + counter * 0x9e3779b97f4a7c15ull);
}

struct RandArgs { char* dst; i64 n; u64 seed; int dtype; int normal; };
__device__ __forceinline__ void random_body(const RandArgs& a) {
  const int bits = a.dtype == 7 ? 53 : a.dtype == 6 ? 24 : a.dtype == 4 ? 11
                 : a.dtype == 8 ? 4 : a.dtype == 9 ? 3 : 8;
  GRID_STRIDE(i, a.n) {
    double v;
    if (a.normal) {
      u64 h1 = random_bits(a.seed, 2 * (u64)i), h2 = random_bits(a.seed, 2 * (u64)i + 1);
      double u1 = (double)((h1 >> 11) + 1) * 0x1p-53;
      double u2 = (double)(h2 >> 11) * 0x1p-53;
      v = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
    } else {
      v = (double)(random_bits(a.seed, (u64)i) >> (64 - bits)) * (1.0 / (double)(1ull << bits));
    }
    switch (a.dtype) {
      case 4: st_d<4>((unsigned short*)a.dst + i, v); break;
      case 5: st_d<5>((unsigned short*)a.dst + i, v); break;
      case 6: st_d<6>((float*)a.dst + i, v); break;
      case 8: st_d<8>((unsigned char*)a.dst + i, v); break;
      case 9: st_d<9>((unsigned char*)a.dst + i, v); break;
      default: st_d<7>((double*)a.dst + i, v); break;
    }
  }
}

struct ArangeArgs { char* dst; i64 n; int dtype; int pad; };
__device__ __forceinline__ void arange_body(const ArangeArgs& a) {
  GRID_STRIDE(i, a.n) {
    switch (a.dtype) {
      case 0: st_i<0>(a.dst + i, i); break;
      case 1: st_i<1>((int*)a.dst + i, i); break;
      case 2: st_i<2>((i64*)a.dst + i, i); break;
      case 3: st_i<3>((u64*)a.dst + i, i); break;
      case 4: st_i<4>((unsigned short*)a.dst + i, i); break;
      case 5: st_i<5>((unsigned short*)a.dst + i, i); break;
      case 6: st_i<6>((float*)a.dst + i, i); break;
      case 8: st_i<8>((unsigned char*)a.dst + i, i); break;
      case 9: st_i<9>((unsigned char*)a.dst + i, i); break;
      case 10: st_i<10>((signed char*)a.dst + i, i); break;
      default: st_i<7>((double*)a.dst + i, i); break;
    }
  }
}

struct CompareArgs {
  const char* a; const char* e; i64 n; Layout la; Layout le;
  double atol, rtol, add; u64* count; int ta, te;
};
__device__ __forceinline__ void count_mismatches_body(const CompareArgs& c) {
  u64 bad = 0;
  GRID_STRIDE(i, c.n) {
    double a = ld_any(c.a, offset_of(c.la, i), c.ta);
    double x = c.add == 0 ? ld_any(c.e, offset_of(c.le, i), c.te)
                          : round_any(ld_any(c.e, offset_of(c.le, i), c.te) + c.add, c.te);
    bool an = a != a, xn = x != x;
    bool mismatch;
    if (an || xn) mismatch = !(an && xn);
    else if (isinf(a) || isinf(x)) mismatch = a != x;
    else mismatch = fabs(a - x) > c.atol + c.rtol * fabs(x);
    bad += mismatch ? 1 : 0;
  }
  for (int o = 16; o > 0; o /= 2) bad += __shfl_down_sync(0xffffffffu, bad, o);
  if ((threadIdx.x & 31) == 0 && bad) atomicAdd(c.count, bad);
}
)CUDA";

// Host mirror of the CUDA structs (same layout: x86-64 and CUDA agree for these PODs).
struct Layout {
  int64_t sizes[kMaxGpuRank];
  int64_t strides[kMaxGpuRank];
  int32_t rank = 1, pad = 0;
};
struct CopyArgs {
  void* dst;
  const void* src;
  int64_t n;
  Layout dl, sl;
};
struct FillArgs {
  void* dst;
  int64_t n;
  Layout l;
  uint64_t bits;
};
struct RandArgs {
  void* dst;
  int64_t n;
  uint64_t seed;
  int32_t dtype, normal;
};
struct ArangeArgs {
  void* dst;
  int64_t n;
  int32_t dtype, pad;
};
struct CompareArgs {
  const void* a;
  const void* e;
  int64_t n;
  Layout la, le;
  double atol, rtol, add;
  uint64_t* count;
  int32_t ta, te;
};

// Layouts of `bufs` (same shape) with their dimensions merged, innermost first.
std::vector<Layout> layouts(const std::vector<const Buffer*>& bufs) {
  std::vector<std::vector<int64_t>> strides;
  for (const Buffer* b : bufs) strides.push_back(b->strides());
  MergedDims m = merge_dims(bufs[0]->shape(), strides);
  int rank = static_cast<int>(m.shape.size());
  if (rank > kMaxGpuRank)
    throw UserError("", SourceLoc{},
                    "a GPU copy/fill/compare of a " + bufs[0]->str() + " view has " +
                        std::to_string(rank) + " dimensions that cannot be merged (at most " +
                        std::to_string(kMaxGpuRank) + ")",
                    "Make the tensor contiguous first");
  std::vector<Layout> out(bufs.size());
  for (size_t b = 0; b < bufs.size(); ++b) {
    out[b].rank = rank;
    for (int d = 0; d < kMaxGpuRank; ++d) {
      bool used = d < rank;
      out[b].sizes[d] = used ? m.shape[rank - 1 - d] : 1;
      out[b].strides[d] = used ? m.strides[b][rank - 1 - d] : 0;
    }
  }
  return out;
}

// Compiled kernels: cubins per (architecture, kernel), functions per (context, kernel):
// the device's primary context, or an SM partition active on this thread (ContextScope).
struct Kernels {
  std::mutex mu;
  std::map<std::pair<int, std::string>, std::string> cubins;
  std::map<std::pair<uint64_t, std::string>, Function> functions;
};

Function function(int device, const std::string& name) {
  static Kernels k;
  std::lock_guard lock(k.mu);
  auto key = std::make_pair(current_context_id(device), name);
  if (auto it = k.functions.find(key); it != k.functions.end()) return it->second;
  auto ckey = std::make_pair(compute_capability(device), name);
  auto cit = k.cubins.find(ckey);
  if (cit == k.cubins.end()) {
    CompileOptions opts;
    opts.arch = ckey.first;
    // Through the on-disk cubin cache: a warm cache makes no NVRTC call.
    cit = k.cubins.emplace(ckey, compile_cached(kernel_source(name), name + ".cu", opts)).first;
  }
  Function f = load_function(cit->second, name, device);
  k.functions.emplace(key, f);
  return f;
}

template <class Args>
void launch_1d(const Buffer& on, const std::string& name, Args args, int64_t n,
               void* stream = nullptr) {
  if (n <= 0) return;
  int device = on.device().index;
  ContextScope scope(stream);  // an SM partition's stream: load and launch in its context
  Function f = function(device, name);
  constexpr int block = 256;
  int64_t blocks =
      std::min<int64_t>((n + block - 1) / block, int64_t{current_sm_count(device)} * 16);
  void* params[] = {&args};
  launch(f, static_cast<unsigned>(blocks), 1, 1, block, 0, stream, params);
}

void require_on_gpu(const Buffer& b, const char* what) {
  TESSEL_CHECK(b.defined() && b.device().is_cuda(),
               std::string(what) + " needs a cuda Buffer, got " + (b.defined() ? b.str() : "none"));
}

}  // namespace

MergedDims merge_dims(const std::vector<int64_t>& shape,
                      const std::vector<std::vector<int64_t>>& strides) {
  MergedDims m;
  m.strides.resize(strides.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool merge = !m.shape.empty();
    for (size_t b = 0; b < strides.size() && merge; ++b)
      merge = strides[b][d] * shape[d] == m.strides[b].back();
    if (merge) {
      m.shape.back() *= shape[d];
      for (size_t b = 0; b < strides.size(); ++b) m.strides[b].back() = strides[b][d];
    } else {
      m.shape.push_back(shape[d]);
      for (size_t b = 0; b < strides.size(); ++b) m.strides[b].push_back(strides[b][d]);
    }
  }
  if (m.shape.empty()) {
    m.shape.push_back(1);
    for (auto& s : m.strides) s.push_back(1);
  }
  return m;
}

void gpu_fill(const Buffer& dst, double value, void* stream) {
  require_on_gpu(dst, "gpu_fill");
  uint64_t bits = 0;
  write_element(&bits, dst.dtype(), value);  // little-endian: the low bytes hold it
  int size = dtype_size(dst.dtype());
  FillArgs a{dst.data_ptr(), dst.numel(), layouts({&dst})[0], bits};
  launch_1d(dst, "tessel_fill_" + std::to_string(size), a, a.n, stream);
}

void gpu_copy(const Buffer& dst, const Buffer& src) {
  require_on_gpu(dst, "gpu_copy");
  require_on_gpu(src, "gpu_copy");
  TESSEL_CHECK(dst.shape() == src.shape() && dst.device() == src.device(),
               "gpu_copy of " + src.str() + " into " + dst.str());
  auto l = layouts({&dst, &src});
  CopyArgs a{dst.data_ptr(), src.data_ptr(), dst.numel(), l[0], l[1]};
  std::string name = "tessel_copy_" + std::to_string(static_cast<int>(src.dtype())) + "_" +
                     std::to_string(static_cast<int>(dst.dtype()));
  launch_1d(dst, name, a, a.n);
}

void gpu_random(const Buffer& dst, uint64_t seed, bool normal) {
  require_on_gpu(dst, "gpu_random");
  TESSEL_CHECK(dst.is_contiguous() && is_float(dst.dtype()), "gpu_random of " + dst.str());
  RandArgs a{dst.data_ptr(), dst.numel(), seed, static_cast<int32_t>(dst.dtype()), normal};
  launch_1d(dst, "tessel_random", a, a.n);
}

void gpu_arange(const Buffer& dst) {
  require_on_gpu(dst, "gpu_arange");
  TESSEL_CHECK(dst.is_contiguous(), "gpu_arange of " + dst.str());
  ArangeArgs a{dst.data_ptr(), dst.numel(), static_cast<int32_t>(dst.dtype()), 0};
  launch_1d(dst, "tessel_arange", a, a.n);
}

int64_t gpu_count_mismatches(const Buffer& a, const Buffer& e, double atol, double rtol,
                             double add) {
  require_on_gpu(a, "gpu_count_mismatches");
  require_on_gpu(e, "gpu_count_mismatches");
  int device = a.device().index;
  void* counter = device_alloc(sizeof(uint64_t), device);
  uint64_t count = 0;
  try {
    memset_d8(counter, 0, sizeof(uint64_t));
    auto l = layouts({&a, &e});
    CompareArgs c{a.data_ptr(),
                  e.data_ptr(),
                  a.numel(),
                  l[0],
                  l[1],
                  atol,
                  rtol,
                  add,
                  static_cast<uint64_t*>(counter),
                  static_cast<int32_t>(a.dtype()),
                  static_cast<int32_t>(e.dtype())};
    launch_1d(a, "tessel_count_mismatches", c, c.n);
    memcpy_dtoh(&count, counter, sizeof(count));
    stream_synchronize();
  } catch (...) {
    device_free(counter, device);
    throw;
  }
  device_free(counter, device);
  return static_cast<int64_t>(count);
}

std::string kernel_source(const std::string& name) {
  std::string body;
  int s = 0, d = 0;
  if (std::sscanf(name.c_str(), "tessel_copy_%d_%d", &s, &d) == 2 && s >= 0 && s < 11 && d >= 0 &&
      d < 11) {
    body = "(CopyArgs a) { copy_body<" + std::to_string(s) + ", " + std::to_string(d) + ">(a); }";
  } else if (name == "tessel_fill_1" || name == "tessel_fill_2" || name == "tessel_fill_4" ||
             name == "tessel_fill_8") {
    const char* type = name.back() == '1'   ? "unsigned char"
                       : name.back() == '2' ? "unsigned short"
                       : name.back() == '4' ? "unsigned"
                                            : "u64";
    body = std::string("(FillArgs a) { fill_body<") + type + ">(a); }";
  } else if (name == "tessel_random") {
    body = "(RandArgs a) { random_body(a); }";
  } else if (name == "tessel_arange") {
    body = "(ArangeArgs a) { arange_body(a); }";
  } else if (name == "tessel_count_mismatches") {
    body = "(CompareArgs c) { count_mismatches_body(c); }";
  } else {
    throw InternalError("no utility kernel named '" + name + "'");
  }
  return std::string(kSource) + "extern \"C\" __global__ void " + name + body + "\n";
}

// ---- host side of the generator (must match the CUDA source above) ----

static uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t random_bits(uint64_t seed, uint64_t counter) {
  return mix64(mix64(seed + 0x9e3779b97f4a7c15ull) + counter * 0x9e3779b97f4a7c15ull);
}

double random_uniform(uint64_t seed, uint64_t index, DType t) {
  // The dtype's significant bits: every value k / 2^bits below 1 is exact in it (none rounds
  // up to 1).
  int bits = t == DType::f64      ? 53
             : t == DType::f32    ? 24
             : t == DType::f16    ? 11
             : t == DType::f8e4m3 ? 4
             : t == DType::f8e5m2 ? 3
                                  : 8;
  return static_cast<double>(random_bits(seed, index) >> (64 - bits)) *
         (1.0 / static_cast<double>(uint64_t{1} << bits));
}

double random_normal(uint64_t seed, uint64_t index) {
  uint64_t h1 = random_bits(seed, 2 * index), h2 = random_bits(seed, 2 * index + 1);
  double u1 = static_cast<double>((h1 >> 11) + 1) * 0x1p-53;
  double u2 = static_cast<double>(h2 >> 11) * 0x1p-53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

}  // namespace tessel::rt
