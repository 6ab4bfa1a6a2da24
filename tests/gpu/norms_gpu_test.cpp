// GPU results of the reduction and normalization kernels (examples/kernels/norms.hpp)
// against the CPU interpreter (the oracle), which tests/norms_interp_test.cpp checks
// against double-precision references.
//
// Sizes: [4096, 1000] (ragged rows of 1000), [257, 4096] (a ragged row count), [33, 16384]
// (long rows). Configs: the default (except on rows of 16384, whose default of 4 warps
// holds 128 elements per thread and takes NVRTC ~13 s per kernel), one row per program
// with 16 warps (the benchmark's choice for long rows), several rows per program, and a
// looped reduction over chunks of 1024 columns.
//
// Tolerances (|gpu - interp| <= atol + rtol * |interp|): f32 atol = rtol = 1e-5 (expf,
// rsqrtf, fused multiply-adds and summation order differ by a few ulps); f16 and bf16
// atol = rtol = 2e-2 (both sides round nearly the same f32 value to 16 bits: at most one
// ulp apart). Softmax outputs are probabilities of about 1/N, so their atol is 1e-7 (f32)
// or 1e-6 (f16, bf16) and the relative tolerance does the work. Row sums scale atol by
// sqrt(N) for the summation order. cross_entropy's loss is f32 but uses the logits'
// dtype's tolerance.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <tessel/testing.hpp>
#include <type_traits>
#include <vector>

#include "examples/kernels/norms.hpp"
#include "gpu_test_util.hpp"

namespace ts = tessel;

namespace {

ts::Buffer on_cpu(const ts::Buffer& b) { return b.to(ts::cpu()); }
/// Scalar arguments (eps, a row bound) pass unchanged.
template <class T>
requires std::is_arithmetic_v<T> T on_cpu(T v) { return v; }

/// Runs `k` on GPU Buffers and on their CPU copies (the interpreter); expects equal
/// outputs within tolerance.
template <class K, class... A>
void expect_matches_interpreter(const K& k, double atol, double rtol, const std::string& what,
                                const A&... gpu_args) {
  ts::Buffer got = k(gpu_args...);
  ts::Buffer want = k(on_cpu(gpu_args)...);
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  EXPECT_EQ(ts::count_mismatches(on_cpu(got), want, atol, rtol), 0) << what << ": " << got.str();
}

double tol(ts::DType t) { return t == ts::f32 ? 1e-5 : 2e-2; }
double softmax_atol(ts::DType t) { return t == ts::f32 ? 1e-7 : 1e-6; }

struct Shape {
  int64_t m, n;
};
const std::vector<Shape> kShapes = {{4096, 1000}, {257, 4096}, {33, 16384}};
const std::vector<ts::DType> kDtypes = {ts::f32, ts::bf16, ts::f16};

std::string label(const char* kernel, ts::DType dt, Shape s, const std::string& cfg) {
  return std::string(kernel) + " " + ts::dtype_name(dt) + "[" + std::to_string(s.m) + ", " +
         std::to_string(s.n) + "] " + cfg;
}

/// Configs tried for a shape: (name, settings). Rows of 16384 skip the default config.
/// Static shapes: sizes are constants of the generated code (masks of ragged rows too).
std::vector<std::pair<std::string, ts::Settings>> configs_for(Shape s) {
  std::vector<std::pair<std::string, ts::Settings>> out;
  if (s.n < 16384) out.emplace_back("default", ts::Settings{});
  out.emplace_back(
      "1 row, 16 warps",
      ts::Settings{.config = ts::Config{.block_sizes = std::vector<int64_t>{1}, .num_warps = 16}});
  if (s.n <= 1024)
    out.emplace_back(
        "4 rows, 8 warps",
        ts::Settings{.config = ts::Config{.block_sizes = std::vector<int64_t>{4}, .num_warps = 8}});
  out.emplace_back(
      "1 row, 16 warps, static shapes",
      ts::Settings{.static_shapes = true,
                   .config = ts::Config{.block_sizes = std::vector<int64_t>{1}, .num_warps = 16}});
  out.emplace_back("looped 1024, 2 rows, 8 warps, 2 stages",
                   ts::Settings{.config = ts::Config{
                                    .block_sizes = std::vector<int64_t>{2},
                                    .num_warps = 8,
                                    .num_stages = 2,
                                    .reduction_loops = std::vector<std::optional<int64_t>>{1024}}});
  // Persistent programs with the next row's loads issued early (num_stages 2), one with a
  // register cap.
  out.emplace_back(
      "1 row, 8 warps, persistent interleaved, 2 stages, maxnreg 128",
      ts::Settings{.config = ts::Config{.block_sizes = std::vector<int64_t>{1},
                                        .num_warps = 8,
                                        .num_stages = 2,
                                        .maxnreg = 128,
                                        .pid_type = ts::PidType::persistent_interleaved}});
  out.emplace_back("2 rows, 16 warps, persistent blocked, 2 stages",
                   ts::Settings{.config = ts::Config{.block_sizes = std::vector<int64_t>{2},
                                                     .num_warps = 16,
                                                     .num_stages = 2,
                                                     .pid_type = ts::PidType::persistent_blocked}});
  out.emplace_back("looped 1024, 2 rows, 8 warps",
                   ts::Settings{.config = ts::Config{
                                    .block_sizes = std::vector<int64_t>{2},
                                    .num_warps = 8,
                                    .reduction_loops = std::vector<std::optional<int64_t>>{1024}}});
  return out;
}

ts::Buffer gpu_randn(std::vector<int64_t> shape, ts::DType dt, uint64_t seed) {
  return ts::Buffer::randn(std::move(shape), dt, ts::cuda(0), seed);
}

/// Class indices in [0, v) on the GPU (i64), spread over the range, including 0 and v - 1.
ts::Buffer gpu_targets(int64_t m, int64_t v) {
  std::vector<double> t(m);
  for (int64_t i = 0; i < m; ++i) t[i] = static_cast<double>((i * 7919 + 13) % v);
  t[0] = 0;
  t[m - 1] = static_cast<double>(v - 1);
  return ts::Buffer::from_vector(t, {m}, ts::i64, ts::cuda(0));
}

}  // namespace

TEST(NormGpu, SoftmaxMatchesInterpreter) {
  TESSEL_REQUIRE_GPU();
  for (Shape s : kShapes)
    for (const auto& [name, settings] : configs_for(s)) {
      auto k = examples::make_softmax(settings);
      for (ts::DType dt : kDtypes)
        expect_matches_interpreter(k, softmax_atol(dt), tol(dt), label("softmax", dt, s, name),
                                   gpu_randn({s.m, s.n}, dt, 1));
    }
}

/// {rows per program, column chunk, warps, stages} of the online softmaxes.
struct ChunkCfg {
  int64_t bm, bn;
  int warps;
  int stages = 1;
};

/// An online softmax made by `make` (Settings -> kernel) against the interpreter, over the
/// shapes, dtypes and `configs`.
template <class Make>
void expect_chunked_softmax_matches(const char* kernel, const Make& make,
                                    std::initializer_list<ChunkCfg> configs) {
  for (Shape s : kShapes)
    for (ChunkCfg c : configs) {
      auto k =
          make(ts::Settings{.config = ts::Config{.block_sizes = std::vector<int64_t>{c.bm, c.bn},
                                                 .num_warps = c.warps,
                                                 .num_stages = c.stages}});
      std::string name = "{" + std::to_string(c.bm) + ", " + std::to_string(c.bn) + "} warps " +
                         std::to_string(c.warps) + " stages " + std::to_string(c.stages);
      for (ts::DType dt : kDtypes)
        expect_matches_interpreter(k, softmax_atol(dt), tol(dt), label(kernel, dt, s, name),
                                   gpu_randn({s.m, s.n}, dt, 2));
    }
}

TEST(NormGpu, SoftmaxTwoPassMatchesInterpreter) {
  TESSEL_REQUIRE_GPU();
  // Chunks that divide the row, one that does not (1000 = 3 * 256 + 232), and one longer
  // than the row. Two stages: each loop's loads issued one iteration early
  // (num_stages = 2); three and four: two and three iterations early (rows of 1000 and
  // 4096 have fewer chunks than that at {1, 1024}).
  expect_chunked_softmax_matches("softmax_two_pass", examples::make_softmax_two_pass,
                                 {{1, 1024, 4},
                                  {4, 256, 4},
                                  {1, 4096, 16},
                                  {4, 256, 4, 2},
                                  {1, 2048, 8, 2},
                                  {4, 256, 4, 3},
                                  {1, 1024, 4, 4}});
}

TEST(NormGpu, SoftmaxOnlineMatchesInterpreter) {
  TESSEL_REQUIRE_GPU();
  // Per-lane statistics ([rows, chunk] values carried over the chunks), one and two stages.
  expect_chunked_softmax_matches("softmax_online", examples::make_softmax_online,
                                 {{1, 1024, 4}, {4, 256, 4}, {1, 4096, 16, 2}, {2, 1024, 8, 2}});
}

TEST(NormGpu, LayerNormMatchesInterpreter) {
  TESSEL_REQUIRE_GPU();
  for (Shape s : kShapes)
    for (const auto& [name, settings] : configs_for(s)) {
      auto k = examples::make_layer_norm(settings);
      for (ts::DType dt : kDtypes)
        expect_matches_interpreter(k, tol(dt), tol(dt), label("layer_norm", dt, s, name),
                                   gpu_randn({s.m, s.n}, dt, 3), gpu_randn({s.n}, dt, 4),
                                   gpu_randn({s.n}, dt, 5), 1e-5);
    }
}

TEST(NormGpu, RmsNormMatchesInterpreter) {
  TESSEL_REQUIRE_GPU();
  for (Shape s : kShapes)
    for (const auto& [name, settings] : configs_for(s)) {
      auto k = examples::make_rms_norm(settings);
      for (ts::DType dt : kDtypes)
        expect_matches_interpreter(k, tol(dt), tol(dt), label("rms_norm", dt, s, name),
                                   gpu_randn({s.m, s.n}, dt, 6), gpu_randn({s.n}, dt, 7), 1e-6);
    }
}

TEST(NormGpu, CrossEntropyMatchesInterpreter) {
  TESSEL_REQUIRE_GPU();
  for (Shape s : kShapes)
    for (const auto& [name, settings] : configs_for(s)) {
      auto k = examples::make_cross_entropy(settings);
      for (ts::DType dt : {ts::f32, ts::bf16})
        expect_matches_interpreter(k, tol(dt), tol(dt), label("cross_entropy", dt, s, name),
                                   gpu_randn({s.m, s.n}, dt, 8), gpu_targets(s.m, s.n));
    }
}

TEST(NormGpu, CrossEntropyOnlineMatchesInterpreter) {
  TESSEL_REQUIRE_GPU();
  // {rows, chunk}/warps/stages: chunks that divide the row and one that does not (1000).
  for (Shape s : kShapes)
    for (ChunkCfg c : {ChunkCfg{1, 1024, 4}, ChunkCfg{4, 256, 4}, ChunkCfg{1, 2048, 8, 2},
                       ChunkCfg{1, 4096, 16, 3}}) {
      auto k = examples::make_cross_entropy_online(
          ts::Settings{.config = ts::Config{.block_sizes = std::vector<int64_t>{c.bm, c.bn},
                                            .num_warps = c.warps,
                                            .num_stages = c.stages}});
      std::string name = "{" + std::to_string(c.bm) + ", " + std::to_string(c.bn) + "} stages " +
                         std::to_string(c.stages);
      for (ts::DType dt : {ts::f32, ts::bf16})
        expect_matches_interpreter(k, tol(dt), tol(dt), label("cross_entropy_online", dt, s, name),
                                   gpu_randn({s.m, s.n}, dt, 8), gpu_targets(s.m, s.n));
    }
}

TEST(NormGpu, RowSumMatchesInterpreter) {
  TESSEL_REQUIRE_GPU();
  for (Shape s : kShapes)
    for (const auto& [name, settings] : configs_for(s)) {
      auto k = examples::make_row_sum(settings);
      for (ts::DType dt : kDtypes) {
        double atol = tol(dt) * std::sqrt(static_cast<double>(s.n));
        expect_matches_interpreter(k, atol, tol(dt), label("row_sum", dt, s, name),
                                   gpu_randn({s.m, s.n}, dt, 9));
      }
    }
}

TEST(NormGpu, PaddedSumHostBoundMatchesInterpreter) {
  TESSEL_REQUIRE_GPU();
  Shape s{4096, 1000};
  auto k = examples::make_padded_sum_host();
  ts::Buffer x = gpu_randn({s.m, s.n}, ts::f32, 10);
  for (int64_t n : {0, 1, 2049, 4096})
    expect_matches_interpreter(k, 1e-5 * std::sqrt(1000.0), 1e-5,
                               label("padded_sum_host", ts::f32, s, "n=" + std::to_string(n)), x,
                               n);
}

TEST(NormGpu, PaddedSumHostBoundSeedValues) {
  TESSEL_REQUIRE_GPU();
  // Seed 002: x = ones(100, 100), n = 80: out[:80] == 100, out[80:] == 0.
  ts::Buffer out =
      examples::make_padded_sum_host()(ts::Buffer::ones({100, 100}, ts::f32, ts::cuda(0)), 80);
  std::vector<double> want(100, 0.0);
  for (int i = 0; i < 80; ++i) want[i] = 100;
  EXPECT_EQ(out.to_vector(), want);
}

TEST(NormGpu, SoftmaxAndLayerNormOnAnUnalignedColumnView) {
  TESSEL_REQUIRE_GPU();
  // Columns 3..999 of a [257, 1003] tensor: rows start at unaligned addresses, so the
  // generated code cannot use 16-byte vector loads.
  ts::Buffer wide = gpu_randn({257, 1003}, ts::f32, 11);
  ts::Buffer x = wide.narrow(1, 3, 997);
  expect_matches_interpreter(examples::make_softmax(), 1e-7, 1e-5, "softmax view", x);
  expect_matches_interpreter(examples::make_layer_norm(), 1e-5, 1e-5, "layer_norm view", x,
                             gpu_randn({997}, ts::f32, 12), gpu_randn({997}, ts::f32, 13), 1e-5);
}
