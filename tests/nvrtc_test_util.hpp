// Helpers of the tests that compile generated CUDA with NVRTC for sm_90 (no GPU needed).
#pragma once

#include <gtest/gtest.h>

#include <iterator>
#include <regex>
#include <string>

#include "driver/cuda_api.hpp"

/// Skips the test where the NVRTC library cannot be loaded.
#define REQUIRE_NVRTC() \
  if (!::tessel::rt::nvrtc_available()) GTEST_SKIP() << "NVRTC not found"

namespace nvrtc_test {

/// The generated sources of one call of kernel k, compiled with NVRTC (throws UserError
/// with NVRTC's log on failure), concatenated.
template <class K, class... A>
std::string compile(const K& k, const A&... args) {
  std::string all;
  for (const std::string& s : k.cuda(true, args...)) all += s;
  return all;
}

/// Occurrences of `what` in `s` (e.g. barriers in generated code).
inline int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

/// Matches of regular expression `re` (ECMAScript) in `s`.
inline int count_matches(const std::string& s, const std::string& re) {
  std::regex r(re);
  return static_cast<int>(
      std::distance(std::sregex_iterator(s.begin(), s.end(), r), std::sregex_iterator()));
}

}  // namespace nvrtc_test
