// ts::Config (the tuned knobs of one compiled kernel) and ts::Settings (per-kernel
// choices that are not tuned). Both are aggregates of std::optional fields; an unset
// field means "tessel decides". Designated initializers must follow the field order.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <source_location>
#include <string>
#include <vector>

#include "tessel/dtype.hpp"

namespace tessel {

/// How program ids map to tiles (Helion's pid_type).
/// flat: a 1-D grid, the flat program id decomposed over the loop's dims (the first dim of
/// its loop_orders entry fastest: dim 0 by default).
/// xyz: one grid dimension per loop dimension (up to 3; grid x takes the first dim of the
/// loop's loop_orders entry).
/// persistent_blocked / persistent_interleaved: a grid of about one program per SM
/// (times num_sm_multiplier) looping over virtual program ids; blocked gives each program a
/// contiguous range, interleaved a stride of the grid size.
enum class PidType : uint8_t { flat, xyz, persistent_blocked, persistent_interleaved };
std::string pid_type_name(PidType p);

/// The L2 eviction priority of a load (Triton's tl.load eviction_policy, Helion's
/// load_eviction_policies; JSON "", "first", "last"). none: the default priority.
/// first: evict these lines first (data read once: keeps L2 for data read again).
/// last: keep these lines over others (data read again soon, e.g. the second pass of a
/// two-pass kernel). Lowered to createpolicy.fractional.L2::evict_first/last and a load
/// with .L2::cache_hint (PTX ISA, "createpolicy"; sm_80 and later). A hint only: results
/// never depend on it.
enum class EvictionPolicy : uint8_t { none, first, last };
std::string eviction_policy_name(EvictionPolicy p);  // "", "first", "last"

/// The tuned knobs. Field order (for designated initializers):
/// block_sizes, num_warps, num_stages, maxnreg, pid_type, num_sm_multiplier, split_k,
/// warp_specialize, loop_orders, flatten_loops, l2_groupings, reduction_loops, indexing,
/// load_eviction_policies, tunables.
struct Config {
  /// One entry per tunable block size, in the order they are created while tracing: each
  /// ts::register_block_size call creates one, and each dimension of a tile loop without
  /// an explicit block size creates one when the loop is traced (outer loops first, dims
  /// left to right). A BlockSize registered before a loop therefore comes before that
  /// loop's own entries, as in Helion. Powers of two.
  std::optional<std::vector<int64_t>> block_sizes;
  /// Warps per program (1, 2, 4, 8, 16, 32). Threads per program = 32 * num_warps.
  std::optional<int> num_warps;
  /// Software pipelining of loads in device loops (Triton's num_stages): 1 = none; S >= 2:
  /// a one-dim device loop's vector loads whose addresses do not depend on the iteration's
  /// own values, of tensors the loop does not store to, are issued S - 1 iterations early
  /// into registers (src/codegen/emit_pipeline.cpp; values above 4 act as 4). With a
  /// persistent pid_type the program loop over tiles is pipelined one tile ahead (the next
  /// tile's loads are issued before this tile's work) for any S >= 2. A ts::dot on mma.sync
  /// (sm_80 tensor cores) with 16- or 8-bit operands copies their tiles by cp.async into a
  /// ring of min(S, 4) shared-memory slots instead of registers. A ts::dot on wgmma
  /// (sm_90 tensor cores) rings S buffers of its operands' tiles, at least 2 and no more
  /// than fit in a program's shared memory (the layout stage's dump says how many); with a
  /// persistent pid_type the ring runs on into the program's next tile where that tile's
  /// operands follow from the program id (a loop over K with the same bounds in every
  /// program).
  std::optional<int> num_stages;
  /// Registers per thread at most (Triton's Config.maxnreg; the PTX .maxnreg directive,
  /// emitted as __maxnreg__): unset = the compiler's choice for num_warps (up to 255).
  /// A cap lets more programs share an SM (an SM has 65536 registers) at the cost of
  /// spilling when the tile needs more. 24..255, and 32 * num_warps * maxnreg <= 65536;
  /// otherwise a UserError names the kernel's first loop. A ts::dot stays off wgmma (on
  /// mma.sync) when the cap leaves less than its accumulator's registers plus 64 (the
  /// layout stage's dump says which it took). A cap below what one of the kernel's
  /// instructions needs (mma.sync's fragments: 28 at least) fails its compile: a UserError
  /// with ptxas's reason and the count it asks for.
  std::optional<int> maxnreg;
  std::optional<PidType> pid_type;
  /// Persistent kernels: programs = SMs * num_sm_multiplier (1, 2, 4, 8).
  std::optional<int> num_sm_multiplier;
  /// Split-K (Triton's SPLIT_K, CUTLASS's serial split-K reduction): S programs share each
  /// tile of a ts::dot's output, program s summing its share of the tiles of K (the
  /// loop's tiles split as evenly as S allows; a share may be empty). Each program writes
  /// its partial sums (f32) to a workspace the call allocates on its stream; the last of a
  /// tile's programs to arrive (a counter per tile, reset by that program) adds the
  /// partial sums in the order s = 0, 1, ..., S - 1, whichever program is last, and runs
  /// the code after the loop (the epilogue and stores). Rounding differs from S = 1 by the
  /// order of the f32 additions only. Applies to pid_type flat, where the top-level loop
  /// holds one loop over K whose carried values are sums of products on wgmma (sm_90
  /// tensor cores) starting from ts::zeros; elsewhere (a dot on mma.sync, e.g. rows not
  /// 16-byte aligned; an accumulator not from zeros; other carried values) the kernel
  /// runs unsplit and its CUDA says why ("split_k 2 is not applied: ..."). Default 1
  /// (none). Errors (UserError naming the kernel's first loop): not a power of two in
  /// 1..16, another pid_type.
  std::optional<int> split_k;
  /// Warp specialization of a ts::dot on wgmma (sm_90; Triton's warp_specialize, CUTLASS's
  /// warp-specialized mainloop): one more warpgroup per program, the producer, whose first
  /// thread issues every TMA copy of the dot's ring (waiting for a buffer to be read before
  /// refilling it) and exits; the num_warps consumer warps only wait for buffers, issue
  /// wgmma and run the epilogue. A TF32 or 8-bit operand that is not K-major (a row-major y),
  /// which wgmma cannot read, is copied K-major by the consumers, tile by tile, between
  /// barriers of their own. Registers move from the producer to the consumers (setmaxnreg:
  /// 40 per producer thread, up to 240 per consumer thread). Applies where
  /// the top-level loop holds one dot on wgmma whose operands' tiles follow from the program id
  /// and K alone (a loop over K with bounds from outside the loop, tiles indexed by the
  /// program's tiles, K and host values), with pid_type flat, persistent_blocked or
  /// persistent_interleaved, split_k 1, no maxnreg and num_warps 16 or fewer (the producer's
  /// 128 threads beside the consumers' within 1024); elsewhere the kernel runs without it and
  /// the layout stage's dump and the CUDA say why ("warp_specialize not applied: ...").
  /// Default false.
  std::optional<bool> warp_specialize;
  /// loop_orders and flatten_loops have one entry per loop of two or more dimensions
  /// (`ts::tile(m, n)`, `ts::grid(m, n)`), top-level and nested alike, in trace order: a
  /// loop before the loops nested in it, earlier statements first. l2_groupings has one
  /// entry per top-level loop of two or more dimensions, in order. Kernels without such
  /// loops leave all three unset. Example: `for (tm, tn : tile(M, N)) { for (tk : tile(K))
  /// ...; for (a, b : tile(A, B)) ...; }` then `for (x, y : tile(X, Y))`: loop_orders =
  /// {order of (tm, tn), order of (a, b), order of (x, y)}, l2_groupings = {G of (tm, tn),
  /// G of (x, y)}. Helion's meanings; errors (UserError naming the loop's line, when a
  /// specialization is first traced): a wrong number of entries, and the cases below.
  ///
  /// A permutation of the loop's dims (default: identity, 0, 1, ...). Top-level loop:
  /// entry[0] varies fastest across program ids, entry[1] next (with pid_type xyz,
  /// entry[k] takes grid axis k). Nested loop: entry[0] is the outermost of the generated
  /// per-dim loops. Flattened loop: the flat index is row-major over entry[0], entry[1],
  /// ... (entry.back() fastest). Error: not a permutation of 0..dims-1.
  std::optional<std::vector<std::vector<int>>> loop_orders;
  /// Iterate the loop's dims as one flattened index space (default false; Helion's
  /// flattened tile strategy): tiles of prod(block_sizes of its dims) consecutive
  /// elements of the row-major space over the dims' extents, element e at coordinates
  /// (e / n1, e % n1) for two dims. Elements that wrap from one row to the next are not
  /// contiguous in memory, so a flattened dim is loaded and stored without vector
  /// accesses. A top-level flattened loop launches one program per flattened tile (also
  /// with pid_type xyz). Error: a ts::grid loop, or a body (nested loops included) that
  /// uses a tile attribute of the loop (begin, end, block_size, id) or has a value or
  /// store target with only some of the loop's tile dims (a reduction over a loop dim,
  /// `t.index()`, a load like `x(tm, 3)`): flattening needs a body elementwise over the
  /// whole tile.
  std::optional<std::vector<bool>> flatten_loops;
  /// Group size G for L2-friendly program ordering (default 1 = none): Triton's grouped
  /// ordering ("GROUP_SIZE_M" in its matmul tutorial): consecutive program ids walk G
  /// tiles along the loop's first ordered dim (loop_orders entry[0]) before moving along
  /// the second, so a group's programs share rows and columns in L2. With three or more
  /// dims the two fastest are grouped, the others decomposed after them. Applies to
  /// pid_type flat and the persistent types (to the virtual program id). Errors: not a
  /// positive power of two; G > 1 with pid_type xyz or on a flattened loop.
  std::optional<std::vector<int>> l2_groupings;
  /// Per reduction dimension: null = persistent reduction (whole extent in registers),
  /// a power of two = looped reduction over chunks of that size (Helion's meaning).
  /// Leaving the whole field unset lets tessel choose: persistent, except extents above
  /// 16384 (padded), which loop over chunks of 4096.
  std::optional<std::vector<std::optional<int64_t>>> reduction_loops;
  /// Per memory op, how it addresses memory (Helion's indexing strategies): "pointer"
  /// (the default: each thread computes its elements' addresses) or "tensor_descriptor"
  /// (a load copies its tile as one box of the tensor with the Tensor Memory Accelerator,
  /// TMA, into shared memory, and each thread reads its elements there: PTX
  /// cp.async.bulk.tensor with an mbarrier, a CUtensorMap built on the host per call and
  /// passed as a __grid_constant__ parameter; sm_90 and later). One entry for every memory
  /// op, or one per memory op: the kernel's loads in the order of load_eviction_policies,
  /// then its stores in source order. A load takes "tensor_descriptor" where the TMA can
  /// move its tile, and "pointer" otherwise (as Helion falls back), which the kernel IR
  /// dump (TESSEL_DUMP_DIR, 07-kernel_ir.ir: `access L0 tma, box [64, 64]`) shows: the load
  /// runs in the nest's layout (not a contraction's factor), its indices are tiles,
  /// ts::all or scalars (no gathers, not a multicast tensor), the tensor has a dim of unit
  /// stride and its data pointer and other strides are 16-byte aligned (the specialization
  /// key knows this), rank <= 5, every box dim <= 256 elements, the unit-stride dim's box
  /// a multiple of 16 bytes, the box at most 48 KiB, 32-bit index arithmetic. Stores take
  /// "pointer" always (TMA stores are not generated yet). Autotuning on an sm_90 GPU tries
  /// both for each load the TMA may move (not a dot's factors), as Helion's autotuner does;
  /// a forced indexing fixes them all. The operands of a ts::dot on wgmma
  /// (sm_90 tensor cores, passes/tensor_cores.hpp) are copied by the TMA whatever their entry
  /// says. Errors (UserError naming the kernel's first loop): another value, another number
  /// of entries. Config::from_json also takes one string for every memory op ("indexing":
  /// "tensor_descriptor", Helion's form).
  std::optional<std::vector<std::string>> indexing;
  /// One entry per load of a tensor in device code (each `x(...)` read inside a loop), in
  /// source order: by file, line and column of the read's first index (so `x(t) * y(t)`
  /// is x then y, whatever order the C++ compiler evaluates them in); reads at one
  /// position (a helper called twice) in trace order. Unset = none for all. Copies a pass
  /// makes of a load (the chunks of a looped reduction) share its entry. Errors (UserError
  /// naming the kernel's first loop): a number of entries other than the kernel's loads,
  /// a value outside the enum.
  std::optional<std::vector<EvictionPolicy>> load_eviction_policies;
  /// User tunables declared with ts::register_tunable: name -> chosen value (one of the
  /// declared choices). Unset or a missing name = the first declared choice.
  std::optional<std::map<std::string, int64_t>> tunables;

  /// JSON text, e.g. {"block_sizes":[64,128],"num_warps":4}. Unset fields are omitted.
  std::string to_json() const;
  /// Parses to_json()'s output. Throws UserError on malformed text, unknown keys or values
  /// of the wrong type or range, naming the caller's line (`at`).
  static Config from_json(const std::string& text,
                          std::source_location at = std::source_location::current());
  /// A C++ initializer that can be pasted into ts::Settings{.config = ...}.
  std::string to_cpp() const;
  bool operator==(const Config&) const = default;
};

/// How hard the autotuner searches when a specialization is first called on a GPU (the
/// design is described in src/autotune/autotuner.hpp). none: the default config
/// (passes::complete_config), no tuning. quick: a pattern search of at most 40 configs
/// (seconds). full: at most 400 configs, with more repeats per timing (minutes).
/// Unset means none: unlike Helion (whose default is full), tessel does not tune unless
/// asked, because tuning needs a GPU, takes time on the first call, and would make every
/// test and CI run slower; opt in with quick or full. A tuned config is cached on disk.
enum class AutotuneEffort : uint8_t { none, quick, full };

/// How ts::dot multiplies f32 operands (Triton's input_precision, Helion's dot_precision).
/// tf32: each operand element is first truncated to TF32 (10 mantissa bits, toward zero: its
/// 13 low mantissa bits cleared), then the products are summed in f32: what a tensor core
/// computes from f32 inputs (wgmma reads TF32 operands from f32 bits in shared memory so, as
/// Triton's and cuBLAS's TF32 kernels on sm_90; about 3 decimal digits per element). ieee: full
/// f32 products. tf32x3: about f32 accuracy from three TF32 products (Triton's 3xTF32);
/// tessel computes it as ieee (the same or better accuracy, on the CUDA cores).
enum class DotPrecision : uint8_t { tf32, tf32x3, ieee };

/// Per-kernel settings, not tuned. Field order (for designated initializers):
/// index_dtype, static_shapes, max_sms, reserved_sms, autotune_effort,
/// autotune_config_overrides, config, print_output_code, check_bounds, static_captures,
/// dot_precision, fast_accum.
struct Settings {
  /// Dtype of index arithmetic in generated code: i32, i64, or unset = auto: i64 when, on
  /// this call, any tensor the kernel addresses (an argument, or a tensor allocated in its
  /// host code, whose sizes may come from arguments) spans 2^31 elements of memory or more
  /// (counting a strided view up to its furthest element, Buffer::span) or has a size of
  /// 2^31 or more (a zero-stride view), or when a symbolic integer argument or an integer
  /// computed in host code and used by device code does not fit 32 bits (as Triton types
  /// such an integer). Decided per call: a call that needs 64 bits never reuses a 32-bit
  /// specialization. i32 with such a call is a UserError naming what needs 64 bits.
  /// The interpreter checks that the 32-bit offsets of a kernel indexed in i32 do not
  /// overflow (InternalError: a tessel bug).
  std::optional<DType> index_dtype;
  /// Specialize on exact sizes (sizes become constants in the generated code).
  std::optional<bool> static_shapes;
  /// Persistent kernels launch at most this many programs, one per SM, so they occupy at
  /// most this many SMs (Helion's reserved-SMs semantics; num_sm_multiplier is then not
  /// applied). Leaves room for e.g. NCCL kernels running alongside.
  std::optional<int> max_sms;
  /// Persistent kernels leave this many of the GPU's SMs free (same mechanism). With
  /// max_sms also set, the smaller count applies: min(max_sms, SMs - reserved_sms).
  std::optional<int> reserved_sms;
  /// Unset = none (see AutotuneEffort).
  std::optional<AutotuneEffort> autotune_effort;
  /// Config keys forced during tuning: every field set here takes this value in every
  /// candidate (e.g. {.num_warps = 4} tunes everything else).
  std::optional<Config> autotune_config_overrides;
  /// Use this config; skips tuning (and the tuned-config cache).
  std::optional<Config> config;
  /// Print generated CUDA to stderr when it is compiled for a GPU call (also
  /// TESSEL_PRINT_CODE=1). On the interpreter, the first call of each specialization
  /// prints the CUDA a GPU would compile for its config (or why there is none);
  /// Kernel::cuda(compile, args...) returns the code for any arguments, GPU or not.
  /// TESSEL_DUMP_DIR=<dir> writes the IR, CUDA, PTX and cubin (README).
  std::optional<bool> print_output_code;
  /// Bounds-checking mode (also TESSEL_CHECK_BOUNDS=1): a scalar index (a constant, a
  /// host-computed integer, a grid index, a loaded scalar) or a gathered index value
  /// outside [0, size) of its tensor dimension throws UserError naming the kernel, the
  /// load's or store's source line, the tensor, the dimension, the index and the size,
  /// instead of reading 0 / skipping the write; so is a tile index within its tile but
  /// past its tensor's end (a ts::tile bound that is not a tensor's size, larger than a
  /// tensor it indexes). Lanes past a tile's own end, and ts::all indices, are masked by
  /// design, not reported. On the GPU
  /// the kernel records the first violation in device memory and the call synchronizes
  /// its stream to read it back (so a checked call cannot be captured in a CUDA graph);
  /// checked kernels are compiled without load pipelining (num_stages acts as 1).
  /// Unset = off (masked accesses, no synchronization).
  std::optional<bool> check_bounds;
  /// The kernel lambda's captures never change (values captured by copy, references to
  /// constants): trace once per specialization, as for a lambda without captures. Unset
  /// or false: a lambda with captures is traced on every call, and a trace that differs
  /// gets its own specialization (Helion's specialization on closure values; ts::kernel).
  std::optional<bool> static_captures;
  /// ts::dot on f32 operands; unset = tf32 (see DotPrecision). f16 and bf16 operands are
  /// not affected (their products are exact in f32).
  std::optional<DotPrecision> dot_precision;
  /// ts::dot of 8-bit float operands (f8e4m3, f8e5m2) on wgmma (sm_90), whose tensor cores
  /// add 8-bit products with fewer bits than f32 (README, "Tensor cores"). Unset or false:
  /// each tile of K's products (its K block, 128 or more: four m64nNk32 instructions or more) is
  /// summed by the tensor cores from zero, then added into the f32 accumulator by the CUDA cores,
  /// as cuBLASLt's default and torch._scaled_mm's use_fast_accum=False (Triton's
  /// max_num_imprecise_acc of one K block); the error then stays within one K block's sum.
  /// true: the tensor cores add every product of K into the accumulator (cuBLASLt's fast
  /// accumulation, use_fast_accum=True): faster, with errors that grow with K. The
  /// interpreter sums in f32 either way; mma.sync (sm_89) and integer dots are not affected.
  std::optional<bool> fast_accum;
};

}  // namespace tessel
