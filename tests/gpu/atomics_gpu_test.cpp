// Atomics, signals and waits on the GPU against the interpreter (the oracle) and plain
// references: counters under contention (every old value seen once), a histogram, a
// cross-program sum exact at several block sizes and warp counts (the layout holds
// copies of the partial sums: one owner adds), old values reaching every copy, a
// compare-and-swap maximum, exchanges, max/min/and/or/xor, a chain of programs each
// waiting for its predecessor's signal, a ticket lock passed on with wait_for, and a wait
// nothing satisfies ending with an error under Settings::check_bounds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <tessel/testing.hpp>
#include <vector>

#include "gpu_test_util.hpp"
#include "tests/atomic_kernels.hpp"

namespace ts = tessel;

namespace {

ts::Settings config(std::vector<int64_t> blocks, int warps) {
  return ts::Settings{.config = ts::Config{.block_sizes = std::move(blocks), .num_warps = warps}};
}

ts::Buffer on_cpu(const ts::Buffer& b) { return b.to(ts::cpu()); }
ts::Buffer on_gpu(const ts::Buffer& b) { return b.to(ts::cuda(0)); }

std::vector<double> sorted(const ts::Buffer& b) {
  std::vector<double> v = on_cpu(b).to_vector();
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<double> iota(int64_t n, double start = 0) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = start + static_cast<double>(i);
  return v;
}

const std::vector<int> kWarps = {1, 4, 8};

}  // namespace

TEST(AtomicsGpu, EveryProgramAddsOneAndSeesADistinctOldValue) {
  TESSEL_REQUIRE_GPU();
  for (ts::Sem sem : {ts::Sem::relaxed, ts::Sem::acq_rel})
    for (ts::Scope scope : {ts::Scope::gpu, ts::Scope::sys}) {
      auto [count, old] =
          atomic_test::make_counter(sem, scope)(ts::Buffer::zeros({5000}, ts::f32, ts::cuda(0)));
      EXPECT_EQ(on_cpu(count).item(), 5000);
      EXPECT_EQ(sorted(old), iota(5000));
    }
}

TEST(AtomicsGpu, EachElementOfEveryTileAddsOnce) {
  TESSEL_REQUIRE_GPU();
  for (int w : kWarps)
    for (int64_t b : {32, 256, 1024}) {
      auto [count, old] = atomic_test::make_tile_counter(config({b}, w))(
          ts::Buffer::zeros({100003}, ts::f32, ts::cuda(0)));
      EXPECT_EQ(on_cpu(count).item(), 100003) << b << " " << w;
      EXPECT_EQ(sorted(old), iota(100003)) << b << " " << w;
    }
}

TEST(AtomicsGpu, HistogramMatchesTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  const int64_t n = 1 << 20, nbins = 37;
  std::vector<double> bins(n);
  for (int64_t i = 0; i < n; ++i) bins[i] = static_cast<double>((i * 2654435761u >> 7) % nbins);
  ts::Buffer b = ts::Buffer::from_vector(bins, {n}, ts::i32);
  ts::Buffer like = ts::Buffer::zeros({nbins}, ts::i32);
  for (int w : kWarps)
    for (int64_t blk : {128, 1024}) {
      auto k = atomic_test::make_histogram(config({blk}, w));
      EXPECT_EQ(on_cpu(k(on_gpu(b), on_gpu(like))).to_vector(), k(b, like).to_vector());
    }
}

TEST(AtomicsGpu, CrossProgramRowSumIsExact) {
  TESSEL_REQUIRE_GPU();
  const int64_t m = 300, n = 5000;
  std::vector<double> x(m * n);
  for (int64_t i = 0; i < m * n; ++i) x[i] = static_cast<double>((i * 7) % 11) - 5;
  ts::Buffer xc = ts::Buffer::from_vector(x, {m, n}, ts::f32);
  ts::Buffer xg = on_gpu(xc);
  for (int w : kWarps)
    for (std::vector<int64_t> b : {std::vector<int64_t>{8, 64}, {16, 256}, {1, 1024}, {64, 32}}) {
      auto k = atomic_test::make_row_sum(config(b, w));
      EXPECT_EQ(on_cpu(k(xg)).to_vector(), k(xc).to_vector()) << b[0] << "x" << b[1] << " " << w;
    }
}

TEST(AtomicsGpu, OldValuesReachEveryCopy) {
  TESSEL_REQUIRE_GPU();
  const int64_t m = 64, n = 1024, bn = 64, tiles = n / bn;
  ts::Buffer x = ts::Buffer::full({m, n}, 1, ts::f32, ts::cuda(0));
  for (int w : kWarps) {
    auto [rows, olds] = atomic_test::make_row_sum_olds(config({8, bn}, w))(
        x, ts::Buffer::zeros({m, tiles}, ts::f32, ts::cuda(0)));
    EXPECT_EQ(on_cpu(rows).to_vector(), std::vector<double>(m, n));
    std::vector<double> o = on_cpu(olds).to_vector();
    for (int64_t r = 0; r < m; ++r) {
      std::vector<double> row(o.begin() + r * tiles, o.begin() + (r + 1) * tiles);
      std::sort(row.begin(), row.end());
      for (int64_t k = 0; k < tiles; ++k) EXPECT_EQ(row[k], k * bn) << r << " " << w;
    }
  }
}

TEST(AtomicsGpu, CompareAndSwapRetriesFindTheMaximum) {
  TESSEL_REQUIRE_GPU();
  std::vector<double> v(200);
  for (int i = 0; i < 200; ++i) v[i] = (i * 37) % 211 - 100;
  ts::Buffer vc = ts::Buffer::from_vector(v, {200}, ts::i32);
  EXPECT_EQ(on_cpu(atomic_test::make_cas_max()(on_gpu(vc))).item(),
            *std::max_element(v.begin(), v.end()));
}

TEST(AtomicsGpu, ExchangesHandOnEveryValueOnce) {
  TESSEL_REQUIRE_GPU();
  auto [slot, took] = atomic_test::make_xchg()(ts::Buffer::zeros({4000}, ts::f32, ts::cuda(0)));
  std::vector<double> all = on_cpu(took).to_vector();
  all.push_back(on_cpu(slot).item());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, iota(4001, -1));
}

TEST(AtomicsGpu, MaxMinAndOrXorMatchTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  std::vector<double> v(10000);
  for (int i = 0; i < 10000; ++i) v[i] = static_cast<double>((int64_t{i} * 7919) % 100003 - 50000);
  ts::Buffer vc = ts::Buffer::from_vector(v, {10000}, ts::i64);
  for (int w : kWarps) {
    auto k = atomic_test::make_reduce_ops(config({256}, w));
    EXPECT_EQ(on_cpu(k(on_gpu(vc))).to_vector(), k(vc).to_vector()) << w;
  }
}

TEST(AtomicsGpu, EachProgramOfAChainRunsAfterItsPredecessor) {
  TESSEL_REQUIRE_GPU();
  for (int64_t n : {1, 16, 128}) {  // programs resident at once on an H200
    ts::Buffer pad = ts::Buffer::zeros({n}, ts::i32);
    static_cast<int32_t*>(pad.data_ptr())[0] = 1;
    ts::Buffer pg = on_gpu(pad);
    EXPECT_EQ(on_cpu(atomic_test::make_chain()(pg)).to_vector(), iota(n, 1)) << n;
    EXPECT_EQ(on_cpu(pg).to_vector(), std::vector<double>(n, 1)) << n;
  }
}

TEST(AtomicsGpu, ATicketPassedOnWithWaitForServesProgramsInOrder) {
  TESSEL_REQUIRE_GPU();
  ts::Buffer served = ts::Buffer::zeros({100}, ts::i32, ts::cuda(0));
  auto [ticket, order] = atomic_test::make_ticket()(served);
  EXPECT_EQ(on_cpu(ticket).item(), 100);
  EXPECT_EQ(on_cpu(order).to_vector(), iota(100));
  EXPECT_EQ(on_cpu(served).to_vector()[0], 100);
}

TEST(AtomicsGpu, UnderCheckBoundsAWaitNothingSatisfiesIsReportedInsteadOfHanging) {
  TESSEL_REQUIRE_GPU();
  auto k = ts::kernel(
      "never_signalled",
      [](ts::Tensor pad) {
        ts::Tensor out = pad.new_zeros({pad.size(0)}, ts::i32);
        for (auto p : ts::grid(pad.size(0))) {
          ts::wait(pad, {p}, 1);
          out(p) = 1;
        }
        return out;
      },
      ts::Settings{.check_bounds = true});
  std::string msg;
  try {
    k(ts::Buffer::zeros({4}, ts::i32, ts::cuda(0)));  // gives up after ts::kWaitPolls polls
  } catch (const ts::UserError& e) {
    msg = e.what();
  }
  EXPECT_NE(msg.find("waited for 1 but the element still held 0"), std::string::npos) << msg;
  // The device is usable afterwards.
  auto [count, old] = atomic_test::make_counter()(ts::Buffer::zeros({64}, ts::f32, ts::cuda(0)));
  EXPECT_EQ(on_cpu(count).item(), 64);
}

TEST(AtomicsGpu, HalfPrecisionAddsAreExactOnSmallIntegers) {
  TESSEL_REQUIRE_GPU();
  auto k = ts::kernel("half_sum", [](ts::Tensor x) {
    ts::Tensor s = x.new_zeros({1});
    for (auto t : ts::tile(x.size(0))) ts::atomic_add(s, {t.index() * 0}, x(t), ts::Sem::acq_rel);
    return s;
  });
  // Sums of ones stay exact below 2^11 (f16) and 2^8 (bf16), in any order.
  EXPECT_EQ(on_cpu(k(ts::Buffer::full({1500}, 1, ts::f16, ts::cuda(0)))).item(), 1500);
  EXPECT_EQ(on_cpu(k(ts::Buffer::full({250}, 1, ts::bf16, ts::cuda(0)))).item(), 250);
  // Lowered for sm_80 (no atom.add.bf16): a compare-and-swap loop per add, the same sums.
  ::setenv("TESSEL_TARGET_ARCH", "80", 1);
  auto k80 = ts::kernel("half_sum_sm80", [](ts::Tensor x) {
    ts::Tensor s = x.new_zeros({1});
    for (auto t : ts::tile(x.size(0))) ts::atomic_add(s, {t.index() * 0}, x(t), ts::Sem::acq_rel);
    return s;
  });
  const double bf16_sum = on_cpu(k80(ts::Buffer::full({250}, 1, ts::bf16, ts::cuda(0)))).item();
  const double quarters = on_cpu(k80(ts::Buffer::full({4000}, 0.25, ts::bf16, ts::cuda(0)))).item();
  ::unsetenv("TESSEL_TARGET_ARCH");
  EXPECT_EQ(bf16_sum, 250);
  // 0.25 added 4000 times in bf16 stops at 64 (64 + 0.25 rounds to 64), in any order.
  EXPECT_EQ(quarters, 64);
}
