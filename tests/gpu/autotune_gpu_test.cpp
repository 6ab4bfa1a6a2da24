// The autotuner on a GPU: tuned kernels are correct (against a plain host reference),
// tune once per specialization, are found in the disk cache by a second Kernel object
// with no NVRTC call, and candidates that fault, hang, fail to load or compute wrong
// values are skipped with a reason while the test process carries on.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <tessel/testing.hpp>

#include "autotune/gpu_backend.hpp"
#include "driver/cuda_api.hpp"
#include "examples/kernels/basic.hpp"
#include "gpu_test_util.hpp"
#include "tests/autotune_test_util.hpp"

namespace ts = tessel;
namespace at = tessel::autotune;

namespace {

class AutotuneGpu : public autotune_test::CacheDirTest {};

const ts::Settings kQuick{.autotune_effort = ts::AutotuneEffort::quick};

ts::Buffer host_add(const ts::Buffer& x, const ts::Buffer& y) {
  std::vector<double> a = x.to_vector(), b = y.to_vector();
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = static_cast<float>(static_cast<float>(a[i]) + static_cast<float>(b[i]));
  return ts::Buffer::from_vector(a, x.shape(), ts::f32);
}

ts::Buffer host_softmax(const ts::Buffer& x) {
  std::vector<double> v = x.to_vector();
  int64_t rows = x.size(0), cols = x.size(1);
  for (int64_t r = 0; r < rows; ++r) {
    double* row = v.data() + r * cols;
    double m = -INFINITY, s = 0;
    for (int64_t c = 0; c < cols; ++c) m = std::max(m, row[c]);
    for (int64_t c = 0; c < cols; ++c) s += row[c] = std::exp(row[c] - m);
    for (int64_t c = 0; c < cols; ++c) row[c] /= s;
  }
  return ts::Buffer::from_vector(v, x.shape(), ts::f32);
}

TEST_F(AutotuneGpu, AddQuickIsCorrectTunesOnceAndIsCachedOnDisk) {
  TESSEL_REQUIRE_GPU();
  ts::Buffer x = ts::Buffer::randn({1 << 22}, ts::f32, ts::cuda(0), 1);
  ts::Buffer y = ts::Buffer::randn({1 << 22}, ts::f32, ts::cuda(0), 2);
  ts::Buffer want = host_add(x, y);
  auto add = examples::make_add(kQuick);
  int64_t tunes = at::tune_count();
  ts::Buffer out = add(x, y);
  EXPECT_EQ(at::tune_count(), tunes + 1);
  EXPECT_EQ(ts::count_mismatches(out.to(ts::cpu()), want, 0, 0), 0);

  int64_t compiles = ts::rt::compile_count();
  ts::Buffer again = add(x, y);
  EXPECT_EQ(at::tune_count(), tunes + 1);  // the second call does not tune
  EXPECT_EQ(ts::rt::compile_count(), compiles);
  EXPECT_EQ(ts::count_mismatches(again.to(ts::cpu()), want, 0, 0), 0);

  auto second = examples::make_add(kQuick);  // same code, a new Kernel object
  ts::Buffer third = second(x, y);
  EXPECT_EQ(at::tune_count(), tunes + 1);        // the tuned config came from the disk cache
  EXPECT_EQ(ts::rt::compile_count(), compiles);  // and the cubin too: no NVRTC call
  EXPECT_EQ(ts::count_mismatches(third.to(ts::cpu()), want, 0, 0), 0);
}

TEST_F(AutotuneGpu, Softmax4096QuickIsCorrectAndCached) {
  TESSEL_REQUIRE_GPU();
  ts::Buffer x = ts::Buffer::randn({4096, 4096}, ts::f32, ts::cuda(0), 3);
  ts::Buffer want = host_softmax(x);
  auto softmax = autotune_test::make_softmax(kQuick);
  int64_t tunes = at::tune_count();
  ts::Buffer out = softmax(x);
  EXPECT_EQ(at::tune_count(), tunes + 1);
  EXPECT_EQ(ts::count_mismatches(out.to(ts::cpu()), want, 1e-7, 1e-4), 0);

  int64_t compiles = ts::rt::compile_count();
  softmax(x);
  auto second = autotune_test::make_softmax(kQuick);
  ts::Buffer again = second(x);
  EXPECT_EQ(at::tune_count(), tunes + 1);
  EXPECT_EQ(ts::rt::compile_count(), compiles);
  EXPECT_EQ(ts::count_mismatches(again.to(ts::cpu()), want, 1e-7, 1e-4), 0);
}

TEST_F(AutotuneGpu, KernelAutotuneReturnsTheConfigItUses) {
  TESSEL_REQUIRE_GPU();
  ts::Buffer x = ts::Buffer::randn({1 << 20}, ts::f32, ts::cuda(0), 4);
  auto add = examples::make_add();  // effort unset: only an explicit autotune() tunes
  ts::Config best = add.autotune(x, x);
  ASSERT_TRUE(best.block_sizes.has_value());
  ASSERT_TRUE(best.num_warps.has_value());
  int64_t tunes = at::tune_count();
  ts::Buffer out = add(x, x);
  EXPECT_EQ(at::tune_count(), tunes);
  EXPECT_EQ(ts::count_mismatches(out.to(ts::cpu()), host_add(x, x), 0, 0), 0);
}

// A candidate swapped for a hand-written kernel of the same name.
std::string cubin_for(const std::string& name, const std::string& body) {
  ts::rt::CompileOptions opts;
  opts.arch = ts::rt::compute_capability(0);
  return ts::rt::compile_cuda("extern \"C\" __global__ void " + name + "() { " + body + " }\n",
                              name + ".cu", opts);
}

TEST_F(AutotuneGpu, FaultingHangingAndUnloadableCandidatesAreSkipped) {
  TESSEL_REQUIRE_GPU();
  ::setenv("TESSEL_AUTOTUNE_TIMEOUT", "3", 1);
  ts::Buffer x = ts::Buffer::randn({1 << 20}, ts::f32, ts::cuda(0), 5);
  auto add = examples::make_add();
  at::TuneOptions o;
  o.search = at::SearchKind::list;
  for (int w : {4, 1, 2, 16, 8}) o.list.push_back(ts::Config{.num_warps = w});
  o.use_cache = false;
  o.backend = [](const at::CallToTune& call, const ts::Config& reference) {
    at::GpuBackendOptions g;
    g.graph_for = call.graph_for;
    g.tamper = [](at::BuiltCandidate& c) {
      const std::string& name = c.kernels.at(0).second.name;
      int w = *c.config.num_warps;
      if (w == 1) c.cubins[0] = cubin_for(name, "*(volatile int*)16 = 1;");    // illegal address
      if (w == 2) c.cubins[0] = cubin_for(name, "while (clock64() >= 0) {}");  // hangs
      if (w == 16) c.cubins[0] = "this is not a cubin";                        // cannot load
    };
    return std::make_unique<at::GpuBackend>(*call.graph, call.args, call.settings, reference,
                                            call.kernel, g);
  };
  at::TuneResult r = ts::rt::tune_kernel(add.impl(), ts::detail::call_args(x, x), o);
  ::unsetenv("TESSEL_AUTOTUNE_TIMEOUT");
  ASSERT_EQ(r.trials.size(), 5u);
  auto trial = [&](int w) -> const at::Trial& {
    for (const at::Trial& t : r.trials)
      if (*t.config.num_warps == w) return t;
    throw std::runtime_error("no trial");
  };
  EXPECT_EQ(trial(1).result.status, at::Measurement::failed);
  EXPECT_NE(trial(1).result.reason.find("ILLEGAL_ADDRESS"), std::string::npos)
      << trial(1).result.reason;
  EXPECT_EQ(trial(2).result.status, at::Measurement::failed);
  EXPECT_NE(trial(2).result.reason.find("timed out after 3 s"), std::string::npos)
      << trial(2).result.reason;
  EXPECT_EQ(trial(16).result.status, at::Measurement::failed);
  EXPECT_NE(trial(16).result.reason.find("cuModuleLoadData"), std::string::npos)
      << trial(16).result.reason;
  // Candidates after each failure ran in a new worker.
  EXPECT_EQ(trial(4).result.status, at::Measurement::ok);
  EXPECT_EQ(trial(8).result.status, at::Measurement::ok);
  ASSERT_TRUE(r.best.has_value());
  EXPECT_TRUE(*r.best->num_warps == 4 || *r.best->num_warps == 8);
  // This process and its CUDA context are fine.
  EXPECT_EQ(ts::count_mismatches(add(x, x).to(ts::cpu()), host_add(x, x), 0, 0), 0);
}

TEST_F(AutotuneGpu, AWrongTunableChoiceIsRejected) {
  TESSEL_REQUIRE_GPU();
  auto k = ts::kernel("biased", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) + ts::register_tunable("bias", {0, 1});
    return out;
  });
  ts::Buffer x = ts::Buffer::randn({1 << 20}, ts::f32, ts::cuda(0), 6);
  at::TuneOptions o;
  o.use_cache = false;
  at::TuneResult r = ts::rt::tune_kernel(k.impl(), ts::detail::call_args(x), o);
  ASSERT_TRUE(r.best.has_value());
  EXPECT_EQ(r.best->tunables->at("bias"), 0);
  int rejected = 0;
  for (const at::Trial& t : r.trials)
    if (t.config.tunables->at("bias") == 1) {
      EXPECT_EQ(t.result.status, at::Measurement::rejected);
      EXPECT_NE(t.result.reason.find("elements differ"), std::string::npos) << t.result.reason;
      ++rejected;
    }
  EXPECT_GE(rejected, 1);
}

}  // namespace
