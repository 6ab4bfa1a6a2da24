// Tracing: the IR recorded for small kernels.
#include <gtest/gtest.h>

#include <tessel/tessel.hpp>

namespace ts = tessel;

TEST(Trace, NestedDeviceBoundsRecordPersistentLoop) {
  auto f2 = ts::kernel("f2", [](ts::Tensor x, ts::Tensor batch, ts::Tensor dim) {
    ts::Tensor out = ts::empty_like(x);
    for (auto b : ts::grid(batch))
      for (auto t : ts::tile(dim)) out(b, t) = x(b, t) + 1;
    return out;
  });
  auto x = ts::Buffer::zeros({4, 8}, ts::f32);
  auto bb = ts::Buffer::scalar(2, ts::i32);
  auto db = ts::Buffer::scalar(4, ts::i32);
  std::string ir = f2.ir(x, bb, db);
  EXPECT_NE(ir.find("loop persistent grid"), std::string::npos) << ir;
  EXPECT_NE(ir.find("device_scalar"), std::string::npos) << ir;
  EXPECT_NE(ir.find("store"), std::string::npos) << ir;
}
