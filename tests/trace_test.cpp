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

// ts::arange of a constant inside a loop meets a load of that extent or another such
// arange: the extents unify (checked per call against the size), where the host-code
// check referred to the constant inside the loop (an IR verifier error) and the
// interpreter read it before its definition.
TEST(Trace, AnArangeOfAConstantMeetsASizeOrAnotherArange) {
  auto k = ts::kernel("arange_const", [](ts::Tensor x, ts::Tensor out, ts::Tensor twice) {
    for (auto i : ts::grid(out.size(0))) {
      out(i, ts::all) = ts::arange(6) + x(i, ts::all);
      twice(i, ts::all) = ts::arange(4) + ts::arange(4);
    }
  });
  ts::Buffer x = ts::Buffer::ones({2, 6}, ts::i32), out = ts::Buffer::zeros({2, 6}, ts::i32);
  ts::Buffer twice = ts::Buffer::zeros({2, 4}, ts::i32);
  k(x, out, twice);
  EXPECT_EQ(out.to_vector(), (std::vector<double>{1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(twice.to_vector(), (std::vector<double>{0, 2, 4, 6, 0, 2, 4, 6}));
  ts::Buffer x7 = ts::Buffer::ones({2, 7}, ts::i32), out7 = ts::Buffer::zeros({2, 7}, ts::i32);
  EXPECT_THROW(k(x7, out7, twice), ts::UserError);  // 7 columns against arange(6)
}
