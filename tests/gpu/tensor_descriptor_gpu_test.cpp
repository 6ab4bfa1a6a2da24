// Loads by tensor descriptor (Config::indexing "tensor_descriptor") on the GPU against the
// CPU interpreter: boxes per program over ragged edges, dtypes of 2 and 4 bytes, a
// transposed load, a broadcast row, boxes reused by a device loop and by a persistent
// program's tiles, a scalar row index, a gather beside a box. Each test first checks that
// the kernel does copy boxes (the generated CUDA calls ts::tma_load).
#include <gtest/gtest.h>

#include <tessel/testing.hpp>

#include "examples/kernels/basic.hpp"
#include "examples/kernels/norms.hpp"
#include "gpu_test_util.hpp"
#include "tests/tensor_descriptor_kernels.hpp"

namespace ts = tessel;
using namespace tensor_descriptor_test;

namespace {

ts::Buffer on_cpu(const ts::Buffer& b) { return b.to(ts::cpu()); }
template <class T>
T on_cpu(const T& scalar) {
  return scalar;
}

/// Runs `k` on GPU Buffers (its CUDA loading boxes by TMA) and on their CPU copies;
/// expects equal outputs within tolerance.
template <class K, class... A>
void expect_boxes_match_interpreter(const K& k, double atol, double rtol, const A&... gpu_args) {
  std::string cuda;
  for (const std::string& s : k.cuda(false, gpu_args...)) cuda += s;
  ASSERT_NE(cuda.find("ts::tma_load<"), std::string::npos) << cuda;
  ts::Buffer got = k(gpu_args...);
  ts::Buffer want = k(on_cpu(gpu_args)...);
  ASSERT_EQ(got.shape(), want.shape());
  EXPECT_EQ(ts::count_mismatches(on_cpu(got), want, atol, rtol), 0) << got.str();
}

ts::Buffer randn(std::vector<int64_t> shape, ts::DType t, uint64_t seed) {
  return ts::Buffer::randn(std::move(shape), t, ts::cuda(0), seed);
}

TEST(TensorDescriptorGpu, BoxesOverRaggedEdges) {
  TESSEL_REQUIRE_GPU();
  ts::Settings s{.config = tma_config({32, 64})};
  // 1000 x 776: neither dim a multiple of its block (rows of 3104 bytes, 16-byte aligned).
  expect_boxes_match_interpreter(examples::make_add_2d(s), 0, 0, randn({1000, 776}, ts::f32, 1),
                                 randn({1000, 776}, ts::f32, 2));
  expect_boxes_match_interpreter(examples::make_add_2d(s), 0, 0, randn({300, 520}, ts::bf16, 3),
                                 randn({300, 520}, ts::bf16, 4));
  // Fewer rows than one box.
  expect_boxes_match_interpreter(examples::make_add_2d(s), 0, 0, randn({5, 64}, ts::f32, 5),
                                 randn({5, 64}, ts::f32, 6));
}

TEST(TensorDescriptorGpu, TransposedAndBroadcastLoads) {
  TESSEL_REQUIRE_GPU();
  ts::Settings s{.config = tma_config({32, 32})};
  expect_boxes_match_interpreter(examples::make_transpose(s), 0, 0, randn({1000, 776}, ts::f32, 7));
  expect_boxes_match_interpreter(examples::make_add_transposed(s), 0, 0,
                                 randn({200, 328}, ts::f32, 8), randn({328, 200}, ts::f32, 9));
  expect_boxes_match_interpreter(examples::make_add_bias(s), 0, 0, randn({77, 328}, ts::f32, 10),
                                 randn({328}, ts::f32, 11));
}

TEST(TensorDescriptorGpu, ABoxPerDeviceLoopIteration) {
  TESSEL_REQUIRE_GPU();
  // Column tiles of 128 over 3008 columns: 24 boxes per program, the last one ragged.
  expect_boxes_match_interpreter(make_row_sum({.config = tma_config({8, 128})}), 1e-4, 1e-5,
                                 randn({100, 3008}, ts::f32, 12));
  expect_boxes_match_interpreter(make_row_sum({.config = tma_config({4, 256})}), 1e-2, 1e-3,
                                 randn({37, 1000}, ts::bf16, 13));
  // rms_norm's looped reduction: its chunks' loads in two device loops.
  ts::Config looped{.block_sizes = std::vector<int64_t>{1},
                    .num_warps = 4,
                    .reduction_loops = std::vector<std::optional<int64_t>>{256},
                    .indexing = std::vector<std::string>{"tensor_descriptor"}};
  expect_boxes_match_interpreter(examples::make_rms_norm({.config = looped}), 1e-4, 1e-4,
                                 randn({64, 4000}, ts::f32, 14), randn({4000}, ts::f32, 15), 1e-6);
}

TEST(TensorDescriptorGpu, APersistentProgramReusesItsBoxAcrossTiles) {
  TESSEL_REQUIRE_GPU();
  ts::Config c = tma_config({16, 64});
  c.pid_type = ts::PidType::persistent_interleaved;
  expect_boxes_match_interpreter(examples::make_add_2d({.config = c}), 0, 0,
                                 randn({4000, 520}, ts::f32, 16), randn({4000, 520}, ts::f32, 17));
  c.pid_type = ts::PidType::persistent_blocked;
  c.num_stages = 2;  // the next tile's pointer loads early; boxes are not prefetched
  expect_boxes_match_interpreter(examples::make_add_2d({.config = c}), 0, 0,
                                 randn({4000, 520}, ts::f32, 18), randn({4000, 520}, ts::f32, 19));
}

TEST(TensorDescriptorGpu, AScalarRowAndAGatherBesideABox) {
  TESSEL_REQUIRE_GPU();
  ts::Buffer x = randn({9, 1000}, ts::f32, 20);
  expect_boxes_match_interpreter(make_scaled_row({.config = tma_config({128})}), 0, 0, x,
                                 int64_t{7});
  std::vector<double> idx(300);
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<double>((i * 7) % 9);
  expect_boxes_match_interpreter(make_gather_rows({.config = tma_config({32, 64})}), 0, 0, x,
                                 ts::Buffer::from_vector(idx, {300}, ts::i64, ts::cuda(0)));
}

}  // namespace
