#include "driver/compile_log.hpp"

#include <fmt/format.h>

#include <regex>
#include <sstream>
#include <vector>

namespace tessel::rt {

namespace {

// An entry starts at an unindented line: NVRTC's "name(line): error: ...", "At end of
// source: error: ...", "N errors detected ...", ptxas's "ptxas fatal : ..." and the like;
// the lines below one (its source line, caret, "detected during ...") are indented.
bool starts_entry(const std::string& line) {
  return !line.empty() && line[0] != ' ' && line[0] != '\t';
}

// What an entry is, by its first line: a warning (counted when dropped), a note about
// warnings or ptxas's information (dropped), or anything else: kept.
enum class Kind { error, warning, note };
Kind kind_of(const std::string& first_line) {
  static const std::regex front(R"(^\S.*\(\d+\): (warning|remark)\b)");
  if (std::regex_search(first_line, front) || first_line.rfind("ptxas warning", 0) == 0)
    return Kind::warning;
  if (first_line.rfind("Remark: The warnings", 0) == 0 || first_line.rfind("ptxas info", 0) == 0)
    return Kind::note;
  return Kind::error;
}

}  // namespace

std::string compile_log_errors(const std::string& log) {
  std::vector<std::string> entries;
  std::vector<Kind> kinds;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();  // a CRLF log
    if (entries.empty() || starts_entry(line)) {
      entries.push_back(line + "\n");
      kinds.push_back(kind_of(line));
    } else {
      entries.back() += line + "\n";
    }
  }
  std::string out;
  int dropped = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (kinds[i] == Kind::error)
      out += entries[i];
    else if (kinds[i] == Kind::warning)
      ++dropped;
  }
  if (out.find_first_not_of(" \n") == std::string::npos) return log;  // no error entry
  while (out.size() > 1 && out[out.size() - 1] == '\n' && out[out.size() - 2] == '\n')
    out.pop_back();
  if (dropped > 0) out += fmt::format("({} warning{} omitted)\n", dropped, dropped == 1 ? "" : "s");
  return out;
}

std::string compile_log_hint(const std::string& log) {
  static const std::regex registers(
      R"(Insufficient registers \((\d+)\)[^\n]*register target of (\d+))");
  std::smatch m;
  if (std::regex_search(log, m, registers))
    return fmt::format(
        "the kernel needs more registers per thread than the {} it may use (Config::maxnreg, "
        "or under warp_specialize the launch's share): ptxas asks for {} or more; raise "
        "maxnreg to {} or more, or leave it unset (with warp_specialize, use fewer warps)",
        m[1].str(), m[2].str(), m[2].str());
  return "";
}

}  // namespace tessel::rt
