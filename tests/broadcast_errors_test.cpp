// Operands that do not broadcast: the error names the kernel, the line and both extents,
// and its hint fits the cause (two sizes that differ, two dims of one loop, tiles of two
// loops).
#include <gtest/gtest.h>

#include <string>
#include <tessel/tessel.hpp>

#include "user_error_util.hpp"

namespace ts = tessel;

namespace {

int g_line = 0;  // the line of the offending statement, recorded while tracing

TEST(BroadcastErrors, WholeRowsOfDifferentSizesSayTheSizesDiffer) {
  auto k = ts::kernel("scaled_rows", [](ts::Tensor x, ts::Tensor w) {
    ts::Tensor out = ts::empty_like(x);
    for (auto tm : ts::tile(x.size(0))) {
      g_line = __LINE__ + 1;
      out(tm, ts::all) = x(tm, ts::all) * w(ts::all);
    }
    return out;
  });
  std::string msg = user_error_test::user_error([&] {
    k(ts::Buffer::zeros({4, 1000}, ts::f32), ts::Buffer::zeros({999}, ts::f32));
  });
  user_error_test::expect_message(msg, "scaled_rows", "broadcast_errors_test.cpp", g_line,
                                  "do not broadcast",
                                  "the two sizes differ on this call (1000 and 999): check the "
                                  "tensors' shapes");
  EXPECT_EQ(msg.find("tiles of different loops"), std::string::npos) << msg;
}

TEST(BroadcastErrors, TilesOfTwoLoopsSayTilesNeverBroadcastTogether) {
  auto k = ts::kernel("two_loops", [](ts::Tensor x, ts::Tensor y) {
    ts::Tensor out = ts::empty_like(x);
    for (auto ta : ts::tile(x.size(0)))
      for (auto tb : ts::tile(y.size(0))) {
        g_line = __LINE__ + 1;
        out(ta) = x(ta) + y(tb);
      }
    return out;
  });
  std::string msg = user_error_test::user_error(
      [&] { k(ts::Buffer::zeros({64}, ts::f32), ts::Buffer::zeros({64}, ts::f32)); });
  user_error_test::expect_message(msg, "two_loops", "broadcast_errors_test.cpp", g_line,
                                  "do not broadcast", "tiles of different loops never broadcast");
}

// y(t) of a 2-D y is [t, all] (as y[t] in torch): added to a 1-D x(t), the hint says the
// ranks differ before anything else.
TEST(BroadcastErrors, OperandsOfDifferentRanksSaySoFirst) {
  auto k = ts::kernel("short_index", [](ts::Tensor x, ts::Tensor y) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) {
      g_line = __LINE__ + 1;
      out(t) = x(t) + y(t);
    }
    return out;
  });
  std::string msg = user_error_test::user_error([&] {
    k(ts::Buffer::zeros({10}, ts::f32), ts::Buffer::zeros({10, 2}, ts::f32));
  });
  user_error_test::expect_message(msg, "short_index", "broadcast_errors_test.cpp", g_line,
                                  "do not broadcast",
                                  "the operands have 1 and 2 dims (a tensor indexed with fewer "
                                  "indices than its dims keeps the others whole");
}

}  // namespace
