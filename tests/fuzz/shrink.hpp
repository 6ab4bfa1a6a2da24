// The shrinker: a smaller program that still fails the same way.
#pragma once

#include <functional>

#include "fuzz/program.hpp"

namespace fuzz {

/// Repeatedly tries smaller variants of `p` (fewer outputs, nodes bypassed or dropped,
/// unused inputs removed, smaller sizes, plainer views, fills, bounds and config) and
/// keeps each one for which `fails` holds, until none is kept. `p` must fail.
Program shrink(Program p, const std::function<bool(const Program&)>& fails);

}  // namespace fuzz
