// What a failed NVRTC compile says, for an error message: the log's errors (NVRTC's
// "file(line): error: ..." entries with their source line and caret, ptxas's "fatal" and
// "error" lines, the closing count), without its warnings and remarks, which generated code
// may give (an unused bound, an unreachable loop in a device header) and which would bury
// the error; and a hint where the log names a cause the user's config can mend.
#pragma once

#include <string>

namespace tessel::rt {

/// The error entries of NVRTC log `log`, in order, then "(N warnings omitted)" when it
/// dropped any; `log` itself when no entry is an error. An entry is an unindented line and
/// the indented ones below it (a source line, its caret); warnings and remarks, NVRTC's note
/// on suppressing them and ptxas's information are dropped, every other entry kept.
std::string compile_log_errors(const std::string& log);

/// A hint for the user where `log` names a cause their config can mend ("" otherwise):
/// ptxas's "Insufficient registers (R) ... register target of N or higher" (Config::maxnreg,
/// or a warp-specialized launch's share, below what the kernel needs) gives "raise maxnreg to
/// N or more, or leave it unset".
std::string compile_log_hint(const std::string& log);

}  // namespace tessel::rt
