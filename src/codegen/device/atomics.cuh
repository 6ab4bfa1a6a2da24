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

/// Atomic `Op` on *p with order `S` and scope `Sc`, returning the previous value; nothing
/// (and 0) when !ok. cas: where *p == expected, *p = v.
template <int Op, int S, int Sc, class M>
__device__ __forceinline__ M atomic(M* p, bool ok, typename same_type<M>::type v,
                                    typename same_type<M>::type expected = M(0)) {
  if (!ok) return M(0);
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
