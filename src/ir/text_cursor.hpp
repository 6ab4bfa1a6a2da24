// A cursor over the lines of a text, for ir::parse (ir/parser.hpp): tokens of the IR's
// text form, and errors (ir::ParseError) at the line and column they are found.
#pragma once

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/parser.hpp"

namespace tessel::ir {

/// A 1-based line and column (0: none).
struct Pos {
  int line = 0, column = 0;
};

inline bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

class TextCursor {
 public:
  explicit TextCursor(const std::string& text) {
    size_t start = 0;
    while (start <= text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      lines_.push_back(text.substr(start, end - start));
      if (!lines_.back().empty() && lines_.back().back() == '\r') lines_.back().pop_back();
      start = end + 1;
    }
  }

 protected:
  const std::string& text() const { return lines_[li_]; }
  char peek() const { return col_ < text().size() ? text()[col_] : '\0'; }
  void skip_ws() {
    while (col_ < text().size() && (text()[col_] == ' ' || text()[col_] == '\t')) ++col_;
  }
  bool at_end() {
    skip_ws();
    return col_ >= text().size() || text().compare(col_, 2, "//") == 0;
  }
  Pos pos() const { return {static_cast<int>(li_) + 1, static_cast<int>(col_) + 1}; }
  /// The position of the next token.
  Pos here() {
    skip_ws();
    return pos();
  }

  [[noreturn]] void fail_at(Pos p, const std::string& what) const {
    size_t l = static_cast<size_t>(p.line > 0 ? p.line - 1 : 0);
    throw ParseError(p.line, p.column, what, l < lines_.size() ? lines_[l] : "");
  }
  [[noreturn]] void fail(const std::string& what) { fail_at(pos(), what); }
  [[noreturn]] void expected(const std::string& what) {
    skip_ws();
    std::string found = "end of line";
    if (!at_end()) {
      size_t e = col_;
      while (e < text().size() && text()[e] != ' ') ++e;
      found = "'" + text().substr(col_, e - col_) + "'";
    }
    fail(fmt::format("expected {}, found {}", what, found));
  }

  /// Consumes `tok` when it comes next (a word must end there).
  bool accept(std::string_view tok) {
    skip_ws();
    if (text().compare(col_, tok.size(), tok) != 0) return false;
    size_t e = col_ + tok.size();
    if (word_char(tok.back()) && e < text().size() && word_char(text()[e])) return false;
    col_ = e;
    return true;
  }
  void expect(std::string_view tok) {
    if (!accept(tok)) expected(fmt::format("'{}'", tok));
  }
  std::string word(const std::string& what) {
    skip_ws();
    size_t e = col_;
    while (e < text().size() && word_char(text()[e])) ++e;
    if (e == col_) expected(what);
    std::string w = text().substr(col_, e - col_);
    col_ = e;
    return w;
  }
  int64_t integer(const std::string& what) {
    skip_ws();
    int64_t v = 0;
    const char* b = text().data() + col_;
    auto [p, ec] = std::from_chars(b, text().data() + text().size(), v);
    if (ec != std::errc() || p == b) expected(what);
    col_ += static_cast<size_t>(p - b);
    return v;
  }
  /// A number as fmt prints a double ("0.5", "1e+30", "-inf", "nan").
  double number(const std::string& what) {
    skip_ws();
    const char* b = text().c_str() + col_;
    char* e = nullptr;
    double v = std::strtod(b, &e);
    if (e == b || (*e && *e != ' ' && *e != ',' && *e != ']')) expected(what);
    col_ += static_cast<size_t>(e - b);
    return v;
  }
  /// The raw text of the next space-free token (a constant, read once its dtype is known).
  std::string token(const std::string& what) {
    skip_ws();
    size_t e = col_;
    while (e < text().size() && text()[e] != ' ') ++e;
    if (e == col_) expected(what);
    std::string t = text().substr(col_, e - col_);
    col_ = e;
    return t;
  }
  std::string string_lit(const std::string& what) {
    skip_ws();
    if (peek() != '"') expected(what);
    std::string out;
    for (++col_; col_ < text().size(); ++col_) {
      char c = text()[col_];
      if (c == '"') {
        ++col_;
        return out;
      }
      if (c == '\\' && col_ + 1 < text().size()) {
        c = text()[++col_];
        out += c == 'n' ? '\n' : c;
      } else {
        out += c;
      }
    }
    fail("expected '\"' closing the string");
  }
  template <class E>
  E named(std::optional<E> (*lookup)(const std::string&), const std::string& what) {
    Pos p = here();
    std::string w = word(what);
    std::optional<E> e = lookup(w);
    if (!e) fail_at(p, fmt::format("expected {}, found '{}'", what, w));
    return *e;
  }
  DType dtype() {
    Pos p = here();
    std::string w = word("a dtype (bool, i8, i32, i64, u64, f16, bf16, f32, f64, f8e4m3, f8e5m2)");
    for (DType t : {DType::boolean, DType::i8, DType::i32, DType::i64, DType::u64, DType::f16,
                    DType::bf16, DType::f32, DType::f64, DType::f8e4m3, DType::f8e5m2})
      if (dtype_name(t) == w) return t;
    fail_at(p, fmt::format("expected a dtype (bool, i8, i32, i64, u64, f16, bf16, f32, f64, "
                           "f8e4m3, f8e5m2), found '{}'",
                           w));
  }

  std::vector<std::string> lines_;
  size_t li_ = 0, col_ = 0;  // the current line and column (0-based)
};

}  // namespace tessel::ir
