// The differential fuzzer's GPU oracle on a fixed batch: each random program's GPU
// results equal the interpreter's (tests/fuzz; `tessel_fuzz --gpu` runs larger batches).
#include <gtest/gtest.h>

#include <string>

#include "fuzz/check.hpp"
#include "fuzz/generate.hpp"
#include "gpu_test_util.hpp"

TEST(FuzzGpu, TwoHundredProgramsMatchTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  std::string failed;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    fuzz::Program p = fuzz::generate(seed);
    fuzz::Outcome o = fuzz::prepare(p);
    if (!o.failed()) o = fuzz::check_gpu(p);
    if (o.failed())
      failed +=
          "seed " + std::to_string(seed) + ": " + fuzz::kind_name(o.kind) + "\n" + o.detail + "\n";
  }
  EXPECT_TRUE(failed.empty()) << failed;
}
