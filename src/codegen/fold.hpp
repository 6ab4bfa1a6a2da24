// Building the C++ expressions of generated code with constant operands folded where they
// are combined, so the printed code carries no `(true && c)`, `1 * n`, `i + 0`, `x * 1` or
// `x >> 0`: the emitter composes expressions through these instead of formatting the
// operators itself. Operands are wrapped in parentheses only where C++ precedence needs
// it. Internal to codegen.
//
//   land({"true", "(i < n)"})          -> "(i < n)"     add("tb", "0")       -> "tb"
//   mul("1", "nt0")                    -> "nt0"         add("a", "b * c")    -> "a + b * c"
//   bits("TS_FLAT(r)", 0, 1023)        -> "(TS_FLAT(r) & 1023)"
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessel::codegen::fold {

/// Whether `e` is the literal 0 / 1 (of any integer type: 0, 0LL, ((int)0), ...) or true.
bool is_zero(const std::string& e);
bool is_one(const std::string& e);
bool is_true(const std::string& e);
/// Whether `e` needs no parentheses as an operand of any operator (a name, a literal, a
/// call, an element, or a parenthesized expression).
bool atomic(const std::string& e);
/// `e` in parentheses unless atomic.
std::string paren(const std::string& e);
/// a + b, a - b, a * b (identities dropped, operands parenthesized as needed).
std::string add(const std::string& a, const std::string& b);
std::string sub(const std::string& a, const std::string& b);
std::string mul(const std::string& a, const std::string& b);
/// a <op> b for a comparison `op` ("<", ">=", ...), operands parenthesized as needed.
std::string cmp(const std::string& a, const char* op, const std::string& b);
/// `e` without parentheses enclosing all of it (for the right side of a declaration).
std::string unparen(const std::string& e);
/// The conjunction of `terms` ("true" terms dropped; "true" when none is left; "false"
/// when one is "false").
std::string land(const std::vector<std::string>& terms);
/// The disjunction of `terms` ("false" terms dropped; "false" when none is left; "true"
/// when one is "true"), each term parenthesized.
std::string lor(const std::vector<std::string>& terms);
/// a | b ("0" operands dropped) and (e << k) (e itself for k = 0).
std::string bit_or(const std::string& a, const std::string& b);
std::string shl(const std::string& e, int k);
/// Whether `e` is a plain name (letters, digits, '_').
bool is_name(const std::string& e);
/// The field of `mask` (2^k - 1) at bit `shift` of e: ((e >> shift) & mask), without
/// `>> 0`; "0" for mask 0.
std::string bits(const std::string& e, int shift, int64_t mask);
/// The number whose bit j is bit `pos[j]` of e (a layout slot's coordinate from the flat
/// index): each run of consecutive positions one field, ORed; bits(e, pos[0], mask) for a
/// single run. "0" for no positions.
///   gather_bits("f", {6, 7})        -> "((f >> 6) & 3)"
///   gather_bits("f", {2, 6, 7})     -> "(((f >> 2) & 1) | (((f >> 6) & 3) << 1))"
std::string gather_bits(const std::string& e, const std::vector<int>& pos);
/// The inverse: bit j of e (below 2^pos.size()) at bit `pos[j]`; shl(e, pos[0]) for a
/// single run.
std::string scatter_bits(const std::string& e, const std::vector<int>& pos);

}  // namespace tessel::codegen::fold
