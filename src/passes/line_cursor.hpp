// A cursor over one line of a stage dump's comment lines (passes/layout_text.hpp,
// passes/kernel_ir.hpp's parse_kernel_ir): names ([A-Za-z0-9_|]), integers (with a sign)
// and single punctuation characters, spaces between them skipped; errors are
// ir::ParseError at the line and column.
#pragma once

#include <fmt/format.h>

#include <cctype>
#include <string>
#include <vector>

#include "ir/parser.hpp"

namespace tessel::passes {

class LineCursor {
 public:
  LineCursor(std::string text, int line) : s_(std::move(text)), line_(line) {}
  [[noreturn]] void fail(const std::string& what) const {
    throw ir::ParseError(line_, static_cast<int>(i_) + 1, what, s_);
  }
  void skip() {
    while (i_ < s_.size() && s_[i_] == ' ') ++i_;
  }
  bool done() {
    skip();
    return i_ >= s_.size();
  }
  bool accept(char c) {
    skip();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool accept(const std::string& word) {
    skip();
    if (s_.compare(i_, word.size(), word) != 0) return false;
    i_ += word.size();
    return true;
  }
  void expect(char c) {
    if (!accept(c)) fail(fmt::format("expected '{}'", c));
  }
  void expect(const std::string& word) {
    if (!accept(word)) fail(fmt::format("expected '{}'", word));
  }
  std::string name() {
    skip();
    size_t b = i_;
    while (i_ < s_.size() &&
           (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_' || s_[i_] == '|'))
      ++i_;
    if (b == i_) fail("expected a name");
    return s_.substr(b, i_ - b);
  }
  int64_t integer() {
    skip();
    size_t b = i_;
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    if (b == i_ || (i_ == b + 1 && s_[b] == '-')) fail("expected an integer");
    return std::stoll(s_.substr(b, i_ - b));
  }
  int line() const { return line_; }

 private:
  std::string s_;
  size_t i_ = 0;
  int line_;
};

/// The lines of `text` (split at newlines, without them).
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace tessel::passes
