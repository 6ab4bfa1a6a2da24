// The value of a boolean environment variable (TESSEL_CHECK_BOUNDS, TESSEL_INTERPRET,
// TESSEL_PRINT_IR, TESSEL_PRINT_CODE, TESSEL_SKIP_CACHE).
#pragma once

#include <optional>
#include <string_view>

namespace tessel {

/// Unset, empty, 0, false, off or no: false; 1, true, on or yes (any case): true; anything
/// else: nothing (the caller reports it: KernelImpl's env_flag, an error at the call).
std::optional<bool> parse_env_bool(const char* value);

}  // namespace tessel
