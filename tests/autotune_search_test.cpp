// The searches on a synthetic cost function over real config spaces: the default
// pattern search finds the optimum within its budget; random and list searches respect
// their budgets; failures score infinity; no config is measured twice.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "autotune/autotuner.hpp"
#include "autotune/search.hpp"
#include "autotune_test_util.hpp"
#include "examples/kernels/basic.hpp"

namespace ts = tessel;
namespace at = tessel::autotune;
using autotune_test::graph_of;

namespace {

/// A backend whose time is a function of the config; records what it measured.
class Synthetic : public at::Backend {
 public:
  explicit Synthetic(std::function<double(const ts::Config&)> cost) : cost_(std::move(cost)) {}
  std::vector<at::Measurement> measure(const std::vector<ts::Config>& configs,
                                       const Done& done) override {
    std::vector<at::Measurement> out;
    for (size_t i = 0; i < configs.size(); ++i) {
      measured.push_back(configs[i].to_json());
      double t = cost_(configs[i]);
      out.push_back(std::isfinite(t) ? at::Measurement::success(t)
                                     : at::Measurement::failure("synthetic failure"));
      done(i, out.back());
    }
    ++batches;
    return out;
  }
  std::vector<std::string> measured;
  int batches = 0;

 private:
  std::function<double(const ts::Config&)> cost_;
};

double lg(double v) { return std::log2(v); }

/// Convex in log2 of each knob, with its minimum at (rows, cols, warps, pid, multiplier).
std::function<double(const ts::Config&)> bowl(int64_t rows, int64_t cols, int warps,
                                              ts::PidType pid, int mult) {
  return [=](const ts::Config& c) {
    double d = std::pow(lg(c.block_sizes->at(0)) - lg(rows), 2) +
               std::pow(lg(c.block_sizes->at(1)) - lg(cols), 2) +
               std::pow(lg(*c.num_warps) - lg(warps), 2) + (*c.pid_type == pid ? 0 : 1.5) +
               std::pow(lg(*c.num_sm_multiplier) - lg(mult), 2);
    return 10 + d;
  };
}

struct Add2d {
  decltype(examples::make_add_2d()) kernel = examples::make_add_2d();
  ts::Buffer x = ts::Buffer::empty({4096, 4096}, ts::f32);
  const ts::ir::Graph& graph() { return graph_of(kernel, x, x); }
};

TEST(AutotuneSearch, PatternSearchFindsTheOptimumOfABowlWithinTheQuickBudget) {
  Add2d k;
  at::ConfigSpace space(k.graph(), {}, "add_2d");
  // The default is blocks (4, 1024), 4 warps, flat; the optimum is 2-3 steps away per knob.
  ts::Config def = space.config(space.default_point());
  ASSERT_EQ(*def.block_sizes, (std::vector<int64_t>{4, 1024}));
  Synthetic backend(bowl(16, 256, 8, ts::PidType::persistent_blocked, 2));
  at::TuneOptions o;
  o.effort = ts::AutotuneEffort::quick;
  at::TuneResult r = at::tune(space, backend, o, nullptr);
  ASSERT_TRUE(r.best.has_value());
  EXPECT_EQ(r.best_us, 10.0) << r.best->to_json();
  EXPECT_EQ(*r.best->block_sizes, (std::vector<int64_t>{16, 256}));
  EXPECT_EQ(*r.best->num_warps, 8);
  EXPECT_EQ(*r.best->pid_type, ts::PidType::persistent_blocked);
  EXPECT_EQ(*r.best->num_sm_multiplier, 2);
  EXPECT_LE(r.trials.size(), 40u);
}

TEST(AutotuneSearch, FullEffortReachesAFarOptimum) {
  Add2d k;
  at::ConfigSpace space(k.graph(), {}, "add_2d");
  Synthetic backend(bowl(256, 16, 1, ts::PidType::xyz, 1));
  at::TuneOptions o;
  o.effort = ts::AutotuneEffort::full;
  at::TuneResult r = at::tune(space, backend, o, nullptr);
  ASSERT_TRUE(r.best.has_value());
  EXPECT_EQ(r.best_us, 10.0) << r.best->to_json();
  EXPECT_LE(r.trials.size(), 400u);
}

TEST(AutotuneSearch, NoConfigIsMeasuredTwice) {
  Add2d k;
  at::ConfigSpace space(k.graph(), {}, "add_2d");
  Synthetic backend(bowl(64, 64, 4, ts::PidType::flat, 1));
  at::TuneOptions o;
  o.effort = ts::AutotuneEffort::full;
  at::tune(space, backend, o, nullptr);
  std::set<std::string> unique(backend.measured.begin(), backend.measured.end());
  EXPECT_EQ(unique.size(), backend.measured.size());
}

TEST(AutotuneSearch, FailedConfigsScoreInfinityAndAreNotChosen) {
  Add2d k;
  at::ConfigSpace space(k.graph(), {}, "add_2d");
  auto base = bowl(16, 256, 8, ts::PidType::flat, 1);
  // The optimum's warps fail: the best working config has 4 or 16 warps.
  Synthetic backend([&](const ts::Config& c) {
    return *c.num_warps == 8 ? std::numeric_limits<double>::infinity() : base(c);
  });
  at::TuneResult r = at::tune(space, backend, at::TuneOptions{}, nullptr);
  ASSERT_TRUE(r.best.has_value());
  EXPECT_NE(*r.best->num_warps, 8);
  EXPECT_GT(r.failed, 0);
  for (const at::Trial& t : r.trials)
    if (*t.config.num_warps == 8) {
      EXPECT_EQ(t.result.status, at::Measurement::failed);
      EXPECT_EQ(t.result.reason, "synthetic failure");
    }
}

TEST(AutotuneSearch, RandomSearchRespectsItsBudget) {
  Add2d k;
  at::ConfigSpace space(k.graph(), {}, "add_2d");
  Synthetic backend(bowl(16, 256, 8, ts::PidType::flat, 1));
  at::TuneOptions o;
  o.search = at::SearchKind::random;
  o.budget = at::Budget{25, 60};
  o.seed = 5;
  at::TuneResult r = at::tune(space, backend, o, nullptr);
  EXPECT_EQ(r.trials.size(), 25u);
  EXPECT_EQ(backend.measured.size(), 25u);
  for (const at::Trial& t : r.trials)
    EXPECT_TRUE(space.valid(space.point(t.config))) << t.config.to_json();
}

TEST(AutotuneSearch, ListSearchMeasuresTheListInOrderWithinItsBudget) {
  Add2d k;
  at::ConfigSpace space(k.graph(), {}, "add_2d");
  Synthetic backend([](const ts::Config& c) { return static_cast<double>(*c.num_warps); });
  std::vector<ts::Config> list;
  for (int w : {16, 8, 4, 8, 2, 1})
    list.push_back(ts::Config{.block_sizes = std::vector<int64_t>{8, 512}, .num_warps = w});
  at::TuneOptions o;
  o.search = at::SearchKind::list;
  o.list = list;
  o.budget = at::Budget{4, 60};
  at::TuneResult r = at::tune(space, backend, o, nullptr);
  ASSERT_EQ(r.trials.size(), 4u);  // the repeated 8 is measured once
  std::vector<int> warps;
  for (const at::Trial& t : r.trials) warps.push_back(*t.config.num_warps);
  EXPECT_EQ(warps, (std::vector<int>{16, 8, 4, 2}));
  EXPECT_EQ(*r.best->num_warps, 2);
}

TEST(AutotuneSearch, AZeroTimeBudgetMeasuresNothing) {
  Add2d k;
  at::ConfigSpace space(k.graph(), {}, "add_2d");
  Synthetic backend(bowl(16, 256, 8, ts::PidType::flat, 1));
  at::TuneOptions o;
  o.budget = at::Budget{40, 0};
  at::TuneResult r = at::tune(space, backend, o, nullptr);
  EXPECT_TRUE(r.trials.empty());
  EXPECT_FALSE(r.best.has_value());
}

TEST(AutotuneSearch, CandidatesArriveInBatches) {
  Add2d k;
  at::ConfigSpace space(k.graph(), {}, "add_2d");
  Synthetic backend(bowl(16, 256, 8, ts::PidType::persistent_blocked, 2));
  at::tune(space, backend, at::TuneOptions{}, nullptr);
  // Seeds, then one batch of neighbours and one of accelerated moves per round: far
  // fewer batches than configs, so compilations overlap.
  EXPECT_LT(backend.batches * 3, static_cast<int>(backend.measured.size()));
}

}  // namespace
