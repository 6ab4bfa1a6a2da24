// Tuning a kernel end to end on the CPU interpreter (CpuBackend standing in for the GPU):
// a wrong candidate is rejected and reported, the result is applied and cached, and
// tunables are tuned by tracing again.
#include <gtest/gtest.h>

#include <sstream>
#include <tessel/testing.hpp>

#include "autotune/accuracy.hpp"
#include "autotune/cpu_backend.hpp"
#include "autotune_test_util.hpp"
#include "examples/kernels/basic.hpp"

namespace ts = tessel;
namespace at = tessel::autotune;

namespace {

class AutotuneTuning : public autotune_test::CacheDirTest {};

/// TuneOptions measuring with a CpuBackend over the call's (CPU) arguments.
at::TuneOptions on_cpu(
    std::function<double(const ts::Config&)> cost,
    std::function<void(const ts::Config&, std::vector<ts::Buffer>&)> corrupt = {},
    int* backends_made = nullptr) {
  at::TuneOptions o;
  o.effort = ts::AutotuneEffort::quick;
  o.budget = at::Budget{20, 60};
  o.backend = [=](const at::CallToTune& call, const ts::Config& reference) {
    if (backends_made) ++*backends_made;
    at::CpuBackendOptions b;
    b.graph_for = call.graph_for;
    b.cost = cost;
    b.corrupt = corrupt;
    return std::make_unique<at::CpuBackend>(*call.graph, call.args, reference, call.kernel, b);
  };
  return o;
}

/// Faster with more warps: the search heads for 16.
double more_warps_faster(const ts::Config& c) { return 100.0 / *c.num_warps; }

template <class K, class... A>
at::TuneResult tune(const K& k, const at::TuneOptions& o, bool apply, const A&... args) {
  return ts::rt::tune_kernel(k.impl(), ts::detail::call_args(args...), o, apply);
}

TEST_F(AutotuneTuning, AWrongCandidateIsRejectedAndReported) {
  auto add = examples::make_add();
  ts::Buffer x = ts::Buffer::randn({1000}, ts::f32, ts::cpu(), 1);
  ts::Buffer y = ts::Buffer::randn({1000}, ts::f32, ts::cpu(), 2);
  // The fastest config (16 warps) computes a wrong element.
  auto corrupt = [](const ts::Config& c, std::vector<ts::Buffer>& outs) {
    if (*c.num_warps == 16) outs[0].narrow(0, 7, 1).fill(1e6);
  };
  at::TuneResult r = tune(add, on_cpu(more_warps_faster, corrupt), false, x, y);
  ASSERT_TRUE(r.best.has_value());
  EXPECT_EQ(*r.best->num_warps, 8);
  EXPECT_GE(r.rejected, 1);
  bool reported = false;
  for (const at::Trial& t : r.trials) {
    if (*t.config.num_warps != 16) continue;
    EXPECT_EQ(t.result.status, at::Measurement::rejected) << t.config.to_json();
    EXPECT_NE(t.result.reason.find("output 0 (f32[1000] cpu): 1 of 1000 elements differ"),
              std::string::npos)
        << t.result.reason;
    reported = true;
  }
  EXPECT_TRUE(reported);
}

TEST_F(AutotuneTuning, TheTunedConfigIsAppliedStoredAndFoundByASecondKernelObject) {
  ts::Buffer x = ts::Buffer::randn({64, 300}, ts::f32, ts::cpu(), 3);
  auto first = autotune_test::make_softmax();
  at::TuneResult r = tune(first, on_cpu(more_warps_faster), true, x);
  ASSERT_TRUE(r.best.has_value());
  EXPECT_FALSE(r.from_cache);
  EXPECT_EQ(*r.best->num_warps, 16);
  EXPECT_EQ(ts::rt::specialization_config(first.impl(), ts::detail::call_args(x)).num_warps, 16);
  ts::Buffer out = first(x);  // runs with the tuned config
  EXPECT_EQ(ts::count_mismatches(out, autotune_test::make_softmax()(x), 1e-6, 1e-6), 0);

  int backends = 0;
  auto second = autotune_test::make_softmax();
  at::TuneResult again = tune(second, on_cpu(more_warps_faster, {}, &backends), true, x);
  EXPECT_TRUE(again.from_cache);
  EXPECT_EQ(backends, 0);  // nothing measured
  EXPECT_EQ(*again.best, *r.best);
  EXPECT_EQ(ts::rt::specialization_config(second.impl(), ts::detail::call_args(x)).num_warps, 16);
}

TEST_F(AutotuneTuning, TunablesAreTunedByTracingAgain) {
  auto k = autotune_test::make_scaled();
  ts::Buffer x = ts::Buffer::randn({1000}, ts::f32, ts::cpu(), 4);
  auto cost = [](const ts::Config& c) {
    return c.tunables->at("scale") == 4 ? 1.0 : 2.0 + 1.0 / *c.num_warps;
  };
  at::TuneResult r = tune(k, on_cpu(cost), true, x);
  ASSERT_TRUE(r.best.has_value());
  EXPECT_EQ(r.best->tunables->at("scale"), 4);
  std::set<int64_t> tried;
  for (const at::Trial& t : r.trials)
    if (t.result.status == at::Measurement::ok) tried.insert(t.config.tunables->at("scale"));
  EXPECT_EQ(tried, (std::set<int64_t>{1, 2, 4}));
  // The specialization now holds the graph traced with scale = 4.
  std::string ir = ts::ir::print(ts::rt::traced_graph(k.impl(), ts::detail::call_args(x)));
  EXPECT_NE(ir.find("const 4"), std::string::npos) << ir;
  EXPECT_EQ(ts::count_mismatches(k(x), x, 1e-6, 1e-6), 0);
}

TEST_F(AutotuneTuning, AFailingDefaultConfigStopsTuning) {
  auto add = examples::make_add();
  ts::Buffer x = ts::Buffer::randn({100}, ts::f32);
  at::TuneOptions o = on_cpu(more_warps_faster);
  o.backend = [](const at::CallToTune& call, const ts::Config&) {
    at::CpuBackendOptions b;
    ts::Config broken{.block_sizes = std::vector<int64_t>{3}};  // not a power of two
    return std::make_unique<at::CpuBackend>(*call.graph, call.args, broken, call.kernel, b);
  };
  at::TuneResult r = tune(add, o, false, x, x);
  EXPECT_FALSE(r.best.has_value());
  EXPECT_NE(r.note.find("default config failed"), std::string::npos) << r.note;
}

TEST_F(AutotuneTuning, OverridesAreForcedInEveryCandidate) {
  auto add =
      examples::make_add(ts::Settings{.autotune_config_overrides = ts::Config{.num_warps = 2}});
  ts::Buffer x = ts::Buffer::randn({1000}, ts::f32);
  at::TuneResult r = tune(add, on_cpu(more_warps_faster), false, x, x);
  ASSERT_FALSE(r.trials.empty());
  for (const at::Trial& t : r.trials) EXPECT_EQ(*t.config.num_warps, 2);
}

TEST(AutotuneAccuracy, TolerancesPerDtype) {
  EXPECT_EQ(at::tolerance_for(ts::f32).atol, 1e-4);
  EXPECT_EQ(at::tolerance_for(ts::f32).rtol, 1e-4);
  EXPECT_EQ(at::tolerance_for(ts::bf16).atol, 1e-2);
  EXPECT_EQ(at::tolerance_for(ts::f16).rtol, 1e-2);
  EXPECT_EQ(at::tolerance_for(ts::i32).atol, 0);
  EXPECT_EQ(at::tolerance_for(ts::boolean).rtol, 0);
}

TEST(AutotuneAccuracy, CompareOutputsNamesTheFirstMismatch) {
  ts::Buffer a = ts::Buffer::from_vector({1, 2, 3}, {3}, ts::i32);
  ts::Buffer b = ts::Buffer::from_vector({1, 2, 4}, {3}, ts::i32);
  ts::Buffer f = ts::Buffer::from_vector({1.0, 2.0}, {2}, ts::f32);
  ts::Buffer g = ts::Buffer::from_vector({1.00001, 2.0}, {2}, ts::f32);
  EXPECT_EQ(at::compare_outputs({f, a}, {g, a}), "");
  EXPECT_EQ(
      at::compare_outputs({f, a}, {f, b}),
      "output 1 (i32[3] cpu): 1 of 3 elements differ by more than atol 0 + rtol 0 * |expected|");
}

TEST(AutotuneProgress, QuietWhenNotATerminalButPrintsTheResultLine) {
  std::ostringstream out;
  at::Progress p("softmax", out, /*live=*/false);
  p.update(3, 1, 0, 12.5, /*force=*/true);
  EXPECT_EQ(out.str(), "");
  ts::Config best{.block_sizes = std::vector<int64_t>{1}, .num_warps = 8};
  p.finish(&best, 12.5, 40, 2, 1);
  std::string line = out.str();
  EXPECT_EQ(
      line.find("[tessel] autotuned 'softmax': ts::Config{.block_sizes = std::vector<int64_t>{1}, "
                ".num_warps = 8} (12.5 us, 40 configs (2 failed, 1 rejected) in "),
      0u)
      << line;
  EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1);
}

TEST(AutotuneProgress, LiveOnATerminalRedrawsOneLine) {
  std::ostringstream out;
  at::Progress p("add", out, /*live=*/true);
  p.update(3, 1, 0, 12.5, true);
  p.update(4, 1, 0, 11.0, true);
  std::string s = out.str();
  EXPECT_NE(
      s.find("\r\033[K[tessel] autotuning 'add': 4 configs, 1 failed, 0 rejected, best 11.0 us"),
      std::string::npos)
      << s;
  EXPECT_EQ(s.find('\n'), std::string::npos);
}

TEST(AutotuneProgress, DefaultsToLiveOnlyWhenStderrIsATerminal) {
  EXPECT_EQ(at::Progress("k").live(), ::isatty(2) == 1);
}

}  // namespace
