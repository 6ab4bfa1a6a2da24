// Sums of products on tensor cores (passes/tensor_cores.hpp): ldmatrix and
// mma.sync.aligned.m16n8k16 (f16, bf16) and .m16n8k8 (TF32) with f32 accumulation, and
// .m16n8k32 (f8e4m3 and f8e5m2 with f32 accumulation, sm_89 and later; i8 with i32) (PTX
// ISA, "Warp Level Matrix Multiply-Accumulate Instructions"). sm_80 and later. libcu++'s
// cuda::ptx has no wrappers for these instructions, hence inline PTX. Included only by
// kernels that use them.
//
// Fragments (groupID g = lane / 4, t = lane % 4), each register two 16-bit elements:
//   A (16 x 16, M x K): a0 (g, 2t..2t+1), a1 (g + 8, ..), a2 (g, 2t + 8..), a3 (g + 8, 2t + 8..)
//   B (16 x 8, K x N):  b0 (2t..2t+1, g), b1 (2t + 8.., g)
//   C (16 x 8, f32):    c0 c1 (g, 2t..2t+1), c2 c3 (g + 8, 2t..2t+1)
#pragma once

namespace ts {

/// The 32-bit shared-memory address of generic pointer p (into the program's shared memory).
__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

/// Copies V elements at global p into shared dst asynchronously (cp.async, PTX ISA "cp.async";
/// libcu++'s cuda::ptx wraps only the bulk copies, hence inline PTX), the first n of them
/// (clamped to [0, V]) read and the rest zero-filled: .cg (L2 only) for 16 bytes, .ca for 8
/// and 4. Visible to this thread after cp_async_wait, to the others after a barrier past it.
/// n <= 0 reads nothing (p may lie past the tensor): zeros are stored. Whole and Aligned as
/// for ld_vec; a p not aligned to the vector's bytes is copied element by element (stores).
/// dst is aligned to the vector's bytes.
template <class M, int V, bool Whole = false, bool Aligned = false>
__device__ __forceinline__ void cp_async_vec(M* dst, const M* p, int n) {
  constexpr int bytes = V * (int)sizeof(M);
  static_assert(bytes == 16 || bytes == 8 || bytes == 4, "cp.async copies 4, 8 or 16 bytes");
  typedef typename VecWord<bytes>::type W;
  const int valid = n < 0 ? 0 : n > V ? V : n;
  if (valid == 0) {
    *reinterpret_cast<W*>(dst) = W{};
    return;
  }
  if (Aligned || (reinterpret_cast<unsigned long long>(p) % bytes) == 0) {
    const unsigned d = smem_addr(dst);
    const int src = valid * (int)sizeof(M);
    if constexpr (bytes == 16)
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(p), "r"(src)
                   : "memory");
    else
      asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(d), "l"(p), "n"(bytes),
                   "r"(src)
                   : "memory");
    return;
  }
  if constexpr (!Aligned) {  // (Aligned: never reached)
#pragma unroll
    for (int i = 0; i < V; ++i) dst[i] = i < valid ? p[i] : M(0);
  }
}

/// Closes this thread's cp.async copies issued since the last commit into a group.
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/// Waits until at most N of this thread's committed cp.async groups are in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/// ldmatrix .x4: four 8 x 8 matrices of 16-bit elements, lane 8j + i giving the address of
/// row i of matrix j (16 bytes, 16-byte aligned). Thread (g, t) receives in r[j] elements
/// (g, 2t) and (g, 2t + 1) of matrix j, or with Trans of its transpose (rows 2t, 2t + 1 of
/// column g).
template <bool Trans>
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr) {
  if constexpr (Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr)
                 : "memory");
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr)
                 : "memory");
}

/// ldmatrix .x2: matrices 0 and 1 as ldmatrix_x4 (lanes 0..15 give the addresses).
template <bool Trans>
__device__ __forceinline__ void ldmatrix_x2(unsigned (&r)[2], unsigned addr) {
  if constexpr (Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(addr)
                 : "memory");
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(addr)
                 : "memory");
}

/// d += a b for one 16 x 8 x 16 fragment of bf16 operands (f32 accumulator d[0..4)).
__device__ __forceinline__ void mma_16816_bf16(float* d, const unsigned (&a)[4],
                                               const unsigned (&b)[2]) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/// d += a b for one 16 x 8 x 16 fragment of f16 operands (f32 accumulator d[0..4)).
__device__ __forceinline__ void mma_16816_f16(float* d, const unsigned (&a)[4],
                                              const unsigned (&b)[2]) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/// d += a b for one 16 x 8 x 8 fragment of TF32 operands (f32 bit patterns, rounded to TF32
/// already: ts::truncate_tf32), f32 accumulator d[0..4). Fragments (g = lane / 4, t = lane % 4):
/// a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4); b0 (t, g), b1 (t + 4, g); d as
/// the 16-bit instruction's c.
__device__ __forceinline__ void mma_1688_tf32(float* d, const unsigned (&a)[4],
                                              const unsigned (&b)[2]) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/// d += a b for one 16 x 8 x 32 fragment of i8 operands, wrapping i32 accumulator d[0..4).
/// Fragments as the 16-bit instruction's in bytes: each register holds 4 consecutive values
/// of K (a0 (g, 4t..4t+3), a1 (g + 8, ..), a2 (g, 4t + 16..), a3 (g + 8, 4t + 16..); b0
/// (4t..4t+3, g), b1 (4t + 16.., g)); d as the 16-bit instruction's c.
__device__ __forceinline__ void mma_16832_s8(int* d, const unsigned (&a)[4],
                                             const unsigned (&b)[2]) {
  asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/// d += a b for one 16 x 8 x 32 fragment of f8e4m3 operands (sm_89 and later), f32
/// accumulator d[0..4); fragments as mma_16832_s8's.
__device__ __forceinline__ void mma_16832_e4m3(float* d, const unsigned (&a)[4],
                                               const unsigned (&b)[2]) {
  asm("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/// The same for f8e5m2 operands.
__device__ __forceinline__ void mma_16832_e5m2(float* d, const unsigned (&a)[4],
                                               const unsigned (&b)[2]) {
  asm("mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

}  // namespace ts
