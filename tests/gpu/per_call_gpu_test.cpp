// Host values a call brings that the specialization key does not hold, on the GPU
// against the interpreter: a padded extent computed from sizes in another power-of-two
// bucket, an f64 kernel's float scalar argument (passed as a double), and an allocation
// like a transposed argument (its strides and the values written through them).
#include <gtest/gtest.h>

#include <cmath>
#include <tessel/tessel.hpp>
#include <vector>

#include "gpu_test_util.hpp"
#include "tests/per_call_kernels.hpp"

namespace ts = tessel;
using namespace per_call_kernels;

namespace {

ts::Buffer gpu(const ts::Buffer& b) { return b.to(ts::cuda(0)); }

TEST(PerCallGpu, PaddedExtentsOfEveryBucket) {
  TESSEL_REQUIRE_GPU();
  auto arange = make_arange_times_three();
  auto sum = make_sum_of_allocation();
  for (int64_t n : {5, 7, 5}) {  // 15 and 21 elements: padded to 16, then 32
    ts::Buffer x = ts::Buffer::zeros({n}, ts::f32);
    EXPECT_EQ(arange(gpu(x)).to_vector(), arange(x).to_vector()) << n;
    EXPECT_EQ(sum(gpu(x)).to_vector(), sum(x).to_vector()) << n;
  }
}

TEST(PerCallGpu, AnF64KernelGetsTheFullValueOfAFloatArgument) {
  TESSEL_REQUIRE_GPU();
  const double eps = 1e-12 * (1 + std::ldexp(1.0, -30));  // f32 cannot hold it
  ts::Buffer x = ts::Buffer::ones({1000}, ts::f64);
  std::vector<double> want = make_scale()(x, eps).to_vector();
  EXPECT_EQ(want.front(), eps);
  EXPECT_EQ(make_scale()(gpu(x), eps).to_vector(), want);
}

TEST(PerCallGpu, A16BitFloatTimesANumberIsComputedInF32AsInTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  for (ts::DType t : {ts::f16, ts::bf16}) {
    std::vector<double> xs;
    for (int i = 0; i < 1000; ++i) xs.push_back((i - 500) * 0.0013);
    ts::Buffer x = ts::Buffer::from_vector(xs, {1000}, t);
    auto [arg, literal, integer] = make_loss_scale()(x, 65536.0);
    auto [gpu_arg, gpu_literal, gpu_integer] = make_loss_scale()(gpu(x), 65536.0);
    EXPECT_TRUE(std::isfinite(arg.to_vector()[500])) << ts::dtype_name(t);
    EXPECT_EQ(gpu_arg.to_vector(), arg.to_vector()) << ts::dtype_name(t);
    EXPECT_EQ(gpu_literal.to_vector(), literal.to_vector()) << ts::dtype_name(t);
    EXPECT_EQ(gpu_integer.to_vector(), integer.to_vector()) << ts::dtype_name(t);
  }
}

TEST(PerCallGpu, A16BitFloatWithASizeOrAnIntegerArgumentAsInTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  for (ts::DType t : {ts::f16, ts::bf16}) {
    std::vector<double> xs;
    for (int i = 0; i < 70001; ++i) xs.push_back((i % 4099) * 0.5);
    ts::Buffer x = ts::Buffer::from_vector(xs, {70001}, t);
    auto [by_size, by_n, equal] = make_by_size_and_n()(x, int64_t{2049});
    auto [gpu_by_size, gpu_by_n, gpu_equal] = make_by_size_and_n()(gpu(x), int64_t{2049});
    EXPECT_NE(by_size.to_vector()[2], 0) << ts::dtype_name(t);
    EXPECT_EQ(gpu_by_size.to_vector(), by_size.to_vector()) << ts::dtype_name(t);
    EXPECT_EQ(gpu_by_n.to_vector(), by_n.to_vector()) << ts::dtype_name(t);
    EXPECT_EQ(gpu_equal.to_vector(), equal.to_vector()) << ts::dtype_name(t);
  }
}

TEST(PerCallGpu, HostArithmeticOfAFloatArgumentIsRoundedOnceAsInTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  ts::Buffer x = ts::Buffer::ones({1000}, ts::f32);
  std::vector<double> want = make_tenth()(x, 1e39).to_vector();
  EXPECT_EQ(want.front(), static_cast<float>(1e38));
  EXPECT_EQ(make_tenth()(gpu(x), 1e39).to_vector(), want);
}

TEST(PerCallGpu, EmptyLikeOfATransposedArgument) {
  TESSEL_REQUIRE_GPU();
  auto k = make_double();
  // Buffer::to() copies into a contiguous Buffer: transpose on each device.
  ts::Buffer row_major = ts::Buffer::randn({96, 80}, ts::f32, ts::cpu(), 1);
  ts::Buffer base = ts::Buffer::randn({80, 96}, ts::f32, ts::cpu(), 2);
  std::pair<ts::Buffer, ts::Buffer> cases[] = {{row_major, gpu(row_major)},
                                               {base.transpose(0, 1), gpu(base).transpose(0, 1)},
                                               {row_major, gpu(row_major)}};
  for (const auto& [x, xd] : cases) {
    ts::Buffer want = k(x), got = k(xd);
    EXPECT_EQ(got.strides(), x.strides());
    EXPECT_EQ(got.to_vector(), want.to_vector());  // x * 2 is exact
  }
}

}  // namespace
