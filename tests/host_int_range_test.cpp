// Host integers are whole numbers (Python's ints in Helion): host arithmetic past 64 bits
// is a UserError at the user's expression, not a wrapped value (ir::HostOverflow).
#include <gtest/gtest.h>

#include <cstdint>
#include <tessel/tessel.hpp>

#include "tests/user_error_util.hpp"

namespace ts = tessel;
using user_error_test::expect_message;
using user_error_test::user_error;

namespace {

constexpr int kGrowLine = __LINE__ + 3;  // the line of the product
auto make_grow() {
  return ts::kernel("grow", [](ts::Tensor x, int64_t n) {
    ts::Tensor out = ts::empty({x.size(0) * n, 2}, x.dtype());
    for (auto [a, b] : ts::tile(out.size(0), out.size(1))) out(a, b) = 1.0;
    return out;
  });
}

TEST(HostIntRange, ASizeProductPast64BitsIsAnErrorAtItsLine) {
  auto grow = make_grow();
  ts::Buffer x = ts::Buffer::ones({4}, ts::f32);
  ts::Buffer ok = grow(x, 3);  // 12 x 2 ones
  EXPECT_EQ(ok.shape(), (std::vector<int64_t>{12, 2}));
  EXPECT_EQ(ok.to_vector(), std::vector<double>(24, 1.0));
  std::string msg = user_error([&] { grow(x, int64_t{1} << 62); });  // 4 * 2^62 wraps to 0
  expect_message(msg, "grow", "host_int_range_test.cpp", kGrowLine,
                 "host integer arithmetic overflows 64 bits: 4 * 4611686018427387904", "too large");
}

}  // namespace
