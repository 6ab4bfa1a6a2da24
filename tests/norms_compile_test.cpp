// The generated CUDA of every kernel in examples/kernels/norms.hpp compiles with NVRTC
// for sm_90 (no GPU needed): f32 and bf16, the default config, configs of the kind the
// benchmark uses (one row per program, many warps), and looped reductions.
// (bench/norms_bench --compile-only compiles every config the benchmark tries.)
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <tessel/tessel.hpp>
#include <tuple>
#include <vector>

#include "driver/cuda_api.hpp"
#include "examples/kernels/norms.hpp"
#include "nvrtc_test_util.hpp"

namespace ts = tessel;

namespace {

using nvrtc_test::compile;

ts::Buffer host_zeros(std::vector<int64_t> shape, ts::DType t) {
  return ts::Buffer::zeros(shape, t);
}

/// A config compiled on a shape: the default on ragged rows of 1000; one row per program
/// with 16 warps (a benchmark config) on rows of 4096; a looped reduction over chunks of
/// 256 columns on ragged rows of 1000; static shapes with the default config and with the
/// benchmark config. (Rows of 16384: NormCompile.SoftmaxRowsOf16384.)
struct Case {
  ts::Settings settings;
  std::vector<int64_t> shape;
};
std::vector<Case> cases() {
  return {
      {ts::Settings{}, {37, 1000}},
      {ts::Settings{.config = ts::Config{.block_sizes = std::vector<int64_t>{1}, .num_warps = 16}},
       {2, 4096}},
      {ts::Settings{.config =
                        ts::Config{.block_sizes = std::vector<int64_t>{2},
                                   .num_warps = 4,
                                   .reduction_loops = std::vector<std::optional<int64_t>>{256}}},
       {37, 1000}},
      {ts::Settings{.static_shapes = true}, {37, 1000}},
      {ts::Settings{.static_shapes = true,
                    .config = ts::Config{.block_sizes = std::vector<int64_t>{1}, .num_warps = 16}},
       {2, 4096}}};
}

bool has_kernel(const std::string& src, const std::string& name) {
  return src.find("__global__") != std::string::npos && src.find(name) != std::string::npos;
}

}  // namespace

TEST(NormCompile, Softmax) {
  REQUIRE_NVRTC();
  for (const Case& c : cases())
    for (ts::DType dt : {ts::f32, ts::bf16})
      EXPECT_TRUE(has_kernel(compile(examples::make_softmax(c.settings), host_zeros(c.shape, dt)),
                             "softmax"));
}

TEST(NormCompile, SoftmaxRowsOf16384) {
  REQUIRE_NVRTC();
  // One row per program, 32 warps: 16 elements per thread (bf16 vectors of 8).
  auto k = examples::make_softmax(
      ts::Settings{.config = ts::Config{.block_sizes = std::vector<int64_t>{1}, .num_warps = 32}});
  EXPECT_TRUE(has_kernel(compile(k, host_zeros({2, 16384}, ts::bf16)), "softmax"));
}

TEST(NormCompile, SoftmaxTwoPass) {
  REQUIRE_NVRTC();
  // {rows per program, column chunk} with the warps the benchmark tries.
  std::vector<ts::Settings> configs = {
      ts::Settings{},
      ts::Settings{.config =
                       ts::Config{.block_sizes = std::vector<int64_t>{1, 4096}, .num_warps = 16}},
      ts::Settings{.config =
                       ts::Config{.block_sizes = std::vector<int64_t>{8, 256}, .num_warps = 4}}};
  for (const ts::Settings& s : configs)
    for (ts::DType dt : {ts::f32, ts::bf16})
      EXPECT_TRUE(
          has_kernel(compile(examples::make_softmax_two_pass(s), host_zeros({37, 1000}, dt)),
                     "softmax_two_pass"));
}

TEST(NormCompile, LayerNorm) {
  REQUIRE_NVRTC();
  for (const Case& c : cases())
    for (ts::DType dt : {ts::f32, ts::bf16}) {
      ts::Buffer w = host_zeros({c.shape[1]}, dt);
      EXPECT_TRUE(has_kernel(
          compile(examples::make_layer_norm(c.settings), host_zeros(c.shape, dt), w, w, 1e-5),
          "layer_norm"));
    }
}

TEST(NormCompile, RmsNorm) {
  REQUIRE_NVRTC();
  for (const Case& c : cases())
    for (ts::DType dt : {ts::f32, ts::bf16})
      EXPECT_TRUE(has_kernel(compile(examples::make_rms_norm(c.settings), host_zeros(c.shape, dt),
                                     host_zeros({c.shape[1]}, dt), 1e-5),
                             "rms_norm"));
}

TEST(NormCompile, RmsNormOutOnTheTorchExtensionsShapes) {
  REQUIRE_NVRTC();
  // The default config, as examples/torch_extension calls it, on the widest rows its
  // Python test passes on a GPU.
  for (std::vector<int64_t> shape : {std::vector<int64_t>{4096, 4096}, {1000, 8192}, {3, 65536}})
    for (ts::DType dt : {ts::f32, ts::bf16, ts::f16})
      EXPECT_TRUE(has_kernel(compile(examples::make_rms_norm_out(), host_zeros(shape, dt),
                                     host_zeros({shape[1]}, dt), 1e-5, host_zeros(shape, dt)),
                             "rms_norm_out"));
}

TEST(NormCompile, CrossEntropy) {
  REQUIRE_NVRTC();
  for (const Case& c : cases())
    for (ts::DType dt : {ts::f32, ts::bf16})
      EXPECT_TRUE(has_kernel(compile(examples::make_cross_entropy(c.settings),
                                     host_zeros(c.shape, dt), host_zeros({c.shape[0]}, ts::i64)),
                             "cross_entropy"));
}

TEST(NormCompile, CrossEntropyOnline) {
  REQUIRE_NVRTC();
  for (auto [bm, bn, warps] :
       {std::tuple<int64_t, int64_t, int>{1, 4096, 16}, {4, 256, 4}, {1, 2048, 8}})
    for (ts::DType dt : {ts::f32, ts::bf16}) {
      auto k = examples::make_cross_entropy_online(ts::Settings{
          .config = ts::Config{
              .block_sizes = std::vector<int64_t>{bm, bn}, .num_warps = warps, .num_stages = 2}});
      EXPECT_TRUE(has_kernel(compile(k, host_zeros({37, 1000}, dt), host_zeros({37}, ts::i64)),
                             "cross_entropy_online"));
    }
}

TEST(NormCompile, RowSum) {
  REQUIRE_NVRTC();
  for (const Case& c : cases())
    for (ts::DType dt : {ts::f32, ts::bf16, ts::i32})
      EXPECT_TRUE(has_kernel(compile(examples::make_row_sum(c.settings), host_zeros(c.shape, dt)),
                             "row_sum"));
}

TEST(NormCompile, PaddedSumHostBound) {
  REQUIRE_NVRTC();
  for (const Case& c : cases())
    EXPECT_TRUE(has_kernel(
        compile(examples::make_padded_sum_host(c.settings), host_zeros({100, 100}, ts::f32), 80),
        "padded_sum_host"));
}

// Without static shapes, sizes that are exactly powers of two are constants too (the key
// fixes them); other sizes are kernel parameters.
TEST(NormCompile, PowerOfTwoSizesAreConstants) {
  REQUIRE_NVRTC();
  std::string pow2 = compile(examples::make_softmax(), host_zeros({37, 1024}, ts::f32));
  std::string other = compile(examples::make_softmax(), host_zeros({37, 1000}, ts::f32));
  EXPECT_EQ(pow2.find("x_size1"), std::string::npos) << pow2;
  EXPECT_NE(pow2.find("x_size0"), std::string::npos) << pow2;  // 37 rows: a parameter
  EXPECT_NE(other.find("x_size1"), std::string::npos) << other;
}

// Static shapes: the tensors' sizes are constants of the generated code, so the kernel
// takes no size parameters; the masks of a ragged row compare against the constant.
TEST(NormCompile, StaticShapesMakeSizesConstants) {
  REQUIRE_NVRTC();
  ts::Settings st{.static_shapes = true};
  for (ts::DType dt : {ts::f32, ts::bf16}) {
    std::string dynamic_src = compile(examples::make_layer_norm(), host_zeros({37, 1000}, dt),
                                      host_zeros({1000}, dt), host_zeros({1000}, dt), 1e-5);
    std::string static_src = compile(examples::make_layer_norm(st), host_zeros({37, 1000}, dt),
                                     host_zeros({1000}, dt), host_zeros({1000}, dt), 1e-5);
    EXPECT_NE(dynamic_src.find("x_size1"), std::string::npos);
    EXPECT_EQ(static_src.find("_size0"), std::string::npos) << static_src;
    EXPECT_EQ(static_src.find("_size1"), std::string::npos) << static_src;
    EXPECT_NE(static_src.find("1000"), std::string::npos);
  }
}
