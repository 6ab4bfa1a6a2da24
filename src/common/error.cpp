// tessel's error types: message formatting, with the user's source line and a caret.
#include "tessel/error.hpp"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

namespace tessel {

static const char* basename_of(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}

std::string SourceLoc::str() const {
  if (file == nullptr || *file == '\0') return "";
  std::string s = basename_of(file);
  if (line > 0) s += ":" + std::to_string(line);
  return s;
}

// The directory of the running program, or "" (Linux: /proc/self/exe).
static std::filesystem::path program_dir() {
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : exe.parent_path();
}

// Source file `file` opened for reading. A relative path (a compiler cache that rewrites
// paths relative to the build directory, e.g. ccache with CCACHE_BASEDIR, makes
// std::source_location's so) is tried from the working directory, then from the running
// program's directory and each of its parents (a build tree runs its programs from
// subdirectories of the directory it compiles in).
static std::ifstream open_source(const char* file) {
  std::ifstream in(file);
  if (in || std::filesystem::path(file).is_absolute()) return in;
  for (std::filesystem::path dir = program_dir(); !dir.empty(); dir = dir.parent_path()) {
    std::ifstream there(dir / file);
    if (there) return there;
    if (dir == dir.parent_path()) break;
  }
  return in;
}

// The source line `loc` points at, indented by 4 spaces, and a caret line under its
// column; "" when the file cannot be read.
static std::string source_excerpt(const SourceLoc& loc) {
  if (loc.file == nullptr || *loc.file == '\0' || loc.line <= 0) return "";
  std::ifstream in = open_source(loc.file);
  if (!in) return "";
  std::string text;
  for (int i = 0; i < loc.line; ++i)
    if (!std::getline(in, text)) return "";
  if (!text.empty() && text.back() == '\r') text.pop_back();
  std::string out = "\n    " + text;
  if (loc.column > 0) {
    std::string pad;
    // Keep tabs so the caret lines up with the source as a terminal shows it.
    for (int i = 0; i < loc.column - 1 && i < static_cast<int>(text.size()); ++i)
      pad += text[i] == '\t' ? '\t' : ' ';
    for (int i = static_cast<int>(text.size()); i < loc.column - 1; ++i) pad += ' ';
    out += "\n    " + pad + "^";
  }
  return out;
}

static std::string user_message(const std::string& kernel, const SourceLoc& loc,
                                const std::string& what, const std::string& hint) {
  std::string msg = "tessel: ";
  if (!kernel.empty()) msg += "kernel '" + kernel + "'";
  std::string where = loc.line > 0 ? loc.str() : "";
  if (!where.empty()) msg += (kernel.empty() ? "" : ", ") + where;
  if (!kernel.empty() || !where.empty()) msg += ": ";
  msg += what;
  if (!hint.empty()) msg += (what.empty() || what.back() != '.' ? ". " : " ") + hint;
  return msg + source_excerpt(loc);
}

UserError::UserError(const std::string& kernel, SourceLoc loc, const std::string& what,
                     const std::string& hint)
    : Error(user_message(kernel, loc, what, hint)), kernel_(kernel), loc_(loc) {}

InternalError::InternalError(const std::string& what)
    : Error("tessel internal error: " + what + " (please report this)") {}

static std::string runtime_message(const std::string& what) {
  return what.rfind("tessel: ", 0) == 0 ? what : "tessel: " + what;
}

RuntimeError::RuntimeError(const std::string& what) : Error(runtime_message(what)) {}

}  // namespace tessel
