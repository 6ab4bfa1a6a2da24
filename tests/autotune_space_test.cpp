// The autotuner's config space, derived from traced kernels (src/autotune/config_space.hpp).
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "autotune/config_space.hpp"
#include "autotune_test_util.hpp"
#include "examples/kernels/basic.hpp"
#include "examples/kernels/matmul.hpp"
#include "examples/kernels/seed002.hpp"
#include "passes/default_config.hpp"
#include "passes/layout.hpp"

namespace ts = tessel;
namespace at = tessel::autotune;
using autotune_test::graph_of;

namespace {

const at::Knob& knob(const at::ConfigSpace& s, const std::string& name) {
  for (const at::Knob& k : s.knobs())
    if (k.name == name) return k;
  throw std::runtime_error("no knob " + name);
}

bool has_knob(const at::ConfigSpace& s, const std::string& name) {
  for (const at::Knob& k : s.knobs())
    if (k.name == name) return true;
  return false;
}

std::vector<int64_t> pids(std::initializer_list<ts::PidType> p) {
  std::vector<int64_t> out;
  for (ts::PidType x : p) out.push_back(static_cast<int64_t>(x));
  return out;
}

TEST(AutotuneSpace, AddKernelHasBlockWarpsPidAndMultiplierKnobs) {
  auto add = examples::make_add();
  ts::Buffer x = ts::Buffer::empty({1 << 20}, ts::f32), y = ts::Buffer::empty({1 << 20}, ts::f32);
  at::ConfigSpace s(graph_of(add, x, y), {}, "add");
  EXPECT_EQ(knob(s, "block_sizes[0]").choices,
            (std::vector<int64_t>{16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192}));
  EXPECT_EQ(knob(s, "num_warps").choices, (std::vector<int64_t>{1, 2, 4, 8, 16}));
  // Two stages pipeline a persistent program's loop over tiles (canonical 1 otherwise).
  EXPECT_EQ(knob(s, "num_stages").choices, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(knob(s, "pid_type").choices,
            pids({ts::PidType::flat, ts::PidType::xyz, ts::PidType::persistent_blocked,
                  ts::PidType::persistent_interleaved}));
  // 0 = unset: a persistent grid sized by the kernel's occupancy.
  EXPECT_EQ(knob(s, "num_sm_multiplier").choices, (std::vector<int64_t>{0, 1, 2, 4, 8}));
  EXPECT_FALSE(has_knob(s, "reduction_loops[0]"));
  EXPECT_EQ(knob(s, "maxnreg").choices, (std::vector<int64_t>{0}));  // no rows in registers
  // A one-pass kernel reads nothing again: no L2 eviction knobs.
  EXPECT_FALSE(has_knob(s, "load_eviction_policies[0]"));
  EXPECT_EQ(s.size(), 10 * 5 * 2 * 4 * 5);
}

TEST(AutotuneSpace, EvictionPoliciesOfKernelsThatReadAgain) {
  using E = ts::EvictionPolicy;
  // softmax (a reduction dim: its looped form reads each row once per pass): one knob per
  // load (none, first, last), unordered; points round-trip their policies; the default
  // leaves the field unset.
  auto softmax = autotune_test::make_softmax();
  ts::Buffer x = ts::Buffer::empty({4096, 4096}, ts::f32);
  const ts::ir::Graph& g = graph_of(softmax, x);
  at::ConfigSpace s(g, {}, "softmax");
  EXPECT_EQ(knob(s, "load_eviction_policies[0]").choices, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_FALSE(knob(s, "load_eviction_policies[0]").ordered);
  EXPECT_FALSE(has_knob(s, "load_eviction_policies[1]"));
  ts::Config c{.block_sizes = std::vector<int64_t>{1},
               .load_eviction_policies = std::vector<E>{E::last}};
  EXPECT_EQ(s.config(s.point(c)).load_eviction_policies, c.load_eviction_policies);
  EXPECT_FALSE(s.config(s.default_point()).load_eviction_policies.has_value());
  // Forced policies fix the knobs, also where none would be offered (add).
  auto add = examples::make_add();
  ts::Buffer a = ts::Buffer::empty({1 << 20}, ts::f32);
  at::ConfigSpace forced(graph_of(add, a, a),
                         ts::Config{.load_eviction_policies = std::vector<E>{E::none, E::first}},
                         "add");
  EXPECT_EQ(knob(forced, "load_eviction_policies[1]").choices, (std::vector<int64_t>{1}));
  EXPECT_EQ(forced.config(forced.default_point()).load_eviction_policies,
            (std::vector<E>{E::none, E::first}));
}

TEST(AutotuneSpace, DefaultPointIsTheDefaultConfig) {
  auto add = examples::make_add();
  ts::Buffer x = ts::Buffer::empty({1 << 20}, ts::f32), y = ts::Buffer::empty({1 << 20}, ts::f32);
  const ts::ir::Graph& g = graph_of(add, x, y);
  at::ConfigSpace s(g, {}, "add");
  EXPECT_EQ(s.config(s.default_point()), ts::passes::complete_config(g, {}, "add"));
}

TEST(AutotuneSpace, BlockSizesStopAtTheExtentAndStartAtOneForSmallExtents) {
  auto add = examples::make_add();
  ts::Buffer x = ts::Buffer::empty({10}, ts::f32), y = ts::Buffer::empty({10}, ts::f32);
  at::ConfigSpace s(graph_of(add, x, y), {}, "add");
  EXPECT_EQ(knob(s, "block_sizes[0]").choices, (std::vector<int64_t>{1, 2, 4, 8, 16}));
}

TEST(AutotuneSpace, RowKernelsStartAtOneRowAndHaveAReductionLoopKnob) {
  auto softmax = autotune_test::make_softmax();
  ts::Buffer x = ts::Buffer::empty({4096, 4096}, ts::f32);
  at::ConfigSpace s(graph_of(softmax, x), {}, "softmax");
  const at::Knob& rows = knob(s, "block_sizes[0]");
  EXPECT_EQ(rows.choices.front(), 1);
  EXPECT_EQ(rows.choices.back(), 4096);
  std::vector<int64_t> chunks{16, 32, 64, 128, 256, 512, 1024, 2048, 0};  // 0: none, last
  EXPECT_EQ(knob(s, "reduction_loops[0]").choices, chunks);
  EXPECT_FALSE(knob(s, "reduction_loops[0]").ordered == false);
  // A rolled reduction is a device loop: its loads can be pipelined.
  EXPECT_EQ(knob(s, "num_stages").choices, (std::vector<int64_t>{1, 2}));
  // Register caps (0 = unset) for rows held in registers; a point round-trips its cap.
  EXPECT_EQ(knob(s, "maxnreg").choices, (std::vector<int64_t>{0, 64, 128}));
  ts::Config c{.block_sizes = std::vector<int64_t>{1}, .num_warps = 16, .maxnreg = 64};
  EXPECT_EQ(s.config(s.point(c)).maxnreg, 64);
  c.maxnreg.reset();
  EXPECT_FALSE(s.config(s.point(c)).maxnreg.has_value());
}

// Stages only matter where a device loop or a persistent program loop exists: a row
// kernel's point with a persistent reduction and a flat grid has one stage in canonical
// form, a looped one or a persistent one keeps its two.
TEST(AutotuneSpace, StagesAreCanonicallyOneWithoutADeviceLoop) {
  auto softmax = autotune_test::make_softmax();
  ts::Buffer x = ts::Buffer::empty({4096, 4096}, ts::f32);
  at::ConfigSpace s(graph_of(softmax, x), {}, "softmax");
  auto stages = [&](std::optional<int64_t> chunk) {
    ts::Config c{.block_sizes = std::vector<int64_t>{1},
                 .num_warps = 8,
                 .num_stages = 2,
                 .reduction_loops = std::vector<std::optional<int64_t>>{chunk}};
    return *s.config(s.canonical(s.point(c))).num_stages;
  };
  EXPECT_EQ(stages(std::nullopt), 1);
  EXPECT_EQ(stages(256), 2);
  // A persistent program loop over rows: the next row's loads can be issued early.
  ts::Config c{.block_sizes = std::vector<int64_t>{1},
               .num_warps = 8,
               .num_stages = 2,
               .pid_type = ts::PidType::persistent_interleaved,
               .reduction_loops = std::vector<std::optional<int64_t>>{std::nullopt}};
  EXPECT_EQ(*s.config(s.canonical(s.point(c))).num_stages, 2);
}

TEST(AutotuneSpace, DeviceLoopsOfferTwoStages) {
  auto k = examples::make_padded_sum();  // a tile loop nested in a grid loop
  ts::Buffer x = ts::Buffer::ones({100, 100}, ts::f32);
  ts::Buffer size = ts::Buffer::from_vector({80}, {1}, ts::i32);
  at::ConfigSpace s(graph_of(k, x, size), {}, "padded_sum");
  EXPECT_EQ(knob(s, "num_stages").choices, (std::vector<int64_t>{1, 2}));
}

TEST(AutotuneSpace, PointsNeedingMoreThan256RegistersAreInvalid) {
  auto softmax = autotune_test::make_softmax();
  ts::Buffer x = ts::Buffer::empty({4096, 4096}, ts::f32);
  const ts::ir::Graph& g = graph_of(softmax, x);
  at::ConfigSpace s(g, {}, "softmax");
  // 64 rows of 4096 floats on one warp: 64 * 4096 / 32 = 8192 registers per thread.
  at::Point big = s.point(ts::Config{.block_sizes = std::vector<int64_t>{64}, .num_warps = 1});
  EXPECT_FALSE(s.valid(big));
  at::Point one_row = s.point(ts::Config{.block_sizes = std::vector<int64_t>{1}, .num_warps = 4});
  EXPECT_TRUE(s.valid(one_row));
  std::mt19937_64 rng(7);
  for (int i = 0; i < 50; ++i) {
    at::Point p = s.random_point(rng);
    ts::Config c = s.config(p);
    if (c.reduction_loops && (*c.reduction_loops)[0]) continue;  // lowered first; see valid()
    for (const ts::ir::Node* n : g.host)
      if (n->op == ts::ir::Op::Loop)
        EXPECT_LE(ts::passes::compute_layout(n, c).regs(), 256) << c.to_json();
  }
}

TEST(AutotuneSpace, PersistentKernelsExcludeFlatAndXyz) {
  auto k = examples::make_padded_sum();
  ts::Buffer x = ts::Buffer::ones({100, 100}, ts::f32);
  ts::Buffer size = ts::Buffer::from_vector({80}, {1}, ts::i32);
  at::ConfigSpace s(graph_of(k, x, size), {}, "padded_sum");
  EXPECT_EQ(knob(s, "pid_type").choices,
            pids({ts::PidType::persistent_blocked, ts::PidType::persistent_interleaved}));
  EXPECT_EQ(knob(s, "num_sm_multiplier").choices, (std::vector<int64_t>{0, 1, 2, 4, 8}));
  std::mt19937_64 rng(1);
  for (int i = 0; i < 30; ++i) {
    ts::PidType p = *s.config(s.random_point(rng)).pid_type;
    EXPECT_TRUE(p == ts::PidType::persistent_blocked || p == ts::PidType::persistent_interleaved);
  }
}

TEST(AutotuneSpace, TwoDimLoopsTuneBothBlockSizes) {
  auto k = examples::make_add_2d();
  ts::Buffer x = ts::Buffer::empty({256, 64}, ts::f32);
  at::ConfigSpace s(graph_of(k, x, x), {}, "add_2d");
  EXPECT_EQ(knob(s, "block_sizes[0]").choices.back(), 256);
  EXPECT_EQ(knob(s, "block_sizes[1]").choices.back(), 64);
  EXPECT_EQ(knob(s, "pid_type").choices.size(), 4u);  // xyz allowed for 2 dims
}

TEST(AutotuneSpace, ForcedKeysHaveOneChoice) {
  auto add = examples::make_add();
  ts::Buffer x = ts::Buffer::empty({1 << 20}, ts::f32);
  ts::Config forced{.block_sizes = std::vector<int64_t>{256}, .num_warps = 8};
  at::ConfigSpace s(graph_of(add, x, x), forced, "add");
  EXPECT_EQ(knob(s, "block_sizes[0]").choices, (std::vector<int64_t>{256}));
  EXPECT_EQ(knob(s, "num_warps").choices, (std::vector<int64_t>{8}));
  for (const at::Point& p : s.neighbors(s.default_point())) {
    EXPECT_EQ(s.config(p).block_sizes->at(0), 256);
    EXPECT_EQ(*s.config(p).num_warps, 8);
  }
}

TEST(AutotuneSpace, InvalidForcedKeysAreAUserErrorNamingTheKernel) {
  auto add = examples::make_add();
  ts::Buffer x = ts::Buffer::empty({1 << 20}, ts::f32);
  try {
    at::ConfigSpace s(graph_of(add, x, x), ts::Config{.block_sizes = std::vector<int64_t>{100}},
                      "add");
    FAIL() << "expected a UserError";
  } catch (const ts::UserError& e) {
    EXPECT_EQ(e.kernel(), "add");
    EXPECT_NE(std::string(e.what()).find("is not a positive power of two"), std::string::npos)
        << e.what();
  }
}

TEST(AutotuneSpace, NeighborsMoveOneKnobOneStep) {
  auto add = examples::make_add();
  ts::Buffer x = ts::Buffer::empty({1 << 20}, ts::f32);
  at::ConfigSpace s(graph_of(add, x, x), {}, "add");
  const at::Point& d = s.default_point();  // block 1024, 4 warps, flat
  std::set<std::string> got;
  for (const at::Point& p : s.neighbors(d)) {
    int moved = 0;
    for (size_t i = 0; i < p.size(); ++i) moved += p[i] != d[i];
    EXPECT_EQ(moved, 1);
    got.insert(s.config(p).to_json());
  }
  // block 512 / 2048, warps 2 / 8, and the three other pid types (multiplier unset).
  EXPECT_EQ(got.size(), 7u);
  EXPECT_TRUE(got.count(R"({"block_sizes":[512],"num_stages":1,"num_warps":4,"pid_type":"flat"})"));
}

TEST(AutotuneSpace, NonPersistentPidTypesHaveNoMultiplier) {
  auto add = examples::make_add();
  ts::Buffer x = ts::Buffer::empty({1 << 20}, ts::f32);
  at::ConfigSpace s(graph_of(add, x, x), {}, "add");
  std::mt19937_64 rng(3);
  for (int i = 0; i < 100; ++i) {
    ts::Config c = s.config(s.random_point(rng));
    if (*c.pid_type == ts::PidType::flat || *c.pid_type == ts::PidType::xyz)
      EXPECT_FALSE(c.num_sm_multiplier.has_value());
  }
}

TEST(AutotuneSpace, TunablesAreUnorderedKnobs) {
  auto k = autotune_test::make_scaled();
  ts::Buffer x = ts::Buffer::empty({1000}, ts::f32);
  at::ConfigSpace s(graph_of(k, x), {}, "scaled");
  const at::Knob& t = knob(s, "tunables.scale");
  EXPECT_EQ(t.choices, (std::vector<int64_t>{1, 2, 4}));
  EXPECT_FALSE(t.ordered);
  EXPECT_EQ(s.config(s.default_point()).tunables->at("scale"), 1);
  at::ConfigSpace forced(graph_of(k, x),
                         ts::Config{.tunables = std::map<std::string, int64_t>{{"scale", 4}}},
                         "scaled");
  EXPECT_EQ(knob(forced, "tunables.scale").choices, (std::vector<int64_t>{4}));
}

}  // namespace

TEST(AutotuneSpace, LoadsTheTmaMayMoveGetIndexingKnobsOnTmaGpus) {
  // add: two loads (x, y) and a store. For a GPU with the TMA, each load is pointer or
  // tensor_descriptor (unordered); a config takes one entry per load and store, and the
  // store keeps pointer; points round-trip; the default leaves indexing unset.
  auto add = examples::make_add();
  ts::Buffer x = ts::Buffer::empty({1 << 20}, ts::f32), y = ts::Buffer::empty({1 << 20}, ts::f32);
  const ts::ir::Graph& g = graph_of(add, x, y);
  EXPECT_FALSE(has_knob(at::ConfigSpace(g, {}, "add"), "indexing[0]"));  // no TMA
  at::ConfigSpace s(g, {}, "add", /*gpu_arch=*/90);
  EXPECT_EQ(knob(s, "indexing[0]").choices, (std::vector<int64_t>{0, 1}));
  EXPECT_FALSE(knob(s, "indexing[1]").ordered);
  EXPECT_FALSE(has_knob(s, "indexing[2]"));  // the store
  EXPECT_FALSE(s.config(s.default_point()).indexing.has_value());
  ts::Config c = s.config(s.default_point());
  c.block_sizes = std::vector<int64_t>{256};  // a TMA box has at most 256 elements per dim
  c.indexing = std::vector<std::string>{"pointer", "tensor_descriptor", "pointer"};
  at::Point p = s.point(c);
  EXPECT_EQ(s.config(p).indexing, c.indexing);
  EXPECT_TRUE(s.valid(p));
  // One entry for every op reads as that entry for each load.
  c.indexing = std::vector<std::string>{"tensor_descriptor"};
  EXPECT_EQ(s.config(s.point(c)).indexing,
            (std::vector<std::string>{"tensor_descriptor", "tensor_descriptor", "pointer"}));
  // The tuned config compiles with its TMA load (NVRTC, sm_90).
  auto tuned = examples::make_add(ts::Settings{.config = s.config(p)});
  std::vector<std::string> cuda = tuned.cuda(true, x, y);
  ASSERT_EQ(cuda.size(), 1u);
  EXPECT_NE(cuda[0].find("ts::tma_load<1>(y_map"), std::string::npos) << cuda[0];
  EXPECT_EQ(cuda[0].find("ts::tma_load<1>(x_map"), std::string::npos) << cuda[0];
  // Forced indexing fixes every entry: no knobs.
  at::ConfigSpace forced(g, ts::Config{.indexing = std::vector<std::string>{"pointer"}}, "add",
                         true);
  EXPECT_FALSE(has_knob(forced, "indexing[0]"));
  EXPECT_EQ(forced.config(forced.default_point()).indexing, std::vector<std::string>{"pointer"});
}

TEST(AutotuneSpace, ADotsFactorsGetNoIndexingKnobButItsEpiloguesLoadsDo) {
  // matmul + bias + gelu: x and y are the dot's factors (wgmma copies them by TMA whatever
  // indexing says); the bias, read in the epilogue, is the only load with a knob.
  auto mm = examples::make_matmul_bias_gelu();
  ts::Buffer x = ts::Buffer::empty({512, 256}, ts::bf16),
             y = ts::Buffer::empty({256, 512}, ts::bf16), bias = ts::Buffer::empty({512}, ts::bf16);
  const ts::ir::Graph& g = graph_of(mm, x, y, bias);
  at::ConfigSpace s(g, {}, "matmul_bias_gelu", 90);
  int knobs = 0;
  for (const at::Knob& k : s.knobs()) knobs += k.kind == at::Knob::indexing;
  EXPECT_EQ(knobs, 1);
  ASSERT_EQ(g.num_loads, 3);
  EXPECT_TRUE(has_knob(s, "indexing[2]"));
}
