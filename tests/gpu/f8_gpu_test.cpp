// The 8-bit floats on the GPU against the interpreter (tests/f8_test.cpp on the CPU): CUDA's
// conversions (__nv_fp8_e4m3 / __nv_fp8_e5m2 from float) give the interpreter's bits, and
// ts::dot of 8-bit operands on wgmma (K-major, or a row-major y copied K-major by the threads)
// and, at K blocks under 128 bytes, on mma.sync m16n8k32 (K-major) and the CUDA cores.
// wgmma keeps fewer than f32's 24 bits when it adds 8-bit products into its accumulator
// (sm_90: about 14, as measured by others), so its sums (of a tile of K, added into f32 by the
// threads unless Settings::fast_accum) differ from the interpreter's f32
// ones by a few units of 2^-14 of the partial sums' magnitude: the check is |got - want| <=
// 2^-8 sum_k |x_ik w_jk| (a tile of K missed or added twice would be off by about its share
// of that sum, an eighth or more here).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <tessel/tessel.hpp>
#include <tessel/testing.hpp>

#include "examples/kernels/matmul.hpp"
#include "gpu_test_util.hpp"
#include "tests/dot_test_util.hpp"

namespace ts = tessel;

namespace {

using dot_test::blocks;

struct Shape {
  int64_t m, k, n;
};

// |b| elementwise, of b's dtype (exact for a float dtype).
ts::Buffer abs_of(const ts::Buffer& b) {
  std::vector<double> v = b.to_vector();
  for (double& x : v) x = std::abs(x);
  return ts::Buffer::from_vector(v, b.shape(), b.dtype());
}

}  // namespace

// Stores of f32 values into each 8-bit float: ties, subnormals, saturation, infinities, NaN,
// and 2^16 values spread over the binades, bit for bit.
TEST(F8Gpu, StoresRoundAsTheInterpreterDoes) {
  TESSEL_REQUIRE_GPU();
  auto k = ts::kernel("f8_store", [](ts::Tensor x) {
    ts::Tensor e4 = ts::empty({x.size(0)}, ts::f8e4m3), e5 = ts::empty({x.size(0)}, ts::f8e5m2);
    for (auto t : ts::tile(x.size(0))) {
      e4(t) = x(t);
      e5(t) = x(t) * 2.0;
    }
    return std::tuple{e4, e5};
  });
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> v = {0,
                           -0.0,
                           448,
                           460,
                           464,
                           470,
                           1e6,
                           -1e6,
                           inf,
                           -inf,
                           57344,
                           61440,
                           1.0625,
                           1.1875,
                           15.9,
                           0.001,
                           1e-30,
                           -2.5,
                           std::ldexp(1.0, -10),
                           std::ldexp(3.0, -10),
                           std::ldexp(1.0, -17)};
  ts::Buffer r = ts::Buffer::randn({1 << 16}, ts::f32, ts::cpu(), 3);
  const std::vector<double> rv = r.to_vector();
  for (size_t i = 0; i < rv.size(); ++i)
    v.push_back(std::ldexp(rv[i], static_cast<int>(i % 40) - 24));
  ts::Buffer x = ts::Buffer::from_vector(v, {static_cast<int64_t>(v.size())}, ts::f32);
  auto [e4, e5] = k(x);
  auto [g4, g5] = k(x.to(ts::cuda(0)));
  EXPECT_EQ(ts::count_mismatches(g4.to(ts::cpu()), e4, 0, 0), 0);
  EXPECT_EQ(ts::count_mismatches(g5.to(ts::cpu()), e5, 0, 0), 0);
  ts::Buffer nan = ts::Buffer::full({4}, std::nan(""), ts::f32, ts::cuda(0));
  for (double y : std::get<0>(k(nan)).to_vector()) EXPECT_TRUE(std::isnan(y));
}

// wgmma m64nNk32 (x w^T): 1 and 2 warpgroups, K blocks of 128 and 256 (2 chunks of a K-major
// row), ragged M, N and K (K's last tile zeroed past its end), M = 1, K = 0, persistent
// programs; e4m3 and e5m2; a row-major y copied K-major. At K blocks of 32 and 64, x w^T on
// mma.sync m16n8k32 and a row-major y on the CUDA cores, which sum in f32 as the interpreter.
TEST(F8Gpu, DotsMatchTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  struct Blocks {
    int64_t m, n, k;
    int warps, stages;
    ts::PidType pid = ts::PidType::flat;
    int split_k = 1;
    bool ws = false;    // warp_specialize: a producer warpgroup issues the TMA copies
    double init = 0.0;  // the accumulator's first value (ones: the partial sums added into it)
  };
  const std::vector<Shape> shapes{{256, 192, 128}, {264, 80, 136},  {1, 48, 64},
                                  {16, 16, 16},    {136, 272, 208}, {64, 0, 136}};
  // The interpreter's sums once per dtype and shape, for every config (its f32 sums differ
  // between configs by rounding alone, far below the tolerance), with the sums of the
  // products' magnitudes that scale the tolerance.
  struct Case {
    ts::Buffer x, w, y;
    std::vector<double> want, bound, want_y, bound_y;
  };
  auto reference = dot_test::make_dot();
  std::vector<std::vector<Case>> cases;  // [dtype][shape]
  for (ts::DType t : {ts::f8e4m3, ts::f8e5m2}) {
    cases.emplace_back();
    for (Shape s : shapes) {
      Case c{ts::Buffer::randn({s.m, s.k}, t, ts::cpu(), 41),
             ts::Buffer::randn({s.n, s.k}, t, ts::cpu(), 42),
             ts::Buffer::randn({s.k, s.n}, t, ts::cpu(), 49)};
      c.want = reference(c.x, c.w.transpose(0, 1)).to_vector();
      c.bound = reference(abs_of(c.x), abs_of(c.w).transpose(0, 1)).to_vector();
      c.want_y = reference(c.x, c.y).to_vector();  // y row-major: copied K-major by the threads
      c.bound_y = reference(abs_of(c.x), abs_of(c.y)).to_vector();
      cases.back().push_back(std::move(c));
    }
  }
  for (size_t ti = 0; ti < 2; ++ti)
    for (Blocks b :
         {Blocks{128, 256, 128, 8, 4}, Blocks{128, 128, 128, 4, 3}, Blocks{64, 128, 256, 4, 2},
          Blocks{128, 256, 128, 8, 3, ts::PidType::persistent_blocked},
          Blocks{128, 256, 128, 8, 4, ts::PidType::persistent_blocked, 1, true},
          Blocks{128, 128, 128, 8, 3, ts::PidType::flat, 2}, Blocks{256, 128, 128, 8, 3},
          Blocks{128, 128, 128, 8, 3, ts::PidType::flat, 1, false, 1.0},
          // 16 rows of M: wgmma m64n16k32 on the transposed product (Mma::swap_ab)
          Blocks{16, 128, 128, 4, 4},
          // K blocks under 128 bytes: mma.sync m16n8k32 (x w^T), the CUDA cores (y row-major).
          Blocks{64, 64, 32, 4, 1}, Blocks{16, 8, 32, 1, 1}, Blocks{128, 64, 64, 8, 2}}) {
      ts::Config c = blocks(b.m, b.n, b.k, b.warps);
      c.num_stages = b.stages;
      c.pid_type = b.pid;
      if (b.split_k > 1) c.split_k = b.split_k;
      if (b.ws) c.warp_specialize = true;
      auto k = dot_test::make_dot(ts::Settings{.max_sms = 3, .config = c}, b.init);
      for (size_t si = 0; si < shapes.size(); ++si) {
        const Shape s = shapes[si];
        const Case& e = cases[ti][si];
        const std::string what = ts::dtype_name(e.x.dtype()) + " " + c.to_json() + " from " +
                                 std::to_string(b.init) + " " + std::to_string(s.m) + "x" +
                                 std::to_string(s.k) + "x" + std::to_string(s.n);
        ts::Buffer got = k(e.x.to(ts::cuda(0)), e.w.to(ts::cuda(0)).transpose(0, 1));
        ASSERT_EQ(got.shape(), (std::vector<int64_t>{s.m, s.n})) << what;
        const std::vector<double> g = got.to_vector();
        ASSERT_EQ(g.size(), e.want.size()) << what;
        int64_t bad = 0;
        double worst = 0;
        for (size_t i = 0; i < e.want.size(); ++i) {
          const double err = std::abs(g[i] - b.init - e.want[i]) / (e.bound[i] + 1e-30);
          worst = std::max(worst, err);
          bad += std::abs(g[i] - b.init - e.want[i]) > std::ldexp(e.bound[i], -8);
        }
        EXPECT_EQ(bad, 0) << what << ": worst |got - want| / sum |products| " << worst;
        const std::vector<double> gy = k(e.x.to(ts::cuda(0)), e.y.to(ts::cuda(0))).to_vector();
        ASSERT_EQ(gy.size(), e.want_y.size()) << what;
        int64_t bad_y = 0;
        for (size_t i = 0; i < e.want_y.size(); ++i)
          bad_y += std::abs(gy[i] - b.init - e.want_y[i]) > std::ldexp(e.bound_y[i], -8);
        EXPECT_EQ(bad_y, 0) << what << " y row-major";
      }
    }
  auto k = dot_test::make_dot(ts::Settings{.config = blocks(64, 64, 32, 4)});
  ts::Buffer x = ts::Buffer::randn({100, 72}, ts::f8e4m3, ts::cpu(), 43);
  ts::Buffer y = ts::Buffer::randn({72, 56}, ts::f8e4m3, ts::cpu(), 44);
  EXPECT_EQ(ts::count_mismatches(k(x.to(ts::cuda(0)), y.to(ts::cuda(0))).to(ts::cpu()), k(x, y),
                                 1e-4, 1e-4),
            0);
}

// Settings::fast_accum unset, each tile of K's products (128 of K) is summed by wgmma from zero
// and added into f32 by the threads; fast_accum adds every product into the tensor cores'
// accumulator, whose fewer bits lose more of the small products as the sum grows along K.
// At K = 8192 the largest error relative to sum_k |x_ik w_jk| is no larger with the tile sums
// added into f32 than with fast accumulation (both printed), and within 2^-10 of it.
TEST(F8Gpu, TileSumsAddedIntoF32AreNoLessAccurateThanFastAccumulation) {
  TESSEL_REQUIRE_GPU();
  const int64_t m = 64, n = 256, kk = 8192;
  const ts::Buffer x = ts::Buffer::rand({m, kk}, ts::f8e4m3, ts::cpu(), 71);
  const ts::Buffer w = ts::Buffer::randn({n, kk}, ts::f8e4m3, ts::cpu(), 72);
  // The exact sums (f8 products and their sums of 8192 are exact in double) and the sums of
  // the products' magnitudes, by plain loops.
  const std::vector<double> xv = x.to_vector(), wv = w.to_vector();
  std::vector<double> want(static_cast<size_t>(m * n)), bound(want.size());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t k = 0; k < kk; ++k) {
        const double p = xv[static_cast<size_t>(i * kk + k)] * wv[static_cast<size_t>(j * kk + k)];
        want[static_cast<size_t>(i * n + j)] += p;
        bound[static_cast<size_t>(i * n + j)] += std::abs(p);
      }
  for (ts::Config c : {blocks(128, 256, 128, 8), blocks(16, 128, 128, 4)}) {
    c.num_stages = 4;
    double worst[2] = {0, 0};
    for (bool fast : {false, true}) {
      auto k = dot_test::make_dot(ts::Settings{.config = c, .fast_accum = fast});
      const std::vector<double> got =
          k(x.to(ts::cuda(0)), w.to(ts::cuda(0)).transpose(0, 1)).to_vector();
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i)
        worst[fast] = std::max(worst[fast], std::abs(got[i] - want[i]) / (bound[i] + 1e-30));
      std::printf("fp8 %s K %ld, %s: largest |got - want| / sum |products| %.3g\n",
                  c.to_json().c_str(), static_cast<long>(kk),
                  fast ? "fast accumulation" : "tile sums added into f32", worst[fast]);
    }
    EXPECT_LE(worst[0], worst[1]) << c.to_json();
    EXPECT_LE(worst[0], std::ldexp(1.0, -10)) << c.to_json();
  }
}

// examples::make_fp8_matmul and its row-wise form: the scales applied to the f32 sum, one
// rounding to bf16.
TEST(F8Gpu, ScaledMatmulsMatchTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  ts::Config c = blocks(128, 128, 128, 8);
  c.num_stages = 3;
  const int64_t m = 200, n = 136, kk = 272;
  ts::Buffer x = ts::Buffer::randn({m, kk}, ts::f8e4m3, ts::cpu(), 45);
  ts::Buffer w = ts::Buffer::randn({n, kk}, ts::f8e4m3, ts::cpu(), 46);
  ts::Buffer sx = ts::Buffer::full({1}, 0.5, ts::f32), sy = ts::Buffer::full({1}, 0.75, ts::f32);
  ts::Buffer rx = ts::Buffer::rand({m}, ts::f32, ts::cpu(), 47);
  ts::Buffer ry = ts::Buffer::rand({n}, ts::f32, ts::cpu(), 48);
  auto gpu = [](const ts::Buffer& b) { return b.to(ts::cuda(0)); };
  auto tensor = examples::make_fp8_matmul(ts::Settings{.config = c});
  EXPECT_EQ(
      ts::count_mismatches(tensor(gpu(x), gpu(w).transpose(0, 1), gpu(sx), gpu(sy)).to(ts::cpu()),
                           tensor(x, w.transpose(0, 1), sx, sy), 1e-2, 1e-2),
      0);
  auto rows = examples::make_fp8_matmul_rowwise(ts::Settings{.config = c});
  EXPECT_EQ(
      ts::count_mismatches(rows(gpu(x), gpu(w).transpose(0, 1), gpu(rx), gpu(ry)).to(ts::cpu()),
                           rows(x, w.transpose(0, 1), rx, ry), 1e-2, 1e-2),
      0);
}

// ts::mean of 8- and 16-bit floats: summed and divided in f32, rounded once, on the GPU as
// on the interpreter (rows of 3000 values in [0, 1): their sums pass e4m3's range).
TEST(F8Gpu, MeansOfNarrowFloatsMatchTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  auto k = ts::kernel("row_mean", [](ts::Tensor x) {
    ts::Tensor o = ts::empty({x.size(0)}, x.dtype());
    ts::register_reduction_dim(x.size(1));
    for (auto tm : ts::tile(x.size(0))) o(tm) = ts::mean(x(tm, ts::all), 1);
    return o;
  });
  for (ts::DType t : {ts::f8e4m3, ts::f8e5m2, ts::f16, ts::bf16}) {
    ts::Buffer x = ts::Buffer::rand({64, 3000}, ts::f32, ts::cpu(), 49);
    ts::Buffer xt = ts::Buffer::empty({64, 3000}, t);
    xt.copy_from(x);
    const ts::Buffer want = k(xt);
    // Within one unit of the dtype's last place: the f32 sums' order differs, which may flip
    // a rounding (a saturated 8-bit sum would give 448 / 3000 for a mean near 0.5).
    const double ulp = ts::is_f8(t) ? 0.13 : 1e-2;
    EXPECT_EQ(ts::count_mismatches(k(xt.to(ts::cuda(0))).to(ts::cpu()), want, 0, ulp), 0)
        << ts::dtype_name(t);
    for (double v : want.to_vector()) EXPECT_NEAR(v, 0.5, 0.05) << ts::dtype_name(t);
  }
}
