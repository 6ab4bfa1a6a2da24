// The tessel language: what a kernel author writes inside `ts::kernel(name, lambda)`.
// Reads like PyTorch over tiles; semantics follow Helion (helion.language), as each call
// below documents; docs/DECISIONS.md records where tessel had to choose or departs.
// Every DSL call is traced into IR once per specialization.
//
// Errors: misuse raises ts::UserError naming the kernel and the source line.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <source_location>
#include <string>
#include <type_traits>
#include <vector>

#include "tessel/dtype.hpp"
#include "tessel/error.hpp"
#include "tessel/memory_order.hpp"

namespace tessel {

namespace ir {
struct Node;
struct Sym;
}  // namespace ir

using Loc = std::source_location;

struct All {};
/// The whole dimension, Python's `:`. `x(t, ts::all)`.
inline constexpr All all{};
struct NewAxis {};
/// A new size-1 dimension, Python's `None`. `bias(ts::newaxis, t)` has shape [1, t].
inline constexpr NewAxis newaxis{};

class Tensor;
class Value;
class Tile;
class TensorRef;
class MulticastTensor;

template <class T>
concept Arithmetic = std::is_arithmetic_v<T>;

/// Anything usable as an operand of a tile op: a Value, a load `x(i, t)`, or a C++
/// number (weakly typed: `x + 1.0` keeps x's dtype, as in PyTorch). A float scalar
/// argument (a ts::Value parameter passed a double) and host arithmetic of it with C++
/// numbers are weak too, holding a double like a Python float: `x_f64 * eps` is f64 with
/// eps's full value, `x_f32 * eps` stays f32 (docs/DECISIONS.md). Captures the
/// user's source line. A host Tensor used directly is a user error (load it first).
class Operand {
 public:
  Operand(const Value& v, Loc loc = Loc::current());
  Operand(const TensorRef& r, Loc loc = Loc::current());
  Operand(const Tensor& t, Loc loc = Loc::current());
  /// A multicast tensor used as a value: a UserError (index it to load its elements).
  Operand(const MulticastTensor& t, Loc loc = Loc::current());
  template <Arithmetic T>
  Operand(T v, Loc loc = Loc::current())
      : Operand(std::is_floating_point_v<T> ? DType::f32
                : std::is_same_v<T, bool>   ? DType::boolean
                : std::is_unsigned_v<T> && sizeof(T) == 8 && static_cast<uint64_t>(v) > INT64_MAX
                    ? DType::u64  // a C++ unsigned value past i64 (its bits are the ival)
                    : DType::i64,
                static_cast<double>(v), static_cast<int64_t>(v), loc) {}

  ir::Node* node() const { return node_; }
  bool weak() const { return weak_; }
  SourceLoc loc() const { return loc_; }
  /// The same operand attributed to another source line.
  Operand at(SourceLoc loc) const {
    Operand o = *this;
    o.loc_ = loc;
    return o;
  }

 private:
  Operand(DType literal_dtype, double f, int64_t i, Loc loc);
  ir::Node* node_ = nullptr;
  bool weak_ = false;
  SourceLoc loc_;
};

class Index;

/// A scalar or tile value in a kernel (symbolic while tracing). A Value is a variable:
/// assigning to it inside a loop records a new binding, and values changed inside a
/// device loop become loop-carried (`acc = acc + x(t);`). There is no conversion to
/// bool: use ts::where.
class Value {
 public:
  Value();
  Value(const Value& o);
  Value(Value&& o) noexcept : Value(static_cast<const Value&>(o)) {}
  Value(const TensorRef& r, Loc loc = Loc::current());
  template <Arithmetic T>
  Value(T v, Loc loc = Loc::current()) : Value(Operand(v, loc)) {}
  Value(const Operand& o);
  ~Value();

  Value& operator=(const Value& o);
  Value& operator=(Value&& o) { return *this = static_cast<const Value&>(o); }
  Value& operator=(const TensorRef& r);
  template <Arithmetic T>
  Value& operator=(T v) {
    return assign(Operand(v).node());
  }
  Value& operator+=(const Operand& o);
  Value& operator-=(const Operand& o);
  Value& operator*=(const Operand& o);
  Value& operator/=(const Operand& o);

  DType dtype() const;
  /// Number of dimensions (size-1 dims included).
  int dim() const;
  /// Converts to `dtype` (PyTorch `.to(dtype)`).
  Value to(DType dtype, Loc loc = Loc::current()) const;
  /// Adds size-1 dims: `v(ts::all, ts::newaxis)` is v[:, None] (up to 4 indices).
  Value operator()(const Index& a) const;
  Value operator()(const Index& a, const Index& b) const;
  Value operator()(const Index& a, const Index& b, const Index& c) const;
  Value operator()(const Index& a, const Index& b, const Index& c, const Index& d) const;

  /// The value with its dims reordered: dim i of the result is dim dims[i] of this one
  /// (PyTorch's Tensor.permute; negative dims count from the end). Throws UserError unless
  /// `dims` is a permutation of this value's dims. In registers it moves nothing (each
  /// element keeps its tile coordinates); a store of it converts layouts where that makes
  /// the memory access contiguous (README, "The language", Layouts).
  Value permute(const std::vector<int>& dims, Loc loc = Loc::current()) const;
  /// A 2-D value transposed (PyTorch's Tensor.t(), Helion's `.T`): permute({1, 0}); a 0-D
  /// or 1-D value is returned as it is (as PyTorch does). `out(tn, tm) = x(tm, tn).t();`
  /// writes x transposed. Throws UserError for more than 2 dims.
  Value t(Loc loc = Loc::current()) const;

  bool defined() const { return node_ != nullptr; }
  /// Names the current binding in generated code and dumps: `ts::Value row =
  /// x(tm, ts::all).to(ts::f32).named("row");` makes the CUDA array `row` instead of
  /// `v12` (a value carried through a loop takes its initial value's name). The name is
  /// made a valid, unique C identifier (README, "Reading generated code"); it changes no
  /// result and no cache key. Returns *this.
  Value& named(const std::string& name);
  /// The IR node of the current binding (inside loops: the loop-carried form).
  ir::Node* node() const { return node_at({}); }
  /// node(), used at `loc` (where an error about this variable points).
  ir::Node* node_at(SourceLoc loc) const;
  /// Internal: wraps a node created by tessel.
  static Value wrap(ir::Node* n);

 private:
  Value& assign(ir::Node* n);
  Value view(const std::vector<Index>& idx, SourceLoc loc) const;
  mutable ir::Node* node_ = nullptr;
  int depth_ = 0;       // loop depth where this variable was declared
  uint64_t trace_ = 0;  // the trace node_ belongs to (TraceContext::id)
  friend struct ValueAccess;
};

/// The loop variable of `ts::tile`: a range of indices [begin, end) of one dimension,
/// of static size block_size (the last tile of a dimension may be partial: masked).
class Tile {
 public:
  Tile(ir::Node* loop, int dim) : loop_(loop), dim_(dim) {}
  /// begin, begin+1, ..., begin+block_size-1 (shape [tile], dtype of the index).
  Value index(Loc loc = Loc::current()) const;
  /// First index (scalar).
  Value begin(Loc loc = Loc::current()) const;
  /// One past the last valid index: min(begin + block_size, loop end) (scalar).
  Value end(Loc loc = Loc::current()) const;
  /// The block size (a compile-time constant of the generated code; scalar).
  Value block_size(Loc loc = Loc::current()) const;
  /// begin / block_size: which tile of the loop this is (scalar).
  Value id(Loc loc = Loc::current()) const;
  ir::Node* loop() const { return loop_; }
  int loop_dim() const { return dim_; }

 private:
  ir::Node* loop_;
  int dim_;
};

/// One index of `x(i0, i1, ...)`: an integer, a scalar Value (grid index, size,
/// loaded scalar), a Tile (its range, masked at the ragged edge), ts::all, ts::newaxis,
/// or an integer tile Value (gather/scatter, masked to the dimension's extent).
/// A negative constant (a C++ integer written as the index, or a C++ integer parameter
/// of the kernel) counts from the end, as in PyTorch: x(t, -1) is x(t, x.size(1) - 1). An
/// index the kernel computes, or a ts::Value variable, does not. A scalar index computed
/// on the host (constants, scalar arguments, sizes) outside [0, size) is a UserError on
/// every call (PyTorch: IndexError); one computed on the device (a grid index, a loaded
/// scalar) is masked (reads 0, stores nothing), or reported with Settings::check_bounds.
class Index {
 public:
  Index(All, Loc loc = Loc::current());
  Index(NewAxis, Loc loc = Loc::current());
  Index(const Tile& t, Loc loc = Loc::current());
  Index(const Value& v, Loc loc = Loc::current());
  Index(const TensorRef& r, Loc loc = Loc::current());
  /// A multicast tensor used as an index: a UserError (index it to load its elements).
  Index(const MulticastTensor& t, Loc loc = Loc::current());
  template <std::integral T>
  Index(T v, Loc loc = Loc::current()) : Index(Value(v, loc), loc) {}

  enum Kind : uint8_t { all_k, newaxis_k, tile_k, value_k };
  Kind kind;
  ir::Node* node = nullptr;  // tile_k: loop node; value_k: value node
  int tile_dim = 0;
  SourceLoc loc;
};

/// A size of a new tensor or tile: an integer or a scalar integer Value (e.g. x.size(0)).
class Extent {
 public:
  template <std::integral T>
  Extent(T v, Loc loc = Loc::current()) : value_(Value(v, loc)) {}
  Extent(const Value& v) : value_(v) {}
  const Value& value() const { return value_; }

 private:
  Value value_;
};

/// A tunable block size shared by several loops, declared in host code with
/// ts::register_block_size (Helion: hl.register_block_size). Pass it as a loop's block
/// size: `ts::tile(n, {.block_size = bs})`, or as a dimension of a tile constructor
/// (`ts::zeros({tm, bs})`, see TileDim).
struct BlockSize {
  int id = -1;  // index into Config::block_sizes
};

/// A dimension of a device-side tile constructor (ts::zeros, ts::full): a Tile (its
/// block), an integer/size (an extent padded to the next power of two, masked), or a
/// BlockSize: a dimension of that many elements, all valid, that lines up with the tiles
/// of every loop using the BlockSize (Helion: `hl.zeros([tile_m, block_size_n])`). Such a
/// value can be carried across a loop's tiles: combined with one of those tiles, element j
/// of one meets element j of the other and the result keeps the BlockSize dimension, so
/// `acc = acc + x(tm, tn)` accumulates per position within the block (a tile's elements
/// past the loop's end are what they were computed as, e.g. 0 for a load: mask them with
/// ts::where when they matter, as in Helion). Reduce it after the loop: `ts::sum(acc, 1)`.
class TileDim {
 public:
  TileDim(const Tile& t) : tile_(t), kind_(tile_k) {}
  template <std::integral T>
  TileDim(T v, Loc loc = Loc::current()) : extent_(Value(v, loc)) {}
  TileDim(const Value& v) : extent_(v) {}
  TileDim(BlockSize b) : block_(b), kind_(block_k) {}
  bool is_tile() const { return kind_ == tile_k; }
  bool is_block() const { return kind_ == block_k; }
  const Tile& tile() const { return tile_; }
  const Value& extent() const { return extent_; }
  BlockSize block() const { return block_; }

 private:
  enum Kind : uint8_t { extent_k, tile_k, block_k };
  Tile tile_{nullptr, 0};
  Value extent_;
  BlockSize block_;
  Kind kind_ = extent_k;
};

/// A kernel argument or a tensor allocated in host code (global memory).
class Tensor {
 public:
  /// Internal: wraps a tensor node of the trace being recorded.
  explicit Tensor(ir::Node* n);
  /// Size of dimension d (negative counts from the end): a host i64 scalar.
  Value size(int d, Loc loc = Loc::current()) const;
  /// Stride of dimension d in elements: a host i64 scalar.
  Value stride(int d, Loc loc = Loc::current()) const;
  int dim() const;
  DType dtype() const;
  /// Indexing: reading emits a load where it is used, assigning emits a store. Up to 6
  /// indices (each converted at the call site, so errors name the caller's line).
  TensorRef operator()() const;
  TensorRef operator()(Index a) const;
  TensorRef operator()(Index a, Index b) const;
  TensorRef operator()(Index a, Index b, Index c) const;
  TensorRef operator()(Index a, Index b, Index c, Index d) const;
  TensorRef operator()(Index a, Index b, Index c, Index d, Index e) const;
  TensorRef operator()(Index a, Index b, Index c, Index d, Index e, Index f) const;
  /// Element 0 of a one-element integer tensor, read on the GPU inside the kernel (never
  /// copied to the host): usable as a loop bound.
  Value item(Loc loc = Loc::current()) const;
  /// Host allocations on this tensor's device (PyTorch's Tensor.new_*); new_empty's
  /// memory is uninitialised, as ts::empty's (below).
  Tensor new_empty(std::vector<Extent> shape, Loc loc = Loc::current()) const;
  Tensor new_empty(std::vector<Extent> shape, DType dtype, Loc loc = Loc::current()) const;
  Tensor new_zeros(std::vector<Extent> shape, Loc loc = Loc::current()) const;
  Tensor new_zeros(std::vector<Extent> shape, DType dtype, Loc loc = Loc::current()) const;
  Tensor new_full(std::vector<Extent> shape, double value, Loc loc = Loc::current()) const;
  Tensor new_full(std::vector<Extent> shape, double value, DType dtype,
                  Loc loc = Loc::current()) const;
  /// Names this tensor in generated code and dumps (its pointer, sizes and strides:
  /// `out`, `out_size0`, `out_stride0` instead of `buf5`, ...):
  /// `ts::Tensor out = ts::empty_like(x).named("out");`. Kernel parameters are named by
  /// ts::kernel's parameter names (kernel.hpp). Made a valid, unique C identifier; it
  /// changes no result and no cache key. Returns this tensor.
  Tensor named(const std::string& name) const;
  ir::Node* node() const { return node_at({}); }
  /// node(), used at `loc`. Errors: UserError (at `loc`) for a Tensor kept from another
  /// trace (an earlier call, or another kernel).
  ir::Node* node_at(SourceLoc loc) const;

 private:
  ir::Node* node_;
  uint64_t trace_ = 0;  // the trace that made it (frontend::TraceContext::id)
};

/// `x(i, t)`: a reference to the indexed elements of a Tensor.
class TensorRef {
 public:
  TensorRef(ir::Node* tensor, std::vector<Index> idx, SourceLoc loc)
      : tensor_(tensor), idx_(std::move(idx)), loc_(loc) {}
  TensorRef(const TensorRef&) = default;
  /// Store: `out(i, t) = v;` (v broadcasts to the indexed shape; converted to the
  /// tensor's dtype).
  TensorRef& operator=(const Operand& v);
  TensorRef& operator=(const TensorRef& r);
  TensorRef& operator+=(const Operand& v);
  TensorRef& operator-=(const Operand& v);
  TensorRef& operator*=(const Operand& v);
  /// Loads and converts: `x(t).to(ts::f32)`.
  Value to(DType dtype, Loc loc = Loc::current()) const;
  /// Loads, then reorders dims as Value::permute and Value::t do: `x(tm, tn).t()`.
  Value permute(const std::vector<int>& dims, Loc loc = Loc::current()) const;
  Value t(Loc loc = Loc::current()) const;
  /// Loads, then adds size-1 dims as Value::operator() does: `a(tm, tk)(ts::all, ts::all,
  /// ts::newaxis)` is the loaded [tm, tk] tile as [tm, tk, 1] (same as a(tm, tk, ts::newaxis)).
  Value operator()(const Index& a) const;
  Value operator()(const Index& a, const Index& b) const;
  Value operator()(const Index& a, const Index& b, const Index& c) const;
  Value operator()(const Index& a, const Index& b, const Index& c, const Index& d) const;
  /// Emits the load (at the user's line `loc`).
  ir::Node* load(SourceLoc loc) const;

 private:
  void store(ir::Node* value, SourceLoc loc);
  ir::Node* tensor_;
  std::vector<Index> idx_;
  SourceLoc loc_;
};

/// A multicast tensor (Helion: hl.multicast_like): a virtual stack of equally shaped
/// buffers (symmetric memory: the shape, strides and dtype of `example`), one per device
/// address in a u64 tile value `dev_ptrs`. It is not NVLink multicast: each buffer is read
/// and written through its own ordinary pointer. Made inside a device loop by
/// ts::multicast_like; only memory operations use it (indexing it as `example` would be
/// indexed). A load `bufs(i...)` has shape dev_ptrs' shape followed by the indexed shape
/// (2-D dev_ptrs and a 3-D example indexed by three tiles give 5 dims): element [s..., e...]
/// is element e of the buffer at dev_ptrs[s...], that is, the address dev_ptrs[s...] plus
/// the example's strides times the indices, in elements of its dtype (Helion's
/// StackIndexingStrategy). A store `bufs(i...) = v` writes the reverse (v of that full
/// shape unstacks, one slice per buffer), or broadcasts a v without the leading dims to
/// every buffer (`bufs(t) = x_tile(ts::newaxis, ts::all)`). Masks apply in both the pointer
/// dims (dev_ptrs(tile) at a ragged edge: those buffers are not touched) and the tensor
/// dims, as for an ordinary tensor. Used as a value, an index or a bound it is a
/// UserError. The addresses must be of memory the launching device can access: on the
/// GPU, of that GPU or of a peer with peer access enabled (ts::SymmetricBuffer gives
/// such buffers); on the CPU interpreter, of live host memory of tessel Buffers (else a
/// UserError at the access; on a GPU a bad address faults, as in Triton).
class MulticastTensor {
 public:
  /// Internal: wraps a Multicast node of the trace being recorded.
  explicit MulticastTensor(ir::Node* n);
  /// The example's rank and dtype (of every buffer).
  int dim() const;
  DType dtype() const;
  /// Indexing, as Tensor::operator(): reading loads, assigning stores.
  TensorRef operator()() const;
  TensorRef operator()(Index a) const;
  TensorRef operator()(Index a, Index b) const;
  TensorRef operator()(Index a, Index b, Index c) const;
  TensorRef operator()(Index a, Index b, Index c, Index d) const;
  TensorRef operator()(Index a, Index b, Index c, Index d, Index e) const;
  TensorRef operator()(Index a, Index b, Index c, Index d, Index e, Index f) const;
  /// The Multicast node, used at `loc`. Errors: UserError outside the loop that made it.
  ir::Node* node_at(SourceLoc loc) const;

 private:
  ir::Node* node_;
  ir::Node* loop_;      // the innermost loop open where it was made
  uint64_t trace_ = 0;  // the trace that made it
};

/// Makes a multicast tensor inside a device loop (Helion: hl.multicast_like(example,
/// dev_ptrs)). `example`: a tensor argument or allocation giving the buffers' shape,
/// strides and dtype (usually the local buffer of a ts::SymmetricBuffer); `dev_ptrs`: a u64
/// tile value of device addresses of any rank, loaded inside the loop (`dev_ptrs(ts::all)`,
/// `dev_ptrs(ts::all, ts::all)`, `dev_ptrs(tm)`). Errors: UserError (at this line) outside a
/// device loop, for a dev_ptrs value that is not u64 (addresses are ts::u64, as
/// torch.uint64 in Helion), or for a tensor passed as dev_ptrs without indexing it.
MulticastTensor multicast_like(const Tensor& example, const Operand& dev_ptrs,
                               Loc loc = Loc::current());
MulticastTensor multicast_like(const Tensor& example, const Tensor& dev_ptrs,
                               Loc loc = Loc::current());

// ---- elementwise operators (PyTorch semantics: promotion, true division) ----
Value operator+(const Operand& a, const Operand& b);
Value operator-(const Operand& a, const Operand& b);
Value operator*(const Operand& a, const Operand& b);
/// True division (ints promote to f32), as torch.div.
Value operator/(const Operand& a, const Operand& b);
/// Remainder with the sign of the divisor, as torch.remainder / Python %.
Value operator%(const Operand& a, const Operand& b);
Value operator-(const Operand& a);
Value operator<(const Operand& a, const Operand& b);
Value operator<=(const Operand& a, const Operand& b);
Value operator>(const Operand& a, const Operand& b);
Value operator>=(const Operand& a, const Operand& b);
Value operator==(const Operand& a, const Operand& b);
Value operator!=(const Operand& a, const Operand& b);
/// Logical ops on bool values (non-bool operands are compared with 0).
Value operator&&(const Operand& a, const Operand& b);
Value operator||(const Operand& a, const Operand& b);
Value operator!(const Operand& a);
/// Bitwise ops on integers; on bool they are the logical ops (as in PyTorch).
Value operator&(const Operand& a, const Operand& b);
Value operator|(const Operand& a, const Operand& b);
Value operator^(const Operand& a, const Operand& b);
Value operator~(const Operand& a);

/// Floor division, as torch.floor_divide / Python //.
Value floordiv(const Operand& a, const Operand& b);
Value maximum(const Operand& a, const Operand& b);
Value minimum(const Operand& a, const Operand& b);
/// a ** b (float result for float operands; integer for integer operands).
Value pow(const Operand& a, const Operand& b);
/// cond ? a : b elementwise (cond is converted to bool).
Value where(const Operand& cond, const Operand& a, const Operand& b);
Value cast(const Operand& a, DType dtype);

// Math (float results: integer inputs promote to f32, as in PyTorch).
Value exp(const Operand& a);
Value exp2(const Operand& a);
Value log(const Operand& a);
Value log2(const Operand& a);
Value sqrt(const Operand& a);
Value rsqrt(const Operand& a);
Value abs(const Operand& a);
Value sin(const Operand& a);
Value cos(const Operand& a);
Value tanh(const Operand& a);
Value sigmoid(const Operand& a);
Value erf(const Operand& a);
Value floor(const Operand& a);
Value ceil(const Operand& a);

// Reductions over dimension `dim` of a tile value (negative counts from the end).
// The accumulation dtype of f16/bf16 sums is f32 (the result is rounded back), as torch.
Value sum(const Operand& a, int dim, bool keepdim = false, Loc loc = Loc::current());
Value mean(const Operand& a, int dim, bool keepdim = false, Loc loc = Loc::current());
Value max(const Operand& a, int dim, bool keepdim = false, Loc loc = Loc::current());
Value min(const Operand& a, int dim, bool keepdim = false, Loc loc = Loc::current());
Value prod(const Operand& a, int dim, bool keepdim = false, Loc loc = Loc::current());
/// Index (i64) of the first maximum/minimum along dim.
Value argmax(const Operand& a, int dim, bool keepdim = false, Loc loc = Loc::current());
Value argmin(const Operand& a, int dim, bool keepdim = false, Loc loc = Loc::current());
Value any(const Operand& a, int dim, bool keepdim = false, Loc loc = Loc::current());
Value all_of(const Operand& a, int dim, bool keepdim = false, Loc loc = Loc::current());

// ---- matrix products ----
/// Matrix product of two tile values (Helion's hl.dot, Triton's tl.dot): a [M, K] times
/// b [K, N] is [M, N]; batched, a [B, M, K] times b [B, K, N] is [B, M, N]. Both operands
/// have one dtype, f16, bf16, f32, f8e4m3, f8e5m2 or i8 (cast one otherwise); K is the same dim
/// of both (the same tile, `x(tm, tk)` and `y(tk, tn)` or `w(tn, tk).t()`, or two whole dims
/// of equal size; where the tile loop runs over one operand's size, the other's K size must
/// equal it on each call). The products are summed in f32 (f16, bf16 and 8-bit products are
/// exact in f32; wgmma adds 8-bit products with fewer bits, so each tile of K's sum is
/// added into f32 unless Settings::fast_accum); f32 operands are first
/// truncated as Settings::dot_precision says (TF32 by default, as Triton and Helion). The
/// result is f32, or `out_dtype`: the product is rounded to it before anything is added
/// (Helion's out_dtype, "the output type of the multiplication prior to any
/// accumulation"). i8 operands multiply and sum in i32, wrapping modulo 2^32 (torch._int_mm,
/// Triton's int8 tl.dot): the result is i32, out_dtype may only be i32 and acc must be i32;
/// on sm_90 they run on wgmma (s8, K's block a multiple of 128 as for the 8-bit floats; an
/// operand not contiguous along K copied K-major as below), else on mma.sync m16n8k32 as
/// the 8-bit floats (both operands contiguous along K, K's block a multiple of 32), else on
/// the CUDA cores.
/// With `acc`, the result is acc + the product, in acc's dtype (a K loop:
/// `acc = ts::dot(x(tm, tk), y(tk, tn), acc);` with an f32 acc; an out_dtype there rounds
/// each partial product). Lowering (src/passes/contractions.hpp): where both operands are
/// loads made in the loop of the dot (seen through casts and views), the [M, K, N] product
/// is never held; on the GPU it then runs on tensor cores (mma.sync, sm_80 and later) for
/// f16, bf16 and TF32 operands (both of one kind; 8-bit ones too, both contiguous along K,
/// on m16n8k32) whose block sizes fit the instruction
/// (2-D products, or batched ones whose batch tile has block size 1, `ts::tile(B, M, N,
/// {.block_size = {1, 0, 0}})`, which each program multiplies as 2-D: passes/unit_tiles.hpp;
/// M's block a multiple of 16 per row of warps and N's of 8 per column of
/// warps for some split of num_warps, K's of 16, 8 for TF32, 32 for 8-bit), else on the CUDA cores;
/// TESSEL_DUMP_DIR's layout stage says which ("on tensor cores"). On sm_90, f16 and bf16
/// dots whose tiles the TMA can copy (rows 16-byte aligned, the dot's loads at the top of
/// the loop over K) with num_warps a multiple of 4, M's block 64 per warpgroup of 4 warps
/// (or a multiple), N's at most 256 and K's a multiple of 64 run on wgmma instead (TF32
/// too, K's block a multiple of 32, and 8-bit operands, K's block a multiple of 128; wgmma
/// reads those K-major only, so an operand not contiguous along K, as a row-major y, is
/// copied K-major by the threads tile by tile: 0.57 of cuBLAS for TF32 against 0.97 for
/// x w^T with w [N, K]), their operands copied into a ring of num_stages buffers
/// (src/passes/tensor_cores.hpp): the fastest path (128 x 256 x 64 or 256 x 128 x 64 on 8
/// warps, 3 or 4 stages, for large matrices). A computed operand (`ts::dot(p,
/// v(tk, tn))` with p = exp(...)) holds the whole product in registers: small tiles only (a config
/// past the register budget is a UserError naming the dot). Errors (UserError at this line):
/// operands of other ranks or dtypes, K or batch dims that differ (K sizes: on the call),
/// a non-float `out_dtype` or
/// accumulator (i8 operands: other than i32), an accumulator that does not broadcast to the
/// product's shape.
Value dot(const Operand& a, const Operand& b, std::optional<DType> out_dtype = std::nullopt,
          Loc loc = Loc::current());
Value dot(const Operand& a, const Operand& b, const Operand& acc,
          std::optional<DType> out_dtype = std::nullopt, Loc loc = Loc::current());

/// The id of the program (CTA) running this code, in [0, number of programs): blockIdx.x
/// of the launch (Triton: tl.program_id(0)). In a persistent kernel one program runs many
/// tiles. The interpreter runs one program per tile and gives the tile's flat index.
Value program_id(Loc loc = Loc::current());

// ---- device-side tile constructors (inside loops) ----
/// A tile of the given shape filled with 0 / `value`.
Value zeros(std::vector<TileDim> shape, DType dtype = DType::f32, Loc loc = Loc::current());
Value full(std::vector<TileDim> shape, double value, DType dtype = DType::f32,
           Loc loc = Loc::current());
/// 0, 1, ..., n-1 (shape [n], padded to the next power of two and masked). Errors
/// (UserError at this line): dtype i8 with an extent past 128, i32 past 2^31; dtype bool
/// or an 8-bit float (torch.arange has neither).
Value arange(const Extent& n, DType dtype = DType::i32, Loc loc = Loc::current());

// ---- host-side allocations (outside loops, on the device of the first tensor arg) ----
/// Row-major (contiguous) tensors, except that zeros_like, empty_like and full_like of a
/// tensor argument (or of an allocation like one) take its layout on each call, as
/// torch's preserve_format: its strides when it is dense and non-overlapping (a transposed
/// argument gives a transposed result), else dense strides in its order of dims.
/// empty, empty_like and new_empty leave the memory uninitialised (PyTorch's empty): on a
/// GPU it holds garbage. The interpreter, whose allocations are zeroed, raises a UserError
/// at a read (load, atomic, wait, device scalar) of such an element before a write to it.
Tensor empty(std::vector<Extent> shape, DType dtype, Loc loc = Loc::current());
Tensor zeros_like(const Tensor& t, Loc loc = Loc::current());
Tensor empty_like(const Tensor& t, Loc loc = Loc::current());
Tensor full_like(const Tensor& t, double value, Loc loc = Loc::current());

/// `ts::load(t)` on a one-element integer tensor in host code: its value, read on the
/// GPU inside the kernel (same as t.item()). Inside loops, index the tensor (`t(i...)`) to
/// load elements.
Value load(const Tensor& t, Loc loc = Loc::current());

// ---- atomics, signals and waits (inside loops) ----
/// What an atomic, signal or wait updates: a ts::Tensor, or a ts::MulticastTensor (every
/// buffer of the stack: Helion's hl.atomic_* / hl.signal / hl.wait on a multicast tensor).
/// On a multicast tensor the indexed shape is dev_ptrs' shape followed by the indexed
/// shape of one buffer (as a multicast load's), the operands broadcast to that full shape
/// (as a multicast store's value: a value without the leading dims reaches every buffer)
/// and the returned old values have it; masked buffers (dev_ptrs at a ragged edge) are not
/// touched.
class Target {
 public:
  Target(const Tensor& t) : tensor_(&t) {}              // NOLINT: implicit by design
  Target(const MulticastTensor& m) : multicast_(&m) {}  // NOLINT: implicit by design
  /// The tensor's (or Multicast) node, used at `loc` (the tensor's own errors).
  ir::Node* node_at(SourceLoc loc) const;

 private:
  const Tensor* tensor_ = nullptr;
  const MulticastTensor* multicast_ = nullptr;
};

// Helion's hl.atomic_* (helion.language.atomic_ops): `target(index...)` is addressed as a
// load or store is (tiles, ts::all, scalars, gathers; masked at ragged edges and outside
// the tensor), each operand broadcasts to the indexed shape and is converted to the
// target's dtype, and every indexed element is updated atomically exactly once, however
// the program's threads hold the values (docs/DECISIONS.md). Returns the previous values,
// a Value of the indexed shape and the target's dtype (0 where masked off). Several
// programs may update one element: that is what atomics are for (no race error).
// `sem` orders the program's other memory accesses around the update (default relaxed,
// as Helion); `scope` says which threads it is atomic with (default gpu).
// Dtypes: add on i32, i64, u64, f16, bf16 (atom.add.bf16 from sm_90; a compare-and-swap
// loop before, rounding the same), f32, f64 (floats round to nearest even); max, min, and, or, xor,
// xchg, cas on i32, i64, u64 (max/min of u64 compare unsigned). Errors: UserError at the call's
// line for another dtype (bool, i8, the 8-bit floats, float max/min, ...), host code, or indices
// that a load would refuse.
Value atomic_add(const Target& target, std::vector<Index> index, const Operand& value,
                 Sem sem = Sem::relaxed, Scope scope = Scope::gpu, Loc loc = Loc::current());
Value atomic_max(const Target& target, std::vector<Index> index, const Operand& value,
                 Sem sem = Sem::relaxed, Scope scope = Scope::gpu, Loc loc = Loc::current());
Value atomic_min(const Target& target, std::vector<Index> index, const Operand& value,
                 Sem sem = Sem::relaxed, Scope scope = Scope::gpu, Loc loc = Loc::current());
Value atomic_and(const Target& target, std::vector<Index> index, const Operand& value,
                 Sem sem = Sem::relaxed, Scope scope = Scope::gpu, Loc loc = Loc::current());
Value atomic_or(const Target& target, std::vector<Index> index, const Operand& value,
                Sem sem = Sem::relaxed, Scope scope = Scope::gpu, Loc loc = Loc::current());
Value atomic_xor(const Target& target, std::vector<Index> index, const Operand& value,
                 Sem sem = Sem::relaxed, Scope scope = Scope::gpu, Loc loc = Loc::current());
/// Replaces each element by `value`.
Value atomic_xchg(const Target& target, std::vector<Index> index, const Operand& value,
                  Sem sem = Sem::relaxed, Scope scope = Scope::gpu, Loc loc = Loc::current());
/// Where an element equals `expected`, replaces it by `value` (one attempt; Helion's
/// argument order: expected, then value). Returns the previous values: equal to
/// `expected` where the exchange happened.
Value atomic_cas(const Target& target, std::vector<Index> index, const Operand& expected,
                 const Operand& value, Sem sem = Sem::relaxed, Scope scope = Scope::gpu,
                 Loc loc = Loc::current());

/// Sets each indexed element of integer signal pad `pad` (i32, i64 or u64) to `signal` (a
/// number, or a Value broadcasting to the indexed shape, as wait_for and update may be)
/// with release order, after every thread of the program finished its earlier memory
/// accesses (Helion's hl.signal, op "set"). With `wait_for`, each element is first waited
/// for to equal `wait_for` and then exchanged (a compare-and-swap retried until it
/// succeeds). Returns the previous values (a Value of the indexed shape).
/// Errors: UserError for a pad of another dtype, host code, bad indices.
Value signal(const Target& pad, std::vector<Index> index, const Operand& signal = 1,
             std::optional<Operand> wait_for = std::nullopt, Scope scope = Scope::gpu,
             Loc loc = Loc::current());
/// Waits until each indexed element of integer signal pad `pad` (i32, i64, u64) equals
/// `signal`, with acquire order; with `update`, then replaces it by `update` atomically
/// (a compare-and-swap retried until it succeeds). Every thread of the program continues
/// after the whole wait (Helion's hl.wait). On the GPU a wait spins (acquire loads with a
/// bounded backoff): the programs it waits for must be running at the same time (a grid
/// no larger than what fits the GPU at once, or a persistent kernel), or it never ends.
/// The interpreter runs the programs of a kernel that waits concurrently and raises a
/// UserError naming the kernel, the line and the pad element when no program can satisfy
/// a wait any more. Errors: UserError for a pad of another dtype, host code, bad indices.
void wait(const Target& pad, std::vector<Index> index, const Operand& signal = 1,
          std::optional<Operand> update = std::nullopt, Scope scope = Scope::gpu,
          Loc loc = Loc::current());

// ---- loops ----
/// A loop bound: an integer, a scalar integer Value (size, device scalar), a
/// one-element integer Tensor in device memory (read in the kernel), or a braced
/// [begin, end) pair `{b, e}`.
class Bound {
 public:
  template <std::integral T>
  Bound(T end, Loc loc = Loc::current()) : end_(Value(end, loc)), loc_(SourceLoc::from(loc)) {}
  Bound(const Value& end, Loc loc = Loc::current());
  Bound(const TensorRef& end, Loc loc = Loc::current());
  Bound(const Tensor& end, Loc loc = Loc::current());
  Bound(const Operand& begin, const Operand& end);
  const Value& begin() const { return begin_; }
  const Value& end() const { return end_; }
  SourceLoc loc() const { return loc_; }

 private:
  Value begin_, end_;
  SourceLoc loc_;
};

/// Declares a block size tuned within [min, max] (powers of two; max 0 = no limit). It
/// takes the next Config::block_sizes entry (entries are numbered in the order they are
/// created while tracing). Host code only. Errors: UserError inside a loop, for min > max,
/// or for a range that holds no power of two.
BlockSize register_block_size(int64_t min = 1, int64_t max = 0, Loc loc = Loc::current());

/// Declares `size` (a host integer, e.g. x.size(1)) as a reduction dimension: values
/// indexed with ts::all over it may be reduced in chunks chosen by
/// Config::reduction_loops (Helion: hl.register_reduction_dim). Returns `size`, usable as
/// a tile dimension (`ts::zeros({tm, n})`).
Value register_reduction_dim(const Value& size, Loc loc = Loc::current());

/// Declares a user tunable named `name` with the given choices (Helion:
/// hl.register_tunable) and returns its value for this trace: a compile-time constant
/// (i64 scalar) equal to the config's choice (Config::tunables[name]), or the first
/// choice when the config does not set it. The autotuner tries every choice (tracing
/// the kernel again for each assignment it measures). Usable in host code and inside
/// loops; declaring the same name again with the same choices returns the same value.
/// Errors: UserError for an empty name or choice list, repeated choices, a name declared
/// again with other choices, or a config value that is not one of the choices.
Value register_tunable(const std::string& name, std::vector<int64_t> choices,
                       Loc loc = Loc::current());

/// Block sizes for ts::tile: one per dimension, or one for all; 0 = tuned; or a shared
/// tunable BlockSize.
struct BlockSizes {
  std::vector<int64_t> sizes;
  std::vector<int> shared;  // BlockSize ids, one per dimension (or one for all)
  BlockSizes() = default;
  BlockSizes(int64_t all) : sizes{all} {}
  BlockSizes(std::initializer_list<int64_t> s) : sizes(s) {}
  BlockSizes(BlockSize b) : shared{b.id} {}
  BlockSizes(std::initializer_list<BlockSize> b) {
    for (BlockSize x : b) shared.push_back(x.id);
  }
};
struct TileOptions {
  BlockSizes block_size;
};

namespace detail {
/// Range-for protocol of ts::tile / ts::grid. begin() opens the loop region (records a
/// Loop node); the iterator's ++ closes it; leaving the body early (break, return,
/// goto) is a user error reported at the loop's line.
class LoopRangeBase {
 public:
  LoopRangeBase(bool is_tile, std::vector<Bound> bounds, TileOptions opts, Loc loc);
  LoopRangeBase(const LoopRangeBase&) = delete;
  ~LoopRangeBase();
  ir::Node* open();
  void close();
  bool closed() const { return closed_; }
  ir::Node* loop() const { return loop_; }

 private:
  bool is_tile_;
  std::vector<Bound> bounds_;
  TileOptions opts_;
  SourceLoc loc_;
  ir::Node* loop_ = nullptr;
  bool closed_ = false;
  int uncaught_ = 0;
};

Value grid_index(ir::Node* loop, int dim);

template <int N, bool IsTile>
class LoopRange : public LoopRangeBase {
 public:
  using LoopRangeBase::LoopRangeBase;
  using Elem = std::conditional_t<IsTile, Tile, Value>;
  using Deref = std::conditional_t<N == 1, Elem, std::array<Elem, N>>;
  struct Sentinel {};
  struct Iterator {
    LoopRange* r;
    bool operator!=(Sentinel) const { return !r->closed(); }
    void operator++() { r->close(); }
    Deref operator*() const {
      auto make = [&](int d) -> Elem {
        if constexpr (IsTile)
          return Tile(r->loop(), d);
        else
          return grid_index(r->loop(), d);
      };
      if constexpr (N == 1) {
        return make(0);
      } else {
        return [&]<size_t... I>(std::index_sequence<I...>) {
          return Deref{make(static_cast<int>(I))...};
        }
        (std::make_index_sequence<N>{});
      }
    }
  };
  Iterator begin() {
    open();
    return Iterator{this};
  }
  Sentinel end() { return {}; }
};
}  // namespace detail

/// `for (auto t : ts::tile(n))`: iterate over tiles of [0, n) (or [b, e)), one program
/// per tile at the top level, a sequential device loop when nested. Several bounds give
/// several dimensions: `for (auto [tm, tn] : ts::tile(m, n))`. Block sizes come from the
/// Config unless fixed in `opts`. Helion: hl.tile.
detail::LoopRange<1, true> tile(Bound a, TileOptions opts = {}, Loc loc = Loc::current());
detail::LoopRange<2, true> tile(Bound a, Bound b, TileOptions opts = {}, Loc loc = Loc::current());
detail::LoopRange<3, true> tile(Bound a, Bound b, Bound c, TileOptions opts = {},
                                Loc loc = Loc::current());
/// `for (auto i : ts::grid(n))`: iterate over single indices (a scalar Value).
/// Helion: hl.grid.
detail::LoopRange<1, false> grid(Bound a, Loc loc = Loc::current());
detail::LoopRange<2, false> grid(Bound a, Bound b, Loc loc = Loc::current());
detail::LoopRange<3, false> grid(Bound a, Bound b, Bound c, Loc loc = Loc::current());

}  // namespace tessel
