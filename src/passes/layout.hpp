// The register layout of a top-level loop nest: how the elements of its tile values are
// spread over the threads of a program.
//
// Every tile dimension (Sym) used in the nest gets a slot; Syms that never appear in one
// value together (e.g. the chunks of two sibling inner loops) share a slot, and a
// BlockSize's block (Sym::block_k) shares one with the tiles of the loops using it. A value
// with two dimensions in one slot (a tile twice, a block with such a tile) has no layout:
// the CUDA emitter reports it. Slots are
// ordered outer to inner; the innermost slot is the one most often last in value shapes
// (the contiguous dimension). A value of any shape is held in the layout of all slots,
// replicated along the slots its shape lacks, so broadcasting needs no data movement.
//
// With slot block sizes B0..Bk-1 (powers of two), E = prod(B) elements, T threads and a
// vector width V (elements of the innermost slot held contiguously by one thread), thread
// `tid` holds registers r = g*V + v (g < G = max(1, E/(T*V)), v < V) for the element of
// flat index f = (g*T + tid)*V + v (TS_FLAT(r) in generated code). Each bit of a slot's
// coordinate is one bit of f (Layout::slot_bits): a linear layout over GF(2) whose every
// register, lane and warp bit holds one coordinate bit (src/layout; linear_layout() gives
// it). compute_layout makes blocked layouts, f row-major over the slots (slot i in bits
// [shift_i, shift_i + log2(B_i)) of f); with_placement gives a layout any other such
// placement (an mma fragment's). Threads with tid*V >= E (small tiles) hold nothing.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/ir.hpp"
#include "layout/linear_layout.hpp"
#include "passes/contractions.hpp"
#include "passes/tensor_descriptor.hpp"
#include "tessel/config.hpp"

namespace tessel::passes {

struct Contraction;

struct Layout {
  std::vector<int64_t> slot_block;  // per slot, outer to inner
  /// Per slot: the bit of the flat index f holding each bit of the slot's coordinate, low
  /// bit first (log2 of its block of them). Every bit of f below log2(E) holds exactly one
  /// coordinate bit; the bits from log2(E) up are thread bits of threads that hold nothing.
  std::vector<std::vector<int>> slot_bits;
  std::map<const ir::Sym*, int> slot_of;
  int threads = 128;
  /// Shared memory one program may use on the GPU the layout is for (shared_bytes_limit).
  int64_t shared_limit = shared_bytes_limit(kDefaultArch);
  int vec = 1;        // V
  int groups = 1;     // G
  int64_t elems = 1;  // E
  /// Accesses held in a layout of their own (passes::assign_access_layouts): per load or
  /// store, the nest's slots in its order, outer to inner. Its value converts through
  /// shared memory between that layout and this one (codegen emit_convert.cpp).
  std::map<const ir::Node*, std::vector<int>> own_order;
  /// Accesses that would take a layout of their own but keep the nest's (one element per
  /// thread at a stride), and why: their value's conversion needs more shared memory than
  /// the target's program has (the layout dump says so).
  std::map<const ir::Node*, std::string> own_order_refused;
  /// The nest's contractions (passes/contractions.hpp): their factors and products are
  /// not held in this layout.
  std::vector<Contraction> contractions;
  /// Contractions whose factors do not fit in shared memory (shared_limit): their
  /// products are held in this layout (errors about its size name them).
  std::vector<Contraction> unfit_contractions;
  int regs() const { return groups * vec; }  // registers per thread per tile value
  /// This layout with its slots in `order` (old slot numbers, outer to inner): the same
  /// threads, vector width and groups, each Sym's bits moved with its slot.
  Layout reordered(const std::vector<int>& order) const;
  bool all_threads_active() const { return elems >= static_cast<int64_t>(threads) * vec; }
  int log2_vec() const;
  int log2_threads() const;
  /// The bits of f that slot k's coordinate is made of.
  int64_t slot_mask(int k) const;
  /// The lowest bit of f holding slot k when its bits are consecutive in f (a blocked
  /// layout's slots), else -1.
  int contiguous_shift(int k) const;
  /// The slot holding bit 0 of f, whose coordinate's low log2(V) bits are a thread's
  /// vector lanes (a blocked layout's innermost), or -1.
  int vector_slot() const;
  /// Places the slots as a blocked layout: f row-major over them, the innermost slot
  /// (the last) in the lowest bits.
  void place_blocked();
};

/// Layout L as a linear layout (src/layout): input dims register (L.regs()), lane and warp
/// (L.threads); output dims the slots in order, named by their Syms ("t0", "t0|t2" for a
/// shared slot), of their blocks. Input bits of inactive threads have zero bases.
layout::LinearLayout linear_layout(const Layout& L);

/// Layout L with its elements placed as `placement` says: a linear layout with the input
/// and output dims linear_layout(L) has (register of L.regs() registers, lane, warp; L's
/// slots' blocks, in order, of any names), each input bit holding one output bit and each output
/// bit held once. Its vector width is the number of low register bits that hold the low bits of one
/// slot in order (registers that vector accesses move together); groups follow. Throws
/// InternalError for another placement (a swizzle, copies of an element) or when L has inactive
/// threads.
Layout with_placement(const Layout& L, const layout::LinearLayout& placement);

/// A contraction with the layouts its two factors are loaded in: slots for the factor's
/// dims in its shape's order (outer to inner), the threads of the nest, 16-byte vectors
/// along the innermost dim. Each factor goes to shared memory at the flat index of that
/// layout, plus one pad element per row where the row is the contracted dim (the threads
/// reading one k walk down a column).
struct Contraction {
  ContractionMatch match;
  Layout factor_layout[2];
  bool padded[2] = {false, false};
  int64_t shared_offset[2] = {0, 0};  // bytes into the program's shared memory
  int64_t shared_bytes = 0;           // both factors
  /// On tensor cores (passes/tensor_cores.hpp): mma.sync.m16n8k16 (f16, bf16) or
  /// m16n8k8 (TF32) with f32 accumulation. Factor `a` is A ([M, K]), the other B ([K, N]);
  /// each is staged in its operand dtype in rows along its layout's innermost dim (its
  /// tensor's contiguous one), `pitch` elements apart (the row plus 16 bytes, 32 for TF32
  /// rows along M or N).
  struct Mma {
    DType operand = DType::bf16;  // f16, bf16, f32 (TF32 values); f8e4m3, f8e5m2, i8 (wgmma)
    int a = 0;
    int warps_m = 1, warps_n = 1;
    int64_t pitch[2] = {0, 0};
    /// Per factor: K is its innermost dim (its rows run along K: ldmatrix without .trans;
    /// wgmma: its tensor is contiguous along K, a K-major operand).
    bool k_inner[2] = {false, false};
    /// wgmma.mma_async (sm_90a) instead of mma.sync: warps_m / 4 warpgroups along M times
    /// warps_n along N, each issuing m64nNk16 (k8 for TF32) with N the tile's block of N / warps_n
    /// for each 64 rows it holds (with swap_ab, M and N trade places). The factors' tiles are
    /// copied by the TMA (box[i], 128-byte swizzle, the wgmma operand layout) into a ring of
    /// `stages` buffers of stage_bytes (factor 0's box, then factor 1's), filled `stages` tiles of
    /// K ahead (passes/tensor_cores.hpp).
    bool wgmma = false;
    /// wgmma computes the transposed product out^T = B^T A^T (cuBLAS's swap of A and B for a
    /// skinny M): its rows (64 per warpgroup, warps_m / 4 warpgroups) are N's and its columns
    /// (n = M's block / warps_n) M's, factor 1 - a is its A operand and factor a its B, and
    /// the accumulator placement is the wgmma accumulator's transposed. Taken where M's block
    /// is below 64 (a multiple of 16) and N's a multiple of 64: no rows of a 64-row
    /// instruction are padding.
    bool swap_ab = false;
    /// 8-bit float operands without Settings::fast_accum (ir::Graph::fast_accum): for each tile
    /// of K, wgmma sums the products from zero into partial sums of promote_n columns (the
    /// instruction's width: n, or a part of it where the accumulator and the partial sums
    /// would not fit a thread's registers), which the CUDA cores then add into the f32
    /// accumulator, one such part of each 64-row tile at a time (each waited for). 0: wgmma
    /// adds into the accumulator itself.
    int64_t promote_n = 0;
    int stages = 0;
    /// mma.sync whose factors' tiles are copied by cp.async (sm_80 and later) into a ring of
    /// this many slots of the factors' staged tiles, the loop over K's prefetch (Config::
    /// num_stages, passes/prefetch_plan.hpp) copy_stages - 1 tiles ahead straight into shared
    /// memory instead of registers: 16-bit and 8-bit factors that are loads (through casts and
    /// views) issued early with vector accesses, where the slots fit (passes::lower_nest). 0:
    /// staged from registers at each tile.
    int copy_stages = 0;
    /// wgmma in a persistent kernel whose loop over K stands in the program's body and whose
    /// factors' tiles follow from the program id and K alone (may_load_across_programs): the
    /// ring runs on into the program's next tile, whose first tiles of K are then in flight
    /// during this tile's last products and its epilogue.
    bool across_programs = false;
    /// Config::warp_specialize applied: a producer warpgroup past the nest's threads issues every
    /// TMA copy of the ring (its tiles follow from the program id and K: from_program_id)
    /// and exits; the consumer threads only read the ring (plan_tensor_cores).
    bool producer_warp = false;
    TmaBox box[2];
    int64_t stage_bytes = 0;
    /// Per factor: a TF32 or 8-bit factor that is M- or N-major (a row-major y), which wgmma
    /// cannot read (K-major only): the threads copy each of its tiles from the ring into a
    /// K-major buffer with the 128-byte swizzle (two, alternating, after the ring) that wgmma
    /// reads instead (Emitter::emit_wgmma_contraction). k_inner stays false: the ring's box
    /// is the tensor's.
    bool transposed[2] = {false, false};
    /// Bytes of one factor's K-major copy (its box's bytes); 0 where none is transposed.
    int64_t transpose_bytes[2] = {0, 0};
    /// Shared memory past the ring: two K-major copies of each transposed factor.
    int64_t transpose_total() const { return 2 * (transpose_bytes[0] + transpose_bytes[1]); }
    /// K of one wgmma instruction: 32 bytes of the operand (16 f16 or bf16, 8 TF32, 32 f8, i8).
    int64_t wgmma_k() const { return 32 / dtype_size(operand); }
    /// The operand type as PTX names it: f16, bf16, tf32, e4m3, e5m2 or s8.
    std::string ptx_operand() const {
      return operand == DType::f32      ? std::string("tf32")
             : operand == DType::f8e4m3 ? std::string("e4m3")
             : operand == DType::f8e5m2 ? std::string("e5m2")
             : operand == DType::i8     ? std::string("s8")
                                        : dtype_name(operand);
    }
  };
  std::optional<Mma> mma;
  /// On mma.sync rather than wgmma, or on the CUDA cores rather than tensor cores: why
  /// (passes/tensor_cores.hpp); the layout dump prints it.
  std::string not_wgmma;
  /// Config::warp_specialize set but not applied to this dot: why (the layout dump).
  std::string no_producer_warp;
};

/// Contraction match m planned for `threads` threads: each factor's layout has its
/// shape's dims in order, inner0 / inner1 (when a dim of factor 0 / 1) moved innermost
/// (the dim its tensor is contiguous along); shared_bytes may pass the shared memory limit.
Contraction plan_contraction(const ContractionMatch& m, const Config& config, int threads,
                             const ir::Sym* inner0 = nullptr, const ir::Sym* inner1 = nullptr);

/// The nodes of L's contractions that L does not hold (staged_nodes of their matches).
std::set<const ir::Node*> staged_nodes(const Layout& L);

/// The layout as comment lines for stage dumps (TESSEL_DUMP_DIR's 06-layout.ir): threads,
/// vector width and groups, the slots outer to inner with their Syms and blocks, and the
/// accesses in a layout of their own with their slot order, the contractions with their
/// factors' layouts.
std::string describe(const Layout& L, const ir::Node* loop);

/// Computes the layout of top-level loop `loop` under a complete config. The vector
/// width is 16 bytes of the smallest element size among the nest's memory accesses.
/// With the loop's graph `g`, an access votes for the innermost slot (in a nest that
/// permutes a value) with the dim its tensor is contiguous along (ir::unit_stride_dim),
/// else with its last index. `arch`: the compute capability of the GPU it is for (its
/// shared memory, Layout::shared_limit).
Layout compute_layout(const ir::Node* loop, const Config& config, const ir::Graph* g = nullptr,
                      int arch = kDefaultArch);

/// The index Sym of access n along its tensor's unit-stride dim (ir::unit_stride_dim; a
/// tile or ts::all), or null.
const ir::Sym* unit_stride_sym(const ir::Graph& g, const ir::Node* n);

}  // namespace tessel::passes
