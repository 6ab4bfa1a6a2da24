// Config::load_eviction_policies: one L2 eviction priority per load, in trace order.
// The generated CUDA passes each load's policy to ts::ld / ts::ld_vec (scalar, element and
// vector loads of 1- to 16-byte accesses) and compiles with NVRTC for sm_90 (no GPU
// needed); copies of a load made by a looped reduction keep its policy; a wrong number of
// entries names the kernel's first loop; the interpreter's values do not depend on the
// policies. (GPU results: KernelsGpu.EvictionPoliciesKeepValues.)
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <string>
#include <tessel/tessel.hpp>
#include <tessel/testing.hpp>

#include "autotune_test_util.hpp"
#include "examples/kernels/norms.hpp"
#include "nvrtc_test_util.hpp"
#include "passes/default_config.hpp"
#include "passes/roll_reductions.hpp"
#include "tests/eviction_kernels.hpp"
#include "user_error_util.hpp"

namespace ts = tessel;

namespace {

using nvrtc_test::compile;
using nvrtc_test::count;
using user_error_test::user_error;
using E = ts::EvictionPolicy;

/// The policies of the generated loads, in source order: "" (none), "first" or "last".
std::vector<std::string> load_policies(const std::string& src) {
  static const std::regex re(R"(ts::ld(_vec<[^(]*?)?(<ts::Evict::(\w+)>)?\()");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(src.begin(), src.end(), re); it != std::sregex_iterator();
       ++it) {
    std::string whole = (*it)[0];
    static const std::regex pol(R"(ts::Evict::(\w+))");
    std::smatch m;
    out.push_back(std::regex_search(whole, m, pol) ? m[1].str() : "");
  }
  return out;
}

TEST(Eviction, OnlineSoftmaxPassesGetTheirOwnPolicies) {
  REQUIRE_NVRTC();
  // Two loads of x: the first loop's (kept in L2 for the second) and the second loop's.
  ts::Config c{.block_sizes = std::vector<int64_t>{1, 2048},
               .num_warps = 8,
               .load_eviction_policies = std::vector<E>{E::last, E::first}};
  std::string src = compile(examples::make_softmax_two_pass({.config = c}),
                            ts::Buffer::zeros({4, 10000}, ts::bf16));
  EXPECT_EQ(load_policies(src), (std::vector<std::string>{"last", "first"})) << src;
  // Pipelined (num_stages 2): the early loads (before each loop and inside it) keep them.
  c.num_stages = 2;
  src = compile(examples::make_softmax_two_pass({.config = c}),
                ts::Buffer::zeros({4, 10000}, ts::bf16));
  EXPECT_EQ(load_policies(src), (std::vector<std::string>{"last", "last", "first", "first"}))
      << src;
  c.load_eviction_policies.reset();
  src = compile(examples::make_softmax_two_pass({.config = c}),
                ts::Buffer::zeros({4, 10000}, ts::bf16));
  EXPECT_EQ(count(src, "ts::Evict"), 0) << src;
  EXPECT_EQ(count(src, "createpolicy"), 0) << src;
}

TEST(Eviction, PoliciesFollowSourceOrderNotEvaluationOrder) {
  // x(t) * y(t): C++ may evaluate y(t) first; entry 0 is x's read all the same.
  auto k = ts::kernel(
      "mul",
      [](ts::Tensor x, ts::Tensor y) {
        ts::Tensor out = ts::empty_like(x);
        for (auto t : ts::tile(x.size(0))) out(t) = x(t) * y(t);
        return out;
      },
      ts::Settings{.config =
                       ts::Config{.load_eviction_policies = std::vector<E>{E::first, E::last}}});
  ts::Buffer x = ts::Buffer::zeros({1000}, ts::f32);
  std::string src;
  for (const std::string& s : k.cuda(false, x, x)) src += s;
  static const std::regex re(R"(ts::Evict::(\w+)>\((arg\d))");
  std::map<std::string, std::string> policy_of;
  for (auto it = std::sregex_iterator(src.begin(), src.end(), re); it != std::sregex_iterator();
       ++it)
    policy_of[(*it)[2]] = (*it)[1];
  EXPECT_EQ(policy_of, (std::map<std::string, std::string>{{"arg0", "first"}, {"arg1", "last"}}))
      << src;
}

TEST(Eviction, AnOutOfRangeValueIsAnError) {
  ts::Config c{.load_eviction_policies = std::vector<E>{static_cast<E>(7)}};
  std::string msg = user_error([&] { (void)c.to_json(); });
  EXPECT_NE(msg.find("EvictionPolicy value 7 is not one of none, first, last"), std::string::npos)
      << msg;
  auto k = examples::make_softmax({.config = c});
  msg = user_error([&] { k(ts::Buffer::zeros({4, 100}, ts::f32)); });
  EXPECT_NE(msg.find("load eviction policy value 7"), std::string::npos) << msg;
}

TEST(Eviction, EveryAccessWidthCompiles) {
  REQUIRE_NVRTC();
  // Loads of bool, f16, f32 and i64 (element loads: a gather, a scalar) and vector
  // loads, each with a policy.
  for (E p : {E::first, E::last}) {
    ts::Config c{.block_sizes = std::vector<int64_t>{64, 64, 64},
                 .load_eviction_policies = std::vector<E>(eviction_test::kLoads, p)};
    ts::Buffer m = ts::Buffer::zeros({100}, ts::boolean);
    ts::Buffer h = ts::Buffer::zeros({100}, ts::f16), x = ts::Buffer::zeros({100}, ts::f32);
    ts::Buffer idx = ts::Buffer::zeros({100}, ts::i64);
    std::string src = compile(eviction_test::make_mixed_loads({.config = c}), m, h, x, idx);
    std::string name = p == E::first ? "first" : "last";
    EXPECT_EQ(load_policies(src), std::vector<std::string>(eviction_test::kLoads, name)) << src;
  }
}

TEST(Eviction, LoopedReductionCopiesKeepTheLoadsPolicy) {
  REQUIRE_NVRTC();
  // softmax's one load of x, rolled into chunks of 1024: the max loop, the sum loop and the
  // output loop each load x with the policy.
  ts::Config c{.block_sizes = std::vector<int64_t>{1},
               .num_warps = 4,
               .reduction_loops = std::vector<std::optional<int64_t>>{1024},
               .load_eviction_policies = std::vector<E>{E::last}};
  std::string src =
      compile(examples::make_softmax({.config = c}), ts::Buffer::zeros({4, 5000}, ts::f32));
  std::vector<std::string> got = load_policies(src);
  ASSERT_GE(got.size(), 2u) << src;
  for (const std::string& p : got) EXPECT_EQ(p, "last") << src;
}

TEST(Eviction, LoweredProgramsKeepTheLoadCount) {
  // The autotuner completes a candidate's config on the program lowered for it (a rolled
  // reduction is a new graph): that graph still has the kernel's one load.
  auto softmax = examples::make_softmax();
  const ts::ir::Graph& g = autotune_test::graph_of(softmax, ts::Buffer::zeros({4, 5000}, ts::f32));
  ts::Config c{.block_sizes = std::vector<int64_t>{1},
               .reduction_loops = std::vector<std::optional<int64_t>>{1024},
               .load_eviction_policies = std::vector<E>{E::last}};
  std::unique_ptr<ts::ir::Graph> lowered =
      ts::passes::roll_reductions(g, ts::passes::complete_config(g, c, "softmax"));
  ASSERT_TRUE(lowered);
  EXPECT_EQ(lowered->num_loads, 1);
  EXPECT_EQ(ts::passes::complete_config(*lowered, c, "softmax").load_eviction_policies,
            c.load_eviction_policies);
}

TEST(Eviction, WrongNumberOfPoliciesNamesTheFirstLoop) {
  ts::Config c{.load_eviction_policies = std::vector<E>{E::first}};
  auto k = examples::make_softmax_two_pass({.config = c});
  std::string msg = user_error([&] { k(ts::Buffer::zeros({4, 100}, ts::f32)); });
  EXPECT_NE(msg.find("softmax_two_pass"), std::string::npos) << msg;
  EXPECT_NE(msg.find("norms.hpp:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("config: 1 load eviction policy given, the kernel has 2 loads"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("one entry"), std::string::npos) << msg;
}

TEST(Eviction, JsonSpellsPoliciesAsHelionDoes) {
  ts::Config c{.load_eviction_policies = std::vector<E>{E::none, E::first, E::last}};
  EXPECT_EQ(c.to_json(), R"({"load_eviction_policies":["","first","last"]})");
  EXPECT_EQ(ts::Config::from_json(c.to_json()), c);
  EXPECT_EQ(c.to_cpp(),
            "ts::Config{.load_eviction_policies = "
            "std::vector<ts::EvictionPolicy>{ts::EvictionPolicy::none, "
            "ts::EvictionPolicy::first, ts::EvictionPolicy::last}}");
  std::string msg =
      user_error([] { ts::Config::from_json(R"({"load_eviction_policies":["evict_last"]})"); });
  EXPECT_NE(msg.find("unknown load eviction policy 'evict_last'"), std::string::npos) << msg;
  msg = user_error([] { ts::Config::from_json(R"({"load_eviction_policies":[null]})"); });
  EXPECT_NE(msg.find("config key 'load_eviction_policies' has a value of the wrong type"),
            std::string::npos)
      << msg;
}

TEST(Eviction, InterpreterValuesIgnoreThePolicies) {
  ts::Buffer x = ts::Buffer::randn({5, 3000}, ts::f32, ts::cpu(), 7);
  ts::Config c{.block_sizes = std::vector<int64_t>{1, 512}, .num_warps = 4};
  std::vector<double> plain = examples::make_softmax_two_pass({.config = c})(x).to_vector();
  c.load_eviction_policies = std::vector<E>{E::last, E::first};
  EXPECT_EQ(examples::make_softmax_two_pass({.config = c})(x).to_vector(), plain);
}

}  // namespace
