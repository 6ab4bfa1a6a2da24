// TESSEL_AUTOTUNE_TIMEOUT (autotune::autotune_timeout_s): a number of seconds above 0, else a
// UserError naming the kernel and its loop; unset or empty, the default. No GPU needed.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <tessel/tessel.hpp>

#include "autotune/gpu_backend.hpp"
#include "autotune_test_util.hpp"
#include "examples/kernels/basic.hpp"

namespace ts = tessel;

namespace {

// Sets TESSEL_AUTOTUNE_TIMEOUT for the scope (unset at its end).
struct TimeoutEnv {
  explicit TimeoutEnv(const char* v) { ::setenv("TESSEL_AUTOTUNE_TIMEOUT", v, 1); }
  ~TimeoutEnv() { ::unsetenv("TESSEL_AUTOTUNE_TIMEOUT"); }
};

TEST(AutotuneTimeout, IsANumberOfSecondsAboveZero) {
  auto add = examples::make_add();
  const ts::Buffer x = ts::Buffer::zeros({100}, ts::f32);
  const ts::ir::Graph& g = autotune_test::graph_of(add, x, x);
  ::unsetenv("TESSEL_AUTOTUNE_TIMEOUT");
  EXPECT_EQ(ts::autotune::autotune_timeout_s(g, 10), 10);
  {
    TimeoutEnv e("");
    EXPECT_EQ(ts::autotune::autotune_timeout_s(g, 10), 10);
  }
  {
    TimeoutEnv e("2.5");
    EXPECT_EQ(ts::autotune::autotune_timeout_s(g, 10), 2.5);
  }
  for (const char* junk : {"abc", "10s", "-1", "0", " 5", "nan", "inf", "1e999"}) {
    TimeoutEnv e(junk);
    try {
      ts::autotune::autotune_timeout_s(g, 10);
      ADD_FAILURE() << junk;
    } catch (const ts::UserError& err) {
      const std::string m = err.what();
      EXPECT_NE(m.find("kernel 'add', basic.hpp:"), std::string::npos) << m;
      EXPECT_NE(m.find(std::string("TESSEL_AUTOTUNE_TIMEOUT is '") + junk +
                       "', not a number of seconds above 0"),
                std::string::npos)
          << m;
    }
  }
}

}  // namespace
