// Passes run on programs written as IR text (ir::parse), their output checked with
// FileCheck-style lines (tests/ir_check_util.hpp): no tracing, no GPU.
#include <gtest/gtest.h>

#include <tessel/tessel.hpp>

#include "ir/parser.hpp"
#include "passes/default_config.hpp"
#include "passes/layout.hpp"
#include "passes/loop_knobs.hpp"
#include "passes/race_check.hpp"
#include "passes/roll_reductions.hpp"
#include "passes/unit_tiles.hpp"
#include "tests/interp_test_util.hpp"
#include "tests/ir_check_util.hpp"
#include "tests/run_program_util.hpp"
#include "tests/user_error_util.hpp"

namespace ts = tessel;
namespace ir = tessel::ir;
using user_error_test::user_error;

namespace {

// out[i] = max(x[i, :]) over rows of 1000 (padded to 1024), a tile of rows per program.
const char* const kRowMax = R"(kernel row_max
  index_dtype i32
  loads 1
  block_size 0 hint 8
  file f0 "row_max.cpp"
  sym r1 extent %2 pow2 1024 trace 1000  // x.size(1)
  reduction_dims r1
  %0 = arg 0 : f32 tensor rank 2  // x
  %1 = size %0 dim 0 : i64
  %2 = size %0 dim 1 : i64
  %3 = alloc %1 : f32 tensor rank 1  // out
  %4 = const 0 : i64
  %5 = loop tile(%4..%1) as t0 block 0 {  @f0:7:3
    %6 = load %0[tile %5 as t0, all %2 as r1] #0 : f32[t0, r1]  @f0:8:5
    %7 = reduce max %6 dim 1 : f32[t0]  @f0:8:12
    store %3[tile %5 as t0] = %7  @f0:8:3
  }
  return %3
)";

TEST(IrPassText, RollReductionsLoopsOverChunksOfAParsedReduction) {
  std::unique_ptr<ir::Graph> g = ir::parse(kRowMax);
  ts::Config c{.reduction_loops = std::vector<std::optional<int64_t>>{256}};
  std::unique_ptr<ir::Graph> rolled = ts::passes::roll_reductions(*g, c);
  ASSERT_NE(rolled, nullptr);
  EXPECT_IR_CHECK(ir::print(*rolled), R"(
    CHECK: sym t1 loop %9 dim 0  // chunk of x.size(1)
    CHECK: %5 = loop tile(%4..%1) as t0 block 0 {
    CHECK-NEXT: %6 = const -inf : f32
    CHECK-NEXT: %7 = full %6 : f32[t0]
    CHECK-NEXT: %8 = const 0 : i64
    CHECK-NEXT: %9 = loop tile(%8..%2) as t1 fixed 256 carry %10 = %7 {
    CHECK-NEXT: %10 = carried %9 : f32[t0]
    CHECK-NEXT: %11 = load %0[tile %5 as t0, tile %9 as t1] #0 : f32[t0, t1]  @f0:8:5
    CHECK-NEXT: %12 = reduce max %11 dim 1 : f32[t0]
    CHECK-NEXT: %13 = binary maximum %10, %12 : f32[t0]
    CHECK-NEXT: yield %13
    CHECK-NEXT: }
    CHECK-NEXT: %15 = loop_result %9 carry 0 : f32[t0]
    CHECK-NEXT: store %3[tile %5 as t0] = %15  @f0:8:3
    CHECK-NOT: all %2 as
    CHECK: return %3
  )");
}

using run_program::run;

TEST(IrPassText, AParsedProgramAndItsRolledFormRunOnTheInterpreter) {
  std::vector<double> v = interp_test::ramp(3 * 1000, -7, 0.01);
  v[1234] = 99;  // row 1's maximum, inside its third chunk of 256
  ts::Buffer x = interp_test::buffer(v, {3, 1000});
  std::unique_ptr<ir::Graph> g = ir::parse(kRowMax);
  ts::Config c{.reduction_loops = std::vector<std::optional<int64_t>>{256}};
  std::unique_ptr<ir::Graph> rolled = ts::passes::roll_reductions(*g, c);
  ASSERT_NE(rolled, nullptr);
  for (const ir::Graph* p : {g.get(), rolled.get()}) {
    std::vector<ts::Buffer> out = run(*p, c, {x});
    ASSERT_EQ(out.size(), 1u);
    std::vector<double> got = out[0].to_vector();
    ASSERT_EQ(got.size(), 3u);
    for (size_t r = 0; r < 3; ++r) {
      double want = -INFINITY;
      for (size_t k = 0; k < 1000; ++k) want = std::max(want, interp_test::f32(v[r * 1000 + k]));
      EXPECT_EQ(got[r], want) << "row " << r;
    }
    EXPECT_EQ(got[1], 99);
  }
}

TEST(IrPassText, RollReductionsLeavesAnUnchunkedReductionAlone) {
  std::unique_ptr<ir::Graph> g = ir::parse(kRowMax);
  ts::Config c{.reduction_loops = std::vector<std::optional<int64_t>>{std::nullopt}};
  EXPECT_EQ(ts::passes::roll_reductions(*g, c), nullptr);
}

TEST(IrPassText, RollReductionsRefusesAParsedAtomicSpanningTheChunkedDim) {
  std::string text = kRowMax;
  text.replace(text.find("    store %3"), std::string::npos,
               "    %8 = atomic add %0[tile %5 as t0, all %2 as r1], %6 relaxed gpu : f32[t0, r1]"
               "  @f0:9:4\n"
               "    store %3[tile %5 as t0] = %7\n"
               "  }\n"
               "  return %3\n");
  std::unique_ptr<ir::Graph> g = ir::parse(text);
  ts::Config c{.reduction_loops = std::vector<std::optional<int64_t>>{256}};
  std::string msg = user_error([&] { ts::passes::roll_reductions(*g, c); });
  user_error_test::expect_message(
      msg, "row_max", "row_max.cpp", 9,
      "reduction_loops: an atomic, signal or wait spans a chunked reduction dimension",
      "use reduction_loops = null (a persistent reduction) for this dimension");
}

// out[b] = x[b] @ y[b] + bias: a batched dot whose batch tile t0 has block 1, the bias
// indexed [newaxis, newaxis, t2].
const char* const kBatchedDot = R"(kernel batched_dot
  index_dtype i32
  loads 3
  block_size 0 hint 64
  block_size 1 hint 64
  block_size 2 hint 16
  sym t0 loop %9 dim 0
  sym t1 loop %9 dim 1 block 0
  sym t2 loop %9 dim 2 block 1
  sym t3 loop %14 dim 0 block 2
  %0 = arg 0 : f32 tensor rank 3  // x
  %1 = arg 1 : f32 tensor rank 3  // y
  %2 = arg 2 : f32 tensor rank 1  // bias
  %3 = size %0 dim 0 : i64
  %4 = size %0 dim 1 : i64
  %5 = size %1 dim 2 : i64
  %6 = alloc %3, %4, %5 : f32 tensor rank 3  // out
  %7 = const 0 : i64
  %8 = size %0 dim 2 : i64
  %9 = loop tile(%7..%3) as t0 fixed 1 tile(%7..%4) as t1 block 0 tile(%7..%5) as t2 block 1 {
    %10 = const 0 : f32
    %11 = full %10 : f32[t0, t1, t2]
    %14 = loop tile(%7..%8) as t3 block 2 carry %15 = %11 {
      %15 = carried %14 : f32[t0, t1, t2]
      %16 = load %0[tile %9 as t0, tile %9 as t1, tile %14 as t3] #0 : f32[t0, t1, t3]
      %17 = load %1[tile %9 as t0, tile %14 as t3, tile %9 as t2] #1 : f32[t0, t3, t2]
      %18 = view %16 : f32[t0, t1, t3, 1]
      %19 = view %17 : f32[t0, 1, t3, t2]
      %20 = binary mul %18, %19 : f32[t0, t1, t3, t2]
      %21 = reduce sum %20 dim 2 : f32[t0, t1, t2]
      %22 = binary add %15, %21 : f32[t0, t1, t2]
      yield %22
    }
    %23 = loop_result %14 carry 0 : f32[t0, t1, t2]
    %24 = load %2[newaxis, newaxis, tile %9 as t2] #2 : f32[1, 1, t2]
    %25 = binary add %23, %24 : f32[t0, t1, t2]
    store %6[tile %9 as t0, tile %9 as t1, tile %9 as t2] = %25
  }
  return %6
)";

TEST(IrPassText, UnitTilesIndexAParsedBatchWithItsTilesBegin) {
  std::unique_ptr<ir::Graph> g = ir::parse(kBatchedDot);
  const ts::Config c = ts::passes::complete_config(
      *g, ts::Config{.block_sizes = std::vector<int64_t>{16, 16, 8}}, g->kernel_name);
  std::unique_ptr<ir::Graph> squeezed = ts::passes::squeeze_unit_tiles(*g, c);
  ASSERT_NE(squeezed, nullptr);
  EXPECT_IR_CHECK(ir::print(*squeezed), R"(
    CHECK: %9 = loop tile(%7..%3) as t0 fixed 1
    CHECK-NEXT: %27 = tile_begin %9 dim 0 : i32
    CHECK-NEXT: %10 = const 0 : f32
    CHECK-NEXT: %11 = full %10 : f32[t1, t2]
    CHECK: %13 = carried %12 : f32[t1, t2]
    CHECK-NEXT: %14 = load %0[%27, tile %9 as t1, tile %12 as t3] #0 : f32[t1, t3]
    CHECK-NEXT: %15 = load %1[%27, tile %12 as t3, tile %9 as t2] #1 : f32[t3, t2]
    CHECK-NEXT: %16 = view %14 : f32[t1, t3, 1]
    CHECK-NEXT: %17 = view %15 : f32[1, t3, t2]
    CHECK-NEXT: %18 = binary mul %16, %17 : f32[t1, t3, t2]
    CHECK-NEXT: %19 = reduce sum %18 dim 1 : f32[t1, t2]
    CHECK: %23 = load %2[newaxis, newaxis, tile %9 as t2] #2 : f32[1, 1, t2]
    CHECK-NEXT: %28 = view %23 : f32[1, t2]
    CHECK-NEXT: %24 = binary add %22, %28 : f32[t1, t2]
    CHECK-NEXT: %25: store %6[%27, tile %9 as t1, tile %9 as t2] = %24
  )");
  // Under a batch block of 2 nothing changes.
  EXPECT_EQ(ts::passes::squeeze_unit_tiles(
                *ir::parse(std::string(kBatchedDot)
                               .replace(std::string(kBatchedDot).find("fixed 1"), 7, "fixed 2")),
                c),
            nullptr);
}

TEST(IrPassText, AParsedBatchedDotAndItsSqueezedFormRunOnTheInterpreter) {
  std::unique_ptr<ir::Graph> g = ir::parse(kBatchedDot);
  const ts::Config c{.block_sizes = std::vector<int64_t>{16, 16, 8}};
  std::unique_ptr<ir::Graph> squeezed =
      ts::passes::squeeze_unit_tiles(*g, ts::passes::complete_config(*g, c, g->kernel_name));
  ASSERT_NE(squeezed, nullptr);
  ts::Buffer x = interp_test::buffer(interp_test::ramp(2 * 20 * 12, -1, 0.01), {2, 20, 12});
  ts::Buffer y = interp_test::buffer(interp_test::ramp(2 * 12 * 18, 0.5, -0.02), {2, 12, 18});
  ts::Buffer bias = interp_test::buffer(interp_test::ramp(18, 3, 0.25), {18});
  const std::vector<double> xv = x.to_vector(), yv = y.to_vector(), bv = bias.to_vector();
  for (const ir::Graph* p : {g.get(), squeezed.get()}) {
    std::vector<double> got = run(*p, c, {x, y, bias}).at(0).to_vector();
    ASSERT_EQ(got.size(), 2u * 20 * 18);
    for (size_t b = 0; b < 2; ++b)
      for (size_t m = 0; m < 20; ++m)
        for (size_t n = 0; n < 18; ++n) {
          double want = bv[n];
          for (size_t k = 0; k < 12; ++k)
            want += xv[(b * 20 + m) * 12 + k] * yv[(b * 12 + k) * 18 + n];
          EXPECT_NEAR(got[(b * 20 + m) * 18 + n], want, 1e-4 * (1 + std::abs(want)));
        }
  }
}

TEST(IrPassText, CompleteConfigDefaultsTheBlockSizesOfAParsedKernel) {
  std::unique_ptr<ir::Graph> g = ir::parse(kRowMax);
  ts::Config c = ts::passes::complete_config(*g, {}, g->kernel_name);
  ASSERT_TRUE(c.block_sizes.has_value());
  // 4096 elements per loop level: 4 rows of the row's padded 1024 (the sym's pow2), at
  // about 16 elements of a tile value per thread: 256 threads.
  EXPECT_EQ(c.block_sizes, (std::vector<int64_t>{4})) << c.to_json();
  EXPECT_EQ(c.num_warps, 8) << c.to_json();
  // Spelled-out defaults that change nothing complete to the same config (one kernel).
  const ts::Config spelled = ts::passes::complete_config(
      *g,
      ts::Config{
          .num_sm_multiplier = 1,
          .split_k = 1,
          .warp_specialize = false,
          .indexing = std::vector<std::string>{"pointer"},
          .load_eviction_policies = std::vector<ts::EvictionPolicy>{ts::EvictionPolicy::none},
          .tunables = std::map<std::string, int64_t>{}},
      g->kernel_name);
  EXPECT_EQ(spelled.to_json(), c.to_json());
  EXPECT_NE(ts::passes::complete_config(*g, ts::Config{.warp_specialize = true}, g->kernel_name)
                .to_json(),
            c.to_json());
}

TEST(IrPassText, CompleteConfigRefusesAWrongNumberOfBlockSizesAtTheParsedLoop) {
  std::unique_ptr<ir::Graph> g = ir::parse(kRowMax);
  std::string msg = user_error([&] {
    ts::passes::complete_config(*g, ts::Config{.block_sizes = std::vector<int64_t>{8, 8}},
                                g->kernel_name);
  });
  EXPECT_NE(msg.find("kernel 'row_max', row_max.cpp:7"), std::string::npos) << msg;
  EXPECT_NE(msg.find("2 block sizes given, the kernel has 1 tunable tile dimension"),
            std::string::npos)
      << msg;
}

// A 2-D tile loop whose store indexes only the first tile: every tn program writes out(tm).
std::string row_sums(const std::string& stored) {
  return std::string(R"(kernel row_sums
  index_dtype i32
  loads 1
  block_size 0 hint 64
  block_size 1 hint 64
  file f0 "row_sums.cpp"
  %0 = arg 0 : f32 tensor rank 2
  %1 = size %0 dim 0 : i64
  %2 = size %0 dim 1 : i64
  %3 = alloc %1 : f32 tensor rank 1  @f0:3:3  // out
  %4 = const 0 : i64
  %5 = loop tile(%4..%1) as t0 block 0 tile(%4..%2) as t1 block 1 {  @f0:4:3
    %6 = load %0[tile %5 as t0, tile %5 as t1] #0 : f32[t0, t1]
    %7 = reduce sum %6 dim 1 : f32[t0]
    %8 = const 1 : f32
    %9 = full %8 : f32[t0]
    store %3[tile %5 as t0] = )") +
         stored + R"(  @f0:5:5
  }
  return %3
)";
}

TEST(IrPassText, CheckRacesRefusesAParsedStoreMissingALaunchDim) {
  std::unique_ptr<ir::Graph> g = ir::parse(row_sums("%7"));
  std::string msg = user_error([&] { ts::passes::check_races(*g); });
  user_error_test::expect_message(
      msg, "row_sums", "row_sums.cpp", 5,
      "several programs of the launch write the same elements of the tensor 'out' allocated at "
      "line 3: the store's indices do not depend on",
      "index the store with every tile of the loop");
}

TEST(IrPassText, CheckRacesAllowsAParsedStoreOfTheSameValueFromEveryProgram) {
  std::unique_ptr<ir::Graph> g = ir::parse(row_sums("%9"));
  EXPECT_NO_THROW(ts::passes::check_races(*g));
}

// out = x + 1 over a 2-D tile loop; `extra` adds lines to the body.
std::string add_one(const std::string& extra) {
  return std::string(R"(kernel add_one
  index_dtype i32
  loads 1
  block_size 0 hint 64
  block_size 1 hint 64
  %0 = arg 0 : f32 tensor rank 2
  %1 = size %0 dim 0 : i64
  %2 = size %0 dim 1 : i64
  %3 = alloc %1, %2 like %0 : f32 tensor rank 2
  %4 = const 0 : i64
  %5 = loop tile(%4..%1) as t0 block 0 tile(%4..%2) as t1 block 1 {
    %6 = load %0[tile %5 as t0, tile %5 as t1] #0 : f32[t0, t1]
    %7 = const 1 : f32
)") + extra +
         R"(    %8 = binary add %6, %7 : f32[t0, t1]
    store %3[tile %5 as t0, tile %5 as t1] = %8
  }
  return %3
)";
}

TEST(IrPassText, LoopKnobsFlattenAParsedElementwiseLoop) {
  std::unique_ptr<ir::Graph> g = ir::parse(add_one(""));
  ASSERT_EQ(ts::passes::multi_dim_loops(*g).size(), 1u);
  const ir::Node* loop = g->host.at(5);
  EXPECT_EQ(ts::passes::flatten_blocker(loop), "");
  ts::Config c =
      ts::passes::complete_config(*g,
                                  ts::Config{.loop_orders = std::vector<std::vector<int>>{{1, 0}},
                                             .flatten_loops = std::vector<bool>{true}},
                                  g->kernel_name);
  ts::passes::LoopKnobs k = ts::passes::loop_knobs(*g, loop, c);
  EXPECT_TRUE(k.flatten);
  EXPECT_EQ(k.order, (std::vector<int>{1, 0}));
}

TEST(IrPassText, LoopKnobsRefuseToFlattenALoopThatReadsATileBegin) {
  std::unique_ptr<ir::Graph> g = ir::parse(add_one("    %9 = tile_begin %5 dim 0 : i32\n"));
  EXPECT_NE(ts::passes::flatten_blocker(g->host.at(5)), "");
  std::string msg = user_error([&] {
    ts::passes::complete_config(*g, ts::Config{.flatten_loops = std::vector<bool>{true}},
                                g->kernel_name);
  });
  EXPECT_NE(msg.find("kernel 'add_one'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("flatten"), std::string::npos) << msg;
}

TEST(IrPassText, LayoutOfAParsedLoopHasASlotPerTileDim) {
  std::unique_ptr<ir::Graph> g = ir::parse(add_one(""));
  ts::Config c = ts::passes::complete_config(
      *g, ts::Config{.block_sizes = std::vector<int64_t>{16, 64}, .num_warps = 4}, g->kernel_name);
  ts::passes::Layout l = ts::passes::compute_layout(g->host.at(5), c);
  EXPECT_EQ(l.slot_block, (std::vector<int64_t>{16, 64}));
  EXPECT_EQ(l.elems, 16 * 64);
  EXPECT_EQ(l.threads, 128);
}

}  // namespace
