// Looped reductions (Config::reduction_loops): chunked results equal the persistent ones.
#include <gtest/gtest.h>

#include <cmath>
#include <tessel/tessel.hpp>
#include <tessel/testing.hpp>

#include "autotune_test_util.hpp"
#include "driver/cuda_api.hpp"

namespace ts = tessel;

namespace {

// The whole-row softmax shared with the autotuner tests.
using autotune_test::make_softmax;

auto make_stats(ts::Settings s) {
  return ts::kernel(
      "row_stats",
      [](ts::Tensor x) {
        ts::Tensor idx = x.new_empty({x.size(0)}, ts::i64);
        ts::Tensor mean = x.new_empty({x.size(0)}, ts::f32);
        for (auto tm : ts::tile(x.size(0))) {
          idx(tm) = ts::argmax(x(tm, ts::all), 1) * 100000 + ts::argmin(x(tm, ts::all), 1);
          mean(tm) = ts::mean(x(tm, ts::all).to(ts::f32), 1);
        }
        return std::make_tuple(idx, mean);
      },
      s);
}

ts::Settings chunked(int64_t c) {
  return ts::Settings{.config =
                          ts::Config{.reduction_loops = std::vector<std::optional<int64_t>>{c}}};
}

/// max, min (x's dtype), argmax and argmin (i64) of each row of x: [M, N] any dtype.
auto make_extremes(ts::Settings s) {
  return ts::kernel(
      "row_extremes",
      [](ts::Tensor x) {
        ts::Tensor mx = x.new_empty({x.size(0)}), mn = x.new_empty({x.size(0)});
        ts::Tensor amx = x.new_empty({x.size(0)}, ts::i64), amn = x.new_empty({x.size(0)}, ts::i64);
        ts::register_reduction_dim(x.size(1));
        for (auto tm : ts::tile(x.size(0))) {
          mx(tm) = ts::max(x(tm, ts::all), 1);
          mn(tm) = ts::min(x(tm, ts::all), 1);
          amx(tm) = ts::argmax(x(tm, ts::all), 1);
          amn(tm) = ts::argmin(x(tm, ts::all), 1);
        }
        return std::make_tuple(mx, mn, amx, amn);
      },
      s);
}

/// Row r of the expected extremes of `rows` (torch's rules: NaN is the extreme of both
/// max and min, the first NaN or the first extreme gives the index).
std::vector<std::vector<double>> extremes_reference(const std::vector<std::vector<double>>& rows) {
  std::vector<std::vector<double>> out;
  for (const auto& r : rows) {
    size_t imx = 0, imn = 0;
    bool nan = false;
    for (size_t i = 0; i < r.size(); ++i) {
      if (std::isnan(r[i])) {
        if (!nan) imx = imn = i;
        nan = true;
      }
      if (nan) continue;
      if (r[i] > r[imx]) imx = i;
      if (r[i] < r[imn]) imn = i;
    }
    out.push_back({r[imx], r[imn], static_cast<double>(imx), static_cast<double>(imn)});
  }
  return out;
}

// The loops' starting values are each dtype's exact extremes (i64 and u64 bounds do not
// go through a double; bool max starts at false), and chunks combine NaN as torch does.
TEST(RollReductions, ChunkedExtremesOfEveryDtypeMatchTheReference) {
  const int64_t n = 37;
  std::vector<std::vector<double>> f(3, std::vector<double>(n, 1.0));
  f[0][10] = f[0][20] = NAN;  // first NaN wins (torch)
  f[0][30] = 9.0;
  f[1][33] = 5.0;
  f[1][3] = -2.0;
  f[2][36] = NAN;  // a NaN in the last chunk
  std::vector<std::vector<double>> i64 = {std::vector<double>(n), std::vector<double>(n)};
  for (int64_t j = 0; j < n; ++j) i64[0][j] = 100 + j, i64[1][j] = -5e15 + 3 * ((j * 7) % n);
  std::vector<std::vector<double>> u64 = {std::vector<double>(n, 7), std::vector<double>(n, 12)};
  u64[0][20] = 3;
  u64[1][5] = 40;
  std::vector<std::vector<double>> b = {std::vector<double>(n, 0), std::vector<double>(n, 1),
                                        std::vector<double>(n, 0)};
  b[2][33] = 1;
  struct Case {
    ts::DType dt;
    std::vector<std::vector<double>> rows;
  };
  for (const Case& c : {Case{ts::f32, f}, Case{ts::bf16, f}, Case{ts::i64, i64}, Case{ts::u64, u64},
                        Case{ts::boolean, b}}) {
    std::vector<double> flat;
    for (const auto& r : c.rows) flat.insert(flat.end(), r.begin(), r.end());
    ts::Buffer x = ts::Buffer::from_vector(flat, {static_cast<int64_t>(c.rows.size()), n}, c.dt);
    std::vector<std::vector<double>> stored;  // the values as stored (bf16-rounded)
    std::vector<double> v = x.to_vector();
    for (size_t r = 0; r < c.rows.size(); ++r)
      stored.emplace_back(v.begin() + r * n, v.begin() + (r + 1) * n);
    std::vector<std::vector<double>> want = extremes_reference(stored);
    for (std::optional<int64_t> chunk : {std::optional<int64_t>{}, std::optional<int64_t>{4},
                                         std::optional<int64_t>{8}, std::optional<int64_t>{16}}) {
      ts::Settings s{.config =
                         ts::Config{.reduction_loops = std::vector<std::optional<int64_t>>{chunk}}};
      auto [mx, mn, amx, amn] = make_extremes(s)(x);
      if (ts::rt::nvrtc_available())
        make_extremes(s).cuda(true, x);  // the GPU's identities compile
      std::vector<double> got[4] = {mx.to_vector(), mn.to_vector(), amx.to_vector(),
                                    amn.to_vector()};
      for (size_t r = 0; r < c.rows.size(); ++r)
        for (int k = 0; k < 4; ++k) {
          double w = want[r][k], g = got[k][r];
          EXPECT_TRUE((std::isnan(w) && std::isnan(g)) || w == g)
              << ts::dtype_name(c.dt) << " row " << r << " output " << k << " chunk "
              << chunk.value_or(0) << ": got " << g << ", want " << w;
        }
    }
  }
}

TEST(RollReductions, SoftmaxChunkedEqualsPersistent) {
  ts::Buffer x = ts::Buffer::randn({7, 300}, ts::f32, ts::cpu(), 3);
  ts::Buffer a = make_softmax({})(x);
  for (int64_t c : {16, 64, 256}) {
    ts::Buffer b = make_softmax(chunked(c))(x);
    EXPECT_EQ(ts::count_mismatches(b, a, 1e-6, 1e-5), 0) << "chunk " << c;
  }
}

TEST(RollReductions, ChunkedIrHasOneLoopPerReductionAndStore) {
  ts::Buffer x = ts::Buffer::randn({7, 300}, ts::f32, ts::cpu(), 3);
  std::string ir = make_softmax(chunked(64)).ir(x);
  size_t loops = 0;
  for (size_t p = ir.find("loop tile"); p != std::string::npos; p = ir.find("loop tile", p + 1))
    ++loops;
  EXPECT_EQ(loops, 4u) << ir;  // the row loop, then max, sum and store over chunks
}

TEST(RollReductions, ArgmaxArgminAndMeanChunked) {
  ts::Buffer x = ts::Buffer::randn({9, 1000}, ts::bf16, ts::cpu(), 5);
  auto [i0, m0] = make_stats({})(x);
  auto [i1, m1] = make_stats(ts::Settings{
      .config = ts::Config{.reduction_loops = std::vector<std::optional<int64_t>>{128}}})(x);
  EXPECT_EQ(ts::count_mismatches(i1, i0, 0, 0), 0);
  EXPECT_EQ(ts::count_mismatches(m1, m0, 1e-6, 1e-5), 0);
}

TEST(RollReductions, RejectsMalformedChunk) {
  ts::Buffer x = ts::Buffer::randn({7, 300}, ts::f32, ts::cpu(), 3);
  try {
    make_softmax(chunked(48))(x);
    FAIL() << "expected a UserError";
  } catch (const ts::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("power of two"), std::string::npos) << e.what();
  }
}

TEST(RollReductions, ChunkedKernelCompilesWithNvrtc) {
  if (!ts::rt::nvrtc_available()) GTEST_SKIP() << "NVRTC not found";
  ts::Buffer x = ts::Buffer::randn({7, 300}, ts::f32, ts::cpu(), 3);
  auto src = make_softmax(chunked(64)).cuda(true, x);
  EXPECT_NE(src[0].find("+= 64"), std::string::npos) << src[0];
  make_stats(chunked(128)).cuda(true, ts::Buffer::randn({9, 1000}, ts::bf16, ts::cpu(), 5));
}

}  // namespace

// Rows normalized in place, x(i, :) = x(i, :) / sum(x(i, :)): each chunk of the store
// loop reads its elements before writing them, as the persistent form does.
TEST(RollReductions, InPlaceNormalizationChunkedEqualsPersistent) {
  auto make = [](ts::Settings s) {
    return ts::kernel(
        "normalize_in_place",
        [](ts::Tensor x) {
          for (auto i : ts::grid(x.size(0)))
            x(i, ts::all) = x(i, ts::all) / ts::sum(x(i, ts::all), 0);
        },
        s);
  };
  ts::Buffer a = ts::Buffer::rand({3, 100}, ts::f32, ts::cpu(), 5);
  ts::Buffer want = ts::Buffer::rand({3, 100}, ts::f32, ts::cpu(), 5);
  make({})(want);
  make(chunked(16))(a);
  EXPECT_EQ(ts::count_mismatches(a, want, 1e-6, 1e-5), 0);
}

// Chunks that would read a tensor again after the kernel stored into it would see the
// stored values: refused, naming the load, also where two arguments share one storage
// (a call in place). The same kernel on distinct tensors is chunked.
TEST(RollReductions, ChunksReadingATensorAgainAfterAStoreIntoItAreRefused) {
  auto make = [](ts::Settings s) {
    return ts::kernel(
        "reread_after_store",
        [](ts::Tensor x, ts::Tensor y, ts::Tensor out) {
          for (auto i : ts::grid(x.size(0))) {
            ts::Value v = x(i, ts::all);
            y(i, ts::all) = v + 1;
            out(i) = ts::sum(v, 0);
          }
        },
        s);
  };
  ts::Buffer x = ts::Buffer::ones({2, 40}, ts::f32), sum = ts::Buffer::zeros({2}, ts::f32);
  try {
    make(chunked(16))(x, x, sum);
    FAIL() << "no error";
  } catch (const ts::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("read again after the kernel stored into its tensor"),
              std::string::npos)
        << e.what();
  }
  ts::Buffer y = ts::Buffer::zeros({2, 40}, ts::f32);
  make(chunked(16))(x, y, sum);
  EXPECT_EQ(sum.to_vector(), (std::vector<double>{40, 40}));
  make({})(x, x, sum);  // persistent: the row is read once, before the store
  EXPECT_EQ(sum.to_vector(), (std::vector<double>{40, 40}));
  EXPECT_EQ(x.to_vector()[0], 2);
}
