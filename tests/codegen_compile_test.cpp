// Every generated kernel compiles with NVRTC for sm_90 (no GPU needed).
#include <gtest/gtest.h>

#include <tessel/tessel.hpp>

#include "runtime/cuda_api.hpp"

namespace ts = tessel;

#define REQUIRE_NVRTC() \
  if (!ts::rt::nvrtc_available()) GTEST_SKIP() << "NVRTC not found"

TEST(CodegenCompile, SeedF2NestedDeviceBounds) {
  REQUIRE_NVRTC();
  auto f2 = ts::kernel("f2", [](ts::Tensor x, ts::Tensor batch, ts::Tensor dim) {
    ts::Tensor out = ts::empty_like(x);
    for (auto b : ts::grid(batch))
      for (auto t : ts::tile(dim)) out(b, t) = x(b, t) + 1;
    return out;
  });
  auto src = f2.cuda(true, ts::Buffer::zeros({4, 8}, ts::f32), ts::Buffer::scalar(2, ts::i32),
                     ts::Buffer::scalar(4, ts::i32));
  ASSERT_EQ(src.size(), 1u);
  EXPECT_NE(src[0].find("ld_vec"), std::string::npos) << src[0];
}
