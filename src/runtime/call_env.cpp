// The caller's line and the per-call environment variables of a kernel call (call_env.hpp).
#include "runtime/call_env.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <optional>

#include "common/env_bool.hpp"

namespace tessel::detail {

namespace {

thread_local SourceLoc t_call_site;
thread_local CallSite::Env t_call_env;  // the call's, read when it began

CallSite::Env read_call_env() {
  CallSite::Env e;
  e.read = true;
  for (char** p = environ; p && *p; ++p) {
    const char* v = *p;
    if (v[0] != 'T' || std::strncmp(v, "TESSEL_", 7) != 0) continue;
    if (!e.interpret && std::strncmp(v + 7, "INTERPRET=", 10) == 0) e.interpret = v + 17;
    if (!e.check_bounds && std::strncmp(v + 7, "CHECK_BOUNDS=", 13) == 0) e.check_bounds = v + 20;
  }
  return e;
}

// Boolean variable `name` of value `v` (null: unset), read by a call of kernel `kernel`.
bool env_flag_value(const char* name, const char* v, const std::string& kernel) {
  if (std::optional<bool> b = parse_env_bool(v)) return *b;
  throw UserError(kernel, t_call_site, fmt::format("{}={} is not a boolean", name, v),
                  fmt::format("set {}=1 to turn it on, or 0 (or unset it) to turn it off", name));
}

}  // namespace

SourceLoc call_site() { return t_call_site; }

CallSite::CallSite(SourceLoc at) : saved_(t_call_site), saved_env_(t_call_env) {
  t_call_site = at;
  t_call_env = read_call_env();
}

CallSite::~CallSite() {
  t_call_site = saved_;
  t_call_env = saved_env_;
}

bool env_flag(const char* name, const std::string& kernel) {
  return env_flag_value(name, std::getenv(name), kernel);
}

bool call_flag(CallVar v, const std::string& kernel) {
  const CallSite::Env e = t_call_env.read ? t_call_env : read_call_env();
  return v == CallVar::interpret ? env_flag_value("TESSEL_INTERPRET", e.interpret, kernel)
                                 : env_flag_value("TESSEL_CHECK_BOUNDS", e.check_bounds, kernel);
}

}  // namespace tessel::detail
