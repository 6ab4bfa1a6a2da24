// Memory order inside a program (codegen/emit_barriers.cpp): the generated CUDA has a
// barrier between a program's store and a later access of the same memory by other
// threads, and none where each element stays in one thread; memory shared by two
// arguments is decided by address ranges (driver/alias_groups.hpp), which also decide
// __restrict__. Compiled with NVRTC for sm_90 (no GPU needed).
#include <gtest/gtest.h>

#include <tessel/tessel.hpp>
#include <vector>

#include "driver/alias_groups.hpp"
#include "examples/kernels/basic.hpp"
#include "examples/kernels/norms.hpp"
#include "examples/kernels/seed002.hpp"
#include "interp_test_util.hpp"
#include "nvrtc_test_util.hpp"
#include "runtime/kernel_tuning.hpp"
#include "tests/barrier_kernels.hpp"

namespace ts = tessel;
using interp_test::buffer;
using interp_test::ramp;
using nvrtc_test::compile;
using nvrtc_test::count;

namespace {

const char* kBarrier = "memory another thread of the program accessed before";

ts::Settings config(std::vector<int64_t> blocks, int warps = 4, int stages = 1) {
  return ts::Settings{
      .config =
          ts::Config{.block_sizes = std::move(blocks), .num_warps = warps, .num_stages = stages}};
}

ts::Buffer f32(std::vector<int64_t> shape) { return ts::Buffer::zeros(std::move(shape), ts::f32); }

template <class K, class... A>
int barriers(const K& k, const A&... args) {
  return count(compile(k, args...), kBarrier);
}

}  // namespace

TEST(Barriers, ARowStoredInADeviceLoopIsReloadedAfterABarrier) {
  REQUIRE_NVRTC();
  std::string src = compile(barrier_test::make_store_then_row_sum(config({4, 32})), f32({64, 256}));
  EXPECT_EQ(
      count(src, "__syncthreads();  // the load below reads or writes " + std::string(kBarrier)), 1)
      << src;
}

TEST(Barriers, OneWarpWaitsAtSyncwarp) {
  REQUIRE_NVRTC();
  std::string src =
      compile(barrier_test::make_store_then_row_sum(config({4, 32}, 1)), f32({64, 256}));
  EXPECT_EQ(count(src, "__syncwarp();  // the load below"), 1) << src;
  EXPECT_EQ(count(src, "__syncthreads()"), 0) << src;
}

TEST(Barriers, AMirroredReloadInTheSameBodyWaitsBothWays) {
  REQUIRE_NVRTC();
  // Before the load (this iteration's store) and before the store (the previous
  // iteration's mirrored loads read elements other threads now overwrite).
  std::string src = compile(barrier_test::make_mirror_in_tile(config({128})), f32({8, 1000}));
  EXPECT_EQ(count(src, "// the load below"), 1) << src;
  EXPECT_EQ(count(src, "// the store below"), 1) << src;
}

TEST(Barriers, ALoopReadingWhatTheLoopBeforeItStoredWaitsOnceBeforeIt) {
  REQUIRE_NVRTC();
  auto k = barrier_test::make_mirror_after_loop(config({128, 128}));
  std::string src = compile(k, f32({8, 1000}));
  EXPECT_EQ(count(src, kBarrier), 1) << src;
  EXPECT_EQ(count(src, "// the loop below"), 1) << src;
  // The values on the interpreter: 2 * x mirrored inside each tile (the last one ragged).
  auto tiny = barrier_test::make_mirror_after_loop(config({2, 2}));
  EXPECT_EQ(tiny(buffer(ramp(4), {1, 4})).to_vector(), (std::vector<double>{2, 0, 6, 4}));
  auto small = barrier_test::make_mirror_after_loop(config({4, 4}));
  EXPECT_EQ(small(buffer(ramp(6), {1, 6})).to_vector(), (std::vector<double>{6, 4, 2, 0, 10, 8}));
}

TEST(Barriers, AStashedScalarIsReloadedByEveryThreadAfterABarrier) {
  REQUIRE_NVRTC();
  EXPECT_EQ(barriers(barrier_test::make_stash_mean(), f32({8, 1000})), 1);
}

TEST(Barriers, AnAccumulatorRowHeldByManyThreadsWaitsBothWays) {
  REQUIRE_NVRTC();
  // [4, 64] tiles over 128 threads: the 64 columns of a row span threads, each holding a
  // copy of acc(tm); one of them stores it.
  EXPECT_EQ(barriers(barrier_test::make_accumulate_rows(config({4, 64})), f32({16, 1000})), 2);
}

TEST(Barriers, TwoStoresOfOneRowInOtherLayoutsAreOrdered) {
  REQUIRE_NVRTC();
  auto k = ts::kernel(
      "clear_then_fill",
      [](ts::Tensor x) {
        ts::Tensor out = ts::empty_like(x);
        for (auto b : ts::grid(x.size(0))) {
          out(b, ts::all) = 0;  // the whole row, then part of it in tiles: the last store wins
          for (auto t : ts::tile(x.size(1) - 3)) out(b, t) = x(b, t);
        }
        return out;
      },
      config({64}));
  std::string src = compile(k, f32({4, 100}));
  EXPECT_EQ(count(src, kBarrier), 1) << src;
  EXPECT_EQ(count(src, "// the loop below"), 1) << src;  // once, not per tile
  std::vector<double> x = ramp(2 * 5), want = x;
  for (int r = 0; r < 2; ++r)
    for (int c = 2; c < 5; ++c) want[r * 5 + c] = 0;
  EXPECT_EQ(k(buffer(x, {2, 5})).to_vector(), want);
}

TEST(Barriers, TheSameElementsInTheSameThreadsNeedNoBarrier) {
  REQUIRE_NVRTC();
  EXPECT_EQ(barriers(barrier_test::make_accumulate_tiles(config({8, 32})), f32({5, 64, 64})), 0);
  EXPECT_EQ(barriers(barrier_test::make_double_in_place(), f32({1000})), 0);
  // One store on every iteration of a device loop (seed 002's manual persistent form).
  EXPECT_EQ(barriers(examples::make_padded_sum_manual(), f32({100, 100}),
                     ts::Buffer::scalar(80, ts::i32)),
            0);
  // Elements of one row kept by one thread: the copies of acc(tm) along the columns sit
  // in that thread's registers (one row per thread).
  EXPECT_EQ(barriers(barrier_test::make_accumulate_rows(config({128, 4}, 4)), f32({256, 64})), 0);
}

TEST(Barriers, ExampleKernelsHaveNone) {
  REQUIRE_NVRTC();
  EXPECT_EQ(barriers(examples::make_add(), f32({1000}), f32({1000})), 0);
  EXPECT_EQ(barriers(examples::make_add_2d(), f32({33, 65}), f32({33, 65})), 0);
  EXPECT_EQ(barriers(examples::make_softmax(), f32({64, 512})), 0);
  EXPECT_EQ(barriers(examples::make_softmax_two_pass(), f32({64, 512})), 0);
  EXPECT_EQ(barriers(examples::make_layer_norm(), f32({64, 512}), f32({512}), f32({512}), 1e-5), 0);
  EXPECT_EQ(
      barriers(examples::make_cross_entropy(), f32({64, 512}), ts::Buffer::zeros({64}, ts::i64)),
      0);
}

TEST(Barriers, SeparateArgumentsNeedNoBarrierAndAreRestrict) {
  REQUIRE_NVRTC();
  auto k = barrier_test::make_write_then_read_other();
  std::string src = compile(k, f32({8, 1000}), f32({8, 1000}));
  EXPECT_EQ(count(src, kBarrier), 0) << src;
  EXPECT_NE(src.find("const float* __restrict__ arg0"), std::string::npos) << src;
}

TEST(Barriers, OneBufferPassedTwiceWaitsAndIsNotRestrict) {
  REQUIRE_NVRTC();
  auto k = barrier_test::make_write_then_read_other();
  ts::Buffer x = f32({8, 1000});
  std::string src = compile(k, x, x);
  // x and out are other tensors to the kernel, over one memory: each load of x waits for
  // the stores before it (the previous tile's, then the whole row's), and each store for
  // the loads of x before it.
  EXPECT_EQ(count(src, "// the load below"), 2) << src;
  EXPECT_EQ(count(src, "// the store below"), 1) << src;
  EXPECT_EQ(src.find("__restrict__"), std::string::npos) << src;
}

TEST(Barriers, BuffersFromBlobOverOneMemoryWaitAndAreNotRestrict) {
  REQUIRE_NVRTC();
  auto k = barrier_test::make_write_then_read_other();
  ts::Buffer x = f32({8, 1000});
  // Another Buffer over x's memory (as two DLPack handles of one torch tensor would be).
  ts::Buffer same = ts::Buffer::from_blob(x.data_ptr(), {8, 1000}, {1000, 1}, ts::f32, ts::cpu());
  std::string src = compile(k, x, same);
  EXPECT_EQ(count(src, kBarrier), 3) << src;
  EXPECT_EQ(src.find("__restrict__"), std::string::npos) << src;
  // Over part of it: rows 4..7 of x2 are rows 0..3 of part2.
  std::vector<float> big(16000);
  ts::Buffer backing = ts::Buffer::from_blob(big.data(), {16, 1000}, {1000, 1}, ts::f32, ts::cpu());
  ts::Buffer x2 = backing.narrow(0, 0, 8), part2 = backing.narrow(0, 4, 8);
  src = compile(k, x2, part2);
  EXPECT_EQ(count(src, kBarrier), 3) << src;
  EXPECT_EQ(src.find("__restrict__"), std::string::npos) << src;
}

TEST(Barriers, AliasedMemoryIsNotLoadedEarly) {
  REQUIRE_NVRTC();
  // num_stages = 2 issues x(b, t) one iteration early, unless the program stores to memory
  // x may share.
  auto k = barrier_test::make_write_then_read_other(config({4096}, 4, 2));
  ts::Buffer x = f32({8, 4096});
  EXPECT_NE(compile(k, x, f32({8, 4096})).find("loaded one iteration early"), std::string::npos);
  EXPECT_EQ(compile(k, x, x).find("loaded one iteration early"), std::string::npos);
}

TEST(Barriers, TheInterpreterReadsWhatTheProgramStoredThroughAnAlias) {
  auto k = barrier_test::make_write_then_read_other();
  std::vector<float> memory(2 * 3);
  for (int i = 0; i < 6; ++i) memory[i] = static_cast<float>(i);
  ts::Buffer x = ts::Buffer::from_blob(memory.data(), {2, 3}, {3, 1}, ts::f32, ts::cpu());
  ts::Buffer out = ts::Buffer::from_blob(memory.data(), {2, 3}, {3, 1}, ts::f32, ts::cpu());
  // Each row is incremented in place, then summed: (0+1)+(1+1)+(2+1), (3+1)+(4+1)+(5+1).
  EXPECT_EQ(k(x, out).to_vector(), (std::vector<double>{6, 15}));
  EXPECT_EQ(x.to_vector(), ramp(6, 1));
}

// ---- alias groups (by address range) ----

TEST(AliasGroups, DisjointBuffersFormNoGroup) {
  ts::Buffer a = f32({100}), b = f32({100});
  EXPECT_TRUE(ts::rt::alias_groups({&a, nullptr, &b}).empty());
  ts::Buffer halves = f32({100});
  ts::Buffer lo = halves.narrow(0, 0, 50),
             hi = halves.narrow(0, 50, 50);  // one storage, disjoint bytes
  EXPECT_TRUE(ts::rt::alias_groups({&lo, &hi}).empty());
  ts::Buffer empty = halves.narrow(0, 10, 0);
  EXPECT_TRUE(ts::rt::alias_groups({&halves, &empty}).empty());
}

TEST(AliasGroups, OverlappingRangesAreGroupedTransitivelyUnderTheLowestPosition) {
  std::vector<float> memory(300);
  auto blob = [&](int at, int64_t n) {
    return ts::Buffer::from_blob(memory.data() + at, {n}, {1}, ts::f32, ts::cpu());
  };
  ts::Buffer a = blob(0, 100), b = blob(250, 50), c = blob(90, 20), d = blob(105, 150),
             e = f32({10});
  // a-c and c-d overlap, d-b overlaps: one group (a's position 0); e separate.
  EXPECT_EQ(ts::rt::alias_groups({&e, &a, &b, &c, &d}), (std::vector<int>{-1, 1, 1, 1, 1}));
  // Adjacent ranges do not overlap.
  ts::Buffer f = blob(0, 100), g = blob(100, 100);
  EXPECT_TRUE(ts::rt::alias_groups({&f, &g}).empty());
}

TEST(AliasGroups, TwoDlpackHandlesOfOneTensorAreOneGroup) {
  ts::Buffer x = f32({4, 8});
  ts::Buffer y =
      ts::Buffer::from_dlpack(x.to_dlpack());  // another Buffer (storage) over x's memory
  ASSERT_NE(x.storage(), y.storage());
  EXPECT_EQ(ts::rt::alias_groups({&x, &y}), (std::vector<int>{0, 0}));
}

TEST(AliasGroups, InterleavedColumnsShareTheirRange) {
  ts::Buffer m = f32({4, 8});
  ts::Buffer left = m.narrow(1, 0, 4),
             right = m.narrow(1, 4, 4);  // disjoint elements, interleaved bytes
  EXPECT_EQ(ts::rt::alias_groups({&left, &right}), (std::vector<int>{0, 0}));
  ts::Buffer t = m.transpose(0, 1);
  EXPECT_EQ(ts::rt::byte_range(t), ts::rt::byte_range(m));
}

TEST(AliasGroups, TheSpecializationKeyHoldsTheGroups) {
  auto k = barrier_test::make_write_then_read_other();
  ts::Buffer x = f32({8, 16});
  ts::Buffer alias = ts::Buffer::from_blob(x.data_ptr(), {8, 16}, {16, 1}, ts::f32, ts::cpu());
  const ts::ir::Graph& apart =
      ts::rt::traced_graph(k.impl(), ts::detail::call_args(x, f32({8, 16})));
  EXPECT_EQ(apart.arg_facts.at(0).alias_group, -1);
  EXPECT_EQ(apart.arg_facts.at(1).alias_group, -1);
  const ts::ir::Graph& shared = ts::rt::traced_graph(k.impl(), ts::detail::call_args(x, alias));
  EXPECT_NE(&apart, &shared);  // another specialization
  EXPECT_EQ(shared.arg_facts.at(0).alias_group, 0);
  EXPECT_EQ(shared.arg_facts.at(1).alias_group, 0);
}
