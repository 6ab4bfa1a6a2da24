// Multicast tensors on the GPU (seed 001): the four programs of the seed and the masked
// form, with R ranks of a ts::SymmetricBuffer on one GPU (and on two GPUs with peer access
// where they exist), checked exactly (loads and stores copy) against the interpreter
// running the same kernels on CPU symmetric buffers holding the same values.
#include <gtest/gtest.h>

#include <cstdint>
#include <tessel/tessel.hpp>
#include <vector>

#include "examples/kernels/seed001.hpp"
#include "gpu_test_util.hpp"

namespace ts = tessel;

namespace {

/// The same values in CPU buffers (the interpreter's) and GPU buffers: rank r holds
/// r * 100 + 0, 1, 2, ... (row-major).
struct Twins {
  ts::SymmetricBuffer cpu, gpu;
};

Twins twins(std::vector<int64_t> shape, int ranks, ts::DType t, std::vector<ts::Device> gpus = {}) {
  if (gpus.empty()) gpus.assign(static_cast<size_t>(ranks), ts::cuda(0));
  Twins w{ts::SymmetricBuffer::on_device(shape, t, ranks, ts::cpu()),
          ts::SymmetricBuffer::create(shape, t, gpus)};
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  for (int r = 0; r < ranks; ++r) {
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = r * 100.0 + static_cast<double>(i);
    w.cpu.buffer(r).copy_from(ts::Buffer::from_vector(v, shape, t));
    w.gpu.buffer(r).copy_from(w.cpu.buffer(r));
  }
  return w;
}

void expect_same_buffers(const Twins& w) {
  for (int r = 0; r < w.cpu.world_size(); ++r)
    EXPECT_EQ(w.gpu.buffer(r).to_vector(), w.cpu.buffer(r).to_vector()) << "rank " << r;
}

}  // namespace

TEST(MulticastGpu, LoadFrom1dDevPtrsWith2dExample) {
  TESSEL_REQUIRE_GPU();
  for (ts::DType t : {ts::bf16, ts::f32}) {
    Twins w = twins({4, 4}, 8, t);
    auto k = examples::make_multicast_load_2d_tensors();
    ts::Buffer want = k(w.cpu.dev_ptrs(0), w.cpu.buffer(0));
    ts::Buffer got = k(w.gpu.dev_ptrs(0), w.gpu.buffer(0));
    EXPECT_EQ(got.to_vector(), want.to_vector()) << dtype_name(t);
  }
}

TEST(MulticastGpu, LoadWith2dDevPtrsAnd1dExampleAtBlock4) {
  TESSEL_REQUIRE_GPU();
  Twins w = twins({4}, 16, ts::bf16);
  auto k = examples::make_multicast_load_2d_dev_ptrs();
  ts::Buffer want = k(w.cpu.dev_ptrs(0).view_as_strided({4, 4}, {4, 1}, 0), w.cpu.buffer(0));
  ts::Buffer got = k(w.gpu.dev_ptrs(0).view_as_strided({4, 4}, {4, 1}, 0), w.gpu.buffer(0));
  EXPECT_EQ(got.to_vector(), want.to_vector());
}

TEST(MulticastGpu, StoreBroadcastsTheTileToEveryBuffer) {
  TESSEL_REQUIRE_GPU();
  Twins w = twins({15}, 3, ts::bf16);
  ts::Buffer x = ts::Buffer::randn({15}, ts::bf16, ts::cpu(), 3);
  auto k = examples::make_multicast_store_broadcast();
  k(x, w.cpu.dev_ptrs(0), w.cpu.buffer(0));
  k(x.to(ts::cuda(0)), w.gpu.dev_ptrs(0), w.gpu.buffer(0));
  expect_same_buffers(w);
  EXPECT_EQ(w.gpu.buffer(2).to_vector(), x.to_vector());
}

TEST(MulticastGpu, StoreUnstacksArange) {
  TESSEL_REQUIRE_GPU();
  Twins w = twins({15}, 4, ts::i32);
  auto k = examples::make_multicast_store_arange();
  k(w.cpu.dev_ptrs(0), w.cpu.buffer(0));
  k(w.gpu.dev_ptrs(0), w.gpu.buffer(0));
  expect_same_buffers(w);
  EXPECT_EQ(w.gpu.buffer(3).to_vector(), std::vector<double>(15, 3));
}

TEST(MulticastGpu, MasksThePointerTileAndTheTensorTile) {
  TESSEL_REQUIRE_GPU();
  Twins w = twins({15}, 3, ts::bf16);
  auto k = examples::make_multicast_load_masked();
  ts::Buffer want = k(w.cpu.dev_ptrs(0), w.cpu.buffer(0));
  ts::Buffer got = k(w.gpu.dev_ptrs(0), w.gpu.buffer(0));
  EXPECT_EQ(got.to_vector(), want.to_vector());
}

TEST(MulticastGpu, RaggedBuffersUnderSeveralConfigs) {
  TESSEL_REQUIRE_GPU();
  Twins w = twins({37, 70}, 5, ts::f32);
  for (std::vector<int64_t> b : {std::vector<int64_t>{4, 4}, {16, 64}, {1, 128}}) {
    auto k = examples::make_multicast_load_2d_tensors(
        ts::Settings{.config = ts::Config{.block_sizes = b}});
    ts::Buffer want = k(w.cpu.dev_ptrs(0), w.cpu.buffer(0));
    ts::Buffer got = k(w.gpu.dev_ptrs(0), w.gpu.buffer(0));
    EXPECT_EQ(got.to_vector(), want.to_vector()) << b[0] << "x" << b[1];
  }
}

TEST(MulticastGpu, RanksOnTwoGpusReadEachOtherThroughPeerAccess) {
  TESSEL_REQUIRE_GPU();
  if (ts::rt::device_count() < 2) GTEST_SKIP() << "one GPU";
  Twins w = twins({8, 33}, 2, ts::f32, {ts::cuda(0), ts::cuda(1)});
  auto k = examples::make_multicast_load_2d_tensors();
  for (int rank = 0; rank < 2; ++rank) {
    ts::Buffer want = k(w.cpu.dev_ptrs(rank), w.cpu.buffer(rank));
    ts::Buffer got = k(w.gpu.dev_ptrs(rank), w.gpu.buffer(rank));  // on rank's GPU
    EXPECT_EQ(got.to_vector(), want.to_vector()) << "rank " << rank;
  }
}
