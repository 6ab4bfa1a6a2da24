// What a kernel call on this thread knows of its caller: the caller's line, where errors
// about its arguments found while tracing point, and the environment variables every call
// reads, found in one pass when it begins.
#pragma once

#include <string>

#include "tessel/error.hpp"

namespace tessel::detail {

/// The line of the kernel call running on this thread (Kernel's call operator); {} outside
/// a call.
SourceLoc call_site();

/// The variables a call reads every time (documented to take effect on the next call).
enum class CallVar { interpret, check_bounds };

/// Sets call_site() to `at` and reads the CallVar variables (one pass over the environment:
/// getenv would scan it once for each) for its scope, restoring the outer call's on exit.
class CallSite {
 public:
  explicit CallSite(SourceLoc at);
  ~CallSite();
  CallSite(const CallSite&) = delete;
  CallSite& operator=(const CallSite&) = delete;

  /// The values of the CallVar variables (null: unset), as one call read them.
  struct Env {
    const char* interpret = nullptr;     // TESSEL_INTERPRET
    const char* check_bounds = nullptr;  // TESSEL_CHECK_BOUNDS
    bool read = false;
  };

 private:
  SourceLoc saved_;
  Env saved_env_;
};

/// Boolean environment variable `name` (parse_env_bool), read now by a call of kernel
/// `kernel`. Throws UserError at call_site() when its value is no boolean.
bool env_flag(const char* name, const std::string& kernel);

/// TESSEL_INTERPRET or TESSEL_CHECK_BOUNDS as the call running on this thread read it when
/// it began (read now outside a call). Throws UserError at call_site() when its value is
/// no boolean.
bool call_flag(CallVar v, const std::string& kernel);

}  // namespace tessel::detail
