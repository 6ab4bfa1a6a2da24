// The compile pipeline's register budget on the GPU: a config at the budget's edge (256
// registers per thread for one tile value) compiles and computes what the interpreter
// computes; one past it is refused before compiling.
#include <gtest/gtest.h>

#include <tessel/testing.hpp>

#include "examples/kernels/basic.hpp"
#include "gpu_test_util.hpp"
#include "tests/user_error_util.hpp"

namespace ts = tessel;

namespace {

TEST(GpuCompilePipeline, AConfigAtTheRegisterBudgetRunsAndOnePastItIsRefused) {
  TESSEL_REQUIRE_GPU();
  ts::Buffer x = ts::Buffer::randn({6, 4096}, ts::f32, ts::cuda(0));
  ts::Buffer expected = examples::make_softmax_basic()(x.to(ts::cpu()));
  // Two rows of 4096 f32 on one warp: 8192 / 32 = 256 registers per thread.
  auto edge = examples::make_softmax_basic(
      ts::Settings{.config = ts::Config{.block_sizes = std::vector<int64_t>{2}, .num_warps = 1}});
  ts::Buffer out = edge(x);
  EXPECT_EQ(ts::count_mismatches(out.to(ts::cpu()), expected, 1e-5, 1e-5), 0);
  auto past = examples::make_softmax_basic(
      ts::Settings{.config = ts::Config{.block_sizes = std::vector<int64_t>{4}, .num_warps = 1}});
  std::string msg = user_error_test::user_error([&] { past(x); });
  EXPECT_NE(msg.find("512 registers per thread (at most 256)"), std::string::npos) << msg;
}

}  // namespace
