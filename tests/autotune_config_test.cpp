// Configs as values: JSON and C++ round trips, and user tunables (ts::register_tunable).
#include <gtest/gtest.h>

#include <random>
#include <tessel/tessel.hpp>
#include <tessel/testing.hpp>

#include "autotune_test_util.hpp"

namespace ts = tessel;

namespace {

ts::Config random_config(std::mt19937_64& rng) {
  auto coin = [&] { return rng() % 2 == 0; };
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  ts::Config c;
  if (coin()) {
    std::vector<int64_t> b(pick(4));
    for (int64_t& v : b) v = int64_t{1} << pick(14);
    c.block_sizes = b;
  }
  if (coin()) c.num_warps = 1 << pick(6);
  if (coin()) c.num_stages = 1 + pick(4);
  if (coin()) c.maxnreg = 24 + 8 * pick(30);
  if (coin()) c.pid_type = static_cast<ts::PidType>(pick(4));
  if (coin()) c.num_sm_multiplier = 1 << pick(4);
  if (coin()) c.loop_orders = std::vector<std::vector<int>>{{1, 0}, {0}};
  if (coin()) c.flatten_loops = std::vector<bool>{true, false};
  if (coin()) c.l2_groupings = std::vector<int>{1, 8};
  if (coin()) {
    std::vector<std::optional<int64_t>> r(pick(3));
    for (auto& v : r)
      if (coin()) v = int64_t{16} << pick(6);
    c.reduction_loops = r;
  }
  if (coin()) c.indexing = std::vector<std::string>{"pointer"};
  if (coin()) {
    std::vector<ts::EvictionPolicy> e(pick(4));
    for (auto& v : e) v = static_cast<ts::EvictionPolicy>(pick(3));
    c.load_eviction_policies = e;
  }
  if (coin()) {
    std::map<std::string, int64_t> t;
    for (int i = pick(3); i > 0; --i) t["t" + std::to_string(pick(10))] = pick(100) - 50;
    c.tunables = t;
  }
  return c;
}

TEST(AutotuneConfig, RandomConfigsRoundTripThroughJson) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 500; ++i) {
    ts::Config c = random_config(rng);
    std::string text = c.to_json();
    EXPECT_EQ(ts::Config::from_json(text), c) << text;
    EXPECT_EQ(ts::Config::from_json(text).to_json(), text);
  }
}

TEST(AutotuneConfig, TunablesPrintAsJsonAndAsAPasteableInitializer) {
  ts::Config c{.block_sizes = std::vector<int64_t>{64},
               .num_warps = 8,
               .tunables = std::map<std::string, int64_t>{{"scale", 2}, {"unroll", 4}}};
  EXPECT_EQ(c.to_json(), R"({"block_sizes":[64],"num_warps":8,"tunables":{"scale":2,"unroll":4}})");
  EXPECT_EQ(c.to_cpp(),
            R"(ts::Config{.block_sizes = std::vector<int64_t>{64}, .num_warps = 8, )"
            R"(.tunables = std::map<std::string, int64_t>{{"scale", 2}, {"unroll", 4}}})");
  // The printed initializer, pasted:
  ts::Config pasted =
      ts::Config{.block_sizes = std::vector<int64_t>{64},
                 .num_warps = 8,
                 .tunables = std::map<std::string, int64_t>{{"scale", 2}, {"unroll", 4}}};
  EXPECT_EQ(pasted, c);
}

TEST(AutotuneConfig, UnknownKeyIsAUserError) {
  EXPECT_THROW(ts::Config::from_json(R"({"tunable":{"a":1}})"), ts::UserError);
  EXPECT_THROW(ts::Config::from_json(R"({"tunables":{"a":"x"}})"), ts::UserError);
  EXPECT_THROW(ts::Config::from_json(R"({"tunables":{"a":1.5}})"),
               ts::UserError);  // not truncated to 1
  EXPECT_THROW(ts::Config::from_json(R"({"tunables":[1]})"), ts::UserError);
  EXPECT_THROW(ts::Config::from_json(R"({"num_warps":4,"num_warps":8})"),
               ts::UserError);  // not "last wins"
  EXPECT_THROW(ts::Config::from_json(R"({"tunables":{"a":1,"a":2}})"), ts::UserError);
  EXPECT_EQ(ts::Config::from_json(R"({"tunables":{"a":-3}})").tunables->at("a"), -3);
}

// Config::from_json's errors name the caller's line (a config read from a file).
TEST(AutotuneConfig, FromJsonErrorsNameTheCallersLine) {
  for (const char* text :
       {R"({"num_warps":"4"})", R"({"pid_type":"diagonal"})", "{oops",
        R"({"load_eviction_policies":["never"]})", R"({"num_warp":4})",
        // integers are integers in range, lists are lists: nothing truncated or wrapped
        R"({"l2_groupings":[4.5]})", R"({"l2_groupings":[4294967304]})",
        R"({"l2_groupings":[1e10]})", R"({"loop_orders":[[0,1.5]]})",
        R"({"loop_orders":[[0,4294967297]]})", R"({"reduction_loops":5})"}) {
    const int line = __LINE__ + 2;
    try {
      (void)ts::Config::from_json(text);
      ADD_FAILURE() << text << " was accepted";
    } catch (const ts::UserError& e) {
      EXPECT_EQ(e.loc().line, line) << e.what();
      EXPECT_NE(std::string(e.what()).find("autotune_config_test.cpp:" + std::to_string(line)),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(Tunables, ValueIsTheConfigsChoiceOrTheFirst) {
  ts::Buffer x = ts::Buffer::arange(100, ts::f32);
  auto k = [](ts::Settings s) {
    return ts::kernel(
        "times_tunable",
        [](ts::Tensor x) {
          ts::Tensor out = ts::empty_like(x);
          for (auto t : ts::tile(x.size(0)))
            out(t) = x(t) * ts::register_tunable("factor", {3, 5, 7});
          return out;
        },
        s);
  };
  for (int64_t f : {3, 5, 7}) {
    ts::Buffer expected = ts::Buffer::from_vector(
        [&] {
          std::vector<double> v;
          for (int i = 0; i < 100; ++i) v.push_back(static_cast<double>(i * f));
          return v;
        }(),
        {100}, ts::f32);
    ts::Settings s{.config = ts::Config{.tunables = std::map<std::string, int64_t>{{"factor", f}}}};
    EXPECT_EQ(ts::count_mismatches(k(s)(x), expected, 0, 0), 0) << "factor " << f;
    if (f == 3) EXPECT_EQ(ts::count_mismatches(k({})(x), expected, 0, 0), 0) << "first choice";
  }
}

TEST(Tunables, AChoiceThatIsNotDeclaredIsAUserError) {
  ts::Buffer x = ts::Buffer::arange(8, ts::f32);
  auto k = ts::kernel(
      "bad_choice",
      [](ts::Tensor x) {
        ts::Tensor out = ts::empty_like(x);
        for (auto t : ts::tile(x.size(0))) out(t) = x(t) * ts::register_tunable("factor", {3, 5});
        return out;
      },
      ts::Settings{.config =
                       ts::Config{.tunables = std::map<std::string, int64_t>{{"factor", 4}}}});
  try {
    k(x);
    FAIL() << "expected a UserError";
  } catch (const ts::UserError& e) {
    EXPECT_EQ(e.kernel(), "bad_choice");
    EXPECT_NE(std::string(e.what()).find("not one of its choices"), std::string::npos) << e.what();
  }
}

TEST(Tunables, AnUnknownTunableInTheConfigIsAUserError) {
  ts::Buffer x = ts::Buffer::arange(8, ts::f32);
  auto k = ts::kernel(
      "no_tunables",
      [](ts::Tensor x) {
        ts::Tensor out = ts::empty_like(x);
        for (auto t : ts::tile(x.size(0))) out(t) = x(t) + 1;
        return out;
      },
      ts::Settings{.config = ts::Config{.tunables = std::map<std::string, int64_t>{{"nope", 1}}}});
  try {
    k(x);
    FAIL() << "expected a UserError";
  } catch (const ts::UserError& e) {
    EXPECT_EQ(e.kernel(), "no_tunables");
    EXPECT_NE(std::string(e.what()).find("unknown tunable 'nope'"), std::string::npos) << e.what();
  }
}

TEST(Tunables, EmptyOrRepeatedChoicesAreUserErrors) {
  ts::Buffer x = ts::Buffer::arange(8, ts::f32);
  auto with = [](std::vector<int64_t> choices) {
    return ts::kernel("choices", [choices](ts::Tensor x) {
      ts::Tensor out = ts::empty_like(x);
      for (auto t : ts::tile(x.size(0))) out(t) = x(t) + ts::register_tunable("c", choices);
      return out;
    });
  };
  EXPECT_THROW(with({})(x), ts::UserError);
  EXPECT_THROW(with({1, 1})(x), ts::UserError);
  EXPECT_NO_THROW(with({1, 2})(x));
}

TEST(Tunables, AreRecordedInTheGraph) {
  auto k = autotune_test::make_scaled();
  ts::Buffer x = ts::Buffer::empty({1000}, ts::f32);
  const tessel::ir::Graph& g = autotune_test::graph_of(k, x);
  ASSERT_EQ(g.tunables.size(), 1u);
  EXPECT_EQ(g.tunables[0].first, "scale");
  EXPECT_EQ(g.tunables[0].second, (std::vector<int64_t>{1, 2, 4}));
}

}  // namespace

TEST(ConfigJson, RejectsFractionalAndOutOfRangeIntegers) {
  for (const char* text : {R"({"num_warps": 4.5})", R"({"num_warps": 99999999999})",
                           R"({"block_sizes": [64, 1.5]})", R"({"reduction_loops": [0]})"}) {
    try {
      ts::Config::from_json(text);
      ADD_FAILURE() << "accepted " << text;
    } catch (const ts::UserError& e) {
      EXPECT_NE(std::string(e.what()).find("config key"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(*ts::Config::from_json(R"({"num_warps": 8})").num_warps, 8);
}
