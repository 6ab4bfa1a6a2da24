// Spellings that the IR's printer (ir::print) and parser (ir/parser.hpp) share.
#pragma once

#include <optional>
#include <string>

#include "ir/ir.hpp"

namespace tessel::ir {

/// Whether a node of kind `op` has a value other nodes may use, printed `%N = op ...`; the
/// others (store, wait, return, yield, shape_check) print `%N: op ...`.
bool has_result(Op op);

/// `s` in double quotes, with `"` and `\` escaped by a backslash and a newline as `\n`.
std::string quote_ir_string(const std::string& s);

/// A Const node's second value, derived from the one the text gives (the float value of a
/// float dtype, else the integer): an integer constant's fval is its value as a double, a
/// float constant's ival its value where an i64 holds it exactly, else 0 (the tracer's
/// rule). The printer adds ` ival N` / ` fval X` only where a node's differs.
ConstValue const_secondary(DType t, ConstValue primary);

/// The op or function that ir::print spells `s` (op_name, unary_name, binary_name,
/// reduce_name, atomic_name), or nullopt.
std::optional<Op> op_named(const std::string& s);
std::optional<UnaryFn> unary_named(const std::string& s);
std::optional<BinaryFn> binary_named(const std::string& s);
std::optional<ReduceFn> reduce_named(const std::string& s);
std::optional<AtomicFn> atomic_named(const std::string& s);

}  // namespace tessel::ir
