// ts::dot on the GPU against the interpreter: on tensor cores (mma.sync, f16, bf16 and
// TF32 operands; passes/tensor_cores.hpp) and on the CUDA cores (f32 under ieee precision), at
// ragged sizes (M = 1, N = 1, K = 1), with transposed operands, pipelined and persistent programs,
// and a fused epilogue. Random operands: the GPU sums the f32 products in another order than the
// interpreter, so results agree within 1e-4 * (1 + |value|) (sums of at most a few hundred products
// of magnitude ~1). Exact agreement on small integers: tests/gpu/contractions_gpu_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tessel/tessel.hpp>
#include <tessel/testing.hpp>
#include <tuple>

#include "autotune/autotuner.hpp"
#include "examples/kernels/matmul.hpp"
#include "examples/kernels/moe.hpp"
#include "gpu_test_util.hpp"
#include "runtime/kernel_tuning.hpp"
#include "tests/dot_test_util.hpp"
#include "tests/moe_dot_test_util.hpp"

namespace ts = tessel;

namespace {

using dot_test::blocks;

template <class K, class... A>
void expect_close_to_interpreter(const K& k, const std::string& what, const A&... cpu_args) {
  ts::Buffer want = k(cpu_args...);
  ts::Buffer got = k(cpu_args.to(ts::cuda(0))...);
  ASSERT_EQ(got.shape(), want.shape()) << what;
  EXPECT_EQ(ts::count_mismatches(got.to(ts::cpu()), want, 1e-4, 1e-4), 0) << what;
}

// k(x, y) with x [m, K] and y [K, n] as transposed views (x.t() of a [K, m] tensor: A M-major;
// y.t() of [n, K]: B K-major) or as they are, bf16, on the GPU against the interpreter (the
// views taken on each device: Buffer::to copies contiguously).
template <class K>
void expect_transposes_match(const K& k, int64_t m, int64_t kk, int64_t n, uint64_t seed) {
  ts::Buffer xt = ts::Buffer::randn({kk, m}, ts::bf16, ts::cpu(), seed);
  ts::Buffer yt = ts::Buffer::randn({n, kk}, ts::bf16, ts::cpu(), seed + 1);
  ts::Buffer x = ts::Buffer::randn({m, kk}, ts::bf16, ts::cpu(), seed + 2);
  ts::Buffer y = ts::Buffer::randn({kk, n}, ts::bf16, ts::cpu(), seed + 3);
  auto view = [](const ts::Buffer& v, bool tr) { return tr ? v.transpose(0, 1) : v; };
  for (auto [ta, tb] : {std::pair{true, false}, {false, true}, {true, true}}) {
    const ts::Buffer& a = ta ? xt : x;
    const ts::Buffer& b = tb ? yt : y;
    ts::Buffer want = k(view(a, ta), view(b, tb));
    ts::Buffer got = k(view(a.to(ts::cuda(0)), ta), view(b.to(ts::cuda(0)), tb));
    EXPECT_EQ(ts::count_mismatches(got.to(ts::cpu()), want, 1e-4, 1e-4), 0) << ta << tb;
  }
}

struct Shape {
  int64_t m, k, n;
};
const std::vector<Shape> kShapes{{256, 128, 192}, {257, 95, 129}, {1, 64, 40}, {70, 1, 1}};

}  // namespace

TEST(DotGpu, SixteenBitDotsOnTensorCoresMatchTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  struct Blocks {
    int64_t m, n, k;
    int warps;
  };
  for (ts::DType t : {ts::bf16, ts::f16})
    for (Blocks b : {Blocks{64, 64, 32, 4}, Blocks{128, 128, 32, 8}, Blocks{128, 64, 64, 4},
                     Blocks{16, 32, 16, 4}, Blocks{64, 16, 16, 2}, Blocks{16, 8, 16, 1}})
      for (Shape s : kShapes) {
        auto k = dot_test::make_dot(ts::Settings{.config = blocks(b.m, b.n, b.k, b.warps)});
        expect_close_to_interpreter(
            k,
            ts::dtype_name(t) + " " + blocks(b.m, b.n, b.k, b.warps).to_json() + " " +
                std::to_string(s.m) + "x" + std::to_string(s.k) + "x" + std::to_string(s.n),
            ts::Buffer::randn({s.m, s.k}, t, ts::cpu(), 1),
            ts::Buffer::randn({s.k, s.n}, t, ts::cpu(), 2));
      }
}

// A batched dot of 3-D tiles whose batch tile has block 1 is each program's 2-D dot
// (passes/unit_tiles.hpp): on wgmma (K's block 64; flat, persistent with the ring running
// across a program's tiles, warp-specialized with the producer computing the batch's begin)
// and on mma.sync (K's block 32), with a bias broadcast over the batch and rows, at ragged M,
// N and K; persistent programs walk several tiles each (max_sms 3).
TEST(DotGpu, BatchedDotsWithABatchTileOfOneMatchTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  ts::Config wgmma = blocks(128, 128, 64, 4), sync = blocks(64, 64, 32, 4);
  wgmma.num_stages = 3;
  ts::Config persistent = wgmma, specialized = blocks(128, 128, 64, 8);
  persistent.pid_type = ts::PidType::persistent_interleaved;
  specialized.num_stages = 4;
  specialized.warp_specialize = true;
  ts::Config specialized_persistent = specialized;
  specialized_persistent.pid_type = ts::PidType::persistent_blocked;
  for (const ts::Config& c : {wgmma, sync, persistent, specialized, specialized_persistent})
    for (Shape s : {Shape{257, 95, 129}, Shape{1, 64, 40}}) {
      auto k = dot_test::make_batched_dot(ts::Settings{.max_sms = 3, .config = c});
      expect_close_to_interpreter(k, c.to_json() + " m " + std::to_string(s.m),
                                  ts::Buffer::randn({3, s.m, s.k}, ts::bf16, ts::cpu(), 1),
                                  ts::Buffer::randn({3, s.k, s.n}, ts::bf16, ts::cpu(), 2),
                                  ts::Buffer::randn({s.n}, ts::f32, ts::cpu(), 3));
    }
}

// Each epilogue the unit_tiles stage rewrites (broadcast biases, a per-batch scale, a
// row max, a transposed store, a where, a sum over the batch tile, a bf16 store, a scalar
// load), its batched dot on wgmma, against the interpreter.
TEST(DotGpu, BatchedDotEpiloguesMatchTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  ts::Config c = blocks(64, 64, 64, 4);
  c.num_stages = 3;
  ts::Buffer x = ts::Buffer::randn({3, 130, 200}, ts::bf16, ts::cpu(), 4);
  ts::Buffer y = ts::Buffer::randn({3, 200, 72}, ts::bf16, ts::cpu(), 5);
  ts::Buffer v = ts::Buffer::randn({72}, ts::f32, ts::cpu(), 6);
  ts::Buffer v3 = ts::Buffer::randn({3}, ts::f32, ts::cpu(), 7);
  for (int epilogue = 0; epilogue <= 9; ++epilogue) {
    auto k = dot_test::make_batched_epilogue(epilogue, false, ts::Settings{.config = c});
    ts::Buffer want = k(x, y, epilogue == 3 ? v3 : v);
    ts::Buffer got =
        k(x.to(ts::cuda(0)), y.to(ts::cuda(0)), (epilogue == 3 ? v3 : v).to(ts::cuda(0)));
    const double tol = epilogue == 8 ? 1e-2 : 1e-4;  // 8 stores bf16: one rounding apart
    EXPECT_EQ(ts::count_mismatches(got.to(ts::cpu()), want, tol, tol), 0)
        << "epilogue " << epilogue;
  }
}

// x.t() of a [K, M] tensor is M-major (ldmatrix .trans for A), y.t() of [N, K] K-major.
TEST(DotGpu, TransposedOperandsMatchTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  auto k = ts::kernel(
      "dot_t",
      [](ts::Tensor x, ts::Tensor y) {
        ts::Tensor out = ts::empty({x.size(0), y.size(1)}, ts::f32);
        for (auto [tm, tn] : ts::tile(x.size(0), y.size(1))) {
          ts::Value acc = ts::zeros({tm, tn});
          for (auto tk : ts::tile(x.size(1))) acc = ts::dot(x(tm, tk), y(tk, tn), acc);
          out(tm, tn) = acc;
        }
        return out;
      },
      ts::Settings{.config = blocks(64, 32, 32, 4)});
  expect_transposes_match(k, 150, 96, 70, 3);
}

TEST(DotGpu, PipelinedAndPersistentDotsMatchTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  for (int stages : {1, 2, 3})
    for (ts::PidType pid : {ts::PidType::flat, ts::PidType::persistent_interleaved,
                            ts::PidType::persistent_blocked}) {
      ts::Config c = blocks(64, 64, 32, 4);
      c.num_stages = stages;
      c.pid_type = pid;
      auto k = dot_test::make_dot(ts::Settings{.config = c});
      expect_close_to_interpreter(k, c.to_json(),
                                  ts::Buffer::randn({300, 200}, ts::bf16, ts::cpu(), 7),
                                  ts::Buffer::randn({200, 150}, ts::bf16, ts::cpu(), 8));
    }
}

// bias + gelu (tanh) + a residual, cast to bf16: the epilogue runs on the accumulator, on
// mma.sync and on wgmma; its bf16 store takes 16-byte vectors with the accumulator's lanes
// exchanged for registers (passes/lane_exchange.hpp) where rows are 16-byte aligned (N =
// 264), element stores where not (N = 150).
TEST(DotGpu, AFusedEpilogueMatchesTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  auto make = [](const ts::Config& c) {
    return ts::kernel(
        "dot_epilogue",
        [](ts::Tensor x, ts::Tensor y, ts::Tensor bias, ts::Tensor r) {
          ts::Tensor out = ts::empty({x.size(0), y.size(1)}, ts::bf16);
          for (auto [tm, tn] : ts::tile(x.size(0), y.size(1))) {
            ts::Value acc = ts::zeros({tm, tn});
            for (auto tk : ts::tile(x.size(1))) acc = ts::dot(x(tm, tk), y(tk, tn), acc);
            ts::Value h = acc + bias(ts::newaxis, tn).to(ts::f32);
            ts::Value gelu = 0.5 * h * (1.0 + ts::tanh(0.7978845608 * (h + 0.044715 * h * h * h)));
            out(tm, tn) = (gelu + r(tm, tn).to(ts::f32)).to(ts::bf16);
          }
          return out;
        },
        ts::Settings{.config = c});
  };
  ts::Config wgmma = blocks(128, 128, 64, 4), wide = blocks(128, 256, 64, 8);
  wgmma.num_stages = 3;
  wide.num_stages = 4;
  for (const ts::Config& c : {blocks(128, 64, 32, 4), wgmma, wide})
    for (const auto& [m, kk, n] :
         {std::tuple{200, 160, 96}, std::tuple{300, 136, 264}, std::tuple{130, 72, 150}}) {
      auto k = make(c);
      ts::Buffer x = ts::Buffer::randn({m, kk}, ts::bf16, ts::cpu(), 9);
      ts::Buffer y = ts::Buffer::randn({kk, n}, ts::bf16, ts::cpu(), 10);
      ts::Buffer bias = ts::Buffer::randn({n}, ts::bf16, ts::cpu(), 11);
      ts::Buffer r = ts::Buffer::randn({m, n}, ts::bf16, ts::cpu(), 12);
      ts::Buffer want = k(x, y, bias, r);
      ts::Buffer got =
          k(x.to(ts::cuda(0)), y.to(ts::cuda(0)), bias.to(ts::cuda(0)), r.to(ts::cuda(0)));
      // One bf16 rounding of values up to ~40: a last-bit difference is 0.25.
      EXPECT_EQ(ts::count_mismatches(got.to(ts::cpu()), want, 0.02, 0.01), 0)
          << c.to_json() << " " << m << "x" << kk << "x" << n;
    }
}

// Config::warp_specialize: a producer warpgroup issues the ring's copies, flat and
// persistent, at ragged shapes (partial tiles of K zeroed between the consumers' barriers),
// through a fused epilogue, and for TF32 with a row-major y (copied K-major by the
// consumers); several programs per SM walking their tiles (max_sms 3).
TEST(DotGpu, WarpSpecializedDotsMatchTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  for (ts::PidType pid :
       {ts::PidType::flat, ts::PidType::persistent_blocked, ts::PidType::persistent_interleaved})
    for (ts::Config c : {blocks(128, 256, 64, 8), blocks(128, 128, 64, 4)}) {
      c.num_stages = 4;
      c.pid_type = pid;
      c.warp_specialize = true;
      auto k = dot_test::make_dot(ts::Settings{.max_sms = 3, .config = c});
      for (Shape s :
           {Shape{256, 128, 192}, Shape{257, 200, 264}, Shape{1, 64, 40}, Shape{520, 8, 8}})
        expect_close_to_interpreter(k,
                                    c.to_json() + " " + std::to_string(s.m) + "x" +
                                        std::to_string(s.k) + "x" + std::to_string(s.n),
                                    ts::Buffer::randn({s.m, s.k}, ts::bf16, ts::cpu(), 41),
                                    ts::Buffer::randn({s.k, s.n}, ts::bf16, ts::cpu(), 42));
      auto fused = examples::make_matmul_bias_gelu(ts::Settings{.max_sms = 3, .config = c});
      ts::Buffer x = ts::Buffer::randn({300, 136}, ts::bf16, ts::cpu(), 43);
      ts::Buffer y = ts::Buffer::randn({136, 264}, ts::bf16, ts::cpu(), 44);
      ts::Buffer bias = ts::Buffer::randn({264}, ts::bf16, ts::cpu(), 45);
      ts::Buffer want = fused(x, y, bias);
      ts::Buffer got = fused(x.to(ts::cuda(0)), y.to(ts::cuda(0)), bias.to(ts::cuda(0)));
      EXPECT_EQ(ts::count_mismatches(got.to(ts::cpu()), want, 0.02, 0.01), 0)
          << c.to_json() << " fused";
    }
  // TF32 with a row-major y, copied K-major by the consumers: a ragged last tile of K, more
  // tiles of K than buffers, programs walking several tiles.
  for (ts::PidType pid : {ts::PidType::flat, ts::PidType::persistent_interleaved}) {
    ts::Config tf32 = blocks(256, 128, 32, 8);
    tf32.num_stages = 4;
    tf32.pid_type = pid;
    tf32.warp_specialize = true;
    auto k = examples::make_dot_matmul(ts::Settings{.max_sms = 3, .config = tf32});
    for (Shape s : {Shape{300, 96, 264}, Shape{513, 1000, 136}, Shape{1, 4, 8}}) {
      const ts::Buffer x = ts::Buffer::randn({s.m, s.k}, ts::f32, ts::cpu(), 46);
      const ts::Buffer y = ts::Buffer::randn({s.k, s.n}, ts::f32, ts::cpu(), 47);
      const std::vector<double> want = k(x, y).to_vector();
      const std::vector<double> got = k(x.to(ts::cuda(0)), y.to(ts::cuda(0))).to_vector();
      ASSERT_EQ(got.size(), want.size());
      // Sums of K exact TF32 products in another order: f32 rounding grows with K (~1e-4 at
      // K = 1000 for sums of magnitude ~30); a tile copied wrong is off by ~1 or more.
      const double atol = s.k >= 512 ? 1e-3 : 1e-4;
      double worst = 0;
      int64_t off = 0;
      for (size_t i = 0; i < want.size(); ++i) {
        const double d = std::abs(got[i] - want[i]);
        worst = std::max(worst, d);
        off += d > atol + 1e-4 * std::abs(want[i]);
      }
      EXPECT_EQ(off, 0) << tf32.to_json() << " tf32 row-major y " << s.m << "x" << s.k << "x" << s.n
                        << ": largest difference " << worst;
      std::printf("tf32 row-major y %ldx%ldx%ld %s: largest difference %.3g\n",
                  static_cast<long>(s.m), static_cast<long>(s.k), static_cast<long>(s.n),
                  ts::pid_type_name(pid).c_str(), worst);
    }
  }
}

// tf32 (the default) on tensor cores (mma.sync.m16n8k8), ieee on the CUDA cores; both
// operand orientations (transposed views taken on each device).
TEST(DotGpu, F32DotsMatchTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  for (ts::DotPrecision p : {ts::DotPrecision::tf32, ts::DotPrecision::ieee})
    for (ts::Config c : {blocks(64, 64, 16, 4), blocks(128, 64, 32, 8), blocks(16, 8, 8, 1)})
      for (Shape s : kShapes) {
        auto k = dot_test::make_dot(ts::Settings{.config = c, .dot_precision = p});
        expect_close_to_interpreter(
            k, c.to_json() + " " + std::to_string(s.m) + "x" + std::to_string(s.n),
            ts::Buffer::randn({s.m, s.k}, ts::f32, ts::cpu(), 13),
            ts::Buffer::randn({s.k, s.n}, ts::f32, ts::cpu(), 14));
      }
  auto k = dot_test::make_dot(ts::Settings{.config = blocks(64, 32, 16, 4)});
  ts::Buffer xt = ts::Buffer::randn({96, 150}, ts::f32, ts::cpu(), 15);
  ts::Buffer yt = ts::Buffer::randn({70, 96}, ts::f32, ts::cpu(), 16);
  ts::Buffer want = k(xt.transpose(0, 1), yt.transpose(0, 1));
  ts::Buffer got = k(xt.to(ts::cuda(0)).transpose(0, 1), yt.to(ts::cuda(0)).transpose(0, 1));
  EXPECT_EQ(ts::count_mismatches(got.to(ts::cpu()), want, 1e-4, 1e-4), 0);
}

// ts::dot on wgmma (16-bit operands whose rows the TMA can copy: sizes multiples of 8): the
// ring of num_stages buffers, 1 and 2 warpgroups, K blocks of 64 and 128 (2 chunks of a
// K-major row), ragged M, N and K (K's last tile zeroed past its end: K = 72, K = 8), M = 1,
// K = 0 (no tile of K: the accumulator that starts from zeros is zeroed after the loop).
TEST(DotGpu, WgmmaDotsMatchTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  struct Blocks {
    int64_t m, n, k;
    int warps, stages;
  };
  const std::vector<Shape> shapes{{256, 128, 192}, {264, 72, 136},  {1, 64, 40},
                                  {8, 8, 8},       {136, 200, 264}, {64, 0, 136}};
  for (ts::DType t : {ts::bf16, ts::f16})
    for (Blocks b :
         {Blocks{128, 128, 64, 4, 1}, Blocks{128, 256, 64, 8, 4}, Blocks{64, 64, 64, 4, 3},
          Blocks{256, 128, 64, 8, 3}, Blocks{128, 128, 128, 4, 2}, Blocks{64, 256, 64, 4, 4},
          // warpgroups along N: 2 of 64 x 128; 2 x 2 of 64 x 128
          Blocks{64, 256, 64, 8, 4}, Blocks{128, 256, 64, 16, 3}})
      for (Shape s : shapes) {
        ts::Config c = blocks(b.m, b.n, b.k, b.warps);
        c.num_stages = b.stages;
        auto k = dot_test::make_dot(ts::Settings{.config = c});
        expect_close_to_interpreter(k,
                                    ts::dtype_name(t) + " " + c.to_json() + " " +
                                        std::to_string(s.m) + "x" + std::to_string(s.k) + "x" +
                                        std::to_string(s.n),
                                    ts::Buffer::randn({s.m, s.k}, t, ts::cpu(), 17),
                                    ts::Buffer::randn({s.k, s.n}, t, ts::cpu(), 18));
      }
}

// A block of M below 64 rows on wgmma's transposed product (Mma::swap_ab: out^T = y^T x^T, 64
// rows of N per warpgroup instruction, M's block its columns): 1 and 2 warpgroups along N, 2
// along M, y row-major (wgmma's A M-major) and the transpose of a [N, K] weight (K-major), f16
// and bf16, ragged M, N and K (M = 1, K = 0); split-K, a producer warpgroup, persistent
// programs; TF32 with a row-major y copied K-major.
TEST(DotGpu, ASkinnyMOnTheTransposedProductMatchesTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  const std::vector<Shape> shapes{
      {16, 512, 256}, {1, 136, 200}, {37, 264, 136}, {16, 0, 128}, {50, 72, 64}};
  auto config = [](int64_t m, int64_t n, int64_t k, int warps, int stages) {
    ts::Config c = blocks(m, n, k, warps);
    c.num_stages = stages;
    return c;
  };
  std::vector<ts::Config> configs{config(16, 128, 64, 4, 6), config(32, 256, 64, 8, 3),
                                  config(32, 64, 64, 8, 3), config(16, 64, 128, 4, 2)};
  ts::Config split = config(16, 128, 64, 4, 8), ws = split, persistent = config(16, 256, 64, 8, 4);
  split.split_k = 2;
  ws.warp_specialize = true;
  persistent.pid_type = ts::PidType::persistent_interleaved;
  configs.insert(configs.end(), {split, ws, persistent});
  for (const ts::Config& c : configs) {
    auto k = dot_test::make_dot(ts::Settings{.max_sms = 3, .config = c});
    // f16, and the shapes past the first three (K = 0, M = 50), with the first config only.
    const bool first = &c == &configs.front();
    for (ts::DType t : {ts::bf16, ts::f16})
      for (size_t si = 0; si < shapes.size(); ++si) {
        if (!first && (t == ts::f16 || si >= 3)) continue;
        const Shape s = shapes[si];
        const std::string what = ts::dtype_name(t) + " " + c.to_json() + " " + std::to_string(s.m) +
                                 "x" + std::to_string(s.k) + "x" + std::to_string(s.n);
        const ts::Buffer x = ts::Buffer::randn({s.m, s.k}, t, ts::cpu(), 61);
        expect_close_to_interpreter(k, what + " y row-major", x,
                                    ts::Buffer::randn({s.k, s.n}, t, ts::cpu(), 62));
        const ts::Buffer w = ts::Buffer::randn({s.n, s.k}, t, ts::cpu(), 63);
        ts::Buffer got = k(x.to(ts::cuda(0)), w.to(ts::cuda(0)).transpose(0, 1));
        EXPECT_EQ(ts::count_mismatches(got.to(ts::cpu()), k(x, w.transpose(0, 1)), 1e-4, 1e-4), 0)
            << what << " y = w^T";
      }
  }
  auto tf32 = dot_test::make_dot(ts::Settings{.config = config(16, 128, 32, 4, 4)});
  for (Shape s : shapes)
    expect_close_to_interpreter(tf32, "tf32 " + std::to_string(s.m) + "x" + std::to_string(s.k),
                                ts::Buffer::randn({s.m, s.k}, ts::f32, ts::cpu(), 64),
                                ts::Buffer::randn({s.k, s.n}, ts::f32, ts::cpu(), 65));
}

// TF32 on wgmma m64nNk8 (both factors K-major: x w^T, w a [N, K] tensor; and a row-major y
// and an M-major x, copied K-major by the threads): 1 and 2 warpgroups, K blocks of 32 and 64
// (2 chunks of a K-major row), ragged M, N and K (K's last tile zeroed past its end), M = 1,
// K = 0, a persistent program loop. The operands are truncated to TF32 by the tensor cores as
// by the interpreter, so only the order of the f32 sums differs.
TEST(DotGpu, Tf32WgmmaDotsMatchTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  struct Blocks {
    int64_t m, n, k;
    int warps, stages;
    ts::PidType pid = ts::PidType::flat;
  };
  const std::vector<Shape> shapes{{256, 128, 192}, {264, 72, 136},  {1, 64, 40},
                                  {8, 8, 8},       {136, 200, 264}, {64, 0, 136}};
  for (Blocks b : {Blocks{128, 256, 32, 8, 4}, Blocks{128, 128, 32, 4, 3},
                   Blocks{64, 128, 64, 4, 2}, Blocks{128, 128, 64, 8, 3},
                   Blocks{128, 256, 32, 8, 3, ts::PidType::persistent_interleaved}}) {
    ts::Config c = blocks(b.m, b.n, b.k, b.warps);
    c.num_stages = b.stages;
    c.pid_type = b.pid;
    auto k = dot_test::make_dot(ts::Settings{.max_sms = 3, .config = c});
    for (Shape s : shapes) {
      const std::string what = c.to_json() + " " + std::to_string(s.m) + "x" + std::to_string(s.k) +
                               "x" + std::to_string(s.n);
      ts::Buffer x = ts::Buffer::randn({s.m, s.k}, ts::f32, ts::cpu(), 31);
      ts::Buffer w = ts::Buffer::randn({s.n, s.k}, ts::f32, ts::cpu(), 32);
      ts::Buffer want = k(x, w.transpose(0, 1));
      ts::Buffer got = k(x.to(ts::cuda(0)), w.to(ts::cuda(0)).transpose(0, 1));
      ASSERT_EQ(got.shape(), want.shape()) << what;
      EXPECT_EQ(ts::count_mismatches(got.to(ts::cpu()), want, 1e-4, 1e-4), 0) << what;
      // y row-major (N-major), then x M-major as well.
      ts::Buffer y = ts::Buffer::randn({s.k, s.n}, ts::f32, ts::cpu(), 33);
      ts::Buffer xt = ts::Buffer::randn({s.k, s.m}, ts::f32, ts::cpu(), 34);
      EXPECT_EQ(ts::count_mismatches(k(x.to(ts::cuda(0)), y.to(ts::cuda(0))).to(ts::cpu()), k(x, y),
                                     1e-4, 1e-4),
                0)
          << what << " y row-major";
      EXPECT_EQ(ts::count_mismatches(
                    k(xt.to(ts::cuda(0)).transpose(0, 1), y.to(ts::cuda(0))).to(ts::cpu()),
                    k(xt.transpose(0, 1), y), 1e-4, 1e-4),
                0)
          << what << " x M-major, y row-major";
    }
  }
}

// A weight tile transposed in the kernel (w(tn, tk).t()): on wgmma for bf16 and TF32 (both
// factors K-major), on mma.sync at a 64 x 64 x 32 tile.
TEST(DotGpu, AWeightTileTransposedInTheKernelMatchesTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  for (ts::DType t : {ts::bf16, ts::f32})
    for (ts::Config c : {blocks(128, 128, 64, 4), blocks(64, 64, 32, 4)}) {
      auto k = dot_test::make_dot_wt(ts::Settings{.config = c});
      expect_close_to_interpreter(k, ts::dtype_name(t) + " " + c.to_json(),
                                  ts::Buffer::randn({200, 136}, t, ts::cpu(), 33),
                                  ts::Buffer::randn({264, 136}, t, ts::cpu(), 34));
    }
}

// wgmma with M-major A (x.t()) and K-major B (y.t()); persistent programs whose ring runs on
// from one tile into the next (Contraction::Mma::across_programs); an accumulator that does not
// start from zeros (each tile's products waited for before the next).
TEST(DotGpu, WgmmaTransposedAndPersistentDotsMatchTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  ts::Config c = blocks(128, 128, 64, 4);
  c.num_stages = 3;
  auto k = dot_test::make_dot(ts::Settings{.config = c});
  expect_transposes_match(k, 200, 136, 264, 19);
  // Two warpgroups along N, each 64 x 32: wgmma where B is K-major (y.t()), else mma.sync.
  auto kn = dot_test::make_dot(ts::Settings{.config = blocks(64, 64, 64, 8)});
  expect_transposes_match(kn, 200, 136, 264, 29);
  auto from_ones = dot_test::make_dot(ts::Settings{.config = c}, 1.0);
  expect_close_to_interpreter(from_ones, "from ones",
                              ts::Buffer::randn({200, 136}, ts::bf16, ts::cpu(), 25),
                              ts::Buffer::randn({136, 264}, ts::bf16, ts::cpu(), 26));
  // 3 programs over 9 tiles: each ring runs on from one tile into the next (the last tile
  // of K partial); an empty K; an accumulator from ones, each tile waited for.
  for (ts::PidType pid : {ts::PidType::persistent_interleaved, ts::PidType::persistent_blocked})
    for (int stages : {2, 4}) {
      ts::Config p = blocks(128, 256, 64, 8);
      p.pid_type = pid;
      p.num_stages = stages;
      const ts::Settings three{.max_sms = 3, .config = p};
      auto kp = dot_test::make_dot(three);
      for (int64_t kk : {264, 0})
        expect_close_to_interpreter(kp, p.to_json() + " K " + std::to_string(kk),
                                    ts::Buffer::randn({300, kk}, ts::bf16, ts::cpu(), 23),
                                    ts::Buffer::randn({kk, 520}, ts::bf16, ts::cpu(), 24));
      expect_close_to_interpreter(dot_test::make_dot(three, 1.0), p.to_json() + " from ones",
                                  ts::Buffer::randn({300, 136}, ts::bf16, ts::cpu(), 27),
                                  ts::Buffer::randn({136, 520}, ts::bf16, ts::cpu(), 28));
    }
}

// examples::make_grouped_matmul on the GPU against the interpreter; the row count is read
// on the device: a new count in the same buffer changes the rows computed, with no new trace.
TEST(DotGpu, AGroupedMatmulOverDeviceResidentRowsMatchesTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  moe_test::Routed r = moe_test::route({5, 70, 0, 64, 130}, 96, 72, 448, ts::bf16);
  for (ts::Config c :
       {ts::Config{.block_sizes = std::vector<int64_t>{64, 32}, .num_warps = 4},
        ts::Config{.block_sizes = std::vector<int64_t>{128, 64}, .num_warps = 8, .num_stages = 2},
        ts::Config{// wgmma, each tile's expert's box by TMA
                   .block_sizes = std::vector<int64_t>{128, 64},
                   .num_warps = 4,
                   .num_stages = 3},
        ts::Config{// wgmma on two warpgroups along N
                   .block_sizes = std::vector<int64_t>{256, 64},
                   .num_warps = 8,
                   .num_stages = 3}}) {
    auto k = examples::make_grouped_matmul(ts::Settings{.config = c});
    ts::Buffer want = k(r.x, r.w, r.n_rows, r.block_expert);
    ts::Buffer xg = r.x.to(ts::cuda(0)), wg = r.w.to(ts::cuda(0));
    ts::Buffer rows = r.n_rows.to(ts::cuda(0)), be = r.block_expert.to(ts::cuda(0));
    ts::Buffer got = k(xg, wg, rows, be);
    EXPECT_EQ(ts::count_mismatches(got.to(ts::cpu()), want, 0.02, 0.01), 0) << c.to_json();
    rows.fill(128);  // only the first two groups' rows
    ts::Buffer fewer = k(xg, wg, rows, be).to(ts::cpu());
    ts::Buffer want_fewer =
        k(r.x, r.w, ts::Buffer::from_vector({128}, {1}, ts::i32), r.block_expert);
    EXPECT_EQ(ts::count_mismatches(fewer, want_fewer, 0.02, 0.01), 0) << c.to_json();
  }
  // Groups padded to 128 rows: 128-row tiles, two warpgroups of wgmma along M.
  moe_test::Routed r128 = moe_test::route({5, 70, 0, 130}, 96, 72, 512, ts::bf16, 128);
  auto k128 = examples::make_grouped_matmul(
      ts::Settings{.config = ts::Config{.block_sizes = std::vector<int64_t>{256, 64},
                                        .num_warps = 8,
                                        .num_stages = 3}},
      128);
  ts::Buffer want128 = k128(r128.x, r128.w, r128.n_rows, r128.block_expert);
  ts::Buffer got128 = k128(r128.x.to(ts::cuda(0)), r128.w.to(ts::cuda(0)),
                           r128.n_rows.to(ts::cuda(0)), r128.block_expert.to(ts::cuda(0)));
  EXPECT_EQ(ts::count_mismatches(got128.to(ts::cpu()), want128, 0.02, 0.01), 0);
}

// The grouped GEMM captured once in a CUDA graph (global mode: no hidden host sync) and
// replayed after the row count changes in device memory: each replay computes the rows of
// the count it reads, into the output the captured call allocated (graph-owned memory at
// a fixed address, read after each replay while the graph lives).
TEST(DotGpu, AGroupedMatmulInACudaGraphFollowsTheDeviceRowCount) {
  TESSEL_REQUIRE_GPU();
  moe_test::Routed r = moe_test::route({5, 70, 0, 64, 130}, 96, 72, 448, ts::bf16);
  auto k = examples::make_grouped_matmul(ts::Settings{
      .config = ts::Config{
          .block_sizes = std::vector<int64_t>{128, 64}, .num_warps = 4, .num_stages = 3}});
  ts::Buffer xg = r.x.to(ts::cuda(0)), wg = r.w.to(ts::cuda(0));
  ts::Buffer rows = r.n_rows.to(ts::cuda(0)), be = r.block_expert.to(ts::cuda(0));
  ts::Stream s = ts::Stream::create();
  k(s, xg, wg, rows, be);  // eager call: traces and compiles outside the capture
  s.synchronize();
  ts::Buffer got;
  {
    ts::CudaGraph g = ts::CudaGraph::capture(s, [&] { got = k(s, xg, wg, rows, be); });
    const int64_t all = static_cast<int64_t>(r.n_rows.to_vector()[0]);
    for (int64_t n : {all, int64_t{128}, int64_t{64}, all}) {
      rows.fill(static_cast<double>(n));
      ts::rt::device_synchronize(0);
      g.replay(s);
      s.synchronize();
      ts::Buffer want = k(r.x, r.w, ts::Buffer::from_vector({static_cast<double>(n)}, {1}, ts::i32),
                          r.block_expert);
      EXPECT_EQ(ts::count_mismatches(got.to(ts::cpu()), want, 0.02, 0.01), 0) << "rows " << n;
    }
  }
  got = ts::Buffer();  // freed on its stream, after the graph and before the stream
  s.synchronize();
  s.destroy();
}

// Split-K (Config::split_k) against the interpreter: ragged M, N and K; shares without a
// tile of K (one tile of K split 4 ways); K = 0 (no dot on wgmma: not split); M = 16
// (decode); 8 shares of a long K;
// a fused bias + gelu epilogue; two dots in one loop. Each kernel is called twice, the
// second call's counters reset by the first call's last programs.
TEST(DotGpu, SplitKMatchesTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  auto config = [](int64_t m, int64_t n, int64_t k, int warps, int stages, int s) {
    ts::Config c = blocks(m, n, k, warps);
    c.num_stages = stages;
    c.split_k = s;
    return c;
  };
  struct Case {
    ts::Config c;
    int64_t m, kk, n;
  };
  for (const Case& t : {Case{config(64, 128, 64, 4, 4, 4), 200, 264, 272},
                        Case{config(64, 128, 64, 4, 4, 4), 130, 40, 136},
                        Case{config(64, 128, 64, 4, 4, 2), 70, 0, 136},
                        Case{config(64, 64, 128, 4, 4, 8), 16, 2056, 200},
                        Case{config(128, 256, 64, 8, 4, 2), 300, 520, 264}}) {
    auto k = dot_test::make_dot(ts::Settings{.config = t.c});
    ts::Buffer x = ts::Buffer::randn({t.m, t.kk}, ts::bf16, ts::cpu(), 41);
    ts::Buffer y = ts::Buffer::randn({t.kk, t.n}, ts::bf16, ts::cpu(), 42);
    ts::Buffer want = k(x, y);
    ts::Buffer xg = x.to(ts::cuda(0)), yg = y.to(ts::cuda(0));
    for (int call = 0; call < 2; ++call)
      EXPECT_EQ(ts::count_mismatches(k(xg, yg).to(ts::cpu()), want, 1e-4, 1e-4), 0)
          << t.c.to_json() << " M " << t.m << " K " << t.kk << " N " << t.n << " call " << call;
  }
  ts::Buffer x = ts::Buffer::randn({200, 328}, ts::bf16, ts::cpu(), 43);
  ts::Buffer y = ts::Buffer::randn({328, 264}, ts::bf16, ts::cpu(), 44);
  ts::Buffer bias = ts::Buffer::randn({264}, ts::bf16, ts::cpu(), 45);
  auto fused =
      examples::make_matmul_bias_gelu(ts::Settings{.config = config(128, 256, 64, 8, 4, 4)});
  ts::Buffer want = fused(x, y, bias);
  ts::Buffer got = fused(x.to(ts::cuda(0)), y.to(ts::cuda(0)), bias.to(ts::cuda(0)));
  EXPECT_EQ(ts::count_mismatches(got.to(ts::cpu()), want, 0.02, 0.01), 0);
  auto gate_up = dot_test::make_gate_up(ts::Settings{.config = config(64, 128, 64, 4, 3, 2)});
  expect_close_to_interpreter(gate_up, "gate and up, split 2", x, y, y);
}

// A split-K call captured in a CUDA graph: the workspace's allocation, its counters' zeroing
// and its free are nodes of the graph; each replay computes the product of the operands'
// current values.
TEST(DotGpu, SplitKInACudaGraphRecomputesEachReplay) {
  TESSEL_REQUIRE_GPU();
  ts::Config c = blocks(64, 128, 64, 4);
  c.num_stages = 4;
  c.split_k = 4;
  auto k = dot_test::make_dot(ts::Settings{.config = c});
  ts::Buffer x = ts::Buffer::randn({130, 520}, ts::bf16, ts::cpu(), 46);
  ts::Buffer y = ts::Buffer::randn({520, 200}, ts::bf16, ts::cpu(), 47);
  ts::Buffer xg = x.to(ts::cuda(0)), yg = y.to(ts::cuda(0));
  ts::Stream s = ts::Stream::create();
  k(s, xg, yg);  // eager call: traces and compiles outside the capture
  s.synchronize();
  ts::Buffer got;
  {
    ts::CudaGraph g = ts::CudaGraph::capture(s, [&] { got = k(s, xg, yg); });
    for (uint64_t seed : {48, 49}) {
      ts::Buffer xn = ts::Buffer::randn({130, 520}, ts::bf16, ts::cpu(), seed);
      xg.copy_from(xn.to(ts::cuda(0)), {});
      ts::rt::device_synchronize(0);
      g.replay(s);
      s.synchronize();
      EXPECT_EQ(ts::count_mismatches(got.to(ts::cpu()), k(xn, y), 1e-4, 1e-4), 0) << seed;
    }
  }
  got = ts::Buffer();  // freed on its stream, after the graph and before the stream
  s.synchronize();
  s.destroy();
}

// The autotuner measures split-K candidates: its timing worker allocates their workspace
// and zeroes its counters once (each launch's last programs reset them).
TEST(DotGpu, TheAutotunerMeasuresSplitKCandidates) {
  TESSEL_REQUIRE_GPU();
  auto k = dot_test::make_dot();
  ts::Buffer x = ts::Buffer::randn({16, 1024}, ts::bf16, ts::cuda(0), 50);
  ts::Buffer y = ts::Buffer::randn({1024, 520}, ts::bf16, ts::cuda(0), 51);
  tessel::autotune::TuneOptions o;
  o.search = tessel::autotune::SearchKind::list;
  o.use_cache = false;
  for (int s : {1, 4, 8}) {
    ts::Config c = blocks(64, 64, 64, 4);
    c.num_stages = 4;
    if (s > 1) c.split_k = s;
    o.list.push_back(c);
  }
  tessel::autotune::TuneResult r = ts::rt::tune_kernel(k.impl(), ts::detail::call_args(x, y), o);
  ASSERT_EQ(r.trials.size(), 3u);
  for (const tessel::autotune::Trial& t : r.trials)
    EXPECT_EQ(t.result.status, tessel::autotune::Measurement::ok)
        << t.config.to_json() << ": " << t.result.reason;
}

// Two dots in one loop over K (gate and up projections, SiLU-gated), each with a ring.
TEST(DotGpu, TwoWgmmaDotsInOneLoopMatchTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  for (ts::Config c : {blocks(64, 128, 64, 4), blocks(128, 256, 64, 8)}) {
    c.num_stages = 4;
    auto k = dot_test::make_gate_up(ts::Settings{.config = c});
    expect_close_to_interpreter(k, c.to_json(),
                                ts::Buffer::randn({200, 136}, ts::bf16, ts::cpu(), 27),
                                ts::Buffer::randn({136, 264}, ts::bf16, ts::cpu(), 28),
                                ts::Buffer::randn({136, 264}, ts::bf16, ts::cpu(), 29));
  }
}

// An i64 expert index past 32 bits names no expert (zero rows, as the interpreter reads it),
// not the expert its low 32 bits would name.
TEST(DotGpu, AWgmmaGroupedMatmulWithAnExpertPast32BitsGivesZeroRows) {
  TESSEL_REQUIRE_GPU();
  moe_test::Routed r = moe_test::route({64, 64, 64}, 128, 128, 192, ts::bf16);
  std::vector<double> experts = r.block_expert.to_vector();
  experts[1] = 4294967297.0;  // 2^32 + 1: expert 1 in its low bits
  ts::Buffer be = ts::Buffer::from_vector(experts, {static_cast<int64_t>(experts.size())}, ts::i64);
  auto k = examples::make_grouped_matmul(ts::Settings{
      .config = ts::Config{
          .block_sizes = std::vector<int64_t>{128, 64}, .num_warps = 4, .num_stages = 3}});
  ts::Buffer want = k(r.x, r.w, r.n_rows, be);
  ts::Buffer got =
      k(r.x.to(ts::cuda(0)), r.w.to(ts::cuda(0)), r.n_rows.to(ts::cuda(0)), be.to(ts::cuda(0)));
  EXPECT_EQ(ts::count_mismatches(got.to(ts::cpu()), want, 0.02, 0.01), 0);
  const std::vector<double> w = want.to_vector();
  for (int64_t i = 64 * 128; i < 128 * 128; ++i) ASSERT_EQ(w[static_cast<size_t>(i)], 0.0);
}

// ts::atomic_add of an accumulator's row sums: each row's sum is held by several lanes of
// the accumulator's layout, and only its owner adds it (the owner test of a multi-run slot
// once compared one run alone and added each sum several times). Small integers, so the GPU
// and the interpreter agree exactly; N spans three column tiles that add into the same rows.
TEST(DotGpu, AtomicAddsOfAnAccumulatorsRowSumsAddOnce) {
  TESSEL_REQUIRE_GPU();
  auto make = [](const ts::Config& c) {
    return ts::kernel(
        "dot_row_sums",
        [](ts::Tensor x, ts::Tensor y, ts::Tensor sums) {
          for (auto [tm, tn] : ts::tile(x.size(0), y.size(1))) {
            ts::Value acc = ts::zeros({tm, tn});
            for (auto tk : ts::tile(x.size(1))) acc = ts::dot(x(tm, tk), y(tk, tn), acc);
            ts::atomic_add(sums, {tm}, ts::sum(acc, 1));
          }
          return sums;
        },
        ts::Settings{.config = c});
  };
  auto small_ints = [](std::vector<int64_t> shape, uint64_t seed) {
    ts::Buffer r = ts::Buffer::rand(shape, ts::f32, ts::cpu(), seed);
    std::vector<double> v = r.to_vector();
    for (double& e : v) e = std::floor(e * 5) - 2;  // -2 .. 2
    return ts::Buffer::from_vector(v, shape, ts::bf16);
  };
  ts::Config wgmma = blocks(128, 128, 64, 4);
  wgmma.num_stages = 3;
  for (const ts::Config& c : {blocks(64, 64, 32, 4), wgmma, blocks(128, 256, 64, 8)}) {
    auto k = make(c);
    ts::Buffer x = small_ints({256, 128}, 41), y = small_ints({128, 384}, 42);
    ts::Buffer want = k(x, y, ts::Buffer::zeros({256}, ts::f32));
    ts::Buffer got =
        k(x.to(ts::cuda(0)), y.to(ts::cuda(0)), ts::Buffer::zeros({256}, ts::f32, ts::cuda(0)));
    EXPECT_EQ(ts::count_mismatches(got.to(ts::cpu()), want, 0, 0), 0) << c.to_json();
  }
}

// A result stored transposed (out(tn, tm) = acc.t()) stays on tensor cores and its store
// converts to out's layout through shared memory: mma.sync, wgmma on 1 and 2 warpgroups,
// ragged M and N; a 128 x 256 tile of 3 stages, whose conversion reuses the ring's bytes
// after the loop over K (it does not fit beside them).
TEST(DotGpu, AResultStoredTransposedMatchesTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  ts::Config wgmma = blocks(128, 128, 64, 4), wide = blocks(128, 128, 64, 8),
             big = blocks(128, 256, 64, 8);
  wgmma.num_stages = wide.num_stages = big.num_stages = 3;
  for (const ts::Config& c : {blocks(64, 64, 32, 4), wgmma, wide, big})
    for (Shape s : {Shape{256, 128, 256}, Shape{200, 136, 264}}) {
      auto k = dot_test::make_dot_stored_transposed(ts::Settings{.config = c});
      expect_close_to_interpreter(k, c.to_json() + " " + std::to_string(s.m),
                                  ts::Buffer::randn({s.m, s.k}, ts::bf16, ts::cpu(), 31),
                                  ts::Buffer::randn({s.k, s.n}, ts::bf16, ts::cpu(), 32));
    }
}

// Code lowered for an sm_80 GPU (TESSEL_TARGET_ARCH=80: mma.sync instead of wgmma, pointer
// loads instead of the TMA) and for an sm_89 one (fp8 on mma.sync m16n8k32) runs on this GPU
// and matches the interpreter, at the tile the sm_90 lowering puts on wgmma.
TEST(DotGpu, LoweredForSm80AndSm89MatchesTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  struct TargetArch {
    explicit TargetArch(const char* v) { ::setenv("TESSEL_TARGET_ARCH", v, 1); }
    ~TargetArch() { ::unsetenv("TESSEL_TARGET_ARCH"); }
  };
  ts::Config c = blocks(128, 128, 64, 4);
  c.num_stages = 3;
  {
    TargetArch sm80("80");
    auto k = dot_test::make_dot(ts::Settings{.config = c});
    for (Shape s : kShapes) {
      ts::Buffer x = ts::Buffer::randn({s.m, s.k}, ts::bf16, ts::cpu(), 1);
      ts::Buffer y = ts::Buffer::randn({s.k, s.n}, ts::bf16, ts::cpu(), 2);
      expect_close_to_interpreter(k, "sm_80 bf16", x, y);
      const std::string cu = k.cuda(false, x.to(ts::cuda(0)), y.to(ts::cuda(0))).at(0);
      EXPECT_EQ(cu.find("wgmma.mma_async"), std::string::npos) << cu;
      EXPECT_EQ(cu.find("tessel/wgmma.cuh"), std::string::npos) << cu;
      EXPECT_NE(cu.find("m16n8k16"), std::string::npos) << cu;
    }
    moe_test::Routed r = moe_test::route({40, 100, 7}, 128, 128, 256, ts::bf16);
    auto grouped = examples::make_grouped_matmul(ts::Settings{
        .config = ts::Config{.block_sizes = std::vector<int64_t>{128, 64}, .num_warps = 4}});
    ts::Buffer got = grouped(r.x.to(ts::cuda(0)), r.w.to(ts::cuda(0)), r.n_rows.to(ts::cuda(0)),
                             r.block_expert.to(ts::cuda(0)));
    const std::vector<double> g = got.to_vector();
    for (size_t i = 0; i < r.want.size(); ++i)
      ASSERT_NEAR(g[i], r.want[i], 0.01 * (1 + std::abs(r.want[i]))) << i;
  }
  TargetArch sm89("89");
  auto fp8 = dot_test::make_dot(ts::Settings{.config = blocks(64, 64, 64, 4)});
  // Small integers: every partial sum is exact in the fewer bits mma.sync adds fp8 products in.
  auto ints = [](int64_t rows, int64_t cols, int seed) {
    std::vector<double> v(static_cast<size_t>(rows * cols));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>((i * 7 + seed) % 5) - 2;
    return ts::Buffer::from_vector(v, {rows, cols}, ts::f8e4m3);
  };
  ts::Buffer x = ints(100, 192, 3), w = ints(70, 192, 4);
  ts::Buffer want = fp8(x, w.transpose(0, 1));
  ts::Buffer got = fp8(x.to(ts::cuda(0)), w.to(ts::cuda(0)).transpose(0, 1));
  EXPECT_EQ(ts::count_mismatches(got.to(ts::cpu()), want, 1e-4, 1e-4), 0);
  const std::string cu =
      fp8.cuda(false, x.to(ts::cuda(0)), w.to(ts::cuda(0)).transpose(0, 1)).at(0);
  EXPECT_NE(cu.find("mma_16832_e4m3"), std::string::npos) << cu;
}
