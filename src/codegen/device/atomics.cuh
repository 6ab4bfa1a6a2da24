// Atomics, signals and waits of generated code (ts::atomic_*, ts::signal, ts::wait),
// through libcu++'s cuda::atomic_ref: its memory orders and thread scopes are tessel's
// Sem and Scope (tessel/memory_order.hpp). Included only by kernels that use them:
// <cuda/atomic> costs NVRTC compile time (docs/DECISIONS.md).
#pragma once

#include <cuda/atomic>

namespace ts {

enum AtomicOp { A_add, A_max, A_min, A_and, A_or, A_xor, A_xchg, A_cas };
enum Sem { relaxed, acquire, release, acq_rel };
enum Scope { cta, gpu, sys };

template <class T>
struct same_type {
  typedef T type;
};

template <int S>
__device__ constexpr cuda::std::memory_order order_of() {
  return S == relaxed   ? cuda::std::memory_order_relaxed
         : S == acquire ? cuda::std::memory_order_acquire
         : S == release ? cuda::std::memory_order_release
                        : cuda::std::memory_order_acq_rel;
}
// A failed compare-exchange only loads: release parts drop (the C++ rule).
template <int S>
__device__ constexpr cuda::std::memory_order failure_order_of() {
  return S == acquire || S == acq_rel ? cuda::std::memory_order_acquire
                                      : cuda::std::memory_order_relaxed;
}
template <int S>
struct scope_of {
  static constexpr cuda::thread_scope value = S == cta   ? cuda::thread_scope_block
                                              : S == gpu ? cuda::thread_scope_device
                                                         : cuda::thread_scope_system;
};

// f16 / bf16 adds: cuda::atomic_ref has no fetch_add for them, PTX has
// atom{.sem}{.scope}.global.add.noftz.f16 / .bf16 (bf16: sm_90; below it
// atomic_add_bf16_cas); round to nearest even.
#define TS_ATOM16(SEM, SCOPE, TY)                                             \
  asm volatile("atom." SEM "." SCOPE ".global.add.noftz." TY " %0, [%1], %2;" \
               : "=h"(out)                                                    \
               : "l"(p), "h"(in)                                              \
               : "memory")
#define TS_ATOM16_SCOPE(SEM, TY) \
  if constexpr (Sc == cta)       \
    TS_ATOM16(SEM, "cta", TY);   \
  else if constexpr (Sc == gpu)  \
    TS_ATOM16(SEM, "gpu", TY);   \
  else                           \
    TS_ATOM16(SEM, "sys", TY);
#define TS_DEFINE_ATOMIC_ADD_16(T, TY)                               \
  template <int S, int Sc>                                           \
  __device__ __forceinline__ T atomic_add_16(T* p, T v) {            \
    unsigned short in = *reinterpret_cast<unsigned short*>(&v), out; \
    if constexpr (S == relaxed) {                                    \
      TS_ATOM16_SCOPE("relaxed", TY)                                 \
    } else if constexpr (S == acquire) {                             \
      TS_ATOM16_SCOPE("acquire", TY)                                 \
    } else if constexpr (S == release) {                             \
      TS_ATOM16_SCOPE("release", TY)                                 \
    } else {                                                         \
      TS_ATOM16_SCOPE("acq_rel", TY)                                 \
    }                                                                \
    return *reinterpret_cast<T*>(&out);                              \
  }
TS_DEFINE_ATOMIC_ADD_16(__half, "f16")
TS_DEFINE_ATOMIC_ADD_16(__nv_bfloat16, "bf16")
#undef TS_DEFINE_ATOMIC_ADD_16
#undef TS_ATOM16_SCOPE
#undef TS_ATOM16

/// A bf16 add below sm_90, which has no atom.add.bf16: a compare-and-swap loop on the 16
/// bits (order S on success), each try adding to the value it found in f32 and rounding
/// once to nearest even, as atom.add.noftz.bf16 does (f32 holds the sum of two bf16 values
/// closely enough that the second rounding is that of the exact sum).
template <int S, int Sc>
__device__ __forceinline__ __nv_bfloat16 atomic_add_bf16_cas(__nv_bfloat16* p, __nv_bfloat16 v) {
  cuda::atomic_ref<unsigned short, scope_of<Sc>::value> a(*reinterpret_cast<unsigned short*>(p));
  unsigned short held = a.load(cuda::std::memory_order_relaxed);
  for (;;) {
    const __nv_bfloat16 old = *reinterpret_cast<__nv_bfloat16*>(&held);
    __nv_bfloat16 sum = __float2bfloat16_rn(__bfloat162float(old) + __bfloat162float(v));
    if (a.compare_exchange_weak(held, *reinterpret_cast<unsigned short*>(&sum), order_of<S>(),
                                cuda::std::memory_order_relaxed))
      return old;
  }
}

/// Atomic `Op` on *p with order `S` and scope `Sc`, returning the previous value (as a
/// register value: f16/bf16 as float); nothing (and 0) when !ok. cas: where *p ==
/// expected, *p = v.
template <int Op, int S, int Sc, class M>
__device__ __forceinline__ typename Mem<M>::reg atomic(M* p, bool ok, typename Mem<M>::reg v,
                                                       typename Mem<M>::reg expected = 0) {
  if (!ok) return typename Mem<M>::reg(0);
  if constexpr (sizeof(M) == 2) {
    static_assert(Op == A_add, "ts::atomic: f16 and bf16 support add only");
#if __CUDA_ARCH__ < 900
    if constexpr (cuda::std::is_same<M, __nv_bfloat16>::value)
      return Mem<M>::to_reg(atomic_add_bf16_cas<S, Sc>(p, Mem<M>::from_reg(v)));
    else
#endif
      return Mem<M>::to_reg(atomic_add_16<S, Sc>(p, Mem<M>::from_reg(v)));
  } else {
    cuda::atomic_ref<M, scope_of<Sc>::value> a(*p);
    constexpr cuda::std::memory_order o = order_of<S>();
    if constexpr (Op == A_add)
      return a.fetch_add(v, o);
    else if constexpr (Op == A_max)
      return a.fetch_max(v, o);
    else if constexpr (Op == A_min)
      return a.fetch_min(v, o);
    else if constexpr (Op == A_and)
      return a.fetch_and(v, o);
    else if constexpr (Op == A_or)
      return a.fetch_or(v, o);
    else if constexpr (Op == A_xor)
      return a.fetch_xor(v, o);
    else if constexpr (Op == A_xchg)
      return a.exchange(v, o);
    else {
      M e = expected;
      a.compare_exchange_strong(e, v, o, failure_order_of<S>());
      return e;
    }
  }
}

/// Backoff between polls of a spinning wait: 32 ns doubling up to 1 us.
__device__ __forceinline__ void backoff(unsigned& ns) {
  __nanosleep(ns);
  if (ns < 1024) ns *= 2;
}

/// Polls of a wait under Settings::check_bounds before it gives up (about 4 s and more).
constexpr long long kWaitPolls = 1LL << 22;

/// Spins until *p == want (acquire loads); with Update, then swaps `update` in (a
/// compare-and-swap retried until it succeeds, order S on success). Returns the value
/// seen (want); 0 and nothing when !ok. A wait nothing satisfies spins for ever, unless
/// `rec` (Settings::check_bounds' record) is given: then after kWaitPolls polls it records
/// the wait (rt::BoundsRecord: access, dim -1, the element's offset `at`, the value held)
/// and gives up, so that the launch ends and the host reports it.
template <bool Update, int S, int Sc, class M>
__device__ __forceinline__ M wait_for(M* p, bool ok, typename same_type<M>::type want,
                                      typename same_type<M>::type update = M(0),
                                      long long* rec = nullptr, long long access = 0,
                                      long long at = 0) {
  if (!ok) return M(0);
  cuda::atomic_ref<M, scope_of<Sc>::value> a(*p);
  unsigned ns = 32;
  for (long long polls = 0;; ++polls) {
    M held = want;
    if constexpr (Update) {
      if (a.compare_exchange_strong(held, update, order_of<S>(), cuda::std::memory_order_relaxed))
        return want;
    } else {
      held = a.load(cuda::std::memory_order_acquire);
      if (held == want) return want;
    }
    if (rec && polls == kWaitPolls) {
      report_oob(rec, access, -1, at, static_cast<long long>(held));
      return want;
    }
    backoff(ns);
  }
}

}  // namespace ts
