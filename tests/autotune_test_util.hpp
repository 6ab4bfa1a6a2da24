// Test-only helpers for the autotuner's CPU tests: kernels, traced graphs, a private
// cache directory per test.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <tessel/tessel.hpp>

#include "examples/kernels/basic.hpp"
#include "runtime/kernel_tuning.hpp"

namespace autotune_test {

namespace ts = tessel;

using examples::make_softmax_basic;
/// The basic softmax (examples/kernels/basic.hpp) under the name these tests use.
inline auto make_softmax(ts::Settings s = {}) { return make_softmax_basic(s); }

/// out = x * scale / scale, scale a tunable: the same values for every choice.
inline auto make_scaled(ts::Settings s = {}) {
  return ts::kernel(
      "scaled",
      [](ts::Tensor x) {
        ts::Tensor out = ts::empty_like(x);
        for (auto t : ts::tile(x.size(0))) {
          ts::Value scale = ts::register_tunable("scale", {1, 2, 4});
          out(t) = x(t) * scale / scale;
        }
        return out;
      },
      s);
}

/// The graph `k` traces for a CPU call with `args`.
template <class K, class... A>
const tessel::ir::Graph& graph_of(const K& k, const A&... args) {
  return tessel::rt::traced_graph(k.impl(), tessel::detail::call_args(args...));
}

/// Points TESSEL_CACHE_DIR at a fresh directory for the test and removes it after.
class CacheDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tessel_cache_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    ::setenv("TESSEL_CACHE_DIR", dir_.c_str(), 1);
    ::unsetenv("TESSEL_SKIP_CACHE");
  }
  void TearDown() override {
    std::filesystem::remove_all(dir_);
    ::unsetenv("TESSEL_CACHE_DIR");
  }
  std::filesystem::path dir_;
};

}  // namespace autotune_test
