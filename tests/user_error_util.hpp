// Test-only helpers for tests of UserError messages (tests/errors_test.cpp,
// config_errors_test.cpp, call_errors_test.cpp and others).
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <source_location>
#include <string>
#include <tessel/tessel.hpp>

namespace user_error_test {

/// Zero-filled f32 tensors of shape [n] and [m, n].
inline tessel::Buffer vec(int n) { return tessel::Buffer::zeros({n}, tessel::f32); }
inline tessel::Buffer mat(int m, int n) { return tessel::Buffer::zeros({m, n}, tessel::f32); }

/// The message of the error of type E `f` throws ("<no error>" when none).
template <class E, class F>
std::string error_message(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "<no error>";
}

/// The message of the tessel::UserError `f` throws ("<no error>" when none).
template <class F>
std::string user_error(F&& f) {
  return error_message<tessel::UserError>(f);
}

/// `msg` names kernel `kernel`, `file` at `line` (when > 0), and contains `what` and
/// `hint`.
inline void expect_message(const std::string& msg, const std::string& kernel,
                           const std::string& file, int line, const std::string& what,
                           const std::string& hint) {
  EXPECT_NE(msg.find("kernel '" + kernel + "'"), std::string::npos) << msg;
  if (line > 0)
    EXPECT_NE(msg.find(file + ":" + std::to_string(line)), std::string::npos)
        << "expected line " << line << " in: " << msg;
  EXPECT_NE(msg.find(what), std::string::npos) << msg;
  EXPECT_NE(msg.find(hint), std::string::npos) << msg;
}

/// The same with `file` the calling test's own file (its name without the directory).
inline void expect_message(const std::string& msg, const std::string& kernel, int line,
                           const std::string& what, const std::string& hint,
                           std::source_location caller = std::source_location::current()) {
  const std::string path = caller.file_name();
  expect_message(msg, kernel, path.substr(path.find_last_of('/') + 1), line, what, hint);
}

/// expect_message bound to one test file and its recorded line (`g_line`, set while
/// tracing): `const ExpectMessageAt expect_message{"races_test.cpp", g_line};`.
struct ExpectMessageAt {
  const char* file;
  const int& line;
  void operator()(const std::string& msg, const std::string& kernel, const std::string& what,
                  const std::string& hint) const {
    expect_message(msg, kernel, file, line, what, hint);
  }
};

/// The line of source file `path` holding `text` (its first), 0 when none: where an
/// example's error points (tests name its lines rather than hard-coding them).
inline int line_in_file(const std::string& path, const std::string& text) {
  std::ifstream in(path);
  std::string l;
  for (int n = 1; std::getline(in, l); ++n)
    if (l.find(text) != std::string::npos) return n;
  return 0;
}

}  // namespace user_error_test
