// Config::loop_orders, flatten_loops and l2_groupings (passes/loop_knobs.hpp): the
// autotuner's knobs for them, the CUDA they generate (compiled with NVRTC for sm_90, no
// GPU needed), unchanged interpreter results, and the errors of invalid forced values.
#include "passes/loop_knobs.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <tessel/tessel.hpp>
#include <tessel/testing.hpp>

#include "autotune/config_space.hpp"
#include "autotune_test_util.hpp"
#include "driver/cuda_api.hpp"
#include "examples/kernels/basic.hpp"
#include "loop_knobs_kernels.hpp"
#include "nvrtc_test_util.hpp"
#include "passes/default_config.hpp"
#include "user_error_util.hpp"

namespace ts = tessel;
namespace at = tessel::autotune;
using autotune_test::graph_of;
using loop_knobs_test::make_add1_3d;
using loop_knobs_test::make_block_sums;
using loop_knobs_test::make_scale_4d;

namespace {

const at::Knob* find_knob(const at::ConfigSpace& s, const std::string& name) {
  for (const at::Knob& k : s.knobs())
    if (k.name == name) return &k;
  return nullptr;
}

const at::Knob& knob(const at::ConfigSpace& s, const std::string& name) {
  const at::Knob* k = find_knob(s, name);
  if (!k) throw std::runtime_error("no knob " + name);
  return *k;
}

int knob_index(const at::ConfigSpace& s, const std::string& name) {
  return static_cast<int>(&knob(s, name) - s.knobs().data());
}

ts::Buffer mat(int64_t m, int64_t n) { return ts::Buffer::zeros({m, n}, ts::f32); }
ts::Buffer t4() { return ts::Buffer::zeros({3, 5, 37, 45}, ts::f32); }

// ---- the config space ----

TEST(LoopKnobsSpace, TwoDimKernelHasLoopOrderFlattenAndL2GroupingKnobs) {
  auto k = examples::make_add_2d();
  at::ConfigSpace s(graph_of(k, mat(1000, 1000), mat(1000, 1000)), {}, "add_2d");
  // Choices of loop_orders are permutation ranks: 0 = [0, 1], 1 = [1, 0].
  EXPECT_EQ(knob(s, "loop_orders[0]").choices, (std::vector<int64_t>{0, 1}));
  EXPECT_FALSE(knob(s, "loop_orders[0]").ordered);
  EXPECT_EQ(knob(s, "flatten_loops[0]").choices, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(knob(s, "l2_groupings[0]").choices, (std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64}));
  EXPECT_TRUE(knob(s, "l2_groupings[0]").ordered);
}

TEST(LoopKnobsSpace, OneDimKernelsHaveNoLoopKnobsAndUnsetFields) {
  auto k = examples::make_add();
  ts::Buffer x = ts::Buffer::empty({1 << 20}, ts::f32);
  const ts::ir::Graph& g = graph_of(k, x, x);
  at::ConfigSpace s(g, {}, "add");
  for (const at::Knob& kn : s.knobs())
    EXPECT_TRUE(kn.kind != at::Knob::loop_order && kn.kind != at::Knob::flatten_loop &&
                kn.kind != at::Knob::l2_grouping)
        << kn.name;
  ts::Config c = s.config(s.default_point());
  EXPECT_FALSE(c.loop_orders || c.flatten_loops || c.l2_groupings) << c.to_json();
  EXPECT_EQ(c, ts::passes::complete_config(g, {}, "add"));
}

TEST(LoopKnobsSpace, DefaultPointIsTheIdentityOrderWithoutFlatteningOrGrouping) {
  auto k = examples::make_add_2d();
  const ts::ir::Graph& g = graph_of(k, mat(1000, 1000), mat(1000, 1000));
  at::ConfigSpace s(g, {}, "add_2d");
  ts::Config c = s.config(s.default_point());
  EXPECT_EQ(c, ts::passes::complete_config(g, {}, "add_2d"));
  EXPECT_EQ(*c.loop_orders, (std::vector<std::vector<int>>{{0, 1}}));
  EXPECT_EQ(*c.flatten_loops, std::vector<bool>{false});
  EXPECT_EQ(*c.l2_groupings, std::vector<int>{1});
}

TEST(LoopKnobsSpace, NestedLoopsAreIndexedInTraceOrderAndOnlyTopLevelLoopsGroup) {
  auto k = make_block_sums();
  at::ConfigSpace s(graph_of(k, t4()), {}, "block_sums");
  EXPECT_EQ(knob(s, "loop_orders[0]").choices, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(knob(s, "loop_orders[1]").choices, (std::vector<int64_t>{0, 1}));
  // The outer loop is elementwise over its tile; the inner one reduces its dims away.
  EXPECT_EQ(knob(s, "flatten_loops[0]").choices, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(knob(s, "flatten_loops[1]").choices, (std::vector<int64_t>{0}));
  EXPECT_NE(find_knob(s, "l2_groupings[0]"), nullptr);
  EXPECT_EQ(find_knob(s, "l2_groupings[1]"), nullptr);
}

TEST(LoopKnobsSpace, FlattenIsNotOfferedForAValueWithSomeOfTheLoopsDims) {
  auto k = examples::make_add_bias();  // bias(ts::newaxis, tn): shape [1, tn]
  at::ConfigSpace s(graph_of(k, mat(100, 100), ts::Buffer::zeros({100}, ts::f32)), {}, "add_bias");
  EXPECT_EQ(knob(s, "flatten_loops[0]").choices, (std::vector<int64_t>{0}));
}

TEST(LoopKnobsSpace, ThreeDimLoopOffersItsSixOrdersInLexicographicRank) {
  auto k = make_add1_3d();
  at::ConfigSpace s(graph_of(k, ts::Buffer::zeros({9, 10, 11}, ts::f32)), {}, "add1_3d");
  EXPECT_EQ(knob(s, "loop_orders[0]").choices, (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  at::Point p = s.default_point();
  p[knob_index(s, "loop_orders[0]")] = 5;
  EXPECT_EQ(*s.config(p).loop_orders, (std::vector<std::vector<int>>{{2, 1, 0}}));
  p[knob_index(s, "loop_orders[0]")] = 2;
  EXPECT_EQ(*s.config(p).loop_orders, (std::vector<std::vector<int>>{{1, 0, 2}}));
  EXPECT_EQ(s.canonical(s.point(s.config(p))), p);
}

TEST(LoopKnobsSpace, CanonicalPointsHaveNoGroupingWithXyzOrOnAFlattenedLoop) {
  auto k = examples::make_add_2d();
  const ts::ir::Graph& g = graph_of(k, mat(1000, 1000), mat(1000, 1000));
  at::ConfigSpace s(g, {}, "add_2d");
  int pid = knob_index(s, "pid_type"), l2 = knob_index(s, "l2_groupings[0]"),
      flat = knob_index(s, "flatten_loops[0]");
  at::Point p = s.default_point();
  p[l2] = 3;  // 8
  EXPECT_EQ(s.config(s.canonical(p)).l2_groupings->at(0), 8);
  at::Point xyz = p;
  xyz[pid] = 1;  // pid_type choices: flat, xyz, persistent_blocked, persistent_interleaved
  EXPECT_EQ(s.config(xyz).pid_type, ts::PidType::xyz);
  EXPECT_EQ(s.config(s.canonical(xyz)).l2_groupings->at(0), 1);
  at::Point flattened = p;
  flattened[flat] = 1;
  EXPECT_EQ(s.config(s.canonical(flattened)).l2_groupings->at(0), 1);
  // Every neighbour is canonical, so a valid config.
  for (const at::Point& q : s.neighbors(xyz, 1))
    EXPECT_NO_THROW(ts::passes::complete_config(g, s.config(q), "add_2d"));
}

TEST(LoopKnobsSpace, ForcedKnobsAreFixedAndAForcedGroupingRulesOutXyzAndFlattening) {
  auto k = examples::make_add_2d();
  ts::Config forced{.loop_orders = std::vector<std::vector<int>>{{1, 0}},
                    .l2_groupings = std::vector<int>{4}};
  at::ConfigSpace s(graph_of(k, mat(1000, 1000), mat(1000, 1000)), forced, "add_2d");
  EXPECT_EQ(knob(s, "loop_orders[0]").choices, (std::vector<int64_t>{1}));
  EXPECT_EQ(knob(s, "l2_groupings[0]").choices, (std::vector<int64_t>{4}));
  EXPECT_EQ(knob(s, "flatten_loops[0]").choices, (std::vector<int64_t>{0}));
  for (int64_t p : knob(s, "pid_type").choices)
    EXPECT_NE(p, static_cast<int64_t>(ts::PidType::xyz));
  ts::Config c = s.config(s.default_point());
  EXPECT_EQ(*c.loop_orders, (std::vector<std::vector<int>>{{1, 0}}));
  EXPECT_EQ(*c.l2_groupings, std::vector<int>{4});
}

TEST(LoopKnobsSpace, ForcedXyzLeavesOnlyGroupingOne) {
  auto k = examples::make_add_2d();
  at::ConfigSpace s(graph_of(k, mat(1000, 1000), mat(1000, 1000)), {.pid_type = ts::PidType::xyz},
                    "add_2d");
  EXPECT_EQ(knob(s, "l2_groupings[0]").choices, (std::vector<int64_t>{1}));
}

TEST(LoopKnobsSpace, PermutationRanksRoundTrip) {
  for (int k = 1; k <= 4; ++k) {
    int64_t n = 1;
    for (int i = 2; i <= k; ++i) n *= i;
    for (int64_t r = 0; r < n; ++r)
      EXPECT_EQ(ts::passes::rank_of_permutation(ts::passes::permutation_of_rank(k, r)), r);
  }
  EXPECT_EQ(ts::passes::permutation_of_rank(3, 0), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(ts::passes::permutation_of_rank(3, 5), (std::vector<int>{2, 1, 0}));
}

// ---- generated CUDA ----

// The generated CUDA of `k` (compiled with NVRTC for sm_90), with the node ids in loop
// variable names replaced by '#' (fb12 -> fb#, tb12_0 -> tb#_0) so tests need not know them.
template <class K, class... A>
std::string cuda(const K& k, const A&... args) {
  std::string all;
  for (const std::string& s : k.cuda(true, args...)) all += s;
  return std::regex_replace(all, std::regex(R"(\b(fn|fc|fb|lb|le|tb|te)\d+)"), "$1#");
}

ts::Settings with(ts::Config c) { return ts::Settings{.config = std::move(c)}; }

TEST(LoopKnobsCompile, LoopOrderMakesTheChosenDimVaryFastestAcrossPrograms) {
  REQUIRE_NVRTC();
  ts::Buffer x = mat(77, 131);
  std::string identity = cuda(examples::make_add_2d(), x, x);
  EXPECT_LT(identity.find("const long long i0 = rem % nt0;"),
            identity.find("const long long i1 = rem % nt1;"));
  std::string swapped = cuda(
      examples::make_add_2d(with({.loop_orders = std::vector<std::vector<int>>{{1, 0}}})), x, x);
  EXPECT_LT(swapped.find("const long long i1 = rem % nt1;"),
            swapped.find("const long long i0 = rem % nt0;"));
}

TEST(LoopKnobsCompile, LoopOrderWithXyzMapsTheFirstOrderedDimToGridX) {
  REQUIRE_NVRTC();
  ts::Buffer x = mat(77, 131);
  std::string src =
      cuda(examples::make_add_2d(with({.pid_type = ts::PidType::xyz,
                                       .loop_orders = std::vector<std::vector<int>>{{1, 0}}})),
           x, x);
  EXPECT_NE(src.find("const long long i1 = blockIdx.x;"), std::string::npos) << src;
  EXPECT_NE(src.find("const long long i0 = blockIdx.y;"), std::string::npos) << src;
}

TEST(LoopKnobsCompile, L2GroupingWithEveryNonXyzPidTypeAndOrder) {
  REQUIRE_NVRTC();
  ts::Buffer x = mat(77, 131);
  for (ts::PidType pid :
       {ts::PidType::flat, ts::PidType::persistent_blocked, ts::PidType::persistent_interleaved})
    for (std::vector<int> order : {std::vector<int>{0, 1}, std::vector<int>{1, 0}}) {
      std::string src =
          cuda(examples::make_add_2d(with({.pid_type = pid,
                                           .loop_orders = std::vector<std::vector<int>>{order},
                                           .l2_groupings = std::vector<int>{8}})),
               x, x);
      EXPECT_NE(src.find("const long long group = 8LL * nt" + std::to_string(order[1]) + ";"),
                std::string::npos)
          << src;
      EXPECT_NE(src.find("const long long i" + std::to_string(order[0]) +
                         " = first + p2 % group % gsize;"),
                std::string::npos)
          << src;
    }
}

TEST(LoopKnobsCompile, L2GroupingOfAThreeDimLoopGroupsTheTwoFastestDims) {
  REQUIRE_NVRTC();
  ts::Buffer x = ts::Buffer::zeros({9, 10, 11}, ts::f32);
  std::string src = cuda(make_add1_3d(with({.loop_orders = std::vector<std::vector<int>>{{2, 0, 1}},
                                            .l2_groupings = std::vector<int>{4}})),
                         x);
  EXPECT_NE(src.find("const long long p2 = rem % (nt2 * nt0);"), std::string::npos) << src;
  EXPECT_NE(src.find("const long long i1 = rem % nt1;"), std::string::npos) << src;
}

TEST(LoopKnobsCompile, FlattenedTopLevelLoopUsesOneIndexSpaceAndScalarAccesses) {
  REQUIRE_NVRTC();
  ts::Buffer x = mat(77, 131);
  for (ts::PidType pid : {ts::PidType::flat, ts::PidType::xyz, ts::PidType::persistent_blocked,
                          ts::PidType::persistent_interleaved}) {
    std::string src = cuda(examples::make_add_2d(with({.block_sizes = std::vector<int64_t>{4, 32},
                                                       .pid_type = pid,
                                                       .flatten_loops = std::vector<bool>{true}})),
                           x, x);
    EXPECT_NE(src.find("const long long total = ((fn#_0 * fn#_1) + 127) / 128;"), std::string::npos)
        << src;
    EXPECT_NE(src.find("const long long fb# = pid * 128;"), std::string::npos) << src;
    EXPECT_NE(src.find("fc#_0[r] = (int)(e / fn#_1);"), std::string::npos) << src;
    EXPECT_NE(src.find("fc#_1[r] = (int)(e % fn#_1);"), std::string::npos) << src;
    EXPECT_EQ(src.find("ld_vec"), std::string::npos) << src;
    EXPECT_EQ(src.find("blockIdx.y"), std::string::npos) << src;
  }
}

TEST(LoopKnobsCompile, FlattenedLoopOrderIsRowMajorOverTheOrderedDims) {
  REQUIRE_NVRTC();
  ts::Buffer x = mat(77, 131);
  std::string src =
      cuda(examples::make_add_2d(with({.loop_orders = std::vector<std::vector<int>>{{1, 0}},
                                       .flatten_loops = std::vector<bool>{true}})),
           x, x);
  EXPECT_NE(src.find("fc#_1[r] = (int)(e / fn#_0);"), std::string::npos) << src;
  EXPECT_NE(src.find("fc#_0[r] = (int)(e % fn#_0);"), std::string::npos) << src;
}

TEST(LoopKnobsCompile, NestedLoopOrderSetsTheNestingOfTheGeneratedLoops) {
  REQUIRE_NVRTC();
  auto outer_first = [](const std::string& src, const std::string& a, const std::string& b) {
    return src.find("for (long long tb" + a) < src.find("for (long long tb" + b);
  };
  std::string identity = cuda(make_scale_4d(), t4());
  std::string swapped = cuda(
      make_scale_4d(with({.loop_orders = std::vector<std::vector<int>>{{0, 1}, {1, 0}}})), t4());
  // Only the inner loop is a for-loop of tiles (the outer one is the grid).
  ASSERT_NE(identity.find("for (long long tb#_0_"), std::string::npos) << identity;
  EXPECT_TRUE(outer_first(identity, "#_0_", "#_1_")) << identity;
  EXPECT_TRUE(outer_first(swapped, "#_1_", "#_0_")) << swapped;
}

TEST(LoopKnobsCompile, FlattenedNestedLoopAndEveryKnobOfANestedReduction) {
  REQUIRE_NVRTC();
  std::string src =
      cuda(make_scale_4d(with({.flatten_loops = std::vector<bool>{true, true}})), t4());
  EXPECT_NE(src.find("for (long long fb# = 0; fb# < (fn#_0 * fn#_1); fb# += "), std::string::npos)
      << src;
  for (std::vector<int> inner : {std::vector<int>{0, 1}, std::vector<int>{1, 0}})
    for (bool flat : {false, true})
      cuda(make_block_sums(with({.loop_orders = std::vector<std::vector<int>>{{1, 0}, inner},
                                 .flatten_loops = std::vector<bool>{flat, false},
                                 .l2_groupings = std::vector<int>{flat ? 1 : 4}})),
           t4());
}

// ---- the interpreter ignores the knobs ----

TEST(LoopKnobsInterp, ResultsDoNotDependOnTheKnobs) {
  std::vector<double> v(3 * 5 * 37 * 45);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i % 13) - 6;
  ts::Buffer x = ts::Buffer::from_vector(v, {3, 5, 37, 45}, ts::f32);
  ts::Buffer want_sums = make_block_sums()(x), want_scaled = make_scale_4d()(x);
  ts::Config c{.block_sizes = std::vector<int64_t>{2, 4, 8, 16},
               .loop_orders = std::vector<std::vector<int>>{{1, 0}, {1, 0}},
               .flatten_loops = std::vector<bool>{true, false},
               .l2_groupings = std::vector<int>{1}};
  EXPECT_EQ(ts::count_mismatches(make_block_sums(with(c))(x), want_sums, 0, 0), 0);
  c.flatten_loops = std::vector<bool>{false, true};
  c.l2_groupings = std::vector<int>{4};
  EXPECT_EQ(ts::count_mismatches(make_scale_4d(with(c))(x), want_scaled, 0, 0), 0);
  // Spot values: sum over c, d of x[0, 0] and x * 2 + 1 at one element.
  double s00 = 0;
  for (int i = 0; i < 37 * 45; ++i) s00 += v[i];
  EXPECT_EQ(want_sums.to_vector()[0], s00);
  EXPECT_EQ(want_scaled.to_vector()[100], v[100] * 2 + 1);
}

// ---- invalid forced values ----

int g_line = 0;        // the line of the loop under test, recorded while tracing
int g_value_line = 0;  // the line of an offending value

using user_error_test::user_error;

void expect_message(const std::string& msg, const std::string& kernel, int line,
                    const std::string& what, const std::string& hint) {
  user_error_test::expect_message(msg, kernel, "loop_knobs_test.cpp", line, what, hint);
}

auto make_copy_2d(ts::Config c) {
  return ts::kernel(
      "copy_2d",
      [](ts::Tensor x) {
        ts::Tensor out = ts::empty_like(x);
        g_line = __LINE__ + 1;
        for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) out(tm, tn) = x(tm, tn);
        return out;
      },
      with(std::move(c)));
}

TEST(LoopKnobsErrors, LoopOrderOfTheWrongLengthNamesTheLoop) {
  std::string msg = user_error(
      [] { make_copy_2d({.loop_orders = std::vector<std::vector<int>>{{0}}})(mat(8, 8)); });
  expect_message(msg, "copy_2d", g_line,
                 "loop_orders[0] = [0] is not a permutation of the loop's 2 dimensions",
                 "use a permutation of [0, 1]");
  msg = user_error([] {
    make_copy_2d({.loop_orders = std::vector<std::vector<int>>{{1, 1}}})(mat(8, 8));
  });
  expect_message(msg, "copy_2d", g_line, "loop_orders[0] = [1, 1] is not a permutation", "[0, 1]");
}

TEST(LoopKnobsErrors, WrongNumberOfEntries) {
  std::string msg = user_error([] {
    make_copy_2d({.loop_orders = std::vector<std::vector<int>>{{0, 1}, {1, 0}}})(mat(8, 8));
  });
  expect_message(msg, "copy_2d", 0,
                 "loop_orders has 2 entries, the kernel has 1 loop(s) of two or more dimensions",
                 "give one entry per loop of two or more dimensions, in trace order");
  msg = user_error([] { make_copy_2d({.l2_groupings = std::vector<int>{}})(mat(8, 8)); });
  expect_message(msg, "copy_2d", 0, "l2_groupings has 0 entries", "one entry per top-level loop");
}

TEST(LoopKnobsErrors, L2GroupingMustBeAPositivePowerOfTwo) {
  for (int bad : {3, 0, -4, 96}) {
    std::string msg =
        user_error([&] { make_copy_2d({.l2_groupings = std::vector<int>{bad}})(mat(8, 8)); });
    expect_message(msg, "copy_2d", g_line,
                   "l2_groupings[0] = " + std::to_string(bad) + " is not a positive power of two",
                   "use 1 (no grouping), 2, 4");
  }
}

TEST(LoopKnobsErrors, L2GroupingIsRejectedWithXyzAndOnAFlattenedLoop) {
  std::string msg = user_error([] {
    make_copy_2d({.pid_type = ts::PidType::xyz, .l2_groupings = std::vector<int>{2}})(mat(8, 8));
  });
  expect_message(msg, "copy_2d", g_line, "l2_groupings[0] = 2 with pid_type xyz",
                 "use pid_type flat");
  msg = user_error([] {
    make_copy_2d({.flatten_loops = std::vector<bool>{true}, .l2_groupings = std::vector<int>{2}})(
        mat(8, 8));
  });
  expect_message(msg, "copy_2d", g_line, "l2_groupings[0] = 2 on a flattened loop",
                 "set its l2_groupings entry to 1");
}

TEST(LoopKnobsErrors, FlattenWithAValueOfSomeOfTheDimsNamesTheLoopAndTheValue) {
  auto k = ts::kernel(
      "bias_2d",
      [](ts::Tensor x, ts::Tensor b) {
        ts::Tensor out = ts::empty_like(x);
        g_line = __LINE__ + 1;
        for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) {
          g_value_line = __LINE__ + 1;
          ts::Value row = b(ts::newaxis, tn);
          out(tm, tn) = x(tm, tn) + row;
        }
        return out;
      },
      with({.flatten_loops = std::vector<bool>{true}}));
  std::string msg = user_error([&] { k(mat(8, 8), ts::Buffer::zeros({8}, ts::f32)); });
  expect_message(msg, "bias_2d", g_line,
                 "flatten_loops[0] = true, but this loop cannot be flattened", "set it to false");
  EXPECT_NE(msg.find("the value at loop_knobs_test.cpp:" + std::to_string(g_value_line) +
                     " has only some of the loop's dimensions"),
            std::string::npos)
      << msg;
}

TEST(LoopKnobsErrors, FlattenOfALoopWhoseDimsAreReducedNamesTheNestedLoop) {
  std::string msg = user_error([] {
    make_block_sums(with({.flatten_loops = std::vector<bool>{false, true}}))(t4());
  });
  expect_message(msg, "block_sums", 0, "flatten_loops[1] = true, but this loop cannot be flattened",
                 "set it to false");
  EXPECT_NE(msg.find("loop_knobs_kernels.hpp:"), std::string::npos) << msg;
}

TEST(LoopKnobsErrors, FlattenOfAGridLoopOrWithATileAttribute) {
  auto grid = ts::kernel(
      "grid_2d",
      [](ts::Tensor x) {
        ts::Tensor out = ts::empty_like(x);
        g_line = __LINE__ + 1;
        for (auto [i, j] : ts::grid(x.size(0), x.size(1))) out(i, j) = x(i, j);
        return out;
      },
      with({.flatten_loops = std::vector<bool>{true}}));
  std::string msg = user_error([&] { grid(mat(4, 4)); });  // traces: sets g_line
  expect_message(msg, "grid_2d", g_line, "cannot be flattened: it is a ts::grid loop",
                 "set it to false");
  auto begin = ts::kernel(
      "begin_2d",
      [](ts::Tensor x) {
        ts::Tensor out = ts::empty_like(x);
        g_line = __LINE__ + 1;
        for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) out(tm, tn) = x(tm, tn) + tm.begin();
        return out;
      },
      with({.flatten_loops = std::vector<bool>{true}}));
  msg = user_error([&] { begin(mat(4, 4)); });
  expect_message(msg, "begin_2d", g_line,
                 "the tile attribute (tile_begin) at loop_knobs_test.cpp:", "set it to false");
}

}  // namespace
