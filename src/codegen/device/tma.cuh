// Loads by tensor descriptor (Config::indexing "tensor_descriptor", passes/tensor_descriptor.hpp):
// the Tensor Memory Accelerator copies a box of a tensor into shared memory and completes
// on an mbarrier there, through libcu++'s cuda::ptx wrappers (PTX ISA, "cp.async.bulk.tensor",
// "mbarrier"). sm_90 and later. Included only by kernels that use them: <cuda/ptx> costs
// NVRTC compile time, as <cuda/atomic> does (docs/DECISIONS.md).
#pragma once

#include <cuda/ptx>

namespace ts {

/// A CUtensorMap as a kernel parameter (`const __grid_constant__ ts::TensorMap`: the TMA
/// reads it at the parameter's address). 128 bytes, 64-byte aligned (cuda.h's layout).
struct alignas(64) TensorMap {
  unsigned long long opaque[16];
};

__device__ __forceinline__ unsigned long long* mbarrier_at(unsigned char* p) {
  return reinterpret_cast<unsigned long long*>(p);
}

/// Thread 0, once per program before any use: an mbarrier expecting one arrival per phase.
__device__ __forceinline__ void mbarrier_init(unsigned char* bar) {
  cuda::ptx::mbarrier_init(mbarrier_at(bar), 1u);
}

/// After the program's mbarrier_init calls and before the barrier that publishes them:
/// makes them visible to the TMA (the async proxy).
__device__ __forceinline__ void fence_mbarrier_init() {
  cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
}

/// Thread 0, after a barrier that follows the program's generic writes to global memory a
/// TMA copy may read: orders them before the TMA's reads (the async proxy).
__device__ __forceinline__ void fence_proxy_async_global() {
  cuda::ptx::fence_proxy_async(cuda::ptx::space_global);
}

/// One thread: copies the box of `map` at tensor coordinates `c` (TMA dim order: the
/// contiguous dim first; elements) into `dst` (128-byte aligned), `bytes` bytes, and arms
/// `bar` for them: its current phase completes when they have arrived. Out-of-bounds
/// elements arrive as zeros.
template <int R>
__device__ __forceinline__ void tma_load(const TensorMap& map, unsigned char* dst,
                                         unsigned char* bar, unsigned bytes, const int (&c)[R]) {
  cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cluster,
                                       cuda::ptx::space_cluster, mbarrier_at(bar), bytes);
  cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, dst, &map, c,
                                  mbarrier_at(bar));
}

/// Every thread: waits until phase `parity` (0 or 1) of `bar` has completed.
__device__ __forceinline__ void mbarrier_wait(unsigned char* bar, unsigned parity) {
  while (!cuda::ptx::mbarrier_try_wait_parity(mbarrier_at(bar), parity)) {
  }
}

}  // namespace ts
