// MoE-style kernels with device-resident row counts, on the interpreter, against a plain
// reference.
#include <gtest/gtest.h>

#include <cmath>
#include <tessel/testing.hpp>

#include "examples/kernels/moe.hpp"

namespace ts = tessel;

namespace {

double silu_mul(double g, double u) { return static_cast<float>(g / (1 + std::exp(-g)) * u); }

TEST(Moe, RoutedSiluAndMulRespectsPerExpertCounts) {
  const int64_t E = 4, C = 37, H = 50;
  ts::Buffer x = ts::Buffer::randn({E, C, 2 * H}, ts::f32, ts::cpu(), 11);
  std::vector<double> counts = {0, 5, 37, 20};
  ts::Buffer cnt = ts::Buffer::from_vector(counts, {E}, ts::i32);
  ts::Buffer out = examples::make_silu_and_mul_routed(
      ts::Settings{.config = ts::Config{.block_sizes = std::vector<int64_t>{8, 16}}})(x, cnt);
  std::vector<double> xv = x.to_vector(), want(E * C * H, 0.0);
  for (int64_t e = 0; e < E; ++e)
    for (int64_t c = 0; c < counts[e]; ++c)
      for (int64_t h = 0; h < H; ++h)
        want[(e * C + c) * H + h] =
            silu_mul(xv[(e * C + c) * 2 * H + h], xv[(e * C + c) * 2 * H + H + h]);
  EXPECT_EQ(
      ts::count_mismatches(out, ts::Buffer::from_vector(want, {E, C, H}, ts::f32), 1e-6, 1e-5), 0);
}

TEST(Moe, PackedSiluAndMulStopsAtDeviceTokenCount) {
  const int64_t T = 100, H = 24;
  ts::Buffer x = ts::Buffer::randn({T, 2 * H}, ts::bf16, ts::cpu(), 12);
  for (int64_t n : {0, 1, 63, 100}) {
    ts::Buffer out = examples::make_silu_and_mul_packed()(
        x, ts::Buffer::scalar(static_cast<double>(n), ts::i64));
    std::vector<double> xv = x.to_vector(), want(T * H, 0.0);
    for (int64_t t = 0; t < n; ++t)
      for (int64_t h = 0; h < H; ++h)
        want[t * H + h] = silu_mul(xv[t * 2 * H + h], xv[t * 2 * H + H + h]);
    EXPECT_EQ(
        ts::count_mismatches(out, ts::Buffer::from_vector(want, {T, H}, ts::bf16), 1e-2, 1e-2), 0)
        << n;
  }
}

}  // namespace
