#include "common/env_bool.hpp"

#include <algorithm>
#include <cctype>
#include <initializer_list>

namespace tessel {

std::optional<bool> parse_env_bool(const char* v) {
  if (!v || !*v) return false;
  const std::string_view value(v);
  auto is_one_of = [&](std::initializer_list<std::string_view> words) {
    return std::any_of(words.begin(), words.end(), [&](std::string_view w) {
      return std::equal(value.begin(), value.end(), w.begin(), w.end(), [](char a, char b) {
        return std::tolower(static_cast<unsigned char>(a)) == b;
      });
    });
  };
  if (is_one_of({"0", "false", "off", "no"})) return false;
  if (is_one_of({"1", "true", "on", "yes"})) return true;
  return std::nullopt;
}

}  // namespace tessel
