// Interpreter: atomics under contention (counters, a histogram, a cross-program sum, a
// compare-and-swap maximum, exchanges, max/min/and/or/xor), their returned old values,
// every sem and scope; the trace-time race check and the write log accept them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#include "atomic_kernels.hpp"
#include "interp_test_util.hpp"

namespace ts = tessel;
using interp_test::blocks;
using interp_test::buffer;

namespace {

std::vector<double> iota(int64_t n, double start = 0) { return interp_test::ramp(n, start); }

std::vector<double> sorted(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

TEST(Atomics, EveryProgramAddsOneAndSeesADistinctOldValue) {
  auto [count, old] = atomic_test::make_counter()(ts::Buffer::zeros({100}, ts::f32));
  EXPECT_EQ(count.to_vector(), std::vector<double>{100});
  EXPECT_EQ(sorted(old.to_vector()), iota(100));  // exactly 0..n-1
}

TEST(Atomics, EverySemAndScopeCountsTheSame) {
  for (ts::Sem sem : {ts::Sem::relaxed, ts::Sem::acquire, ts::Sem::release, ts::Sem::acq_rel})
    for (ts::Scope scope : {ts::Scope::cta, ts::Scope::gpu, ts::Scope::sys}) {
      auto [count, old] = atomic_test::make_counter(sem, scope)(ts::Buffer::zeros({17}, ts::f32));
      EXPECT_EQ(count.item(), 17) << ts::sem_name(sem) << " " << ts::scope_name(scope);
      EXPECT_EQ(sorted(old.to_vector()), iota(17));
    }
}

TEST(Atomics, EachElementOfATileAddsOnceAtTheRaggedEdgeToo) {
  for (int64_t b : {16, 64, 128}) {
    auto [count, old] =
        atomic_test::make_tile_counter(blocks({b}))(ts::Buffer::zeros({100}, ts::f32));
    EXPECT_EQ(count.item(), 100) << b;  // masked lanes past 100 add nothing
    EXPECT_EQ(sorted(old.to_vector()), iota(100)) << b;
  }
}

TEST(Atomics, HistogramCountsEveryElement) {
  const int64_t n = 1000, nbins = 7;
  std::vector<double> bins(n), want(nbins, 0);
  for (int64_t i = 0; i < n; ++i) {
    bins[i] = static_cast<double>((i * i + 3 * i) % nbins);
    want[static_cast<size_t>(bins[i])] += 1;
  }
  for (int64_t b : {32, 256}) {
    ts::Buffer hist = atomic_test::make_histogram(blocks({b}))(buffer(bins, {n}, ts::i32),
                                                               ts::Buffer::zeros({nbins}, ts::i32));
    EXPECT_EQ(hist.to_vector(), want) << b;
  }
}

TEST(Atomics, CrossProgramRowSumIsExact) {
  const int64_t m = 37, n = 300;
  std::vector<double> x(m * n), want(m, 0);
  for (int64_t i = 0; i < m * n; ++i) {
    x[i] = static_cast<double>((i * 7) % 11) - 5;  // small integers: every order sums exactly
    want[i / n] += x[i];
  }
  for (std::vector<int64_t> b : {std::vector<int64_t>{8, 32}, {16, 128}, {1, 512}})
    EXPECT_EQ(atomic_test::make_row_sum(blocks(b))(buffer(x, {m, n})).to_vector(), want);
}

TEST(Atomics, OldValuesOfARowSumAreThePartialSumsBefore) {
  const int64_t m = 4, n = 64, bn = 16, tiles = n / bn;
  std::vector<double> x(m * n, 1.0);
  auto [rows, olds] = atomic_test::make_row_sum_olds(blocks({4, bn}))(
      buffer(x, {m, n}), ts::Buffer::zeros({m, tiles}, ts::f32));
  EXPECT_EQ(rows.to_vector(), std::vector<double>(m, n));
  std::vector<double> o = olds.to_vector();
  for (int64_t r = 0; r < m; ++r) {  // each row saw 0, 16, 32, 48 in some order
    std::vector<double> row(o.begin() + r * tiles, o.begin() + (r + 1) * tiles);
    EXPECT_EQ(sorted(row), (std::vector<double>{0, 16, 32, 48})) << r;
  }
}

TEST(Atomics, CompareAndSwapRetriesFindTheMaximum) {
  std::vector<double> v = {3, -7, 42, 5, 41, 0, 17, 42, -1000, 8};
  EXPECT_EQ(atomic_test::make_cas_max()(buffer(v, {10}, ts::i32)).item(), 42);
}

TEST(Atomics, ExchangesHandOnEveryValueOnce) {
  auto [slot, took] = atomic_test::make_xchg()(ts::Buffer::zeros({50}, ts::f32));
  std::vector<double> all = took.to_vector();
  all.push_back(slot.item());
  EXPECT_EQ(sorted(all), iota(51, -1));  // -1 (the start) and 0..49, each once
}

TEST(Atomics, MaxMinAndOrXorOverTiles) {
  std::vector<double> v = {12, -5, 7, 1 << 20, 3, -(1 << 19), 6, 9, 255, 1};
  int64_t mx = INT64_MIN, mn = INT64_MAX, a = -1, o = 0, x = 0;
  for (double d : v) {
    int64_t i = static_cast<int64_t>(d);
    mx = std::max(mx, i), mn = std::min(mn, i), a &= i, o |= i, x ^= i;
  }
  ts::Buffer r = atomic_test::make_reduce_ops(blocks({4}))(buffer(v, {10}, ts::i64));
  const int64_t* p = static_cast<const int64_t*>(r.data_ptr());
  EXPECT_EQ(std::vector<int64_t>(p, p + 5), (std::vector<int64_t>{mx, mn, a, o, x}));
}

TEST(Atomics, U64MaxAndMinCompareUnsigned) {
  auto k = ts::kernel("u64_extremes", [](ts::Tensor v) {
    ts::Tensor r = v.new_zeros({2});
    for (auto i : ts::grid(1)) r(i + 1) = ~uint64_t{0};
    for (auto t : ts::tile(v.size(0))) {
      ts::atomic_max(r, {t.index() * 0}, v(t));
      ts::atomic_min(r, {t.index() * 0 + 1}, v(t));
    }
    return r;
  });
  ts::Buffer v = ts::Buffer::zeros({3}, ts::u64);
  uint64_t* pv = static_cast<uint64_t*>(v.data_ptr());
  pv[0] = 5, pv[1] = uint64_t{1} << 63 | 9, pv[2] = 1u << 31;
  ts::Buffer r = k(v);
  const uint64_t* p = static_cast<const uint64_t*>(r.data_ptr());
  EXPECT_EQ(p[0], uint64_t{1} << 63 | 9);  // above 2^63: the largest unsigned
  EXPECT_EQ(p[1], 5u);
}

TEST(Atomics, FloatAddsOfF32AndF64) {
  for (ts::DType t : {ts::f32, ts::f64}) {
    auto k = ts::kernel("float_add", [](ts::Tensor x) {
      ts::Tensor s = x.new_zeros({1});
      for (auto tile : ts::tile(x.size(0))) ts::atomic_add(s, {tile.index() * 0}, x(tile));
      return s;
    });
    EXPECT_EQ(k(buffer(std::vector<double>(64, 0.25), {64}, t)).item(), 16) << ts::dtype_name(t);
  }
}

TEST(Atomics, CompareAndSwapReturnsTheOldValueAndSwapsOnlyOnAMatch) {
  auto k = ts::kernel("cas_once", [](ts::Tensor v) {
    ts::Tensor olds = ts::empty_like(v);
    for (auto t : ts::tile(v.size(0))) olds(t) = ts::atomic_cas(v, {t}, 5, 50);
    return olds;
  });
  ts::Buffer v = buffer({5, 6, 5, -5}, {4}, ts::i32);
  ts::Buffer olds = k(v);
  EXPECT_EQ(olds.to_vector(), (std::vector<double>{5, 6, 5, -5}));
  EXPECT_EQ(v.to_vector(), (std::vector<double>{50, 6, 50, -5}));
}

TEST(Atomics, MaskedElementsDoNothingAndReturnZero) {
  auto k = ts::kernel("masked", [](ts::Tensor v, ts::Tensor idx) {
    ts::Tensor olds = ts::empty({idx.size(0)}, ts::i32);
    for (auto t : ts::tile(idx.size(0))) olds(t) = ts::atomic_add(v, {idx(t)}, 1);
    return olds;
  });
  ts::Buffer v = buffer({10, 20}, {2}, ts::i32);
  ts::Buffer olds = k(v, buffer({1, -1, 2, 0}, {4}, ts::i32));  // -1 and 2: outside v
  EXPECT_EQ(olds.to_vector(), (std::vector<double>{20, 0, 0, 10}));
  EXPECT_EQ(v.to_vector(), (std::vector<double>{11, 21}));
}

TEST(Atomics, TheIrPrintsTheOpSemAndScope) {
  auto k = atomic_test::make_counter(ts::Sem::acq_rel, ts::Scope::sys);
  std::string ir = k.ir(ts::Buffer::zeros({4}, ts::f32));
  EXPECT_NE(ir.find("atomic add"), std::string::npos) << ir;
  EXPECT_NE(ir.find("acq_rel sys"), std::string::npos) << ir;
}

TEST(Atomics, TheInterpretersRaceCheckDoesNotReportAtomics) {
  // Shuffled programs and the write log (interp/write_log.hpp): atomics from every program
  // on one element are what they are for.
  const char* before = std::getenv("TESSEL_CHECK_RACES");
  std::string saved = before ? before : "";
  setenv("TESSEL_CHECK_RACES", "7", 1);
  auto [count, old] = atomic_test::make_counter()(ts::Buffer::zeros({33}, ts::f32));
  EXPECT_EQ(count.item(), 33);
  EXPECT_EQ(sorted(old.to_vector()), iota(33));
  std::vector<double> x(8 * 64, 1.0);
  EXPECT_EQ(atomic_test::make_row_sum(blocks({4, 16}))(buffer(x, {8, 64})).to_vector(),
            std::vector<double>(8, 64));
  if (before)
    setenv("TESSEL_CHECK_RACES", saved.c_str(), 1);
  else
    unsetenv("TESSEL_CHECK_RACES");
}
