// tessel's IR: one kernel is a host Block (code run on each call: sizes, allocations,
// launches) whose top-level Loop nodes are device loop nests (one launch each).
//
// Nodes are SSA values with one result. A Node's kind is one of TESSEL_IR_OPS below;
// elementwise math is one Unary/Binary kind with a function from TESSEL_UNARY_FNS /
// TESSEL_BINARY_FNS. Shapes are symbolic: a dimension is a Sym (a tile's block, or a
// `ts::all` extent) or 1 (nullptr). Two different Syms never unify.
//
// Example (seed 000 f2, printed by ir::print without names and abridged; ir/parser.hpp
// gives the grammar and reads it back):
//   kernel f2
//     index_dtype i64 forced
//     block_size 0
//     sym t0 loop %14 dim 0 block 0
//     %0 = arg 0 : f32 tensor rank 2
//     %1 = arg 1 : i32 tensor rank 1
//     %5 = alloc %3, %4 : f32 tensor rank 2
//     %7 = device_scalar %1, %6 : i32
//     %12 = device_scalar %2, %11 : i32
//     %9 = loop persistent grid(%8..%7) {            // top-level loop: one launch
//       %10 = loop_index %9 dim 0 : i64
//       %14 = loop tile(%13..%12) as t0 block 0 {
//         %17 = load %0[%10, tile %14 as t0] #0 : f32[t0]
//         %19 = binary add %17, %18 : f32[t0]
//         %20: store %5[%10, tile %14 as t0] = %19   // `%N:` a node without a value
//       }
//     }
//     %21: return %5
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tessel/dtype.hpp"
#include "tessel/error.hpp"
#include "tessel/memory_order.hpp"

namespace tessel::ir {

// clang-format off
/// Every node kind, listed once. X(name, "printed name")
#define TESSEL_IR_OPS(X)                                                                   \
  /* host region */                                                                        \
  X(Arg, "arg")                 /* kernel argument: tensor or scalar; ival = position */   \
  X(Size, "size")               /* args[0] tensor, ival = dim: host i64 scalar */          \
  X(Stride, "stride")           /* args[0] tensor, ival = dim: host i64 scalar */          \
  X(Alloc, "alloc")             /* args = shape (host i64 scalars); fval = fill, ival = fill kind */ \
  X(DeviceScalar, "device_scalar") /* args[0] tensor, args[1..] = index: element read on the GPU */ \
  X(ShapeCheck, "shape_check")  /* host sizes: ival 0: args[0] == args[1]; ival 1: args[0] >= args[1] \
                                   (ir/host_eval.hpp check_shape); else a user error on call */ \
  X(Return, "return")           /* args = returned tensors */                              \
  /* scalars and tiles */                                                                  \
  X(Const, "const")             /* ival or fval, dtype */                                  \
  X(Unary, "unary")             /* fn = UnaryFn */                                         \
  X(Binary, "binary")           /* fn = BinaryFn */                                        \
  X(Where, "where")             /* args = cond, a, b */                                    \
  X(Cast, "cast")               /* args[0] converted to dtype */                           \
  X(Full, "full")               /* tile of shape filled with args[0] (a scalar) */         \
  X(Arange, "arange")           /* 0..n-1 along sym shape[0] (a ts::all extent or tile) */ \
  X(View, "view")               /* args[0] with size-1 dims inserted/removed (newaxis) */  \
  X(Permute, "permute")         /* args[0] with its dims reordered: ir::permutation(n) */  \
  X(Reduce, "reduce")           /* args[0] reduced over axis ival; fn = ReduceFn */        \
  /* memory */                                                                             \
  X(Load, "load")               /* args[0] tensor, args[1..] = Index values; see Access */ \
  X(Store, "store")             /* args[0] tensor, args[1] value, args[2..] = indices */   \
  X(Atomic, "atomic")           /* args[0] tensor, args[1..ival] operands (value; cas: expected, \
                                   value), then indices; fn = AtomicFn, sem, scope: old values */ \
  X(Signal, "signal")           /* args[0] pad, args[1] signal, [args[2] wait_for] (ival = 1 or 2 \
                                   operands), then indices; release: old values */       \
  X(Wait, "wait")               /* args[0] pad, args[1] signal, [args[2] update] (ival operands), \
                                   then indices: spins until each element == signal; acquire */ \
  X(Multicast, "multicast_like") /* args[0] example tensor, args[1] dev_ptrs (u64 value): a \
                                   stack of buffers shaped like args[0]; only memory ops use it */ \
  /* loops */                                                                              \
  X(Loop, "loop")               /* tile/grid loop nest level, body in `body` */            \
  X(LoopIndex, "loop_index")    /* grid index of args[0]=loop, ival = dim (scalar) */      \
  X(TileIndex, "tile_index")    /* begin + arange of tile (loop args[0], dim ival): [sym] */ \
  X(TileBegin, "tile_begin")    /* first index of the tile (scalar) */                     \
  X(TileEnd, "tile_end")        /* one past the last valid index of the tile (scalar) */   \
  X(TileBlock, "tile_block")    /* the tile's block size (scalar) */                       \
  X(TileId, "tile_id")          /* begin / block size (scalar) */                          \
  X(ProgramId, "program_id")    /* the running program (CTA) of the launch (scalar) */     \
  X(Carried, "carried")         /* loop-carried value inside a body; args[0] = the loop */ \
  X(Yield, "yield")             /* last node of a body with carried values: args = next */ \
  X(LoopResult, "loop_result")  /* value of carried ival after args[0]=loop */
// clang-format on

enum class Op : uint8_t {
#define TESSEL_X(name, str) name,
  TESSEL_IR_OPS(TESSEL_X)
#undef TESSEL_X
};
const char* op_name(Op op);

// clang-format off
/// Unary elementwise functions. X(name, "printed", float_only)
#define TESSEL_UNARY_FNS(X)                                                        \
  X(neg, "neg", false) X(abs, "abs", false) X(logical_not, "not", false)           \
  X(bit_not, "bit_not", false)                                                     \
  X(exp, "exp", true) X(log, "log", true) X(sqrt, "sqrt", true) X(rsqrt, "rsqrt", true) \
  X(sin, "sin", true) X(cos, "cos", true) X(tanh, "tanh", true)                    \
  X(sigmoid, "sigmoid", true) X(exp2, "exp2", true) X(log2, "log2", true)          \
  X(floor, "floor", false) X(ceil, "ceil", false) X(erf, "erf", true)              \
  X(tf32, "tf32", true)  /* truncated to TF32 (ts::dot's operands) */

/// Binary elementwise functions. X(name, "printed", kind) kind: a = arithmetic,
/// c = comparison (bool result), l = logical (bool operands), b = bitwise (ints)
#define TESSEL_BINARY_FNS(X)                                                       \
  X(add, "add", 'a') X(sub, "sub", 'a') X(mul, "mul", 'a') X(div, "div", 'a')      \
  X(floordiv, "floordiv", 'a') X(mod, "mod", 'a') X(pow, "pow", 'a')               \
  X(maximum, "maximum", 'a') X(minimum, "minimum", 'a')                            \
  X(lt, "lt", 'c') X(le, "le", 'c') X(gt, "gt", 'c') X(ge, "ge", 'c')              \
  X(eq, "eq", 'c') X(ne, "ne", 'c')                                                \
  X(logical_and, "and", 'l') X(logical_or, "or", 'l')                              \
  X(bit_and, "bit_and", 'b') X(bit_or, "bit_or", 'b') X(bit_xor, "bit_xor", 'b')   \
  X(shl, "shl", 'b') X(shr, "shr", 'b')

/// Reductions. X(name, "printed")
#define TESSEL_ATOMIC_FNS(X)                                                       \
  X(add, "add") X(max, "max") X(min, "min") X(bit_and, "and") X(bit_or, "or")      \
  X(bit_xor, "xor") X(xchg, "xchg") X(cas, "cas")

#define TESSEL_REDUCE_FNS(X)                                                       \
  X(sum, "sum") X(prod, "prod") X(max, "max") X(min, "min")                        \
  X(argmax, "argmax") X(argmin, "argmin") X(any, "any") X(all, "all")
// clang-format on

enum class UnaryFn : uint8_t {
#define TESSEL_X(name, str, f) name,
  TESSEL_UNARY_FNS(TESSEL_X)
#undef TESSEL_X
};
enum class BinaryFn : uint8_t {
#define TESSEL_X(name, str, k) name,
  TESSEL_BINARY_FNS(TESSEL_X)
#undef TESSEL_X
};
enum class ReduceFn : uint8_t {
#define TESSEL_X(name, str) name,
  TESSEL_REDUCE_FNS(TESSEL_X)
#undef TESSEL_X
};
enum class AtomicFn : uint8_t {
#define TESSEL_X(name, str) name,
  TESSEL_ATOMIC_FNS(TESSEL_X)
#undef TESSEL_X
};
const char* atomic_name(AtomicFn f);
const char* unary_name(UnaryFn f);
const char* binary_name(BinaryFn f);
const char* reduce_name(ReduceFn f);
/// The identity of reduction `f` accumulated in dtype `t`, as a constant's ival / fval:
/// 0 for sum and any, 1 for prod and all; for max and argmax the dtype's lowest value
/// (-inf, false, INT_MIN, 0 for u64), for min and argmin its highest (u64: all bits set,
/// ival -1). Integer bounds are exact, not rounded through a double.
struct ConstValue {
  int64_t ival = 0;
  double fval = 0;
};
ConstValue reduce_identity(ReduceFn f, DType t);
bool unary_float_only(UnaryFn f);
char binary_kind(BinaryFn f);

struct Node;
struct Loop;

/// A symbolic dimension of a tile value.
struct Sym {
  /// tile: a loop's tile dim; extent_k: a host-known extent (ts::all, arange, zeros);
  /// block_k: a BlockSize's block (ts::zeros({tm, bs})), lined up with the tiles of the
  /// loops using it (their lanes are its lanes), every lane valid.
  enum Kind : uint8_t { tile, extent_k, block_k };
  Kind kind = tile;
  int id = 0;               // unique within the kernel, printed as t<id> / r<id>
  Node* loop = nullptr;     // tile: the Loop node
  int loop_dim = 0;         // tile: which dimension of the loop
  int block_id = -1;        // tile, block_k: index into Config::block_sizes
  Node* extent = nullptr;   // extent: host i64 scalar giving the number of valid elements
  int64_t extent_pow2 = 0;  // extent: next power of two of the extent (specialized)
  int64_t extent_at_trace = 0;
  std::string name;  // user-facing description ("tile at k.cpp:12", "x.size(1)")
};

/// A shape: outermost first; nullptr is a size-1 dimension.
using Shape = std::vector<Sym*>;

/// Argument kinds of a kernel.
enum class ArgKind : uint8_t { tensor, int_scalar, float_scalar };

/// How one index of a Load/Store addresses its tensor dimension (node->access[i]).
enum class IndexKind : uint8_t {
  scalar,   // one element (integer, size, grid index, scalar Value): dimension dropped
  tile,     // a Tile: range begin..end of the loop's tile, masked at the edge
  all,      // the whole dimension: `ts::all`, result dim is an extent Sym
  gather,   // an integer tile Value: per-element index, masked to [0, size)
  newaxis,  // inserts a size-1 dimension; consumes no tensor dimension
};

struct IndexInfo {
  IndexKind kind = IndexKind::scalar;
  Sym* sym = nullptr;  // tile / all: the result dimension's Sym
};

/// Per-dimension description of a Loop node.
struct LoopDim {
  bool is_tile = true;    // tile(...) vs grid(...)
  Node* begin = nullptr;  // scalar bound nodes (host, device-scalar or device values)
  Node* end = nullptr;
  Sym* sym = nullptr;       // tile: the Sym of this dim
  int block_id = -1;        // tile: index into Config::block_sizes (grid: -1, block 1)
  int64_t fixed_block = 0;  // TileOptions::block_size when the user fixed it (0 = tuned)
};

using Block = std::vector<Node*>;

/// One IR value. Owned by its Graph; edges are raw pointers.
struct Node {
  Op op;
  DType dtype = DType::f32;
  Shape shape;  // empty = scalar
  std::vector<Node*> args;
  int64_t ival = 0;
  double fval = 0.0;
  uint8_t fn = 0;            // UnaryFn / BinaryFn / ReduceFn / AtomicFn; Alloc: AllocLayout
  Sem sem = Sem::relaxed;    // Atomic, Signal (release), Wait (acquire)
  Scope scope = Scope::gpu;  // Atomic, Signal, Wait
  bool keepdim = false;      // Reduce
  ArgKind arg_kind = ArgKind::tensor;  // Arg
  /// Alloc of empty_like, zeros_like or full_like of a tensor argument: that argument,
  /// whose stride order the allocation takes on each call (alloc_strides, host_eval.hpp).
  Node* like = nullptr;
  int rank = 0;                   // tensor-valued nodes (Arg tensor, Alloc): rank
  std::vector<IndexInfo> access;  // Load/Store/Atomic/Signal/Wait: one per index (incl. newaxis)
  // Loop
  std::vector<LoopDim> dims;
  Block body;
  std::vector<Node*> carried;  // Loop: Carried nodes of the body, in order
  std::vector<Node*> inits;    // Loop: initial value of each carried
  std::vector<Node*> results;  // Loop: LoopResult nodes after the loop
  bool persistent = false;     // Loop (top level): some bound is read on the device
  int depth = 0;               // loop depth where the node is (0 = host)
  int load_id = -1;            // Load: its position among the kernel's loads, in trace order
                               // (Config::load_eviction_policies); copies keep it
  int id = 0;
  SourceLoc loc;
  /// The user's name when known (ts::kernel parameter names, else "arg<i>" for a tensor
  /// argument; Tensor::named, Value::named), used by errors, the printer and generated
  /// code (codegen/names.hpp); ShapeCheck: its description.
  std::string name;

  bool is_scalar() const { return shape.empty() || all_ones(); }
  bool all_ones() const {
    for (Sym* s : shape)
      if (s) return false;
    return true;
  }
  bool is_tensor() const {
    return (op == Op::Arg && arg_kind == ArgKind::tensor) || op == Op::Alloc;
  }
  /// Load, Store, Atomic, Signal or Wait of a multicast tensor (args[0] is a Multicast node).
  bool is_multicast_access() const {
    return (op == Op::Load || op == Op::Store || op == Op::Atomic || op == Op::Signal ||
            op == Op::Wait) &&
           args.at(0)->op == Op::Multicast;
  }
  UnaryFn ufn() const { return static_cast<UnaryFn>(fn); }
  BinaryFn bfn() const { return static_cast<BinaryFn>(fn); }
  ReduceFn rfn() const { return static_cast<ReduceFn>(fn); }
  AtomicFn afn() const { return static_cast<AtomicFn>(fn); }
};

/// Whether `n` writes memory: a Store, Atomic, Signal or Wait (a wait with an update
/// writes; every wait orders memory). Each element it reaches is written by exactly one
/// thread of the program (docs/DECISIONS.md, "exactly once").
inline bool writes_memory(const Node* n) {
  return n->op == Op::Store || n->op == Op::Atomic || n->op == Op::Signal || n->op == Op::Wait;
}
/// Whether `n` is a memory access indexed like a Load (Node::access, index operands).
inline bool is_access(const Node* n) { return n->op == Op::Load || writes_memory(n); }
/// Position in n->args of the first index operand of access `n`: after the tensor and
/// the value operands (Load 1, Store 2, Atomic/Signal/Wait 1 + ival).
inline size_t first_index(const Node* n) {
  if (n->op == Op::Load) return 1;
  if (n->op == Op::Store) return 2;
  return 1 + static_cast<size_t>(n->ival);
}

/// Fill kinds of an Alloc.
enum AllocFill : int64_t { fill_none = 0, fill_value = 1 };
/// An Alloc's layout on the calls of its specialization (Node::fn): row-major (every
/// allocation without `like`, and one whose argument's layout gives row-major strides),
/// or strided (the strides follow the argument's stride order; generated code reads
/// them all, the innermost included). A per-call guard (runtime/specialization_guards.cpp) keeps
/// it.
enum AllocLayout : uint8_t { alloc_row_major = 0, alloc_strided = 1 };

/// A traced kernel: owns nodes and syms.
/// Facts about a tensor argument that are part of the specialization key
/// (runtime/kernel_impl.cpp, KernelImpl::key), so generated code may rely on them.
struct ArgFacts {
  bool contiguous = false;  // the innermost stride is 1 (vectorize along it)
  /// When the innermost stride is not 1: a dim of size above 1 whose stride is 1
  /// (vectorize along it; a transposed view x.t() of a row-major x has it at 0), else -1.
  int unit_stride_dim = -1;
  bool base_aligned = false;         // the data pointer is 16-byte aligned
  std::vector<bool> stride_aligned;  // per dim: stride * element size is a multiple of 16, or
                                     // the dim has at most one element (its stride unused)
  std::vector<bool> size_div16;      // per dim: the size is a multiple of 16
  /// Per dim: the exact size where the key fixes it (size_fixed_by_key), else -1.
  std::vector<int64_t> known_sizes;
  /// The lowest position of the tensor arguments whose memory may overlap this one's
  /// (address ranges [lowest element, highest element] of the call's Buffers overlap,
  /// transitively; itself included), or -1 when no other argument's does. Two arguments
  /// may alias when their groups are equal and not -1: then neither is __restrict__ and
  /// a store through one is ordered before a later load through the other
  /// (driver/alias_groups.hpp).
  int alias_group = -1;
  bool operator==(const ArgFacts&) const = default;
};

/// Whether the specialization key fixes a tensor size `s` exactly: always with
/// Settings::static_shapes (`exact`), otherwise when s is a power of two (1 included).
/// The key holds every size's next power of two, so a size equal to it is known, at the
/// cost of one more specialization per power-of-two bucket; generated code then uses it
/// as a constant (masks and vector checks fold), as with static shapes.
inline bool size_fixed_by_key(int64_t s, bool exact) {
  return exact || (s >= 1 && (s & (s - 1)) == 0);
}

struct Graph {
  std::string kernel_name;
  Block host;                            // top-level statements
  std::vector<Node*> args;               // Arg nodes, by position
  std::vector<Node*> outputs;            // returned tensors
  int num_block_sizes = 0;               // tile dims with a tunable block size
  int num_loads = 0;                     // Load nodes traced (Node::load_id)
  std::vector<int64_t> block_size_hint;  // per block id: extent at trace (for defaults)
  std::vector<std::pair<int64_t, int64_t>> block_size_range;  // per block id: [min, max], 0 = none
  std::vector<Sym*> reduction_syms;  // extents declared with register_reduction_dim
  /// User tunables declared with ts::register_tunable, in declaration order: name and
  /// choices. The traced value of each is a Const (the config's choice at trace time).
  std::vector<std::pair<std::string, std::vector<int64_t>>> tunables;
  DType index_dtype = DType::i32;   // dtype of indices and address arithmetic
  bool index_dtype_forced = false;  // Settings::index_dtype set (not tessel's choice)
  /// Settings::check_bounds (or TESSEL_CHECK_BOUNDS): an out-of-range scalar or gather
  /// index is reported (driver/bounds_report.hpp) instead of masked.
  bool check_bounds = false;
  /// Settings::fast_accum: 8-bit float dots on wgmma add every product in the tensor cores'
  /// accumulator; else each tile of K's sum is added into f32 (passes/tensor_cores.hpp).
  bool fast_accum = false;
  /// Per argument (default facts for scalars): what the specialization key guarantees
  /// about a tensor, which the generated code relies on.
  std::vector<ArgFacts> arg_facts;

  Node* new_node(Op op, SourceLoc loc);
  Sym* new_sym(Sym::Kind kind);
  const std::deque<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  const std::deque<std::unique_ptr<Sym>>& syms() const { return syms_; }

 private:
  std::deque<std::unique_ptr<Node>> nodes_;
  std::deque<std::unique_ptr<Sym>> syms_;
};

/// The tensor whose shape, strides and dtype address the elements of access `n`: its
/// tensor (args[0]), or for a multicast tensor (ts::multicast_like) its example.
inline const Node* addressed_tensor(const Node* n) {
  const Node* t = n->args.at(0);
  return t->op == Op::Multicast ? t->args.at(0) : t;
}
/// The stack dims of access `n`: the shape of a multicast tensor's dev_ptrs value (the
/// leading dims of the access, one buffer per element), empty for an ordinary tensor.
inline const Shape& stack_shape(const Node* n) {
  static const Shape kNone;
  const Node* t = n->args.at(0);
  return t->op == Op::Multicast ? t->args.at(1)->shape : kNone;
}

/// Where config errors point: the source line of the kernel's first top-level loop (the
/// loop nest a config tiles), or none for a kernel without loops.
inline SourceLoc first_loop_loc(const Graph& g) {
  for (const Node* n : g.host)
    if (n->op == Op::Loop) return n->loc;
  return {};
}

/// Text form of the graph (for debugging, TESSEL_PRINT_IR=1, TESSEL_DUMP_DIR, IR tests and
/// kernel content hashes), which ir::parse (ir/parser.hpp) reads back: every node and Sym
/// and the graph's facts (index dtype, block sizes, tunables, argument facts, reduction
/// dims). `names`: also the user's names of nodes and Syms (Node::name, Sym::name) as
/// `// name` after their line, shape checks' descriptions and source locations (`@f0:12:5`);
/// content hashes print without them, so a renamed tensor keeps its tuned config.
std::string print(const Graph& g, bool names = true);
std::string sym_name(const Sym* s);
/// How errors name a tensor: "tensor argument 1" (the kernel's parameters, from 0), "the
/// tensor allocated at line 12", ...
std::string describe_tensor(const Node* t);
/// Whether tensors `a` and `b` (Arg or Alloc nodes of `g`) may share memory: the same
/// node, or two arguments in one alias group (ArgFacts::alias_group). Allocations are
/// fresh memory. A multicast tensor (Op::Multicast) may alias every argument and every
/// multicast tensor (its buffers' addresses are values known only on the device), never an
/// allocation (made by the call, after the addresses).
bool may_alias(const Graph& g, const Node* a, const Node* b);
/// A Permute node's permutation: dim i of the result is dim perm[i] of args[0] (PyTorch's
/// Tensor.permute). Stored in ival, 4 bits per dim holding perm[i] + 1 (0: no entry; at
/// most 15 dims).
std::vector<int> permutation(const Node* n);
int64_t encode_permutation(const std::vector<int>& perm);
/// Whether the innermost stride of tensor `t` (an Arg or Alloc node of `g`) is 1 for every
/// call of this specialization: an argument whose key says so (ArgFacts::contiguous), or a
/// row-major allocation (not empty_like of a strided argument).
bool innermost_contiguous(const Graph& g, const Node* t);
/// The dim of tensor `t` whose stride is 1 for every call of this specialization: the
/// innermost where innermost_contiguous, else an argument's ArgFacts::unit_stride_dim;
/// -1 when none is known. Vector accesses run along it.
int unit_stride_dim(const Graph& g, const Node* t);
std::string shape_str(const Shape& s);

/// Checks structural invariants (operands defined before use and in scope, shapes of
/// elementwise ops broadcast, loops well formed). Throws InternalError on a violation.
void verify(const Graph& g);

/// Calls f(node) for every node in `b`, recursing into loop bodies (pre-order).
template <class F>
void walk(const Block& b, F&& f) {
  for (Node* n : b) {
    f(n);
    if (n->op == Op::Loop) walk(n->body, f);
  }
}

}  // namespace tessel::ir
