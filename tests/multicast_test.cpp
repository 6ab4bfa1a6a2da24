// Multicast tensors (ts::multicast_like) on the interpreter: the four programs of seed 001
// and the masked form, checked against a plain reference (the stacked buffers' values),
// ragged sizes, the race checks, the errors, and NVRTC compiles of the generated CUDA.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <tessel/tessel.hpp>
#include <vector>

#include "autotune/cpu_backend.hpp"
#include "examples/kernels/seed001.hpp"
#include "interp_test_util.hpp"
#include "ir/ir.hpp"
#include "nvrtc_test_util.hpp"
#include "runtime/kernel_tuning.hpp"
#include "user_error_util.hpp"

namespace ts = tessel;
using interp_test::blocks;
using interp_test::buffer;
using interp_test::ramp;
using user_error_test::user_error;

namespace {

int g_line = 0;  // the line of the offending call, recorded while tracing

const user_error_test::ExpectMessageAt expect_message{"multicast_test.cpp", g_line};

/// The line of examples/kernels/seed001.hpp holding `text` (its first), 0 when none.
int seed001_line(const std::string& text) {
  return user_error_test::line_in_file(
      std::string(TESSEL_SOURCE_DIR) + "/examples/kernels/seed001.hpp", text);
}

/// `ranks` CPU buffers of `shape`; buffer r holds r * 100 + 0, 1, 2, ... (row-major).
ts::SymmetricBuffer filled(std::vector<int64_t> shape, int ranks, ts::DType t = ts::f32) {
  ts::SymmetricBuffer sb = ts::SymmetricBuffer::on_device(shape, t, ranks, ts::cpu());
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  for (int r = 0; r < ranks; ++r) sb.buffer(r).copy_from(buffer(ramp(n, r * 100.0), shape, t));
  return sb;
}

/// The buffers' values stacked: [ranks, elements...] row-major.
std::vector<double> stacked(const ts::SymmetricBuffer& sb) {
  std::vector<double> all;
  for (int r = 0; r < sb.world_size(); ++r) {
    std::vector<double> v = sb.buffer(r).to_vector();
    all.insert(all.end(), v.begin(), v.end());
  }
  return all;
}

}  // namespace

// ---- the seed's four programs ----

TEST(Multicast, LoadFrom1dDevPtrsWith2dExampleStacksEveryBuffer) {
  ts::SymmetricBuffer sb = filled({4, 4}, 8);
  auto k = examples::make_multicast_load_2d_tensors(blocks({4, 4}));
  ts::Buffer out = k(sb.dev_ptrs(0), sb.buffer(0));
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{8, 4, 4}));
  EXPECT_EQ(out.to_vector(), stacked(sb));
}

TEST(Multicast, LoadWith2dDevPtrsAnd1dExampleAtBlock4GivesA3dValue) {
  ts::SymmetricBuffer sb = filled({4}, 16);
  ts::Buffer ptrs = sb.dev_ptrs(0).view_as_strided({4, 4}, {4, 1}, 0);
  ts::Buffer out = examples::make_multicast_load_2d_dev_ptrs()(ptrs, sb.buffer(0));
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{4, 4, 4}));
  EXPECT_EQ(out.to_vector(), stacked(sb));
}

TEST(Multicast, StoreBroadcastsTheTileToEveryBuffer) {
  ts::SymmetricBuffer sb = ts::SymmetricBuffer::on_device({15}, ts::f32, 3, ts::cpu());
  ts::Buffer x = buffer(ramp(15, 1.5), {15});
  examples::make_multicast_store_broadcast()(x, sb.dev_ptrs(0), sb.buffer(0));
  for (int r = 0; r < 3; ++r) EXPECT_EQ(sb.buffer(r).to_vector(), x.to_vector()) << "rank " << r;
}

TEST(Multicast, StoreUnstacksArangeOneValuePerBuffer) {
  ts::SymmetricBuffer sb = ts::SymmetricBuffer::on_device({15}, ts::i32, 4, ts::cpu());
  examples::make_multicast_store_arange()(sb.dev_ptrs(0), sb.buffer(0));
  for (int r = 0; r < 4; ++r)
    EXPECT_EQ(sb.buffer(r).to_vector(), std::vector<double>(15, r)) << "rank " << r;
}

TEST(Multicast, TheTraceLoadsThroughOneMulticastNodeOfTheExampleAndDevPtrs) {
  ts::SymmetricBuffer sb = filled({4, 4}, 2);
  auto k = examples::make_multicast_load_2d_tensors();
  std::string ir = ts::ir::print(
      ts::rt::traced_graph(k.impl(), ts::detail::call_args(sb.dev_ptrs(0), sb.buffer(0))));
  // %1 is the example (argument 1); the node's value is dev_ptrs' load.
  size_t at = ir.find(" = multicast_like %1, %");
  ASSERT_NE(at, std::string::npos) << ir;
  EXPECT_EQ(nvrtc_test::count(ir, "multicast_like"), 1) << ir;
  std::string id = ir.substr(ir.rfind('%', at), at - ir.rfind('%', at));
  EXPECT_NE(ir.find("load " + id + "[tile "), std::string::npos) << ir;  // bufs(t1, t2)
}

TEST(Multicast, StoreOfTheFullShapeUnstacksOneRowPerBuffer) {
  // x [6, 10] into buffers stacked [2, 3] (2-D dev_ptrs): buffer (a, b) gets row 3a + b.
  auto k = ts::kernel("unstack_rows", [](ts::Tensor x, ts::Tensor dev_ptrs, ts::Tensor like) {
    for (auto t : ts::tile(like.size(0), {.block_size = 4})) {
      auto bufs = ts::multicast_like(like, dev_ptrs(ts::all, ts::all));
      ts::Value rows = x(ts::all, ts::all, t);  // [2, 3, t]: x viewed as [2, 3, 10]
      bufs(t) = rows;
    }
  });
  ts::SymmetricBuffer sb = ts::SymmetricBuffer::on_device({10}, ts::f32, 6, ts::cpu());
  ts::Buffer x = buffer(ramp(60), {2, 3, 10});
  k(x, sb.dev_ptrs(0).view_as_strided({2, 3}, {3, 1}, 0), sb.buffer(0));
  for (int r = 0; r < 6; ++r) EXPECT_EQ(sb.buffer(r).to_vector(), ramp(10, 10.0 * r)) << r;
}

// ---- masks and ragged sizes ----

TEST(Multicast, MasksThePointerTileAndTheTensorTileAtRaggedEdges) {
  ts::SymmetricBuffer sb = filled({15}, 3);  // 3 buffers in a tile of 4, 15 in tiles of 4
  ts::Buffer out = examples::make_multicast_load_masked()(sb.dev_ptrs(0), sb.buffer(0));
  EXPECT_EQ(out.to_vector(), stacked(sb));
}

TEST(Multicast, LoadOfRaggedBuffersInTilesOf4) {
  ts::SymmetricBuffer sb = filled({5, 7}, 3);
  ts::Buffer out =
      examples::make_multicast_load_2d_tensors(blocks({4, 4}))(sb.dev_ptrs(1), sb.buffer(1));
  EXPECT_EQ(out.to_vector(), stacked(sb));
}

TEST(Multicast, LoadWith2dDevPtrsOfRaggedBuffers) {
  ts::SymmetricBuffer sb = filled({6}, 6);
  ts::Buffer ptrs = sb.dev_ptrs(0).view_as_strided({2, 3}, {3, 1}, 0);
  ts::Buffer out = examples::make_multicast_load_2d_dev_ptrs()(ptrs, sb.buffer(0));
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{2, 3, 6}));
  EXPECT_EQ(out.to_vector(), stacked(sb));
}

TEST(Multicast, BroadcastStoreOfRaggedBuffers) {
  // 5 elements in tiles of 4.
  ts::SymmetricBuffer sb = ts::SymmetricBuffer::on_device({5}, ts::f32, 2, ts::cpu());
  ts::Buffer x = buffer(ramp(5, -2), {5});
  examples::make_multicast_store_broadcast()(x, sb.dev_ptrs(1), sb.buffer(1));
  for (int r = 0; r < 2; ++r) EXPECT_EQ(sb.buffer(r).to_vector(), x.to_vector());
}

TEST(Multicast, StridedExampleAddressesEveryBufferWithItsStrides) {
  // Transposed views of the buffers: the example's strides address every buffer.
  ts::SymmetricBuffer sb = filled({3, 2}, 2);
  ts::Buffer like = sb.buffer(0).transpose(0, 1);  // [2, 3], strides (1, 2)
  ts::Buffer ptrs = sb.dev_ptrs(0);
  ts::Buffer out = examples::make_multicast_load_2d_tensors(blocks({2, 4}))(ptrs, like);
  std::vector<double> want;
  for (int r = 0; r < 2; ++r) {
    std::vector<double> v = sb.buffer(r).transpose(0, 1).contiguous().to_vector();
    want.insert(want.end(), v.begin(), v.end());
  }
  EXPECT_EQ(out.to_vector(), want);
}

TEST(Multicast, SumAcrossBuffersOfALoadedStack) {
  // The loaded value is an ordinary tile: reduce over the stack dim (a one-shot all-reduce's
  // read phase).
  auto k = ts::kernel("stack_sum", [](ts::Tensor dev_ptrs, ts::Tensor like) {
    ts::Tensor out = ts::empty_like(like);
    for (auto t : ts::tile(like.size(0), {.block_size = 4})) {
      auto bufs = ts::multicast_like(like, dev_ptrs(ts::all));
      out(t) = ts::sum(bufs(t), 0);
    }
    return out;
  });
  ts::SymmetricBuffer sb = filled({10}, 3);
  std::vector<double> want(10);
  for (int i = 0; i < 10; ++i) want[i] = 3 * i + 300;  // i + (100 + i) + (200 + i)
  EXPECT_EQ(k(sb.dev_ptrs(0), sb.buffer(0)).to_vector(), want);
}

// ---- races ----

TEST(Multicast, ProgramsStoringTheirOwnBuffersAreNoRace) {
  // One program per buffer (dev_ptrs indexed by the launch tile), each writing its index.
  auto k = ts::kernel("own_buffer", [](ts::Tensor dev_ptrs, ts::Tensor like) {
    for (auto tm : ts::tile(dev_ptrs.size(0), {.block_size = 1})) {
      auto bufs = ts::multicast_like(like, dev_ptrs(tm));
      bufs(ts::all) = tm.index()(ts::all, ts::newaxis);
    }
  });
  ts::SymmetricBuffer sb = ts::SymmetricBuffer::on_device({6}, ts::i32, 3, ts::cpu());
  k(sb.dev_ptrs(0), sb.buffer(0));
  for (int r = 0; r < 3; ++r) EXPECT_EQ(sb.buffer(r).to_vector(), std::vector<double>(6, r));
}

TEST(Multicast, TwoProgramsWritingOneBufferThroughARepeatedAddressAreARace) {
  auto k = ts::kernel("own_buffer", [](ts::Tensor dev_ptrs, ts::Tensor like) {
    for (auto tm : ts::tile(dev_ptrs.size(0), {.block_size = 1})) {
      auto bufs = ts::multicast_like(like, dev_ptrs(tm));
      g_line = __LINE__ + 1;
      bufs(ts::all) = tm.index()(ts::all, ts::newaxis);
    }
  });
  ts::SymmetricBuffer sb = ts::SymmetricBuffer::on_device({6}, ts::i32, 2, ts::cpu());
  uint64_t p0 = sb.buffer_ptrs()[0];
  ts::Buffer twice = ts::Buffer::from_vector({0, 0}, {2}, ts::u64);
  auto* p = static_cast<uint64_t*>(twice.data_ptr());
  p[0] = p[1] = p0;
  expect_message(user_error([&] { k(twice, sb.buffer(0)); }), "own_buffer",
                 "both write element (0) of the buffer at 0x",
                 "give each program its own elements");
}

TEST(Multicast, EveryProgramStoringOneElementOfEveryBufferIsRefusedAtTraceTime) {
  auto k = ts::kernel("same_element", [](ts::Tensor x, ts::Tensor dev_ptrs, ts::Tensor like) {
    for (auto i : ts::grid(x.size(0))) {
      auto bufs = ts::multicast_like(like, dev_ptrs(ts::all));
      g_line = __LINE__ + 1;
      bufs(0) = x(i);
    }
  });
  ts::SymmetricBuffer sb = ts::SymmetricBuffer::on_device({4}, ts::f32, 2, ts::cpu());
  expect_message(user_error([&] { k(buffer(ramp(4), {4}), sb.dev_ptrs(0), sb.buffer(0)); }),
                 "same_element",
                 "several programs of the launch write the same elements of the "
                 "multicast tensor",
                 "index the store with every tile of the loop");
}

// ---- errors ----

TEST(MulticastErrors, AMulticastTensorInArithmeticIsAUserError) {
  auto k = ts::kernel("mc_arith", [](ts::Tensor dev_ptrs, ts::Tensor like) {
    ts::Tensor out = ts::empty_like(like);
    for (auto t : ts::tile(like.size(0))) {
      auto bufs = ts::multicast_like(like, dev_ptrs(ts::all));
      g_line = __LINE__ + 1;
      out(t) = bufs + 1;
    }
    return out;
  });
  ts::SymmetricBuffer sb = ts::SymmetricBuffer::on_device({4}, ts::f32, 2, ts::cpu());
  expect_message(user_error([&] { k(sb.dev_ptrs(0), sb.buffer(0)); }), "mc_arith",
                 "a multicast tensor (ts::multicast_like) is used as a value",
                 "only loads and stores use a multicast tensor");
}

TEST(MulticastErrors, AMulticastTensorAsAnIndexIsAUserError) {
  auto k = ts::kernel("mc_index", [](ts::Tensor x, ts::Tensor dev_ptrs, ts::Tensor like) {
    ts::Tensor out = ts::empty_like(like);
    for (auto t : ts::tile(like.size(0))) {
      auto bufs = ts::multicast_like(like, dev_ptrs(ts::all));
      g_line = __LINE__ + 1;
      out(t) = x(bufs);
    }
    return out;
  });
  ts::SymmetricBuffer sb = ts::SymmetricBuffer::on_device({4}, ts::f32, 2, ts::cpu());
  expect_message(user_error([&] { k(buffer(ramp(4), {4}), sb.dev_ptrs(0), sb.buffer(0)); }),
                 "mc_index", "is used as an index", "only loads and stores use a multicast tensor");
}

TEST(MulticastErrors, DevPtrsOfAnotherDtypeAreAUserErrorAtTheCall) {
  auto k = ts::kernel("mc_dtype", [](ts::Tensor dev_ptrs, ts::Tensor like) {
    ts::Tensor out = ts::empty({dev_ptrs.size(0), like.size(0)}, like.dtype());
    for (auto t : ts::tile(like.size(0))) {
      g_line = __LINE__ + 1;
      auto bufs = ts::multicast_like(like, dev_ptrs(ts::all));
      out(ts::all, t) = bufs(t);
    }
    return out;
  });
  ts::SymmetricBuffer sb = ts::SymmetricBuffer::on_device({4}, ts::f32, 2, ts::cpu());
  ts::Buffer as_i64 = ts::Buffer::zeros({2}, ts::i64);
  expect_message(user_error([&] { k(as_i64, sb.buffer(0)); }), "mc_dtype",
                 "the dev_ptrs of ts::multicast_like are i64 values; device addresses are u64",
                 "pass a ts::u64 tensor of addresses");
}

TEST(MulticastErrors, AnAddressOutsideEveryHostBufferIsAUserError) {
  auto k = examples::make_multicast_load_2d_tensors(blocks({4, 4}));
  ts::SymmetricBuffer sb = filled({4, 4}, 2);
  ts::Buffer bad = ts::Buffer::zeros({2}, ts::u64);
  auto* p = static_cast<uint64_t*>(bad.data_ptr());
  p[0] = sb.buffer_ptrs()[0];
  p[1] = 0x1000;  // no Buffer's memory
  std::string msg = user_error([&] { k(bad, sb.buffer(0)); });
  EXPECT_NE(msg.find("kernel 'multicast_load_2d_tensors'"), std::string::npos) << msg;
  const int line = seed001_line("out(ts::all, t1, t2) = bufs(t1, t2);");
  ASSERT_GT(line, 0);
  EXPECT_NE(msg.find(fmt::format("seed001.hpp:{}", line)), std::string::npos) << msg;
  EXPECT_NE(msg.find("element 1 of the dev_ptrs of the multicast tensor"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("is 0x1000, where the elements it reaches"), std::string::npos) << msg;
  EXPECT_NE(msg.find("are not in the memory of a live host Buffer"), std::string::npos) << msg;
  EXPECT_NE(msg.find("data pointers of live CPU Buffers"), std::string::npos) << msg;
}

TEST(MulticastErrors, ABufferPastTheEndOfItsMemoryIsAUserError) {
  // An address inside a Buffer whose elements (as the example addresses them) run past it.
  auto k = examples::make_multicast_load_2d_tensors(blocks({4, 4}));
  ts::SymmetricBuffer sb = filled({4, 4}, 1);
  ts::Buffer bad = ts::Buffer::zeros({1}, ts::u64);
  static_cast<uint64_t*>(bad.data_ptr())[0] = sb.buffer_ptrs()[0] + 4 * sizeof(float);
  std::string msg = user_error([&] { k(bad, sb.buffer(0)); });
  EXPECT_NE(msg.find("are not in the memory of a live host Buffer"), std::string::npos) << msg;
}

TEST(MulticastErrors, AMisalignedAddressIsAUserError) {
  auto k = examples::make_multicast_load_2d_tensors(blocks({4, 4}));
  ts::SymmetricBuffer sb = filled({4, 4}, 1);
  ts::Buffer bad = ts::Buffer::zeros({1}, ts::u64);
  static_cast<uint64_t*>(bad.data_ptr())[0] = sb.buffer_ptrs()[0] + 2;
  std::string msg = user_error([&] { k(bad, sb.buffer(0)); });
  EXPECT_NE(msg.find("not aligned to its 4-byte elements"), std::string::npos) << msg;
}

TEST(MulticastErrors, ATensorPassedAsDevPtrsIsAUserError) {
  auto k = ts::kernel("mc_tensor", [](ts::Tensor dev_ptrs, ts::Tensor like) {
    ts::Tensor out = ts::empty_like(like);
    for (auto t : ts::tile(like.size(0))) {
      g_line = __LINE__ + 1;
      auto bufs = ts::multicast_like(like, dev_ptrs);
      out(t) = bufs(t)(0);
    }
    return out;
  });
  ts::SymmetricBuffer sb = ts::SymmetricBuffer::on_device({4}, ts::f32, 2, ts::cpu());
  expect_message(user_error([&] { k(sb.dev_ptrs(0), sb.buffer(0)); }), "mc_tensor",
                 "takes dev_ptrs as a tile value, not a tensor",
                 "ts::multicast_like(like, dev_ptrs(ts::all))");
}

TEST(MulticastErrors, MulticastLikeInHostCodeIsAUserError) {
  auto k = ts::kernel("mc_host", [](ts::Tensor dev_ptrs, ts::Tensor like) {
    g_line = __LINE__ + 1;
    auto bufs = ts::multicast_like(like, ts::Value(0));
    (void)bufs;
    (void)dev_ptrs;
  });
  ts::SymmetricBuffer sb = ts::SymmetricBuffer::on_device({4}, ts::f32, 2, ts::cpu());
  expect_message(user_error([&] { k(sb.dev_ptrs(0), sb.buffer(0)); }), "mc_host",
                 "ts::multicast_like outside a device loop",
                 "make the multicast tensor inside the ts::tile or ts::grid loop");
}

TEST(MulticastErrors, AMulticastTensorUsedOutsideItsLoopIsAUserError) {
  auto k = ts::kernel("mc_scope", [](ts::Tensor dev_ptrs, ts::Tensor like) {
    ts::Tensor out = ts::empty({dev_ptrs.size(0), like.size(0)}, like.dtype());
    for (auto t : ts::tile(like.size(0))) {
      ts::MulticastTensor* keep = nullptr;
      for (auto j : ts::grid(1)) {
        (void)j;
        static thread_local std::optional<ts::MulticastTensor> bufs;
        bufs.emplace(ts::multicast_like(like, dev_ptrs(ts::all)));
        keep = &*bufs;
      }
      g_line = __LINE__ + 1;
      out(ts::all, t) = (*keep)(t);
    }
    return out;
  });
  ts::SymmetricBuffer sb = ts::SymmetricBuffer::on_device({4}, ts::f32, 2, ts::cpu());
  expect_message(user_error([&] { k(sb.dev_ptrs(0), sb.buffer(0)); }), "mc_scope",
                 "a multicast tensor is used outside the loop that made it",
                 "call ts::multicast_like inside the loop");
}

TEST(MulticastErrors, AutotuningAKernelWithAMulticastTensorIsAUserError) {
  ts::SymmetricBuffer sb = filled({4, 4}, 2);
  auto k = examples::make_multicast_load_2d_tensors();
  tessel::autotune::TuneOptions o;
  o.effort = ts::AutotuneEffort::quick;
  bool measured = false;
  o.backend = [&](const tessel::autotune::CallToTune& call, const ts::Config& reference) {
    measured = true;
    return std::make_unique<tessel::autotune::CpuBackend>(
        *call.graph, call.args, reference, call.kernel, tessel::autotune::CpuBackendOptions{});
  };
  std::string msg = user_error([&] {
    ts::rt::tune_kernel(k.impl(), ts::detail::call_args(sb.dev_ptrs(0), sb.buffer(0)), o);
  });
  const int line = seed001_line("auto bufs = ts::multicast_like(like, dev_ptrs(ts::all));");
  ASSERT_GT(line, 0);
  EXPECT_NE(msg.find(fmt::format("kernel 'multicast_load_2d_tensors', seed001.hpp:{}", line)),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("a kernel with a multicast tensor (ts::multicast_like) is not autotuned"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("leave Settings::autotune_effort unset"), std::string::npos) << msg;
  EXPECT_FALSE(measured);
}

// ---- symmetric buffers ----

TEST(SymmetricBuffer, CpuRanksAreZeroedEquallyShapedBuffersWithTheirAddresses) {
  ts::SymmetricBuffer sb = ts::SymmetricBuffer::on_device({3, 5}, ts::bf16, 4, ts::cpu(), 8);
  EXPECT_EQ(sb.world_size(), 4);
  std::vector<uint64_t> ptrs = sb.buffer_ptrs();
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(sb.buffer(r).shape(), (std::vector<int64_t>{3, 5}));
    EXPECT_EQ(sb.buffer(r).strides(), (std::vector<int64_t>{5, 1}));
    EXPECT_EQ(sb.buffer(r).dtype(), ts::bf16);
    EXPECT_EQ(sb.buffer(r).to_vector(), std::vector<double>(15, 0));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(sb.buffer(r).data_ptr()), ptrs[r]);
    EXPECT_EQ(sb.dev_ptrs(r).dtype(), ts::u64);
    const auto* table = static_cast<const uint64_t*>(sb.dev_ptrs(r).data_ptr());
    EXPECT_EQ(std::vector<uint64_t>(table, table + 4), ptrs);
    EXPECT_EQ(sb.signal_pad(r).dtype(), ts::i32);
    EXPECT_EQ(sb.signal_pad(r).to_vector(), std::vector<double>(8, 0));
    const auto* pads = static_cast<const uint64_t*>(sb.signal_pad_ptrs(r).data_ptr());
    EXPECT_EQ(pads[r], reinterpret_cast<uintptr_t>(sb.signal_pad(r).data_ptr()));
  }
  for (int r = 1; r < 4; ++r) EXPECT_NE(ptrs[r], ptrs[0]);
}

TEST(SymmetricBuffer, BadArgumentsAreUserErrors) {
  EXPECT_NE(user_error([] {
              ts::SymmetricBuffer::on_device({4}, ts::f32, 0, ts::cpu());
            }).find("SymmetricBuffer: a world size of 0"),
            std::string::npos);
  EXPECT_NE(user_error([] {
              ts::SymmetricBuffer::create({4}, ts::f32, {ts::cpu(), ts::cuda(0)});
            }).find("put every rank on the CPU"),
            std::string::npos);
  ts::SymmetricBuffer sb = ts::SymmetricBuffer::on_device({4}, ts::f32, 2, ts::cpu());
  EXPECT_NE(user_error([&] { sb.buffer(2); }).find("rank 2 of 2 ranks"), std::string::npos);
}

// ---- generated CUDA (NVRTC, sm_90) ----

TEST(MulticastCompile, TheSeedProgramsCompileForSm90) {
  REQUIRE_NVRTC();
  ts::SymmetricBuffer sb = filled({15}, 3);
  ts::SymmetricBuffer sb2 = filled({4, 4}, 8);
  ts::SymmetricBuffer sb16 = filled({4}, 16);
  ts::SymmetricBuffer si = ts::SymmetricBuffer::on_device({15}, ts::i32, 4, ts::cpu());
  ts::Buffer x = buffer(ramp(15), {15});
  std::vector<std::string> srcs = {
      nvrtc_test::compile(examples::make_multicast_load_2d_tensors(), sb2.dev_ptrs(0),
                          sb2.buffer(0)),
      nvrtc_test::compile(examples::make_multicast_load_2d_dev_ptrs(),
                          sb16.dev_ptrs(0).view_as_strided({4, 4}, {4, 1}, 0), sb16.buffer(0)),
      nvrtc_test::compile(examples::make_multicast_store_broadcast(), x, sb.dev_ptrs(0),
                          sb.buffer(0)),
      nvrtc_test::compile(examples::make_multicast_store_arange(), si.dev_ptrs(0), si.buffer(0)),
      nvrtc_test::compile(examples::make_multicast_load_masked(), sb.dev_ptrs(0), sb.buffer(0)),
  };
  for (const std::string& src : srcs) {
    // Each register's buffer is its dev_ptrs value cast to the element type; no pointer is
    // __restrict__ (a stacked buffer may be any argument's memory); no NVLink multicast.
    EXPECT_NE(src.find("reinterpret_cast<"), std::string::npos) << src;
    EXPECT_EQ(src.find("__restrict__"), std::string::npos) << src;
    EXPECT_EQ(src.find("multimem"), std::string::npos) << src;
  }
  EXPECT_NE(srcs[3].find("reinterpret_cast<int*>"), std::string::npos) << srcs[3];
}
