// Seed 000 on the GPU at its own sizes: B = 2^15, D = 2^18 f32 (2^33 elements, 32 GiB per
// tensor), bounds B/2 and D/2 as one-element i32 tensors in device memory, index_dtype
// i64. Checked on the device (a mismatch counter): out[:B/2, :D/2] == x + 1 exactly.
#include <gtest/gtest.h>

#include <tessel/testing.hpp>

#include "examples/kernels/seed000.hpp"
#include "gpu_test_util.hpp"

namespace ts = tessel;

namespace {

constexpr int64_t kB = int64_t{1} << 15, kD = int64_t{1} << 18;

ts::Buffer region(const ts::Buffer& t, int64_t rows, int64_t cols) {
  return t.narrow(0, 0, rows).narrow(1, 0, cols);
}

class Seed000Full : public ::testing::Test {
 protected:
  // The 32 GiB input is made by the first test that runs, not in SetUpTestSuite: a failed
  // allocation there would mark the tests skipped, here it fails the test.
  static const ts::Buffer& input() {
    if (!x_) x_ = new ts::Buffer(ts::Buffer::randn({kB, kD}, ts::f32, ts::cuda(0), 7));
    return *x_;
  }
  static void TearDownTestSuite() {
    delete x_;
    x_ = nullptr;
  }
  template <class K>
  void check(const K& kernel) {
    TESSEL_REQUIRE_GPU();
    const ts::Buffer& x = input();
    ts::Buffer bb = ts::Buffer::scalar(kB / 2, ts::i32, ts::cuda(0));
    ts::Buffer db = ts::Buffer::scalar(kD / 2, ts::i32, ts::cuda(0));
    ts::Buffer out = kernel(x, bb, db);
    EXPECT_EQ(
        ts::count_mismatches(region(out, kB / 2, kD / 2), region(x, kB / 2, kD / 2), 0, 0, 1.0), 0);
    // New bound values in device memory: no recompilation, and the new region is computed.
    int64_t compiles = ts::rt::compile_count();
    bb.fill(kB / 4);
    db.fill(kD / 8);
    out = ts::Buffer();  // free before the next 32 GiB output
    out = kernel(x, bb, db);
    EXPECT_EQ(ts::rt::compile_count(), compiles);
    EXPECT_EQ(
        ts::count_mismatches(region(out, kB / 4, kD / 8), region(x, kB / 4, kD / 8), 0, 0, 1.0), 0);
  }
  static ts::Buffer* x_;
};
ts::Buffer* Seed000Full::x_ = nullptr;

TEST_F(Seed000Full, F1OneTileLoopOverTwoDeviceBounds) { check(examples::make_f1()); }
TEST_F(Seed000Full, F2GridAroundNestedTileOfDeviceBounds) { check(examples::make_f2()); }
TEST_F(Seed000Full, F2FixedBoundLoadedInHostCode) { check(examples::make_f2_fixed()); }

// With a zero-initialized output, rows and columns past the device bounds stay 0, and
// changing the bounds changes what is computed.
TEST(Seed000Bounds, ChangingDeviceBoundsChangesComputedRegion) {
  TESSEL_REQUIRE_GPU();
  auto f2z = ts::kernel("f2_zeros", [](ts::Tensor x, ts::Tensor batch, ts::Tensor dim) {
    ts::Tensor out = ts::zeros_like(x);
    for (auto b : ts::grid(batch))
      for (auto t : ts::tile(dim)) out(b, t) = x(b, t) + 1;
    return out;
  });
  ts::Buffer x = ts::Buffer::randn({512, 3000}, ts::f32, ts::cuda(0), 3);
  ts::Buffer bb = ts::Buffer::scalar(100, ts::i32, ts::cuda(0));
  ts::Buffer db = ts::Buffer::scalar(1001, ts::i32, ts::cuda(0));
  for (auto [rows, cols] : {std::pair{100, 1001}, std::pair{37, 3000}, std::pair{512, 7}}) {
    bb.fill(rows);
    db.fill(cols);
    ts::Buffer out = f2z(x, bb, db).to(ts::cpu());
    std::vector<double> xv = x.to_vector(), ov = out.to_vector();
    int64_t bad = 0;
    for (int64_t i = 0; i < 512; ++i)
      for (int64_t j = 0; j < 3000; ++j) {
        double want = (i < rows && j < cols) ? static_cast<float>(xv[i * 3000 + j] + 1) : 0.0;
        bad += ov[i * 3000 + j] != want;
      }
    EXPECT_EQ(bad, 0) << rows << "x" << cols;
  }
}

}  // namespace
