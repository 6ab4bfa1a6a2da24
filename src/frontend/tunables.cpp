// ts::register_tunable: a user-declared tunable whose value is a constant of the trace.
//
// Tracing happens once per specialization, before a config is chosen, so a tunable's
// value comes from the config the trace is made for (Settings::config, or the config
// the autotuner is measuring): the Graph records the declaration (name and choices) and
// the value is a Const node. Trying another value means tracing again with a config
// that sets it (KernelImpl does this for the autotuner).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "frontend/trace.hpp"

namespace tessel {

using frontend::TraceContext;

Value register_tunable(const std::string& name, std::vector<int64_t> choices, Loc l) {
  TraceContext& ctx = TraceContext::current(SourceLoc::from(l));
  SourceLoc loc = SourceLoc::from(l);
  if (name.empty()) ctx.fail(loc, "ts::register_tunable needs a name", "name it, e.g. \"unroll\"");
  if (choices.empty())
    ctx.fail(loc, fmt::format("tunable '{}' has no choices", name), "give at least one value");
  if (std::set<int64_t>(choices.begin(), choices.end()).size() != choices.size())
    ctx.fail(loc, fmt::format("tunable '{}' lists a choice twice: {}", name, choices),
             "list each value once");
  auto& declared = ctx.graph().tunables;
  auto it = std::find_if(declared.begin(), declared.end(),
                         [&](const auto& t) { return t.first == name; });
  if (it == declared.end()) {
    declared.emplace_back(name, choices);
  } else if (it->second != choices) {
    ctx.fail(loc,
             fmt::format("tunable '{}' was declared with choices {} and again with {}", name,
                         it->second, choices),
             "declare a tunable once, or with the same choices each time");
  }
  int64_t value = choices.front();
  const std::optional<Config>& config = ctx.settings().config;
  if (config && config->tunables) {
    auto c = config->tunables->find(name);
    if (c != config->tunables->end()) {
      if (std::find(choices.begin(), choices.end(), c->second) == choices.end())
        ctx.fail(loc,
                 fmt::format("the config sets tunable '{}' to {}, which is not one of its "
                             "choices {}",
                             name, c->second, choices),
                 "use one of the declared choices");
      value = c->second;
    }
  }
  return Value::wrap(ctx.constant_int(value, DType::i64, loc));
}

}  // namespace tessel
