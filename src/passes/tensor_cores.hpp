// The layout stage's last part: contractions on tensor cores.
//
// A contraction (passes/contractions.hpp) of f16 or bf16 loads, each widened to f32 (what
// ts::dot of two f16 or bf16 tiles traces, and a matmul written as a broadcast multiply and
// a sum of such loads), sums products exact in f32: the mma.sync.m16n8k16 instruction with
// f32 accumulation computes the same sum on tensor cores (PTX ISA, "Warp Level Matrix
// Multiply-Accumulate Instructions"; Triton lowers tl.dot of 16-bit operands the same way
// on sm_80 and sm_89). One of f32 loads each rounded to TF32 (ts::dot's f32 operands under
// DotPrecision::tf32) is what mma.sync.m16n8k8.tf32 computes; one of 8-bit loads (f8e4m3,
// f8e5m2 widened to f32, i8 widened to i32) is what mma.sync.m16n8k32 computes, its fragments
// the 16-bit ones in bytes, where both factors are staged K-major (ldmatrix transposes 16-bit
// elements only). Such a contraction runs on
// tensor cores when:
//   - its sum is a [M, N] tile value and its factors [M, K] (A) and [K, N] (B) tiles,
//   - the nest holds exactly the M and N slots, M outer, each of the tile's block,
//   - the warps split into wm x wn with M's block a multiple of 16 wm, N's of 8 wn, and K's
//     block is a multiple of 16 (8 for TF32, 32 for 8-bit),
//   - no loop of the nest is flattened.
// The nest's values are then held in the mma.sync accumulator layout
// (layout::mma_sync_accumulator: each warp a 16 x 8 fragment repeated over the tile, a
// thread two adjacent columns in two rows of it), the sum itself in the fragments' order,
// and each factor is staged in shared memory in its operand dtype, rows along its tensor's
// contiguous dim padded by 16 bytes (the eight rows ldmatrix reads fall in distinct banks;
// TF32 rows along M or N by 32 bytes, for the element loads of a warp), read into fragments
// by ldmatrix (.trans where K is not that dim; TF32 fragments element by element).
// Before / after, the layout stage's dump of a 64 x 64 x 32 bf16 matmul on 4 warps:
//   //   %20 contracts %19 over t2, 16640 bytes of shared memory; factors: ...
//   //   %20 contracts %19 over t2, 9728 bytes of shared memory, on tensor cores (mma.sync
//   //       m16n8k16 bf16, warps 2 x 2); factors: ...
// and the nest's placement (its linear layout line) is the accumulator's.
// Which of these a GPU has is KernelPlan::arch's (the target's compute capability:
// has_mma_sync, has_wgmma): below sm_80 (sm_89 for f8e4m3 and f8e5m2) a contraction stays on
// the CUDA cores, and the layout dump says so ("sm_80 has no mma.sync for f8e4m3 ...").
// On sm_90 a contraction whose factors the TMA can copy runs on wgmma instead (plan_wgmma
// in the .cpp says when): f16 and bf16 factors K-major or M/N-major; TF32 and 8-bit (f8e4m3,
// f8e5m2, i8) factors K-major, or M/N-major (a row-major y) copied K-major by the threads
// from the ring into one of two buffers wgmma reads (Contraction::Mma::transposed: wgmma
// has no transpose for those types), K's block then whole 128-byte rows of K. A block of M
// below 64 rows with one of N of whole 64 rows runs on wgmma's transposed product (out^T =
// y^T x^T, Contraction::Mma::swap_ab), its accumulator placement transposed.
// wgmma reads a TF32 operand's f32 bits truncated, as DotPrecision::tf32 defines it; an
// f32 NaN whose payload lies in the 13 low mantissa bits alone reads as an infinity there.
#pragma once

#include "ir/ir.hpp"
#include "passes/kernel_plan.hpp"
#include "passes/layout.hpp"

namespace tessel::passes {

/// Config::warp_specialize's producer: one warpgroup past the nest's threads, which with them
/// stay within a program's threads (CUDA's limit on every GPU since sm_20).
inline constexpr int kProducerThreads = 128;
inline constexpr int kMaxThreadsPerProgram = 1024;

/// Puts the contractions of L (compute_layout and assign_access_layouts of top-level loop
/// `plan.loop`) that qualify (above) on tensor cores: sets their `mma`, their shared bytes
/// and offsets, and L's placement to the mma.sync accumulator. Leaves L as it is when none
/// qualifies. With `plan.warp_specialize`, marks the one dot on wgmma whose tiles a producer
/// warpgroup can copy (Contraction::Mma::producer_warp), else says why on every contraction
/// (Contraction::no_producer_warp).
void plan_tensor_cores(const ir::Graph& g, const KernelPlan& plan, Layout& L);

/// The placement a nest whose contractions run on tensor cores must keep (the mma.sync
/// accumulator over its two slots for their warps), or nothing when none does.
std::optional<layout::LinearLayout> tensor_core_placement(const Layout& L);

}  // namespace tessel::passes
