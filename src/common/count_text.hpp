// A count with its noun in errors: "1 dimension", "3 dimensions".
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>

namespace tessel {

/// `n` and `noun`, plural unless n is 1: `plural`, or `noun` with an 's'.
inline std::string count_of(int64_t n, const char* noun, const char* plural = nullptr) {
  if (n == 1) return fmt::format("1 {}", noun);
  return plural ? fmt::format("{} {}", n, plural) : fmt::format("{} {}s", n, noun);
}

}  // namespace tessel
