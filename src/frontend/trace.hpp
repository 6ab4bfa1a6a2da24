// The tracing context: the state of one trace of a user's kernel lambda. DSL calls
// append IR nodes to the innermost open block through the helpers here.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "ir/ir.hpp"
#include "tessel/buffer.hpp"
#include "tessel/config.hpp"
#include "tessel/language.hpp"

namespace tessel {
/// Access to a Value's binding for the tracer.
struct ValueAccess {
  static ir::Node*& node(const Value& v) { return v.node_; }
  static int& depth(Value& v) { return v.depth_; }
};
}  // namespace tessel

namespace tessel::frontend {

/// A concrete call argument, as seen while tracing (gives trace-time sizes).
struct TraceArg {
  ir::ArgKind kind = ir::ArgKind::tensor;
  Buffer buffer;             // tensor arguments
  int64_t ivalue = 0;        // int scalars
  double fvalue = 0;         // float scalars
  bool specialized = false;  // a plain C++ number: a constant of the generated code
};

/// One open loop level while tracing.
struct OpenLoop {
  ir::Node* loop;
  /// Variables of enclosing scopes read or written in this loop: their placeholder
  /// (Carried node) and the binding before the loop.
  struct Entry {
    ir::Node* placeholder;
    ir::Node* init;
  };
  std::vector<std::pair<const Value*, Entry>> vars;  // in first-use order
};

using ir::describe_tensor;

/// Whether addressing `b` needs 64-bit index arithmetic: it spans 2^31 elements of memory
/// or more (Buffer::span: a strided view up to its furthest element), or a size is 2^31
/// or more (a zero-stride view: its indices do not fit 32 bits). The specialization key
/// holds this per tensor argument (runtime/call_key.cpp).
bool needs_64bit_indexing(const Buffer& b);
/// The same, given the Buffer's shape and span (elements).
bool needs_64bit_indexing(const std::vector<int64_t>& shape, int64_t span);

class TraceContext {
 public:
  /// `called_at`: the line of the call being traced, where errors about its arguments
  /// point (none: the kernel's).
  TraceContext(ir::Graph& graph, const Settings& settings, std::vector<TraceArg> args,
               SourceLoc called_at = {});
  ~TraceContext();

  /// The context of the trace running on this thread, for a language call made at
  /// `called_at` (the user's line). Errors: UserError at `called_at` when no kernel is
  /// being traced (ts::tile, ts::grid, tensor indexing or tile ops outside a ts::kernel
  /// body).
  static TraceContext& current(SourceLoc called_at);
  static TraceContext* current_or_null();
  /// A number unique to this trace (ts::Value records it, to refuse values of another).
  uint64_t id() const { return id_; }

  ir::Graph& graph() { return graph_; }
  const Settings& settings() const { return settings_; }
  const std::vector<TraceArg>& args() const { return args_; }
  int depth() const { return static_cast<int>(loops_.size()); }
  /// Dtype of indices (tile.index(), grid indices): Settings::index_dtype, else i64 when
  /// a tensor argument needs it (needs_64bit_indexing) or a symbolic integer argument does
  /// not fit 32 bits, else i32 (the runtime's per-call guards retrace with i64 when a
  /// tensor allocated in host code or a loop bound needs it).
  DType index_dtype() const { return index_dtype_; }

  /// Appends a node to the innermost open block.
  ir::Node* add(ir::Op op, DType dtype, ir::Shape shape, std::vector<ir::Node*> args,
                SourceLoc loc);
  /// Appends a node to the host block (before the open top-level loop), depth 0.
  ir::Node* add_host(ir::Op op, DType dtype, std::vector<ir::Node*> args, SourceLoc loc);
  /// Host-computable scalar `n` itself when it is in the host block, else a copy of it
  /// there (an extent computed inside a loop, checked before the loop).
  ir::Node* host_copy(ir::Node* n);
  /// Size/Stride of a tensor's dimension (one node per tensor and dimension).
  ir::Node* tensor_attr(ir::Op op, ir::Node* tensor, int dim, SourceLoc loc);
  /// The extent Sym of `ts::all` on a tensor dimension (one per tensor and dimension).
  ir::Sym* all_sym(ir::Node* tensor, int dim, SourceLoc loc);
  /// Whether host value `n` is a tensor's size (a constant where the key fixes it).
  bool is_tensor_size(const ir::Node* n) const {
    return n->op == ir::Op::Size || size_origin_.count(n) > 0;
  }
  ir::Node* constant_int(int64_t v, DType dtype, SourceLoc loc);
  ir::Node* constant_float(double v, DType dtype, SourceLoc loc);

  /// Weakly typed floats (docs/DECISIONS.md): float scalar arguments (ts::Value), and the
  /// host arithmetic (+ - * / floordiv % pow maximum minimum, neg, abs) of weak floats with
  /// each other and with C++ numbers. Like Python floats in PyTorch, they take the dtype of
  /// the tensor values they meet (`x_f64 * eps` is f64) and hold a double: their nodes
  /// have the default dtype f32 (as torch.tensor(eps) would), exact_float(n) is the f64
  /// form, computing the arguments' full values (one per node, in the host block).
  bool weak_float(const ir::Node* n) const { return weak_floats_.count(n) > 0; }
  void mark_weak_float(const ir::Node* n) { weak_floats_.insert(n); }
  ir::Node* exact_float(ir::Node* n);

  /// Raises UserError for this kernel at `loc`.
  [[noreturn]] void fail(SourceLoc loc, const std::string& what, const std::string& hint = "");
  /// A UserError at `loc` unless dtype `dtype` holds constant `v` (torch.full's "cannot be
  /// converted without overflow"): an integer dtype as holds_integer_value says (NaN,
  /// infinities and values out of range do not fit); f16, bf16 and f32 a finite value
  /// that stays finite (8-bit floats saturate by design, f64 holds every double).
  void check_constant_fits(double v, DType dtype, SourceLoc loc);

  // Loops
  ir::Node* open_loop(ir::Node* loop);
  void close_loop(ir::Node* loop);
  OpenLoop& loop_level(int depth) { return loops_.at(depth - 1); }
  /// Recorded when a loop body was left early; raised after the lambda returns.
  void defer_error(SourceLoc loc, const std::string& what, const std::string& hint);
  void raise_deferred();

  // Variables (see Value): make `var`'s binding valid at the current depth; `use`: where the
  // kernel reads it (errors point there; unknown: at the binding).
  ir::Node* resolve(const Value* var, ir::Node*& binding, int decl_depth, SourceLoc use = {});
  void forget(const Value* var);

  // Symbols
  ir::Sym* canon(ir::Sym* s) const;
  /// Unifies two extent syms with equal trace-time values (adds a host shape check).
  bool unify(ir::Sym* a, ir::Sym* b, SourceLoc loc);
  /// A host check that size(dim_a) of tensor a equals size(dim_b) of tensor b on each call,
  /// raising `what` with `hint` at `loc` (a ShapeCheck eq with names) where they differ; none
  /// where the key fixes both sizes equal.
  void check_equal_sizes(ir::Node* a, int dim_a, ir::Node* b, int dim_b, const std::string& what,
                         const std::string& hint, SourceLoc loc);
  /// `tensor` is indexed along `dim` with a tile or a grid index of a loop whose bound `end`
  /// is another tensor's size: adds a per-call check that tensor.size(dim) >= end (a smaller
  /// tensor would be read or written past its end, masked, instead of the error torch
  /// gives). `what` describes the tensor for the error message. None for a bound of the
  /// user's own (a number, a device-resident size): masked at the tensor's end by design.
  void check_tile_covers(ir::Node* tensor, int dim, ir::Node* end, const std::string& what,
                         SourceLoc loc);
  /// A variable of an enclosing scope read in a loop is a placeholder (a Carried node)
  /// until the loop closes: the value it stands for (`n` itself where it is none).
  ir::Node* value_outside_loops(ir::Node* n) const;
  ir::Sym* extent_sym(ir::Node* extent, const std::string& name, SourceLoc loc);
  /// The block_k Sym of BlockSize `id` (one per id and trace).
  ir::Sym* block_sym(int id, SourceLoc loc);

  /// Replaces every Sym in node shapes and accesses by its canonical (unified) Sym.
  void canonicalize();
  /// Numbers the traced loads (Node::load_id, Config::load_eviction_policies) in source
  /// order: by file, line and column of the read, trace order among reads at one place (a
  /// helper function called twice). C++ leaves the order of evaluating operands
  /// unspecified (`x(t) * y(t)` may trace y first), the source position is fixed.
  void number_loads();

  /// Value of a host integer expression for this trace's arguments.
  int64_t trace_value(ir::Node* host_int);

 private:
  ir::Graph& graph_;
  Settings settings_;
  std::vector<TraceArg> args_;
  std::vector<ir::Block*> blocks_;
  std::vector<OpenLoop> loops_;
  std::map<ir::Sym*, ir::Sym*> parent_;
  std::map<std::tuple<int, ir::Node*, int>, ir::Node*> attr_cache_;
  /// Static shapes: the tensor and dim each size constant stands for.
  std::map<const ir::Node*, std::pair<ir::Node*, int>> size_origin_;
  std::set<std::tuple<ir::Node*, int, ir::Node*>> cover_checked_;
  std::map<std::pair<ir::Node*, int>, ir::Sym*> all_cache_;
  std::map<ir::Node*, ir::Sym*> extent_cache_;
  std::map<int, ir::Sym*> block_syms_;
  std::set<const ir::Node*> weak_floats_;
  std::map<const ir::Node*, ir::Node*> exact_floats_;
  std::map<const ir::Node*, const ir::Node*> owner_;  // node inside a loop -> that loop
  DType index_dtype_ = DType::i32;                    // union-find over extent syms
  bool has_deferred_ = false;
  SourceLoc deferred_loc_;
  std::string deferred_what_, deferred_hint_;
  TraceContext* previous_;
  uint64_t id_;
};

/// Broadcast two shapes (PyTorch rules, right-aligned, dims compared by Sym identity).
ir::Shape broadcast_shapes(const ir::Shape& a, const ir::Shape& b, SourceLoc loc);
/// Whether one of x, y is a BlockSize's block (block_k) and the other a tile of a loop
/// using that BlockSize: they broadcast together, position by position, to the block.
bool lined_up(const ir::Sym* x, const ir::Sym* y);

/// Traces memory op `op` (Atomic, Signal, Wait) on `tensor` indexed by `idx` (inside a
/// loop): each operand broadcasts to the indexed shape and is converted to the tensor's
/// dtype; the node has the indexed shape, access info and ival = number of operands.
/// `what` names the op in errors ("ts::atomic_add"). Errors: UserError at `loc` (host
/// code, bad indices, operand shapes).
ir::Node* trace_memory_op(ir::Op op, ir::Node* tensor, const std::vector<Index>& idx,
                          std::vector<ir::Node*> operands, const char* what, SourceLoc loc);

/// Refuses a C++ integer constant `o` (a weak operand) that does not fit integer dtype
/// `target` (i8, i32; or i64 for one past 2^63 - 1), as torch refuses a Python scalar that
/// overflows: UserError at `loc` naming `whose` dtype it is ("the other operand", "tensor
/// 'x'"). Other operands pass.
void check_weak_constant(DType target, const Operand& o, const std::string& whose, SourceLoc loc);

/// check_weak_constant for a constant stored into (or atomically applied to) a tensor of
/// dtype `target`; a C++ float must also be a value of it: in an integer dtype's range, or
/// finite in f16, bf16 and f32 where it is finite (torch refuses such scalar stores).
void check_stored_constant(DType target, const Operand& o, const std::string& whose, SourceLoc loc);

/// Describes a Sym for an error message ("the tile of the loop at k.cpp:12").
std::string describe_sym(const ir::Sym* s);

}  // namespace tessel::frontend
