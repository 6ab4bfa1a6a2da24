// FileCheck-style matching of printed IR for pass tests on textual input (LLVM's FileCheck,
// as Triton's and MLIR's lit tests use it), with plain substrings instead of patterns:
//
//   EXPECT_IR_CHECK(ir::print(*g), R"(
//     CHECK: %10 = loop tile(%8..%2) as t3 fixed 256
//     CHECK-NEXT: carried %10
//     CHECK-NOT: reduce max %5
//     CHECK: yield
//   )");
//
// CHECK: the text occurs in a line after the previous match (the first such line matches).
// CHECK-NEXT: the text occurs in the line right after the previous match.
// CHECK-NOT: the text occurs in no line between the previous match and the next CHECK or
// CHECK-NEXT match (the end of the output when none follows).
// Leading and trailing spaces of a check's text are ignored; other lines are skipped.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace ir_check {

inline std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

inline std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

/// "" when `output` satisfies `checks`, else a message naming the failed check and showing
/// the output with line numbers and a `>` at the line where matching stopped.
inline std::string check(const std::string& output, const std::string& checks) {
  struct Check {
    std::string kind, text;
    int line;
  };
  std::vector<Check> list;
  std::vector<std::string> check_lines = split_lines(checks);
  for (size_t i = 0; i < check_lines.size(); ++i) {
    std::string l = trim(check_lines[i]);
    for (const char* k : {"CHECK-NEXT:", "CHECK-NOT:", "CHECK:"})
      if (l.rfind(k, 0) == 0) {
        list.push_back({std::string(k, std::strlen(k) - 1), trim(l.substr(std::strlen(k))),
                        static_cast<int>(i) + 1});
        break;
      }
    if (l.rfind("CHECK", 0) == 0 && (list.empty() || list.back().line != static_cast<int>(i) + 1))
      return "unknown check directive in check line " + std::to_string(i + 1) + ": " + l;
  }
  if (list.empty()) return "no CHECK lines";
  std::vector<std::string> out = split_lines(output);
  auto report = [&](const Check& c, size_t at, const std::string& why) {
    std::string msg = c.kind + ": " + c.text + " (check line " + std::to_string(c.line) + ") " +
                      why + "\noutput:\n";
    for (size_t i = 0; i < out.size(); ++i)
      msg += (i == at ? "> " : "  ") + std::to_string(i + 1) + ": " + out[i] + "\n";
    if (at >= out.size()) msg += "> (end of output)\n";
    return msg;
  };
  size_t next = 0;  // the first output line after the previous match
  std::vector<const Check*> nots;
  auto check_nots = [&](size_t from, size_t to) -> std::string {
    for (const Check* n : nots)
      for (size_t i = from; i < to && i < out.size(); ++i)
        if (out[i].find(n->text) != std::string::npos) return report(*n, i, "matched");
    nots.clear();
    return "";
  };
  for (const Check& c : list) {
    if (c.kind == "CHECK-NOT") {
      nots.push_back(&c);
      continue;
    }
    size_t found = out.size();
    if (c.kind == "CHECK-NEXT") {
      if (next < out.size() && out[next].find(c.text) != std::string::npos) found = next;
      if (found == out.size()) return report(c, next, "is not on the next line");
    } else {
      for (size_t i = next; i < out.size() && found == out.size(); ++i)
        if (out[i].find(c.text) != std::string::npos) found = i;
      if (found == out.size()) return report(c, next, "not found from the marked line on");
    }
    if (std::string m = check_nots(next, found); !m.empty()) return m;
    next = found + 1;
  }
  return check_nots(next, out.size());
}

}  // namespace ir_check

/// Expects printed IR `output` to satisfy FileCheck-style `checks` (ir_check::check).
#define EXPECT_IR_CHECK(output, checks) EXPECT_EQ(ir_check::check(output, checks), "")
