// Atomics, signals and waits on multicast tensors on the GPU: R ranks of a
// ts::SymmetricBuffer on one GPU, checked exactly against the interpreter running the same
// kernels (tests/multicast_atomic_kernels.hpp) on CPU symmetric buffers holding the same
// values.
#include <gtest/gtest.h>

#include <cstdint>
#include <tessel/tessel.hpp>
#include <vector>

#include "gpu_test_util.hpp"
#include "tests/multicast_atomic_kernels.hpp"

namespace ts = tessel;
namespace mat = multicast_atomic_test;

namespace {

/// The same values (small integers) in R CPU buffers and R buffers on cuda:0.
struct Twins {
  ts::SymmetricBuffer cpu, gpu;
};

Twins twins(int64_t n, int ranks, ts::DType t, int64_t pad = 64) {
  Twins w{ts::SymmetricBuffer::on_device({n}, t, ranks, ts::cpu(), pad),
          ts::SymmetricBuffer::on_device({n}, t, ranks, ts::cuda(0), pad)};
  for (int r = 0; r < ranks; ++r) {
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      v[static_cast<size_t>(i)] = static_cast<double>((i * 5 + r) % 23);
    w.cpu.buffer(r).copy_from(ts::Buffer::from_vector(v, {n}, t));
    w.gpu.buffer(r).copy_from(w.cpu.buffer(r));
  }
  return w;
}

void expect_same(const Twins& w) {
  for (int r = 0; r < w.cpu.world_size(); ++r) {
    EXPECT_EQ(w.gpu.buffer(r).to_vector(), w.cpu.buffer(r).to_vector()) << "rank " << r;
    EXPECT_EQ(w.gpu.signal_pad(r).to_vector(), w.cpu.signal_pad(r).to_vector()) << "pad " << r;
  }
}

}  // namespace

TEST(MulticastAtomicsGpu, AddBroadcastToEveryBufferWithOldValues) {
  TESSEL_REQUIRE_GPU();
  for (int64_t n : {1, 15, 1000}) {
    Twins w = twins(n, 3, ts::f32);
    ts::Buffer x = ts::Buffer::arange(n, ts::f32);
    ts::Buffer want = mat::make_add_broadcast()(x, w.cpu.dev_ptrs(0), w.cpu.buffer(0));
    ts::Buffer got =
        mat::make_add_broadcast()(x.to(ts::cuda(0)), w.gpu.dev_ptrs(0), w.gpu.buffer(0));
    EXPECT_EQ(got.to_vector(), want.to_vector()) << n;
    expect_same(w);
  }
}

TEST(MulticastAtomicsGpu, MaxOfAFullShapeValueAndPointerTiles) {
  TESSEL_REQUIRE_GPU();
  Twins w = twins(100, 2, ts::i32);
  ts::Buffer y = ts::Buffer::arange(200, ts::i32).view_as_strided({2, 100}, {100, 1}, 0);
  mat::make_max_unstacked()(y, w.cpu.dev_ptrs(0), w.cpu.buffer(0));
  mat::make_max_unstacked()(y.to(ts::cuda(0)), w.gpu.dev_ptrs(0), w.gpu.buffer(0));
  expect_same(w);
  Twins p = twins(15, 4, ts::i64);
  mat::make_add_pointer_tiles()(p.cpu.dev_ptrs(0).view_as_strided({3}, {1}, 0), p.cpu.buffer(0));
  mat::make_add_pointer_tiles()(p.gpu.dev_ptrs(0).view_as_strided({3}, {1}, 0), p.gpu.buffer(0));
  expect_same(p);
}

TEST(MulticastAtomicsGpu, SignalAndWaitOnEveryPad) {
  TESSEL_REQUIRE_GPU();
  Twins w = twins(1, 3, ts::f32, 4);
  ts::Buffer want = mat::make_signal_every_pad()(w.cpu.signal_pad_ptrs(0), w.cpu.signal_pad(0));
  ts::Buffer got = mat::make_signal_every_pad()(w.gpu.signal_pad_ptrs(0), w.gpu.signal_pad(0));
  EXPECT_EQ(got.to_vector(), want.to_vector());
  expect_same(w);
  for (int ranks : {1, 2, 4}) {
    Twins v = twins(1, ranks, ts::f32, 1);
    ts::Buffer out = mat::make_wait_every_pad()(v.gpu.signal_pad_ptrs(0), v.gpu.signal_pad(0));
    EXPECT_EQ(out.to_vector(), (std::vector<double>{1, 1})) << ranks;
    for (int r = 0; r < ranks; ++r) EXPECT_EQ(v.gpu.signal_pad(r).item(), 0) << ranks;
  }
}
