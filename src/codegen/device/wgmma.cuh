// Sums of products on sm_90's warpgroup tensor cores (passes/tensor_cores.hpp, wgmma): the
// operands' tiles are copied by the TMA into a ring of shared-memory buffers (128-byte
// swizzle), each guarded by two mbarriers: `filled` (its copies arrived: the TMA completes
// it) and `read` (every warp's wgmma has read it: one arrival per warp). wgmma.mma_async
// reads the buffers through matrix descriptors (PTX ISA, "Asynchronous Warpgroup Level
// Matrix Multiply-Accumulate Instructions", "Matrix Descriptor Format"). libcu++'s cuda::ptx
// has no wgmma wrappers, hence inline PTX for the descriptor's instructions; the mbarrier
// and fence operations are cuda::ptx's. The mma_async instruction itself (its operand
// count depends on N) is written into each kernel that uses it (codegen/emit_wgmma.cpp).
// sm_90a only (NVRTC --gpu-architecture=sm_90a). Included after tessel/tma.cuh.
#pragma once

namespace ts {

/// The wgmma matrix descriptor of an operand tile at shared address `addr` (16-byte
/// aligned; the 128-byte swizzle's pattern repeats from 1024-byte aligned addresses) laid
/// out with the 128-byte swizzle: `lbo` the leading byte offset (M- or N-major operands:
/// bytes between chunks of 64 elements along M or N), `sbo` the stride byte offset (bytes
/// between groups of 8 rows), both multiples of 16. Bits: start address >> 4 at 0, lbo >> 4
/// at 16, sbo >> 4 at 32, the swizzle mode (1: 128 bytes) at 62.
__device__ __forceinline__ unsigned long long wgmma_desc(unsigned addr, unsigned lbo,
                                                         unsigned sbo) {
  return static_cast<unsigned long long>((addr & 0x3FFFFu) >> 4) |
         static_cast<unsigned long long>((lbo & 0x3FFFFu) >> 4) << 16 |
         static_cast<unsigned long long>((sbo & 0x3FFFFu) >> 4) << 32 | 1ull << 62;
}

/// Every thread of the warpgroup, before its first wgmma after its accumulator registers
/// were written by other instructions.
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

/// Closes the group of the warpgroup's wgmma issued so far.
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

/// Waits until at most `Pending` committed groups of the warpgroup are in flight: with 0,
/// its accumulator registers hold every product and its shared operands are read.
template <int Pending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
}

/// Thread 0, once per program: an mbarrier expecting `count` arrivals per phase.
__device__ __forceinline__ void mbarrier_init_count(unsigned char* bar, unsigned count) {
  cuda::ptx::mbarrier_init(mbarrier_at(bar), count);
}

/// One arrival on `bar` (a warp's: every warp's lane 0 arrives once per phase).
__device__ __forceinline__ void mbarrier_arrive(unsigned char* bar) {
  (void)cuda::ptx::mbarrier_arrive(mbarrier_at(bar));
}

/// One thread: arms `bar` for `bytes` of TMA copies and arrives on it; its phase completes
/// when they have arrived (ts::tma_copy).
__device__ __forceinline__ void mbarrier_arm(unsigned char* bar, unsigned bytes) {
  (void)cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta,
                                             cuda::ptx::space_shared, mbarrier_at(bar), bytes);
}

/// Every thread of the warpgroup: its registers per thread become R (setmaxnreg, sm_90a; a
/// multiple of 8 in [24, 256]), lowered for a producer warpgroup, raised for the consumers
/// (no cuda::ptx wrapper: inline PTX).
template <int R>
__device__ __forceinline__ void registers_down() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(R));
}
template <int R>
__device__ __forceinline__ void registers_up() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(R));
}

/// One thread: copies the box of `map` at tensor coordinates `c` (TMA dim order) into `dst`
/// (1024-byte aligned for a swizzled map), completing on `bar` (armed by mbarrier_arm).
/// Out-of-bounds elements arrive as zeros.
template <int R>
__device__ __forceinline__ void tma_copy(const TensorMap& map, unsigned char* dst,
                                         unsigned char* bar, const int (&c)[R]) {
  cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, dst, &map, c,
                                  mbarrier_at(bar));
}

/// A scalar index as a TMA coordinate (32 bits): a 64-bit value past that range becomes the
/// range's end on its side, past every tensor's end, so its box arrives as zeros (as a masked
/// load reads it) instead of wrapping onto another element.
__device__ __forceinline__ int tma_coord(long long c) {
  return c < -2147483647LL - 1 ? -2147483647 - 1
         : c > 2147483647LL    ? 2147483647
                               : static_cast<int>(c);
}

/// After generic stores to shared memory that wgmma (the async proxy) reads next, before
/// the barrier that publishes them.
__device__ __forceinline__ void fence_proxy_async_shared() {
  cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
}

/// The byte offset of byte `byte` (0 .. 127) of row `row` of a 128-byte-swizzled tile (rows
/// of 128 bytes): the 16-byte chunk byte / 16 moves to chunk (byte / 16) ^ (row % 8).
__device__ __forceinline__ int swizzled_128(int row, int byte) {
  return row * 128 + ((((byte >> 4) ^ row) & 7) << 4) + (byte & 15);
}

}  // namespace ts
