#include "fuzz/program.hpp"

#include <fmt/format.h>

#include <limits>

namespace fuzz {

bool floating(DType t) {
  return t == DType::f16 || t == DType::bf16 || t == DType::f32 || t == DType::f64;
}
bool integral(DType t) { return t == DType::i32 || t == DType::i64 || t == DType::u64; }

namespace {
int category(DType t) { return t == DType::boolean ? 0 : integral(t) ? 1 : 2; }
int float_rank(DType t) { return t == DType::f64 ? 3 : t == DType::f32 ? 2 : 1; }
}  // namespace

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  int ca = category(a), cb = category(b);
  if (ca != cb) return ca > cb ? a : b;
  if (ca == 1) return DType::i64;  // i32 with i64; u64 with a signed type (tessel's choice)
  if (float_rank(a) == 1 && float_rank(b) == 1) return DType::f32;  // f16 with bf16
  return float_rank(a) >= float_rank(b) ? a : b;
}

DType promote_operands(const Node& a, const Node& b) {
  auto weak = [](DType tensor, DType literal) {
    int ct = category(tensor), cl = category(literal);
    if (cl <= ct) return tensor;
    return cl == 1 ? DType::i64 : DType::f32;
  };
  if (a.weak && !b.weak) return weak(b.dtype, a.dtype);
  if (b.weak && !a.weak) return weak(a.dtype, b.dtype);
  return promote_types(a.dtype, b.dtype);
}

int arity(Op op) {
  if (op == Op::load || op == Op::row_index || op == Op::col_index || op == Op::literal ||
      op == Op::reload || op == Op::tile_attr || op == Op::extent)
    return 0;
  if (is_unary(op) || op == Op::cast || is_reduce(op) || op == Op::gather || op == Op::store)
    return 1;
  if (op == Op::where) return 3;
  return 2;
}

bool is_unary(Op op) { return op >= Op::neg && op <= Op::bit_not; }
bool is_binary(Op op) { return op >= Op::add && op <= Op::bit_xor; }
bool is_reduce(Op op) { return op >= Op::sum && op <= Op::all; }
bool is_compare(Op op) { return op >= Op::lt && op <= Op::ne; }

const char* op_name(Op op) {
  static const char* names[] = {
      "load",        "row_index", "col_index", "literal",     "tile_attr",  "extent",  "neg",
      "abs",         "exp",       "exp2",      "log",         "log2",       "sqrt",    "rsqrt",
      "sin",         "cos",       "tanh",      "sigmoid",     "erf",        "floor",   "ceil",
      "logical_not", "bit_not",   "add",       "sub",         "mul",        "div",     "mod",
      "floordiv",    "maximum",   "minimum",   "pow",         "lt",         "le",      "gt",
      "ge",          "eq",        "ne",        "logical_and", "logical_or", "bit_and", "bit_or",
      "bit_xor",     "where",     "cast",      "sum",         "mean",       "max",     "min",
      "prod",        "argmax",    "argmin",    "any",         "all",        "gather",  "store",
      "reload"};
  static_assert(sizeof(names) / sizeof(names[0]) == static_cast<size_t>(Op::reload) + 1);
  return names[static_cast<int>(op)];
}

const char* dtype_cpp(DType t) {
  switch (t) {
    case DType::boolean:
      return "ts::boolean";
    case DType::i32:
      return "ts::i32";
    case DType::i64:
      return "ts::i64";
    case DType::u64:
      return "ts::u64";
    case DType::f16:
      return "ts::f16";
    case DType::bf16:
      return "ts::bf16";
    case DType::f32:
      return "ts::f32";
    case DType::f64:
      return "ts::f64";
  }
  return "?";
}

double accumulator_init(Op op, DType t) {
  const double inf = std::numeric_limits<double>::infinity();
  switch (op) {
    case Op::sum:
    case Op::any:
      return 0;
    case Op::prod:
    case Op::all:
      return 1;
    case Op::max:
      return floating(t) ? -inf : t == DType::i32 ? -2147483648.0 : -9223372036854775808.0;
    default:
      return floating(t) ? inf : t == DType::i32 ? 2147483647.0 : 9223372036854774784.0;
  }
}

bool nested(Form f) { return f == Form::tile_nested || f == Form::grid_nested; }
bool tiled_rows(Form f) {
  return f == Form::tile_all || f == Form::tile_2d || f == Form::tile_nested;
}
bool tiled_cols(Form f) { return f == Form::tile_2d || nested(f); }
bool looped_cols(Form f) { return tiled_cols(f) || f == Form::grid_2d; }

namespace {
int64_t block_at(const Program& p, size_t k) {
  const auto& b = p.config.block_sizes;
  return b && b->size() > k ? (*b)[k] : 1;
}
}  // namespace

int64_t row_block(const Program& p) { return block_at(p, 0); }
int64_t inner_block(const Program& p) { return block_at(p, p.form == Form::tile_nested ? 1 : 0); }

bool output_fuzzy(const Program& p, int o) {
  if (o == p.relaunch_dst) o = p.relaunch_src;
  for (const Node& n : p.nodes)
    if (n.op == Op::store && n.input == o) return n.fuzzy;
  return false;
}

std::string describe(const Program& p) {
  static const char* forms[] = {"tile_all",    "grid_all",    "tile_2d",
                                "tile_nested", "grid_nested", "grid_2d"};
  static const char* shapes[] = {"row", "col", "full", "tile"};
  static const char* bounds[] = {"size", "literal", "symbolic", "device", "range"};
  static const char* views[] = {"contiguous", "transposed", "strided"};
  static const char* fills[] = {"normal", "ties", "special", "index"};
  std::string s =
      fmt::format("seed {} form {} M {} N {} rows {}[{}, {}) cols {}[{}, {}) index_dtype {}\n",
                  p.seed, forms[int(p.form)], p.M, p.N, bounds[int(p.rows.kind)], p.rows.begin,
                  p.rows.end, bounds[int(p.cols.kind)], p.cols.begin, p.cols.end,
                  p.index_dtype ? ts::dtype_name(*p.index_dtype) : "auto");
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    const Input& in = p.inputs[i];
    s += fmt::format("  in{}: {} {} {} {}{}\n", i, ts::dtype_name(in.dtype), shapes[int(in.shape)],
                     views[int(in.view)], fills[int(in.fill)],
                     in.alias >= 0 ? fmt::format(" alias in{}", in.alias) : "");
  }
  for (size_t i = 0; i < p.outputs.size(); ++i)
    s += fmt::format(
        "  out{}: {} {}{}\n", i, ts::dtype_name(p.outputs[i].dtype),
        shapes[int(p.outputs[i].shape)],
        p.outputs[i].inplace >= 0 ? fmt::format(" in place of in{}", p.outputs[i].inplace) : "");
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    const Node& n = p.nodes[i];
    s += fmt::format("  v{} = {}", i, op_name(n.op));
    if (n.op == Op::literal || n.op == Op::tile_attr || n.op == Op::extent ||
        (n.op == Op::store && n.lit))
      s += fmt::format(" {}", n.lit);
    if (n.input >= 0)
      s += fmt::format(" {}{}", (n.op == Op::store || n.op == Op::reload) ? "out" : "in", n.input);
    for (int o : {n.a, n.b, n.c})
      if (o >= 0) s += fmt::format(" v{}", o);
    s += fmt::format(" : {} {} phase {}{}\n", ts::dtype_name(n.dtype), shapes[int(n.shape)],
                     n.phase, n.fuzzy ? " fuzzy" : "");
  }
  if (p.relaunch_src >= 0)
    s += fmt::format("  then out{} = out{} (a second launch)\n", p.relaunch_dst, p.relaunch_src);
  s += "  config " + p.config.to_json() + "\n";
  return s;
}

}  // namespace fuzz
