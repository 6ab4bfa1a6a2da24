// tessel's error types. Every error a user can cause is a UserError that names the
// user's kernel and source line and says what to do.
#pragma once

#include <source_location>
#include <stdexcept>
#include <string>

namespace tessel {

/// A place in the user's source, stamped on IR nodes at trace time.
struct SourceLoc {
  const char* file = "";
  int line = 0;
  int column = 0;
  static SourceLoc from(const std::source_location& l) {
    return {l.file_name(), static_cast<int>(l.line()), static_cast<int>(l.column())};
  }
  /// "file.cpp:12" (file name without directories), or "" when unknown.
  std::string str() const;
};

/// Base of all tessel errors.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The user's program is wrong (bad shapes, dtypes, loop structure, arguments).
/// The message reads: `tessel: kernel 'NAME', file.cpp:LINE: WHAT. HINT`, followed by the
/// source line with a caret when the file can be read. ", file.cpp:LINE" is left out when
/// the line is unknown (0), "kernel 'NAME'" when the name is empty (errors outside a
/// kernel, e.g. from Buffer), ". HINT" when the hint is empty.
class UserError : public Error {
 public:
  UserError(const std::string& kernel, SourceLoc loc, const std::string& what,
            const std::string& hint = "");
  const std::string& kernel() const { return kernel_; }
  SourceLoc loc() const { return loc_; }

 private:
  std::string kernel_;
  SourceLoc loc_;
};

/// A bug in tessel itself (a broken invariant). Report it.
class InternalError : public Error {
 public:
  explicit InternalError(const std::string& what);
};

/// The environment failed: no CUDA driver or GPU, out of memory, a CUDA call failed.
class RuntimeError : public Error {
 public:
  explicit RuntimeError(const std::string& what);
};

/// Throws InternalError with the message when `cond` is false.
#define TESSEL_CHECK(cond, msg)                                                                   \
  do {                                                                                            \
    if (!(cond))                                                                                  \
      throw ::tessel::InternalError(std::string(__FILE__ ":") + std::to_string(__LINE__) + ": " + \
                                    (msg));                                                       \
  } while (0)

}  // namespace tessel
