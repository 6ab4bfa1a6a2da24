// The differential fuzzer's program description: a small AST of one tile kernel, from
// which the generator draws random programs, the builder traces a tessel kernel, the naive
// evaluator computes expected outputs with plain loops, and the printer writes C++.
//
// Every program works on an index space of rows [0, M) and columns [0, N). A value has
// one of three shape classes: row (one element per row), col (one per column), full (one
// per row and column). The form says how the kernel walks that space:
//   tile_all:    for (tm : tile(rows)) over whole rows (x(tm, ts::all): [tm, N])
//   grid_all:    for (i : grid(rows))  over whole rows (x(i, ts::all): [N])
//   tile_2d:     for ([tm, tn] : tile(rows, cols))     (x(tm, tn); no reductions)
//   tile_nested: for (tm : tile(rows)) { row code; for (tn : tile(cols)) ...; row code }
//   grid_nested: for (i : grid(rows))  { row code; for (tn : tile(cols)) ...; row code }
//   grid_2d:     for ([i, j] : grid(rows, cols))       (scalars; no reductions)
// A fourth shape class, tile, is one value per row tile (tile_all, tile_nested): a
// reduction of a row value over its tile (ragged at the edge), stored at out(tm.id()).
// In the nested forms reductions over columns accumulate across the inner loop's tiles
// (acc = combine(acc, reduce(v)) per tile), and a value has a phase: 0 before the inner
// loop (rows), 1 inside it (full, col; reductions accumulate), 2 after it (rows).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tessel/tessel.hpp>
#include <vector>

namespace fuzz {

namespace ts = tessel;
using ts::DType;

enum class Form : uint8_t { tile_all, grid_all, tile_2d, tile_nested, grid_nested, grid_2d };
enum class Shape : uint8_t { row, col, full, tile };

/// How a loop's bound is written. size: x.size(d); literal: a C++ integer constant;
/// symbolic: a ts::Value kernel argument; device: a one-element i64 tensor read on the GPU
/// (the value may exceed the extent: accesses past it are masked); range: `{begin, end}`
/// with a literal begin and x.size(d) as end.
enum class BoundKind : uint8_t { size, literal, symbolic, device, range };

struct LoopBound {
  BoundKind kind = BoundKind::size;
  int64_t begin = 0;  // range: first index
  int64_t end = 0;    // one past the last index (device: may exceed the extent)
};

/// How an input's Buffer is laid out: contiguous, a transposed view of a [N, M] buffer
/// (full inputs), or every other element of a wider buffer.
enum class View : uint8_t { contiguous, transposed, strided };

/// The values an input holds: normal (floats: 2 * randn; ints in [-20, 20]), ties
/// (values in {-2, ..., 2}: argmax ties), special (normal with, for floats, NaN, +-inf
/// and 0; for integers, the dtype's extremes (i64: -2^63 and 2^62), -1 and 0),
/// index (ints in [-2, N + 2): gather indices, a few out of range).
enum class Fill : uint8_t { normal, ties, special, index };

struct Input {
  DType dtype = DType::f32;
  Shape shape = Shape::full;
  View view = View::contiguous;
  Fill fill = Fill::normal;
  int alias = -1;  // >= 0: the same Buffer as that earlier input (same dtype and shape)
};

enum class Op : uint8_t {
  // leaves
  load,       // input(...) at the value's shape
  row_index,  // tm.index() / i
  col_index,  // tn.index() / ts::arange(N)
  literal,    // a weak C++ number (an operand only)
  tile_attr,  // tm.begin(), tm.end(), tm.id(), tm.block_size() (lit = 0, 1, 2, 3): a tile value
  extent,     // M or N (lit = 0, 1) as a tensor's size(d): a host scalar in device code
  // unary
  neg,
  abs,
  exp,
  exp2,
  log,
  log2,
  sqrt,
  rsqrt,
  sin,
  cos,
  tanh,
  sigmoid,
  erf,
  floor,
  ceil,
  logical_not,
  bit_not,
  // binary
  add,
  sub,
  mul,
  div,
  mod,
  floordiv,
  maximum,
  minimum,
  pow,
  lt,
  le,
  gt,
  ge,
  eq,
  ne,
  logical_and,
  logical_or,
  bit_and,
  bit_or,
  bit_xor,
  // others
  where,  // a ? b : c
  cast,   // a.to(dtype)
  // reductions over the columns of a full value (row result), or over the row tile of a
  // row value (tile result)
  sum,
  mean,
  max,
  min,
  prod,
  argmax,
  argmin,
  any,
  all,
  gather,  // input(row, a): a row value of integer indices into the columns of a full input
  store,   // outputs[output](...) = a (converted to the output's dtype); lit = 1, 2, 3: +=, -=, *=
  reload,  // outputs[output](...) read back after its store
};

struct Node {
  Op op = Op::load;
  DType dtype = DType::f32;
  Shape shape = Shape::full;
  int phase = 0;
  bool weak = false;   // a literal (PyTorch's wrapped number)
  bool fuzzy = false;  // may differ in the last bits between evaluators (see generate.cpp)
  int a = -1, b = -1, c = -1;
  int input = -1;  // load, gather: the input; store, reload: the output
  double lit = 0;  // literal value (integers exact)
};

struct Output {
  DType dtype = DType::f32;
  Shape shape = Shape::full;
  int inplace = -1;  // >= 0: the output is that input's Buffer (written in place)
};

/// At most this many inputs (the generator draws 1..4) and outputs (the builder's kernel
/// has this many tensor parameters of each).
inline constexpr int kMaxInputs = 4, kMaxOutputs = 8;

struct Program {
  uint64_t seed = 0;
  Form form = Form::tile_all;
  int64_t M = 1, N = 1;
  LoopBound rows, cols;  // cols: the forms that loop over columns only
  std::optional<DType> index_dtype;
  std::vector<Input> inputs;
  std::vector<Node> nodes;
  std::vector<Output> outputs;
  /// >= 0: after the program's loop, a second top-level loop (a second launch) copies
  /// output relaunch_src into output relaunch_dst (converted to its dtype), row tile by
  /// row tile: the second launch reads what the first stored.
  int relaunch_src = -1, relaunch_dst = -1;
  ts::Config config;  // the config the program runs under (drawn from the kernel's space)
};

// ---- dtype rules (PyTorch's, as tessel documents them) ----
bool floating(DType t);
bool integral(DType t);  // i32, i64, u64
DType promote_types(DType a, DType b);
/// Result dtype of a binary op whose operands are a (weak: a literal) and b.
DType promote_operands(const Node& a, const Node& b);

// ---- op tables ----
int arity(Op op);  // 0 for leaves
bool is_unary(Op op);
bool is_binary(Op op);
bool is_reduce(Op op);
bool is_compare(Op op);
const char* op_name(Op op);      // "add", "sum", ...
const char* dtype_cpp(DType t);  // "ts::f32", ...

/// The value the nested forms' accumulator of reduction `op` (result dtype t) starts at,
/// as passed to ts::full: its identity (the i64 minimum starts at the largest double
/// below 2^63; u64 extremes are not generated).
double accumulator_init(Op op, DType t);

/// The shapes a form has (tile_2d: row, col, full; all forms alike).
bool nested(Form f);
bool tiled_rows(Form f);   // rows are a tile (tm), not a grid index
bool tiled_cols(Form f);   // columns are a tile (tn)
bool looped_cols(Form f);  // columns are a loop (tn or j), not ts::all
/// The block size of the loop over rows (tile forms) and of the inner loop over columns
/// (nested forms), from p.config; 1 where the config has none.
int64_t row_block(const Program& p);
int64_t inner_block(const Program& p);

/// Whether output o's values come from fuzzy ones (compared with a tolerance).
bool output_fuzzy(const Program& p, int o);

/// One line per node, for logs.
std::string describe(const Program& p);

}  // namespace fuzz
