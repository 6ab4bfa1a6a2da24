#include "codegen/fold.hpp"

#include <fmt/format.h>

#include <cctype>
#include <utility>

namespace tessel::codegen::fold {

namespace {

// The index of the bracket closing the one at `open`, or npos.
size_t closing(const std::string& e, size_t open) {
  int depth = 0;
  for (size_t i = open; i < e.size(); ++i) {
    if (e[i] == '(' || e[i] == '[') ++depth;
    if (e[i] == ')' || e[i] == ']') {
      if (--depth == 0) return i;
    }
  }
  return std::string::npos;
}

// The operator characters of `e` outside brackets (names, numbers, '.' and spaces skipped).
std::string top_level_ops(const std::string& e) {
  std::string ops;
  for (size_t i = 0; i < e.size(); ++i) {
    char c = e[i];
    if (c == '(' || c == '[') {
      size_t j = closing(e, i);
      if (j == std::string::npos) return "?";  // unbalanced: treat as needing parentheses
      i = j;
    } else if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != ' ') {
      ops += c;
    }
  }
  return ops;
}

bool only(const std::string& ops, const std::string& allowed) {
  return ops.find_first_not_of(allowed) == std::string::npos;
}

// `e` without enclosing parentheses and casts: "((int)0)" -> "0".
std::string core(std::string e) {
  for (;;) {
    while (e.size() >= 2 && e.front() == ' ') e.erase(0, 1);
    if (e.empty() || e.front() != '(') return e;
    size_t j = closing(e, 0);
    if (j == e.size() - 1) {
      e = e.substr(1, e.size() - 2);  // (x) -> x
    } else if (j != std::string::npos &&
               e.find_first_not_of("abcdefghijklmnopqrstuvwxyz _", 1) == j) {
      e = e.substr(j + 1);  // (int)x -> x
    } else {
      return e;
    }
  }
}

bool literal_is(const std::string& e, const char* digit) {
  std::string c = core(e);
  for (const char* suffix : {"", "LL", "ULL", "u", "U", "L"})
    if (c == std::string(digit) + suffix) return true;
  return false;
}

}  // namespace

bool is_zero(const std::string& e) { return literal_is(e, "0"); }
bool is_one(const std::string& e) { return literal_is(e, "1"); }
bool is_true(const std::string& e) { return core(e) == "true"; }

bool atomic(const std::string& e) { return !e.empty() && top_level_ops(e).empty(); }

std::string paren(const std::string& e) { return atomic(e) ? e : "(" + e + ")"; }

// `e` as an operand of an operator whose operands may hold the operators in `allowed` at
// their top level without parentheses.
static std::string operand(const std::string& e, const char* allowed) {
  return only(top_level_ops(e), allowed) ? e : "(" + e + ")";
}

std::string add(const std::string& a, const std::string& b) {
  if (is_zero(a)) return b;
  if (is_zero(b)) return a;
  return operand(a, "*/%+-") + " + " + operand(b, "*/%+-");
}

std::string sub(const std::string& a, const std::string& b) {
  if (is_zero(b)) return a;
  return operand(a, "*/%+-") + " - " + operand(b, "*/%");
}

std::string mul(const std::string& a, const std::string& b) {
  if (is_one(a)) return b;
  if (is_one(b)) return a;
  return operand(a, "*/%") + " * " + operand(b, "*");
}

std::string cmp(const std::string& a, const char* op, const std::string& b) {
  return operand(a, "*/%+-") + " " + op + " " + operand(b, "*/%+-");
}

std::string unparen(const std::string& e) {
  if (e.size() >= 2 && e.front() == '(' && closing(e, 0) == e.size() - 1)
    return unparen(e.substr(1, e.size() - 2));
  return e;
}

std::string land(const std::vector<std::string>& terms) {
  std::string out;
  for (const std::string& t : terms) {
    if (t.empty() || is_true(t)) continue;
    if (core(t) == "false") return "false";
    // && binds tighter than || and ?: only (and the comma).
    std::string u = unparen(t), ops = top_level_ops(u);
    bool low = ops.find("||") != std::string::npos || ops.find_first_of("?:,") != std::string::npos;
    out += (out.empty() ? "" : " && ") + (low ? "(" + u + ")" : u);
  }
  return out.empty() ? "true" : out;
}

std::string lor(const std::vector<std::string>& terms) {
  std::string out;
  for (const std::string& t : terms) {
    if (t.empty() || core(t) == "false") continue;
    if (is_true(t)) return "true";
    out += (out.empty() ? "" : " || ") + paren(t);
  }
  return out.empty() ? "false" : out;
}

std::string bit_or(const std::string& a, const std::string& b) {
  if (is_zero(a)) return b;
  if (is_zero(b)) return a;
  return paren(a) + " | " + paren(b);
}

std::string shl(const std::string& e, int k) {
  return k == 0 ? e : fmt::format("({} << {})", paren(e), k);
}

bool is_name(const std::string& e) {
  if (e.empty()) return false;
  for (char c : e)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

std::string bits(const std::string& e, int shift, int64_t mask) {
  if (mask == 0) return "0";
  std::string x = shift == 0 ? e : fmt::format("({} >> {})", e, shift);
  return fmt::format("({} & {})", x, mask);
}

namespace {

// Runs of consecutive positions: (first index j, length).
std::vector<std::pair<size_t, int>> runs(const std::vector<int>& pos) {
  std::vector<std::pair<size_t, int>> out;
  for (size_t j = 0; j < pos.size(); ++j)
    if (!out.empty() && pos[j] == pos[out.back().first] + out.back().second)
      ++out.back().second;
    else
      out.push_back({j, 1});
  return out;
}

// The terms ORed, parenthesized as a whole so that the result binds as one operand
// (`a | b == 0` would compare b alone).
std::string or_all(const std::vector<std::string>& terms) {
  if (terms.empty()) return "0";
  if (terms.size() == 1) return terms[0];
  std::string out;
  for (const std::string& t : terms) out += (out.empty() ? "" : " | ") + paren(t);
  return "(" + out + ")";
}

}  // namespace

std::string gather_bits(const std::string& e, const std::vector<int>& pos) {
  std::vector<std::string> terms;
  for (auto [j, len] : runs(pos))
    terms.push_back(shl(bits(e, pos[j], (int64_t{1} << len) - 1), static_cast<int>(j)));
  return or_all(terms);
}

std::string scatter_bits(const std::string& e, const std::vector<int>& pos) {
  std::vector<std::pair<size_t, int>> r = runs(pos);
  if (r.size() == 1) return shl(e, pos[0]);
  std::vector<std::string> terms;
  for (auto [j, len] : r)
    terms.push_back(shl(bits(e, static_cast<int>(j), (int64_t{1} << len) - 1), pos[j]));
  return or_all(terms);
}

}  // namespace tessel::codegen::fold
