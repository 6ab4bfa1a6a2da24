// i8 on the GPU against the interpreter (tests/i8_test.cpp on the CPU): wrapping arithmetic
// and saturating casts bit for bit, and ts::dot of i8 operands summed in i32 on wgmma (s8,
// both K-major), on wgmma with split-K, and on the CUDA cores (a row-major y): integer sums
// are exact, so every element matches.
#include <gtest/gtest.h>

#include <cmath>
#include <tessel/tessel.hpp>
#include <tessel/testing.hpp>

#include "examples/kernels/matmul.hpp"
#include "gpu_test_util.hpp"
#include "tests/dot_test_util.hpp"
#include "tests/i8_test_util.hpp"

namespace ts = tessel;

namespace {

using dot_test::blocks;

struct Shape {
  int64_t m, k, n;
};

// i8 values over the whole range [-128, 127] from f32 normals (a copy to i8 truncates).
ts::Buffer random_i8(std::vector<int64_t> shape, uint64_t seed) {
  ts::Buffer r = ts::Buffer::randn(shape, ts::f32, ts::cpu(), seed);
  std::vector<double> v = r.to_vector();
  for (double& x : v) x = std::fmax(-128, std::fmin(127, std::trunc(x * 60)));
  return ts::Buffer::from_vector(v, shape, ts::i8);
}

ts::Buffer gpu(const ts::Buffer& b) { return b.to(ts::cuda(0)); }

}  // namespace

TEST(I8Gpu, ArithmeticWrapsAndCastsSaturateAsTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  auto k = ts::kernel("i8_ops_gpu", [](ts::Tensor x, ts::Tensor y, ts::Tensor f) {
    ts::Tensor sum = ts::empty_like(x), prod = ts::empty_like(x), cast = ts::empty_like(x);
    ts::Tensor mixed = ts::empty({x.size(0)}, ts::i32);
    for (auto t : ts::tile(x.size(0))) {
      sum(t) = x(t) + y(t);
      prod(t) = ts::floordiv(x(t) * y(t), 3) - x(t);
      cast(t) = f(t).to(ts::i8);
      mixed(t) = x(t).to(ts::i32) * 1000 + y(t);
    }
    return std::tuple{sum, prod, cast, mixed};
  });
  const int64_t n = 1 << 16;
  ts::Buffer x = random_i8({n}, 1), y = random_i8({n}, 2);
  ts::Buffer f = ts::Buffer::randn({n}, ts::f32, ts::cpu(), 3);
  std::vector<double> fv = f.to_vector();
  for (size_t i = 0; i < fv.size(); ++i) fv[i] *= i % 2 ? 300 : 40;  // past the range too
  fv[0] = std::nan("");
  f = ts::Buffer::from_vector(fv, {n}, ts::f32);
  auto [s, p, c, m] = k(x, y, f);
  auto [gs, gp, gc, gm] = k(gpu(x), gpu(y), gpu(f));
  EXPECT_EQ(ts::count_mismatches(gs.to(ts::cpu()), s, 0, 0), 0);
  EXPECT_EQ(ts::count_mismatches(gp.to(ts::cpu()), p, 0, 0), 0);
  EXPECT_EQ(ts::count_mismatches(gc.to(ts::cpu()), c, 0, 0), 0);
  EXPECT_EQ(ts::count_mismatches(gm.to(ts::cpu()), m, 0, 0), 0);
}

// wgmma m64nNk32 s8 (x w^T, and a row-major y copied K-major): 1 and 2 warpgroups, K blocks
// of 128 and 256, ragged M, N and K, M = 1, N = 0, persistent programs, split-K and a
// producer warpgroup (the consumers copying a row-major y K-major); at K
// blocks of 32 and 64 mma.sync m16n8k32 s8 (x w^T) and the CUDA cores (a row-major y).
// Exact.
TEST(I8Gpu, DotsMatchTheInterpreterExactly) {
  TESSEL_REQUIRE_GPU();
  struct Blocks {
    int64_t m, n, k;
    int warps, stages;
    ts::PidType pid = ts::PidType::flat;
    int split_k = 1;
    bool ws = false;  // Config::warp_specialize: a producer warpgroup issues the TMA copies
  };
  const std::vector<Shape> shapes{{256, 192, 128}, {264, 80, 136},  {1, 48, 64},
                                  {16, 16, 16},    {136, 272, 208}, {64, 0, 136}};
  // The interpreter's sums (exact: the config changes none) once per shape, for every config.
  struct Case {
    ts::Buffer x, w, y, want, want_y;
  };
  std::vector<Case> cases;
  auto reference = examples::make_int8_matmul();
  for (Shape s : shapes) {
    Case c{random_i8({s.m, s.k}, 41), random_i8({s.n, s.k}, 42), random_i8({s.k, s.n}, 47), {}, {}};
    c.want = reference(c.x, c.w.transpose(0, 1));
    c.want_y = reference(c.x, c.y);  // y row-major: copied K-major by the threads
    cases.push_back(std::move(c));
  }
  for (Blocks b :
       {Blocks{128, 256, 128, 8, 4}, Blocks{128, 128, 128, 4, 3}, Blocks{64, 128, 256, 4, 2},
        Blocks{128, 256, 128, 8, 3, ts::PidType::persistent_blocked},
        Blocks{128, 128, 128, 8, 3, ts::PidType::flat, 2},
        Blocks{128, 256, 128, 8, 4, ts::PidType::persistent_interleaved, 1, true},
        // 16 rows of M: wgmma m64n16k32 on the transposed product (Mma::swap_ab), split in 2
        Blocks{16, 128, 128, 4, 4, ts::PidType::flat, 2},
        // K blocks under 128 bytes: mma.sync m16n8k32 (x w^T), the CUDA cores (y row-major).
        Blocks{64, 64, 32, 4, 1}, Blocks{16, 8, 32, 1, 1}, Blocks{128, 64, 64, 8, 2}}) {
    ts::Config c = blocks(b.m, b.n, b.k, b.warps);
    c.num_stages = b.stages;
    c.pid_type = b.pid;
    c.split_k = b.split_k;
    if (b.ws) c.warp_specialize = true;
    auto k = examples::make_int8_matmul(ts::Settings{.max_sms = 3, .config = c});
    for (size_t i = 0; i < shapes.size(); ++i) {
      const Shape s = shapes[i];
      const Case& e = cases[i];
      const std::string what = c.to_json() + " " + std::to_string(s.m) + "x" + std::to_string(s.k) +
                               "x" + std::to_string(s.n);
      ts::Buffer got = k(gpu(e.x), gpu(e.w).transpose(0, 1));
      ASSERT_EQ(got.shape(), e.want.shape()) << what;
      EXPECT_EQ(ts::count_mismatches(got.to(ts::cpu()), e.want, 0, 0), 0) << what;
      EXPECT_EQ(ts::count_mismatches(k(gpu(e.x), gpu(e.y)).to(ts::cpu()), e.want_y, 0, 0), 0)
          << what << " y row-major";
    }
  }
  auto k = examples::make_int8_matmul(ts::Settings{.config = blocks(64, 64, 32, 4)});
  ts::Buffer x = random_i8({100, 72}, 43), y = random_i8({72, 56}, 44);
  EXPECT_EQ(ts::count_mismatches(k(gpu(x), gpu(y)).to(ts::cpu()), k(x, y), 0, 0), 0);
}

// examples::make_int8_matmul_rowwise: the exact i32 sum to f32, scaled, rounded once to bf16.
TEST(I8Gpu, RowwiseScaledMatmulMatchesTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  ts::Config c = blocks(128, 128, 128, 8);
  c.num_stages = 3;
  const int64_t m = 200, n = 136, kk = 272;
  ts::Buffer x = random_i8({m, kk}, 45), w = random_i8({n, kk}, 46);
  ts::Buffer rx = ts::Buffer::rand({m}, ts::f32, ts::cpu(), 47);
  ts::Buffer ry = ts::Buffer::rand({n}, ts::f32, ts::cpu(), 48);
  auto rows = examples::make_int8_matmul_rowwise(ts::Settings{.config = c});
  EXPECT_EQ(
      ts::count_mismatches(rows(gpu(x), gpu(w).transpose(0, 1), gpu(rx), gpu(ry)).to(ts::cpu()),
                           rows(x, w.transpose(0, 1), rx, ry), 0, 0),
      0);
}

// max, min, argmax and argmin of i8 rows on the GPU pad with i8's lowest and highest values
// (ragged rows of 37 and 1000 columns; rows of all-negative values) as the interpreter does.
TEST(I8Gpu, RaggedReductionsMatchTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  auto k = i8_test::make_row_extremes();
  for (int64_t cols : {37, 1000}) {
    std::vector<double> v;
    for (int64_t i = 0; i < 64; ++i)
      for (int64_t j = 0; j < cols; ++j)
        v.push_back(i % 3 == 0   ? -100 + (i * 7 + j * 13) % 90  // all negative
                    : i % 3 == 1 ? 20 + (i + j * 31) % 100       // all positive
                                 : (i * 5 + j * 17) % 256 - 128);
    ts::Buffer x = ts::Buffer::from_vector(v, {64, cols}, ts::i8);
    auto [mx, mn, amx, amn] = k(x);
    auto [gmx, gmn, gamx, gamn] = k(gpu(x));
    EXPECT_EQ(gmx.to_vector(), mx.to_vector()) << cols;
    EXPECT_EQ(gmn.to_vector(), mn.to_vector()) << cols;
    EXPECT_EQ(gamx.to_vector(), amx.to_vector()) << cols;
    EXPECT_EQ(gamn.to_vector(), amn.to_vector()) << cols;
  }
}
