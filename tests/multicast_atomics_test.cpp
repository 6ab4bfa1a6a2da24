// Atomics, signals and waits on multicast tensors (ts::multicast_like) on the interpreter:
// every buffer of the stack is updated, operands broadcast to the full shape (dev_ptrs'
// dims, then the indexed dims) or unstack, old values have that shape, masked buffers are
// not touched, a signal on a multicast pad signals every pad and a wait waits on every
// one; errors; NVRTC compiles of the generated CUDA for sm_90.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <tessel/tessel.hpp>
#include <vector>

#include "interp_test_util.hpp"
#include "multicast_atomic_kernels.hpp"
#include "nvrtc_test_util.hpp"
#include "user_error_util.hpp"

namespace ts = tessel;
using interp_test::buffer;
using interp_test::ramp;
using multicast_atomic_test::make_add_broadcast;
using multicast_atomic_test::make_add_pointer_tiles;
using multicast_atomic_test::make_max_unstacked;
using multicast_atomic_test::make_signal_every_pad;
using multicast_atomic_test::make_wait_every_pad;
using user_error_test::user_error;

namespace {

int g_line = 0;  // the line of the offending call, recorded while tracing

}  // namespace

TEST(MulticastAtomics, AddOfAValueWithoutTheLeadingDimReachesEveryBuffer) {
  for (int64_t n : {1, 4, 15}) {
    ts::SymmetricBuffer sb = ts::SymmetricBuffer::on_device({n}, ts::f32, 3, ts::cpu());
    std::vector<double> want_olds, want_after;
    for (int r = 0; r < 3; ++r) {
      std::vector<double> v = ramp(n, r * 100.0);
      sb.buffer(r).copy_from(buffer(v, {n}));
      want_olds.insert(want_olds.end(), v.begin(), v.end());
    }
    ts::Buffer x = buffer(ramp(n, 0.5, 2), {n});
    ts::Buffer olds = make_add_broadcast()(x, sb.dev_ptrs(0), sb.buffer(0));
    EXPECT_EQ(olds.shape(), (std::vector<int64_t>{3, n}));
    EXPECT_EQ(olds.to_vector(), want_olds) << n;
    for (int r = 0; r < 3; ++r) {
      std::vector<double> want = ramp(n, r * 100.0 + 0.5, 3);
      EXPECT_EQ(sb.buffer(r).to_vector(), want) << n << " rank " << r;
    }
  }
}

TEST(MulticastAtomics, MaxOfAFullShapeValueUnstacksOneRowPerBuffer) {
  const int64_t n = 6;
  ts::SymmetricBuffer sb = ts::SymmetricBuffer::on_device({n}, ts::i32, 2, ts::cpu());
  sb.buffer(0).copy_from(buffer({5, 5, 5, 5, 5, 5}, {n}, ts::i32));
  sb.buffer(1).copy_from(buffer({0, 9, 0, 9, 0, 9}, {n}, ts::i32));
  ts::Buffer y = buffer({1, 7, 3, 8, 5, 6, 4, 4, 4, 4, 4, 4}, {2, n}, ts::i32);
  make_max_unstacked()(y, sb.dev_ptrs(0), sb.buffer(0));
  EXPECT_EQ(sb.buffer(0).to_vector(), (std::vector<double>{5, 7, 5, 8, 5, 6}));
  EXPECT_EQ(sb.buffer(1).to_vector(), (std::vector<double>{4, 9, 4, 9, 4, 9}));
}

TEST(MulticastAtomics, APointerTileAtItsRaggedEdgeTouchesOnlyItsBuffers) {
  // 3 buffers of 15 elements in tiles of 4 (a masked buffer slot and a ragged tail), and
  // a fourth buffer past dev_ptrs' end that must stay untouched.
  ts::SymmetricBuffer sb = ts::SymmetricBuffer::on_device({15}, ts::i64, 4, ts::cpu());
  ts::Buffer three = sb.dev_ptrs(0).view_as_strided({3}, {1}, 0);
  make_add_pointer_tiles()(three, sb.buffer(0));
  for (int r = 0; r < 3; ++r) EXPECT_EQ(sb.buffer(r).to_vector(), std::vector<double>(15, 1)) << r;
  EXPECT_EQ(sb.buffer(3).to_vector(), std::vector<double>(15, 0));
}

TEST(MulticastAtomics, ASignalOnAMulticastPadSignalsEveryPadAndReturnsEveryOldValue) {
  ts::SymmetricBuffer sb = ts::SymmetricBuffer::on_device({1}, ts::f32, 3, ts::cpu(), 4);
  static_cast<int32_t*>(sb.signal_pad(1).data_ptr())[2] = 9;
  ts::Buffer olds = make_signal_every_pad()(sb.signal_pad_ptrs(0), sb.signal_pad(0));
  EXPECT_EQ(olds.shape(), (std::vector<int64_t>{4, 3}));
  std::vector<double> want(12, 0);
  want[2 * 3 + 1] = 9;  // program 2's old value in pad 1
  EXPECT_EQ(olds.to_vector(), want);
  for (int r = 0; r < 3; ++r)
    EXPECT_EQ(sb.signal_pad(r).to_vector(), (std::vector<double>{1, 2, 3, 4})) << r;
}

TEST(MulticastAtomics, AWaitOnAMulticastPadWaitsForEveryPadAndResetsThem) {
  for (int ranks : {1, 2, 4}) {
    ts::SymmetricBuffer sb = ts::SymmetricBuffer::on_device({1}, ts::f32, ranks, ts::cpu(), 1);
    ts::Buffer out = make_wait_every_pad()(sb.signal_pad_ptrs(0), sb.signal_pad(0));
    EXPECT_EQ(out.to_vector(), (std::vector<double>{1, 1})) << ranks;
    for (int r = 0; r < ranks; ++r) EXPECT_EQ(sb.signal_pad(r).item(), 0) << ranks << " " << r;
  }
}

TEST(MulticastAtomicsErrors, AWaitOnAMulticastPadNothingSignalsNamesTheBuffer) {
  auto k = ts::kernel("mc_never", [](ts::Tensor pad_ptrs, ts::Tensor pad) {
    for (auto p : ts::grid(pad.size(0))) {
      auto pads = ts::multicast_like(pad, pad_ptrs(ts::all));
      g_line = __LINE__;
      ts::wait(pads, {p}, 1);
    }
  });
  ts::SymmetricBuffer sb = ts::SymmetricBuffer::on_device({1}, ts::f32, 2, ts::cpu(), 2);
  // Pad 0 is signalled everywhere; pad 1's elements never are.
  for (int e = 0; e < 2; ++e) static_cast<int32_t*>(sb.signal_pad(0).data_ptr())[e] = 1;
  std::string msg = user_error([&] { k(sb.signal_pad_ptrs(0), sb.signal_pad(0)); });
  user_error_test::expect_message(msg, "mc_never", "multicast_atomics_test.cpp", g_line + 1,
                                  "of the buffer at dev_ptrs element 1 (row-major) waits for the "
                                  "value 1 but it holds 0",
                                  "signal that element from another program");
}

TEST(MulticastAtomicsErrors, AnAtomicMaxOnABf16MulticastTensorIsAUserError) {
  auto k = ts::kernel("mc_bf16_max", [](ts::Tensor dev_ptrs, ts::Tensor like) {
    for (auto t : ts::tile(like.size(0))) {
      auto bufs = ts::multicast_like(like, dev_ptrs(ts::all));
      g_line = __LINE__;
      ts::atomic_max(bufs, {t}, 1);
    }
  });
  ts::SymmetricBuffer sb = ts::SymmetricBuffer::on_device({8}, ts::bf16, 2, ts::cpu());
  std::string msg = user_error([&] { k(sb.dev_ptrs(0), sb.buffer(0)); });
  user_error_test::expect_message(msg, "mc_bf16_max", "multicast_atomics_test.cpp", g_line + 1,
                                  "ts::atomic_max on the multicast tensor of line",
                                  "use a tensor of a supported dtype");
}

TEST(MulticastAtomicsErrors, AValueOfAnotherStackShapeIsAUserError) {
  auto k = ts::kernel("mc_bad_value", [](ts::Tensor y, ts::Tensor pad_ptrs, ts::Tensor pad) {
    for (auto t : ts::tile(pad.size(0))) {
      auto pads = ts::multicast_like(pad, pad_ptrs(ts::all));
      g_line = __LINE__;
      ts::signal(pads, {t}, y(ts::all, t));
    }
  });
  ts::SymmetricBuffer sb = ts::SymmetricBuffer::on_device({1}, ts::f32, 2, ts::cpu(), 4);
  ts::Buffer y = ts::Buffer::zeros({3, 4}, ts::i32);  // 3 rows for 2 pads
  std::string msg = user_error([&] { k(y, sb.signal_pad_ptrs(0), sb.signal_pad(0)); });
  user_error_test::expect_message(msg, "mc_bad_value", "multicast_atomics_test.cpp", g_line + 1,
                                  "shape mismatch in ts::signal: the value has shape",
                                  "the value must broadcast to the indexed shape");
}

TEST(MulticastAtomicsCompile, AtomicsSignalsAndWaitsOnMulticastTensorsCompileForSm90) {
  REQUIRE_NVRTC();
  ts::SymmetricBuffer sb = ts::SymmetricBuffer::on_device({15}, ts::f32, 3, ts::cpu(), 4);
  ts::SymmetricBuffer si = ts::SymmetricBuffer::on_device({6}, ts::i32, 2, ts::cpu());
  ts::Buffer x = buffer(ramp(15), {15});
  ts::Buffer y = ts::Buffer::zeros({2, 6}, ts::i32);
  std::vector<std::string> srcs = {
      nvrtc_test::compile(make_add_broadcast(), x, sb.dev_ptrs(0), sb.buffer(0)),
      nvrtc_test::compile(make_max_unstacked(), y, si.dev_ptrs(0), si.buffer(0)),
      nvrtc_test::compile(make_add_pointer_tiles(), sb.dev_ptrs(0), sb.buffer(0)),
      nvrtc_test::compile(make_signal_every_pad(), sb.signal_pad_ptrs(0), sb.signal_pad(0)),
      nvrtc_test::compile(make_wait_every_pad(), sb.signal_pad_ptrs(0), sb.signal_pad(0)),
      nvrtc_test::compile(make_wait_every_pad({.check_bounds = true}), sb.signal_pad_ptrs(0),
                          sb.signal_pad(0)),
  };
  for (const std::string& src : srcs) {
    EXPECT_NE(src.find("reinterpret_cast<"), std::string::npos) << src;
    EXPECT_EQ(src.find("multimem"), std::string::npos) << src;
  }
  EXPECT_NE(srcs[0].find("ts::atomic<ts::A_add"), std::string::npos) << srcs[0];
  EXPECT_NE(srcs[1].find("ts::atomic<ts::A_max"), std::string::npos) << srcs[1];
  EXPECT_NE(srcs[3].find("ts::atomic<ts::A_xchg"), std::string::npos) << srcs[3];
  EXPECT_NE(srcs[4].find("ts::wait_for<true"), std::string::npos) << srcs[4];
  // Under check_bounds the waits give up after ts::kWaitPolls polls and record the element.
  EXPECT_EQ(srcs[4].find("ts_check"), std::string::npos) << srcs[4];
  EXPECT_NE(srcs[5].find("ts_check"), std::string::npos) << srcs[5];
}
