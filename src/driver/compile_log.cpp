#include "driver/compile_log.hpp"

#include <fmt/format.h>

#include <regex>
#include <sstream>
#include <vector>

namespace tessel::rt {

namespace {

// An entry starts at a diagnostic's first line: "name(line): error|warning|remark ..."
// (NVRTC's front end), "ptxas <severity> : ..." (the assembler), or "N errors detected ...".
bool starts_entry(const std::string& line) {
  static const std::regex front(R"(^\S.*\(\d+\): (error|warning|remark|catastrophe))");
  return line.rfind("ptxas", 0) == 0 || std::regex_search(line, front) ||
         line.find(" detected in the compilation of ") != std::string::npos;
}

bool is_warning(const std::string& first_line) {
  static const std::regex front(R"(^\S.*\(\d+\): (warning|remark))");
  return std::regex_search(first_line, front) || first_line.rfind("ptxas warning", 0) == 0 ||
         first_line.rfind("ptxas info", 0) == 0;
}

}  // namespace

std::string compile_log_errors(const std::string& log) {
  std::vector<std::string> entries;
  std::vector<bool> warning;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (entries.empty() || starts_entry(line)) {
      entries.push_back(line + "\n");
      warning.push_back(is_warning(line));
    } else {
      entries.back() += line + "\n";
    }
  }
  std::string out;
  int dropped = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (warning[i])
      ++dropped;
    else
      out += entries[i];
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
        "the kernel needs more registers per thread than Config::maxnreg {} gives it (ptxas asks "
        "for {} or more): raise maxnreg to {} or more, or leave it unset",
        m[1].str(), m[2].str(), m[2].str());
  return "";
}

}  // namespace tessel::rt
