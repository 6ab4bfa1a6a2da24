// Interpreter: the reduction and normalization kernels of examples/kernels/norms.hpp
// (softmax, online softmax, layer_norm, rms_norm, cross_entropy, row sum, padded_sum with
// a host bound) against plain C++ references computed in double precision, over f32 /
// f16 / bf16 inputs, ragged sizes, size-1 dimensions, default and explicit configs, and
// looped reductions (Config::reduction_loops).
//
// Tolerances (|got - want| <= atol + rtol * |want|): the reference reads the values the
// input Buffers store, so inputs are exact, and the kernels compute in f32. The error is
// therefore f32 rounding for f32 outputs (atol = rtol = 1e-5), and one rounding of the
// output for f16 (2^-11 relative: rtol 1e-3) and bf16 (2^-8 relative: rtol 5e-3), with
// atol 1e-5 for values rounded to zero or subnormal. Softmax probabilities are small
// (about 1/N), so they are checked with atol 1e-8 (f32, bf16) or 1e-7 (f16 subnormals).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "examples/kernels/norms.hpp"

namespace ts = tessel;

namespace {

struct Tol {
  double atol, rtol;
};

Tol tol_for(ts::DType t) {
  switch (t) {
    case ts::DType::f16:
      return {1e-5, 1e-3};
    case ts::DType::bf16:
      return {1e-5, 5e-3};
    default:
      return {1e-5, 1e-5};
  }
}

/// Ragged shapes: rows and columns not multiples of any block size, size-1 dims, a row
/// longer than 4096.
struct Shape {
  int64_t m, n;
};
const std::vector<Shape> kRagged = {{37, 300}, {5, 1000}, {64, 1}, {1, 1}, {1, 37}, {3, 4097}};

std::string shape_str(Shape s) {
  return "[" + std::to_string(s.m) + ", " + std::to_string(s.n) + "]";
}

/// A CPU tensor of standard normal values scaled by `scale` and shifted by `shift`,
/// rounded to `dtype`.
ts::Buffer input(std::vector<int64_t> shape, ts::DType dtype, uint64_t seed, double scale = 1,
                 double shift = 0) {
  std::vector<double> v = ts::Buffer::randn(shape, ts::f64, ts::cpu(), seed).to_vector();
  for (double& e : v) e = e * scale + shift;
  return ts::Buffer::from_vector(v, std::move(shape), dtype);
}

/// Expects every element of `got` within tolerance of `want`; reports the first mismatches.
void expect_close(const ts::Buffer& got, const std::vector<double>& want, Tol tol,
                  const std::string& what) {
  std::vector<double> g = got.to_vector();
  ASSERT_EQ(g.size(), want.size()) << what;
  int64_t bad = 0;
  std::ostringstream first;
  first.precision(9);
  for (size_t i = 0; i < g.size(); ++i) {
    double err = std::abs(g[i] - want[i]);
    if (!(err <= tol.atol + tol.rtol * std::abs(want[i]))) {
      if (bad < 3) first << " [" << i << "] got " << g[i] << " want " << want[i] << ";";
      ++bad;
    }
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << g.size()
                    << " elements differ:" << first.str();
}

/// Softmax outputs are probabilities of about 1/N: a tight atol, so that the relative
/// tolerance does the work.
Tol softmax_tol(ts::DType t) { return {t == ts::DType::f16 ? 1e-7 : 1e-8, tol_for(t).rtol}; }

ts::Settings row_blocks(int64_t rows) {
  return ts::Settings{.config = ts::Config{.block_sizes = std::vector<int64_t>{rows}}};
}
ts::Settings looped(int64_t chunk, std::optional<int64_t> rows = std::nullopt) {
  ts::Config c{.reduction_loops = std::vector<std::optional<int64_t>>{chunk}};
  if (rows) c.block_sizes = std::vector<int64_t>{*rows};
  return ts::Settings{.config = c};
}

// ---- references (double precision, row-major [m, n]) ----

std::vector<double> ref_softmax(const std::vector<double>& x, int64_t m, int64_t n) {
  std::vector<double> out(x.size());
  for (int64_t i = 0; i < m; ++i) {
    const double* r = &x[i * n];
    double mx = *std::max_element(r, r + n), s = 0;
    for (int64_t j = 0; j < n; ++j) s += std::exp(r[j] - mx);
    for (int64_t j = 0; j < n; ++j) out[i * n + j] = std::exp(r[j] - mx) / s;
  }
  return out;
}

std::vector<double> ref_layer_norm(const std::vector<double>& x, const std::vector<double>& w,
                                   const std::vector<double>& b, double eps, int64_t m, int64_t n) {
  std::vector<double> out(x.size());
  for (int64_t i = 0; i < m; ++i) {
    const double* r = &x[i * n];
    double mean = 0, var = 0;
    for (int64_t j = 0; j < n; ++j) mean += r[j];
    mean /= n;
    for (int64_t j = 0; j < n; ++j) var += (r[j] - mean) * (r[j] - mean);
    var /= n;
    double rstd = 1 / std::sqrt(var + eps);
    for (int64_t j = 0; j < n; ++j) out[i * n + j] = (r[j] - mean) * rstd * w[j] + b[j];
  }
  return out;
}

std::vector<double> ref_rms_norm(const std::vector<double>& x, const std::vector<double>& w,
                                 double eps, int64_t m, int64_t n) {
  std::vector<double> out(x.size());
  for (int64_t i = 0; i < m; ++i) {
    const double* r = &x[i * n];
    double ms = 0;
    for (int64_t j = 0; j < n; ++j) ms += r[j] * r[j];
    double inv = 1 / std::sqrt(ms / n + eps);
    for (int64_t j = 0; j < n; ++j) out[i * n + j] = r[j] * inv * w[j];
  }
  return out;
}

std::vector<double> ref_cross_entropy(const std::vector<double>& x,
                                      const std::vector<double>& target, int64_t m, int64_t v) {
  std::vector<double> out(m);
  for (int64_t i = 0; i < m; ++i) {
    const double* r = &x[i * v];
    double mx = *std::max_element(r, r + v), s = 0;
    for (int64_t j = 0; j < v; ++j) s += std::exp(r[j] - mx);
    out[i] = mx + std::log(s) - r[static_cast<int64_t>(target[i])];
  }
  return out;
}

std::vector<double> ref_row_sum(const std::vector<double>& x, int64_t m, int64_t n,
                                int64_t rows_summed) {
  std::vector<double> out(m, 0.0);
  for (int64_t i = 0; i < std::min(m, rows_summed); ++i)
    for (int64_t j = 0; j < n; ++j) out[i] += x[i * n + j];
  return out;
}

/// Class indices in [0, v): the first row takes class 0, the last class v - 1, the others
/// spread over the range.
ts::Buffer targets(int64_t m, int64_t v, ts::DType dtype = ts::i64) {
  std::vector<double> t(m);
  for (int64_t i = 0; i < m; ++i) t[i] = static_cast<double>((i * 7919 + 13) % v);
  t[0] = 0;
  if (m > 1) t[m - 1] = static_cast<double>(v - 1);
  return ts::Buffer::from_vector(t, {m}, dtype);
}

// ---- checks shared by the tests: one kernel on one input, against its reference ----

template <class K>
void check_softmax(const K& k, Shape s, ts::DType dt, uint64_t seed = 1, double scale = 2) {
  ts::Buffer x = input({s.m, s.n}, dt, seed, scale);
  ts::Buffer out = k(x);
  EXPECT_EQ(out.dtype(), dt);
  ASSERT_EQ(out.shape(), (std::vector<int64_t>{s.m, s.n}));
  expect_close(out, ref_softmax(x.to_vector(), s.m, s.n), softmax_tol(dt),
               "softmax " + ts::dtype_name(dt) + shape_str(s));
}

template <class K>
void check_layer_norm(const K& k, Shape s, ts::DType dt, double eps = 1e-5, double shift = 0) {
  ts::Buffer x = input({s.m, s.n}, dt, 1, 1, shift);
  ts::Buffer w = input({s.n}, dt, 2, 0.5, 1);
  ts::Buffer b = input({s.n}, dt, 3);
  ts::Buffer out = k(x, w, b, eps);
  EXPECT_EQ(out.dtype(), dt);
  expect_close(out, ref_layer_norm(x.to_vector(), w.to_vector(), b.to_vector(), eps, s.m, s.n),
               tol_for(dt), "layer_norm " + ts::dtype_name(dt) + shape_str(s));
}

template <class K>
void check_rms_norm(const K& k, Shape s, ts::DType dt, double eps = 1e-5) {
  ts::Buffer x = input({s.m, s.n}, dt, 4);
  ts::Buffer w = input({s.n}, dt, 5, 0.5, 1);
  ts::Buffer out = k(x, w, eps);
  EXPECT_EQ(out.dtype(), dt);
  expect_close(out, ref_rms_norm(x.to_vector(), w.to_vector(), eps, s.m, s.n), tol_for(dt),
               "rms_norm " + ts::dtype_name(dt) + shape_str(s));
}

template <class K>
void check_cross_entropy(const K& k, Shape s, ts::DType dt, ts::DType target_dt = ts::i64) {
  ts::Buffer logits = input({s.m, s.n}, dt, 6, 3);
  ts::Buffer t = targets(s.m, s.n, target_dt);
  ts::Buffer loss = k(logits, t);
  EXPECT_EQ(loss.dtype(), ts::f32);
  ASSERT_EQ(loss.shape(), (std::vector<int64_t>{s.m}));
  // The loss is f32 whatever the logits' dtype: f32 tolerance.
  expect_close(loss, ref_cross_entropy(logits.to_vector(), t.to_vector(), s.m, s.n),
               tol_for(ts::f32), "cross_entropy " + ts::dtype_name(dt) + shape_str(s));
}

template <class K>
void check_row_sum(const K& k, Shape s, ts::DType dt) {
  ts::Buffer x = input({s.m, s.n}, dt, 7);
  ts::Buffer out = k(x);
  EXPECT_EQ(out.dtype(), dt);
  // A sum of n terms: f32 accumulation error grows with n; scale atol by sqrt(n).
  Tol t = tol_for(dt);
  t.atol *= std::sqrt(static_cast<double>(s.n));
  expect_close(out, ref_row_sum(x.to_vector(), s.m, s.n, s.m), t,
               "row_sum " + ts::dtype_name(dt) + shape_str(s));
}

const std::vector<ts::DType> kFloatDtypes = {ts::f32, ts::f16, ts::bf16};

}  // namespace

// ---------------------------------------------------------------- softmax

TEST(NormSoftmax, F32RaggedShapesMatchReference) {
  auto k = examples::make_softmax();
  for (Shape s : kRagged) check_softmax(k, s, ts::f32);
}

TEST(NormSoftmax, HalfInputsComputeInF32AndRoundOnce) {
  auto k = examples::make_softmax();
  for (ts::DType dt : {ts::f16, ts::bf16})
    for (Shape s : {Shape{37, 300}, Shape{5, 1000}, Shape{64, 1}}) check_softmax(k, s, dt);
}

// Static shapes specialize on exact sizes: each shape gets its own constants, and calls
// with a second shape after the first are correct (no stale sizes).
TEST(NormSoftmax, StaticShapesEachShapeItsOwnSpecialization) {
  auto k = examples::make_softmax(ts::Settings{.static_shapes = true});
  for (Shape s : {Shape{37, 300}, Shape{5, 1000}, Shape{37, 300}, Shape{1, 1}})
    check_softmax(k, s, ts::f32);
  auto ln = examples::make_layer_norm(ts::Settings{.static_shapes = true});
  for (Shape s : {Shape{37, 300}, Shape{4, 129}}) check_layer_norm(ln, s, ts::bf16);
}

// Without static shapes, a size that is exactly a power of two is fixed by the key (a
// constant of its own specialization); other sizes of the same bucket share another.
TEST(NormSoftmax, PowerOfTwoSizesAreTheirOwnSpecialization) {
  auto k = examples::make_softmax();
  for (Shape s : {Shape{37, 256}, Shape{37, 200}, Shape{37, 256}, Shape{64, 129}, Shape{64, 128}})
    check_softmax(k, s, ts::f32);
}

TEST(NormSoftmax, ExplicitRowBlocks) {
  for (int64_t rows : {1, 4, 16, 64}) {
    auto k = examples::make_softmax(row_blocks(rows));
    for (Shape s : {Shape{37, 300}, Shape{1, 1}}) check_softmax(k, s, ts::f32);
  }
}

TEST(NormSoftmax, LargeLogitsDoNotOverflow) {
  // exp(1000) overflows even in double: only the max-subtracted form is finite.
  auto k = examples::make_softmax();
  check_softmax(k, {4, 100}, ts::f32, /*seed=*/3, /*scale=*/1000);
}

TEST(NormSoftmax, EachRowSumsToOne) {
  auto k = examples::make_softmax();
  std::vector<double> out = k(input({9, 513}, ts::f32, 8, 4)).to_vector();
  for (int i = 0; i < 9; ++i) {
    double s = 0;
    for (int j = 0; j < 513; ++j) s += out[i * 513 + j];
    EXPECT_NEAR(s, 1.0, 1e-5) << "row " << i;
  }
}

TEST(NormSoftmax, StridedColumnView) {
  // Columns 3..299 of a [37, 303] tensor: a row stride of 303, an offset base.
  auto k = examples::make_softmax();
  ts::Buffer x = input({37, 303}, ts::f32, 13, 2).narrow(1, 3, 297);
  expect_close(k(x), ref_softmax(x.to_vector(), 37, 297), softmax_tol(ts::f32), "column view");
}

TEST(NormSoftmax, LoopedReductionChunksOf64) {
  auto k = examples::make_softmax(looped(64));
  for (Shape s : kRagged) check_softmax(k, s, ts::f32);
  check_softmax(k, {37, 300}, ts::bf16);
}

TEST(NormSoftmax, LoopedReductionWithExplicitRowBlock) {
  auto k = examples::make_softmax(looped(128, 4));
  for (Shape s : {Shape{37, 300}, Shape{5, 1000}}) check_softmax(k, s, ts::f32);
}

// ---------------------------------------------------------------- online softmax

TEST(NormSoftmaxTwoPass, F32RaggedShapesMatchReference) {
  auto k = examples::make_softmax_two_pass();
  for (Shape s : kRagged) check_softmax(k, s, ts::f32);
}

TEST(NormSoftmaxTwoPass, HalfInputsComputeInF32AndRoundOnce) {
  auto k = examples::make_softmax_two_pass();
  for (ts::DType dt : {ts::f16, ts::bf16}) check_softmax(k, {37, 300}, dt);
}

TEST(NormSoftmaxTwoPass, ColumnChunkSharedByBothLoops) {
  // {rows, column chunk}: chunks that do not divide the row, a chunk of one column, a
  // chunk longer than the row.
  for (auto [bm, bn] :
       {std::pair<int64_t, int64_t>{1, 64}, {4, 128}, {16, 32}, {2, 1}, {8, 2048}}) {
    auto k = examples::make_softmax_two_pass(
        ts::Settings{.config = ts::Config{.block_sizes = std::vector<int64_t>{bm, bn}}});
    for (Shape s : {Shape{37, 300}, Shape{1, 1}}) check_softmax(k, s, ts::f32);
  }
}

TEST(NormSoftmaxTwoPass, RescalesWhenTheMaximumGrowsInALaterChunk) {
  // Rows increase from -40 to 120: each chunk raises the running maximum, and without
  // the exp(mi - mi_next) rescaling the denominator would be wrong (exp(120) overflows f32).
  auto k = examples::make_softmax_two_pass(
      ts::Settings{.config = ts::Config{.block_sizes = std::vector<int64_t>{2, 16}}});
  const int64_t m = 3, n = 100;
  std::vector<double> v(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) v[i * n + j] = -40 + 160.0 * j / (n - 1) - i;
  ts::Buffer x = ts::Buffer::from_vector(v, {m, n}, ts::f32);
  expect_close(k(x), ref_softmax(x.to_vector(), m, n), softmax_tol(ts::f32), "increasing rows");
}

TEST(NormSoftmaxTwoPass, AgreesWithTheInRegisterSoftmax) {
  ts::Buffer x = input({20, 700}, ts::bf16, 9, 3);
  std::vector<double> a = examples::make_softmax()(x).to_vector();
  // Both round the same f32 value to bf16 up to f32 summation-order differences: at most
  // one bf16 ulp apart.
  expect_close(examples::make_softmax_two_pass()(x), a, softmax_tol(ts::bf16),
               "two-pass vs in-register");
}

// ------------------------------------------- online softmax, per-lane statistics

TEST(NormSoftmaxOnline, RaggedShapesAndChunksMatchReference) {
  // {rows, column chunk}: chunks that do not divide the row (the last chunk's lanes past
  // the end read -inf), a chunk of one column, a chunk longer than the row.
  for (auto [bm, bn] :
       {std::pair<int64_t, int64_t>{1, 64}, {4, 128}, {16, 32}, {2, 1}, {8, 2048}}) {
    auto k = examples::make_softmax_online(
        ts::Settings{.config = ts::Config{.block_sizes = std::vector<int64_t>{bm, bn}}});
    for (Shape s : {Shape{37, 300}, Shape{1, 1}, Shape{5, 1000}}) check_softmax(k, s, ts::f32);
  }
  auto k = examples::make_softmax_online();
  for (Shape s : kRagged) check_softmax(k, s, ts::f32);
  for (ts::DType dt : {ts::f16, ts::bf16}) check_softmax(k, {37, 300}, dt);
}

TEST(NormSoftmaxOnline, MaximaRisingFallingAndInfiniteEntries) {
  // Row 0 rises from -40 to 120 (every chunk raises each lane's maximum; exp(120)
  // overflows f32 without the rescaling), row 1 falls, row 2 holds -inf entries.
  auto k = examples::make_softmax_online(
      ts::Settings{.config = ts::Config{.block_sizes = std::vector<int64_t>{2, 16}}});
  const int64_t m = 3, n = 100;
  std::vector<double> v(m * n);
  for (int64_t j = 0; j < n; ++j) {
    v[j] = -40 + 160.0 * j / (n - 1);
    v[n + j] = 120 - 160.0 * j / (n - 1);
    v[2 * n + j] = j % 3 == 0 ? -std::numeric_limits<double>::infinity() : 0.5 * (j % 7);
  }
  ts::Buffer x = ts::Buffer::from_vector(v, {m, n}, ts::f32);
  expect_close(k(x), ref_softmax(x.to_vector(), m, n), softmax_tol(ts::f32),
               "rising, falling, -inf");
}

// ---------------------------------------------------------------- layer_norm

TEST(NormLayerNorm, F32RaggedShapesMatchReference) {
  auto k = examples::make_layer_norm();
  for (Shape s : kRagged) check_layer_norm(k, s, ts::f32);
}

TEST(NormLayerNorm, HalfInputsMatchReference) {
  auto k = examples::make_layer_norm();
  for (ts::DType dt : {ts::f16, ts::bf16})
    for (Shape s : {Shape{37, 300}, Shape{5, 1000}, Shape{64, 1}}) check_layer_norm(k, s, dt);
}

TEST(NormLayerNorm, F16RowsFarFromZeroKeepStatisticsInF32) {
  // Rows of 1000 + N(0, 1) in f16: a mean rounded to f16 (ulp 0.5 at 1000) would shift
  // every centered value by up to 0.25 standard deviations.
  check_layer_norm(examples::make_layer_norm(), {16, 512}, ts::f16, 1e-5, /*shift=*/1000);
}

TEST(NormLayerNorm, EpsIsARuntimeArgument) {
  auto k = examples::make_layer_norm();
  for (double eps : {1e-5, 0.5, 3.0}) check_layer_norm(k, {7, 33}, ts::f32, eps);
}

TEST(NormLayerNorm, ConstantRowGivesTheBias) {
  // var = 0: (x - mean) * rsqrt(eps) = 0, so every output is bias[n].
  auto k = examples::make_layer_norm();
  ts::Buffer x = ts::Buffer::full({3, 10}, 2.5, ts::f32);
  ts::Buffer w = input({10}, ts::f32, 2);
  ts::Buffer b = input({10}, ts::f32, 3);
  std::vector<double> want;
  for (int i = 0; i < 3; ++i)
    for (double e : b.to_vector()) want.push_back(e);
  expect_close(k(x, w, b, 1e-5), want, tol_for(ts::f32), "constant rows");
}

TEST(NormLayerNorm, WeightOfTheWrongLengthIsAUserError) {
  auto k = examples::make_layer_norm();
  EXPECT_THROW(k(input({3, 5}, ts::f32, 1), input({6}, ts::f32, 2), input({5}, ts::f32, 3), 1e-5),
               ts::UserError);
}

TEST(NormLayerNorm, ExplicitRowBlocks) {
  for (int64_t rows : {1, 8, 32}) {
    auto k = examples::make_layer_norm(row_blocks(rows));
    for (Shape s : {Shape{37, 300}, Shape{64, 1}}) check_layer_norm(k, s, ts::f32);
  }
}

TEST(NormLayerNorm, LoopedReductionChunksOf64) {
  auto k = examples::make_layer_norm(looped(64));
  for (Shape s : kRagged) check_layer_norm(k, s, ts::f32);
  check_layer_norm(k, {37, 300}, ts::bf16);
}

// ---------------------------------------------------------------- rms_norm

TEST(NormRmsNorm, F32RaggedShapesMatchReference) {
  auto k = examples::make_rms_norm();
  for (Shape s : kRagged) check_rms_norm(k, s, ts::f32);
}

TEST(NormRmsNorm, HalfInputsMatchReference) {
  auto k = examples::make_rms_norm();
  for (ts::DType dt : {ts::f16, ts::bf16})
    for (Shape s : {Shape{37, 300}, Shape{5, 1000}, Shape{64, 1}}) check_rms_norm(k, s, dt);
}

TEST(NormRmsNorm, EpsIsARuntimeArgument) {
  auto k = examples::make_rms_norm();
  for (double eps : {1e-6, 1.0}) check_rms_norm(k, {7, 33}, ts::f32, eps);
}

TEST(NormRmsNorm, ExplicitRowBlocks) {
  for (int64_t rows : {1, 4, 64}) {
    auto k = examples::make_rms_norm(row_blocks(rows));
    for (Shape s : {Shape{37, 300}, Shape{1, 1}}) check_rms_norm(k, s, ts::f32);
  }
}

TEST(NormRmsNorm, LoopedReductionChunksOf64) {
  auto k = examples::make_rms_norm(looped(64));
  for (Shape s : kRagged) check_rms_norm(k, s, ts::f32);
  check_rms_norm(k, {37, 300}, ts::bf16);
}

TEST(NormRmsNorm, OutVariantWritesTheCallersTensor) {
  // Into a transposed f32 view of a [N, M] tensor, from bf16 inputs: the caller's strides
  // and dtype decide the store.
  auto k = examples::make_rms_norm_out();
  Shape s{37, 300};
  ts::Buffer x = input({s.m, s.n}, ts::bf16, 4);
  ts::Buffer w = input({s.n}, ts::bf16, 5, 0.5, 1);
  ts::Buffer storage = ts::Buffer::full({s.n, s.m}, -7, ts::f32);
  ts::Buffer out = storage.transpose(0, 1);
  k(x, w, 1e-5, out);
  expect_close(out, ref_rms_norm(x.to_vector(), w.to_vector(), 1e-5, s.m, s.n), tol_for(ts::f32),
               "rms_norm_out bf16 -> f32");
}

// ---------------------------------------------------------------- cross_entropy

TEST(NormCrossEntropy, F32RaggedShapesMatchReference) {
  auto k = examples::make_cross_entropy();
  for (Shape s : kRagged) check_cross_entropy(k, s, ts::f32);
}

TEST(NormCrossEntropy, Bf16AndF16LogitsGiveAnF32Loss) {
  auto k = examples::make_cross_entropy();
  for (ts::DType dt : {ts::bf16, ts::f16})
    for (Shape s : {Shape{37, 300}, Shape{5, 1000}}) check_cross_entropy(k, s, dt);
}

TEST(NormCrossEntropy, I32TargetsWork) {
  check_cross_entropy(examples::make_cross_entropy(), {37, 300}, ts::f32, ts::i32);
}

TEST(NormCrossEntropy, SingleClassLossIsZero) {
  auto k = examples::make_cross_entropy();
  ts::Buffer loss = k(input({6, 1}, ts::f32, 1, 5), ts::Buffer::zeros({6}, ts::i64));
  EXPECT_EQ(loss.to_vector(), std::vector<double>(6, 0.0));
}

TEST(NormCrossEntropy, PicksTheTargetLogitOfEachRow) {
  // Uniform logits except one large entry per row: the loss is small when the target is
  // that entry and large otherwise.
  auto k = examples::make_cross_entropy();
  const int64_t m = 4, v = 10;
  std::vector<double> x(m * v, 0.0), t = {3, 3, 0, 9};
  for (int64_t i = 0; i < m; ++i) x[i * v + 3] = 20;
  ts::Buffer logits = ts::Buffer::from_vector(x, {m, v}, ts::f32);
  ts::Buffer target = ts::Buffer::from_vector(t, {m}, ts::i64);
  expect_close(k(logits, target), ref_cross_entropy(x, t, m, v), tol_for(ts::f32),
               "one-hot-ish rows");
}

TEST(NormCrossEntropy, ExplicitRowBlocks) {
  for (int64_t rows : {1, 8, 64}) {
    auto k = examples::make_cross_entropy(row_blocks(rows));
    for (Shape s : {Shape{37, 300}, Shape{1, 1}}) check_cross_entropy(k, s, ts::f32);
  }
}

TEST(NormCrossEntropy, LoopedReductionChunksOf64) {
  auto k = examples::make_cross_entropy(looped(64));
  for (Shape s : kRagged) check_cross_entropy(k, s, ts::f32);
  check_cross_entropy(k, {37, 300}, ts::bf16);
}

// --------------------------------------------------- cross_entropy, online (chunks)

TEST(NormCrossEntropyOnline, RaggedShapesAndChunksMatchReference) {
  // {rows, column chunk}: chunks that do not divide the row, a chunk of one column, a
  // chunk longer than the row.
  for (auto [bm, bn] :
       {std::pair<int64_t, int64_t>{1, 64}, {4, 128}, {16, 32}, {2, 1}, {8, 2048}}) {
    auto k = examples::make_cross_entropy_online(
        ts::Settings{.config = ts::Config{.block_sizes = std::vector<int64_t>{bm, bn}}});
    for (Shape s : {Shape{37, 300}, Shape{1, 1}, Shape{5, 1000}})
      check_cross_entropy(k, s, ts::f32);
  }
  auto k = examples::make_cross_entropy_online();
  for (Shape s : kRagged) check_cross_entropy(k, s, ts::f32);
  for (ts::DType dt : {ts::f16, ts::bf16}) check_cross_entropy(k, {37, 300}, dt);
  check_cross_entropy(k, {37, 300}, ts::f32, ts::i32);
}

TEST(NormCrossEntropyOnline, LargeLogitsDoNotOverflow) {
  // Row 0 rises to 120 (exp(120) overflows f32 without the running rescale), row 1 falls
  // from it; the targets are the first and the last class.
  auto k = examples::make_cross_entropy_online(
      ts::Settings{.config = ts::Config{.block_sizes = std::vector<int64_t>{2, 16}}});
  const int64_t m = 2, v = 100;
  std::vector<double> x(m * v), t = {0, 99};
  for (int64_t j = 0; j < v; ++j) {
    x[j] = -40 + 160.0 * j / (v - 1);
    x[v + j] = 120 - 160.0 * j / (v - 1);
  }
  ts::Buffer logits = ts::Buffer::from_vector(x, {m, v}, ts::f32);
  expect_close(k(logits, ts::Buffer::from_vector(t, {m}, ts::i64)), ref_cross_entropy(x, t, m, v),
               tol_for(ts::f32), "rising and falling rows");
}

// ---------------------------------------------------------------- row sum

TEST(NormRowSum, FloatRaggedShapesMatchReference) {
  auto k = examples::make_row_sum();
  for (ts::DType dt : kFloatDtypes)
    for (Shape s : kRagged) check_row_sum(k, s, dt);
}

TEST(NormRowSum, Bf16AccumulatesInF32) {
  // 256 + 64 * 1: in bf16 (8 significant bits) 256 + 1 rounds back to 256, so a bf16
  // accumulator would return 256; the f32 accumulator gives 320 (exact in bf16).
  std::vector<double> v(65, 1.0);
  v[0] = 256;
  ts::Buffer x = ts::Buffer::from_vector(v, {1, 65}, ts::bf16);
  EXPECT_EQ(examples::make_row_sum()(x).to_vector(), std::vector<double>{320});
}

TEST(NormRowSum, IntegerRowsSumExactly) {
  const int64_t m = 3, n = 7;
  std::vector<double> v(m * n);
  for (int64_t i = 0; i < m * n; ++i) v[i] = static_cast<double>(i * 3 - 20);
  ts::Buffer out = examples::make_row_sum()(ts::Buffer::from_vector(v, {m, n}, ts::i32));
  EXPECT_EQ(out.dtype(), ts::i32);
  EXPECT_EQ(out.to_vector(), ref_row_sum(v, m, n, m));
}

TEST(NormRowSum, ExplicitRowBlocks) {
  for (int64_t rows : {1, 2, 128}) {
    auto k = examples::make_row_sum(row_blocks(rows));
    for (Shape s : {Shape{37, 300}, Shape{64, 1}}) check_row_sum(k, s, ts::f32);
  }
}

TEST(NormRowSum, LoopedReductionChunksOf64) {
  auto k = examples::make_row_sum(looped(64));
  for (Shape s : kRagged) check_row_sum(k, s, ts::f32);
  check_row_sum(k, {37, 300}, ts::bf16);
}

// ---------------------------------------------------------------- padded_sum, host bound

TEST(NormPaddedSumHost, SeedValuesOnesRowsBelowTheBound) {
  // Seed 002: x = ones(100, 100), n = 80: out[:80] == 100, out[80:] == 0.
  ts::Buffer out = examples::make_padded_sum_host()(ts::Buffer::ones({100, 100}, ts::f32), 80);
  std::vector<double> want(100, 0.0);
  std::fill(want.begin(), want.begin() + 80, 100.0);
  EXPECT_EQ(out.to_vector(), want);
}

TEST(NormPaddedSumHost, BoundIsASymbolicArgument) {
  // One kernel, several bounds (including 0, 1 and every row), ragged row tiles.
  auto k = examples::make_padded_sum_host(row_blocks(16));
  ts::Buffer x = input({37, 300}, ts::f32, 10);
  std::vector<double> xv = x.to_vector();
  for (int64_t n : {0, 1, 17, 36, 37}) {
    Tol t = tol_for(ts::f32);
    t.atol *= std::sqrt(300.0);
    expect_close(k(x, n), ref_row_sum(xv, 37, 300, n), t, "n = " + std::to_string(n));
  }
}

TEST(NormPaddedSumHost, Bf16AndF16) {
  auto k = examples::make_padded_sum_host();
  for (ts::DType dt : {ts::f16, ts::bf16}) {
    ts::Buffer x = input({20, 100}, dt, 11);
    ts::Buffer out = k(x, 13);
    EXPECT_EQ(out.dtype(), dt);
    expect_close(out, ref_row_sum(x.to_vector(), 20, 100, 13), {1e-4, tol_for(dt).rtol},
                 ts::dtype_name(dt));
  }
}

TEST(NormPaddedSumHost, LoopedReductionChunksOf64) {
  auto k = examples::make_padded_sum_host(looped(64));
  ts::Buffer x = input({37, 300}, ts::f32, 12);
  Tol t = tol_for(ts::f32);
  t.atol *= std::sqrt(300.0);
  expect_close(k(x, 30), ref_row_sum(x.to_vector(), 37, 300, 30), t, "looped");
}
