// Races between the programs of a launch: stores refused at trace time
// (passes/race_check.hpp), and conflicting writes and reads of elements another program
// writes found by the interpreter's race check (TESSEL_CHECK_RACES, interp/write_log.hpp),
// which the whole CPU suite runs with.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <tessel/tessel.hpp>
#include <vector>

#include "interp_test_util.hpp"
#include "user_error_util.hpp"

namespace ts = tessel;
using interp_test::blocks;
using interp_test::buffer;
using interp_test::ramp;
using user_error_test::user_error;

namespace {

int g_line = 0;  // the line of the offending store, recorded while tracing

const user_error_test::ExpectMessageAt expect_message{"races_test.cpp", g_line};

const char* kStaticHint = "index the store with every tile of the loop (e.g. out(tm, tn)";
const char* kDynamicHint = "give each program its own elements";

/// Sets TESSEL_CHECK_RACES to `value` for a scope.
class RaceCheck {
 public:
  explicit RaceCheck(const char* value) {
    const char* v = std::getenv("TESSEL_CHECK_RACES");
    if (v) old_ = v;
    had_ = v != nullptr;
    setenv("TESSEL_CHECK_RACES", value, 1);
  }
  ~RaceCheck() {
    if (had_)
      setenv("TESSEL_CHECK_RACES", old_.c_str(), 1);
    else
      unsetenv("TESSEL_CHECK_RACES");
  }

 private:
  std::string old_;
  bool had_ = false;
};

/// out[idx[i]] = x[i] in programs of 4 elements: a scatter (idx may repeat indices).
auto make_scatter() {
  return ts::kernel(
      "scatter",
      [](ts::Tensor x, ts::Tensor idx) {
        ts::Tensor out = x.new_zeros({x.size(0)});
        for (auto t : ts::tile(x.size(0))) {
          g_line = __LINE__ + 1;
          out(idx(t)) = x(t);
        }
        return out;
      },
      blocks({4}));
}

const char* kOverlapHint =
    "write the result to a separate output tensor, whose memory no program of the launch "
    "reads, or split the work into two kernels";

/// dst(t) = src(t) * 2 in programs of 4 elements.
auto make_scale(ts::Settings settings = blocks({4})) {
  return ts::kernel(
      "scale",
      [](ts::Tensor dst, ts::Tensor src) {
        for (auto t : ts::tile(dst.size(0))) {
          g_line = __LINE__ + 1;
          dst(t) = src(t) * 2;
        }
      },
      settings);
}

/// Runs `k` on dst = base[0, 16, step 2) and src = base[2, 18, step 2) of one 18-element
/// buffer (views that are not dense: a call refuses dense ones that overlap in part before
/// any program runs), under seeds 1..8 of the race check, and checks each error: program 0
/// reads base[8] (src element 3), which program 1 writes (dst element 4); whichever of them
/// runs second reports it. Both orders occur among the seeds.
template <class K>
void expect_shifted_views_race(K&& k) {
  bool read_second = false, write_second = false;
  for (int seed = 1; seed <= 8; ++seed) {
    const std::string value = std::to_string(seed);
    RaceCheck check(value.c_str());
    ts::Buffer base = buffer(ramp(18), {18});
    std::string msg = user_error(
        [&] { k(base.view_as_strided({8}, {2}, 0), base.view_as_strided({8}, {2}, 2)); });
    if (msg.find("reads element") != std::string::npos) {
      read_second = true;
      expect_message(msg, "scale",
                     "program 0 of the launch reads element (3) of tensor argument 1, which "
                     "program 1 writes (the store to tensor argument 0 at ",
                     kOverlapHint);
    } else {
      write_second = true;
      expect_message(msg, "scale",
                     "program 1 of the launch writes element (4) of tensor argument 0, which "
                     "program 0 reads (the load of tensor argument 1 at ",
                     kOverlapHint);
    }
    EXPECT_NE(msg.find("races_test.cpp:" + std::to_string(g_line) + ")"), std::string::npos) << msg;
    EXPECT_NE(msg.find("whichever program runs first"), std::string::npos) << msg;
  }
  EXPECT_TRUE(read_second);
  EXPECT_TRUE(write_second);
}

}  // namespace

TEST(Races, TheSuiteRunsWithTheInterpretersRaceCheck) {
  ASSERT_TRUE(interp_test::race_check_on);
  const char* v = std::getenv("TESSEL_CHECK_RACES");
  ASSERT_NE(v, nullptr);
  EXPECT_STRNE(v, "0");
}

// ---- trace time ----

TEST(Races, ARowSumStoredFromEveryColumnTileIsAnError) {
  auto k = ts::kernel("row_sum_per_tile", [](ts::Tensor x) {
    ts::Tensor out = x.new_zeros({x.size(0)});
    for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) {
      g_line = __LINE__ + 1;
      out(tm) = ts::sum(x(tm, tn), 1);
    }
    return out;
  });
  std::string msg = user_error([&] { k(ts::Buffer::ones({8, 64}, ts::f32)); });
  expect_message(
      msg, "row_sum_per_tile",
      "several programs of the launch write the same elements of the tensor allocated at line " +
          std::to_string(g_line - 3) +
          ": the store's indices do not depend on dimension 1 of the top-level loop",
      kStaticHint);
  expect_message(msg, "row_sum_per_tile",
                 "and the stored value depends on it, so each program writes its own value there",
                 "reduce inside one program (make that dimension a device loop nested inside this "
                 "one), or use an atomic (ts::atomic_add, ...), which several programs may apply "
                 "to one element");
}

TEST(Races, AnAccumulationIntoOneElementFromEveryProgramIsAnError) {
  auto k = ts::kernel("count_tiles", [](ts::Tensor x) {
    ts::Tensor out = x.new_zeros({x.size(0)});
    for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) {
      g_line = __LINE__ + 1;
      out(tm) += 1;
    }
    return out;
  });
  std::string msg = user_error([&] { k(ts::Buffer::ones({8, 64}, ts::f32)); });
  expect_message(msg, "count_tiles", "do not depend on dimension 1", "");
  expect_message(msg, "count_tiles",
                 "and the stored value reads the tensor allocated at line " +
                     std::to_string(g_line - 3) +
                     ": a read-modify-write from every program, whose updates are lost",
                 kStaticHint);
}

TEST(Races, AGridIndexMissingFromTheStoreIsAnError) {
  auto k = ts::kernel("grid_rows", [](ts::Tensor x) {
    ts::Tensor out = x.new_zeros({x.size(1)});
    for (auto [i, j] : ts::grid(x.size(0), x.size(1))) {
      g_line = __LINE__ + 1;
      out(j) = x(i, j);
    }
    return out;
  });
  expect_message(user_error([&] {
                   k(ts::Buffer::ones({4, 6}, ts::f32));
                 }),
                 "grid_rows", "do not depend on dimension 0 of the top-level loop",
                 "(one program per grid index)");
}

TEST(Races, AStoreMissingEveryDimNamesThemAll) {
  auto k = ts::kernel("pid_everywhere", [](ts::Tensor x) {
    ts::Tensor out = x.new_zeros({1}, ts::i64);
    for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) {
      g_line = __LINE__ + 1;
      out(0) = ts::program_id();
    }
    return out;
  });
  std::string msg = user_error([&] { k(ts::Buffer::ones({8, 64}, ts::f32)); });
  expect_message(msg, "pid_everywhere", "do not depend on dimensions 0 and 1 of the top-level loop",
                 "");
  expect_message(msg, "pid_everywhere", "and the stored value depends on them", kStaticHint);
}

TEST(Races, AValueCarriedOverALoopWhoseTripsDependOnTheTileIsAnError) {
  auto k = ts::kernel("trips", [](ts::Tensor x) {
    ts::Tensor out = x.new_zeros({x.size(0)});
    for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) {
      ts::Value c = 0.0;
      for (auto i : ts::tile(tn.end())) c = c + 1;  // as many trips as tn's end
      g_line = __LINE__ + 1;
      out(tm) = c;
    }
    return out;
  });
  expect_message(user_error([&] {
                   k(ts::Buffer::ones({8, 64}, ts::f32));
                 }),
                 "trips", "and the stored value depends on it", kStaticHint);
}

TEST(Races, TheSameValueFromEveryProgramIsAllowed) {
  auto k = ts::kernel(
      "first_column",
      [](ts::Tensor x) {
        ts::Tensor out = x.new_zeros({x.size(0)});
        ts::Tensor flag = x.new_zeros({1});
        for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) {
          out(tm) = x(tm, 0) * 2;  // each tn program of a row tile writes the same values
          flag(0) = 1;
        }
        return std::make_tuple(out, flag);
      },
      blocks({4, 4}));
  auto [out, flag] = k(buffer(ramp(6 * 10), {6, 10}));
  EXPECT_EQ(out.to_vector(), (std::vector<double>{0, 20, 40, 60, 80, 100}));
  EXPECT_EQ(flag.to_vector(), (std::vector<double>{1}));
}

TEST(Races, TheSameValueFromEveryProgramCanBeReadBack) {
  // Each tn program of a row tile stores the same values to out, then reloads them: in any
  // order, a program's reload sees its own write or the same bits from another program.
  auto k = ts::kernel(
      "store_then_reload",
      [](ts::Tensor x) {
        ts::Tensor out = x.new_empty({x.size(0)});
        ts::Tensor plus = x.new_empty({x.size(0)});
        for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) {
          out(tm) = x(tm, 0) * 2;
          plus(tm) = out(tm) + 1;
        }
        return std::make_tuple(out, plus);
      },
      blocks({4, 4}));
  for (int seed = 1; seed <= 4; ++seed) {
    RaceCheck on(std::to_string(seed).c_str());
    auto [out, plus] = k(buffer(ramp(6 * 10), {6, 10}));
    EXPECT_EQ(out.to_vector(), (std::vector<double>{0, 20, 40, 60, 80, 100}));
    EXPECT_EQ(plus.to_vector(), (std::vector<double>{1, 21, 41, 61, 81, 101}));
  }
}

TEST(Races, ADimWithOneProgramNeedsNoCovering) {
  auto k = ts::kernel("single_row", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto [i, t] : ts::tile(1, x.size(0))) out(t) = x(t) + i.begin();
    return out;
  });
  EXPECT_EQ(k(buffer(ramp(5), {5})).to_vector(), ramp(5));
  auto one = ts::kernel("one_program", [](ts::Tensor x) {
    ts::Tensor out = x.new_zeros({1});
    for (auto i : ts::grid(1)) out(0) = ts::sum(x(ts::all), 0) + i;
    return out;
  });
  EXPECT_EQ(one(ts::Buffer::ones({5}, ts::f32)).to_vector(), (std::vector<double>{5}));
}

TEST(Races, ANestedLoopOverTheTilesRangeCoversIt) {
  auto k = ts::kernel(
      "copy_by_rows",
      [](ts::Tensor x) {
        ts::Tensor out = ts::empty_like(x);
        for (auto tm : ts::tile(x.size(0)))
          for (auto i : ts::grid({tm.begin(), tm.end()})) out(i) = x(i) + 1;
        return out;
      },
      blocks({4}));
  EXPECT_EQ(k(buffer(ramp(10), {10})).to_vector(), ramp(10, 1));
}

TEST(Races, AGatherIndexComputedFromTheGridIndexCoversIt) {
  // Seed 002's manual persistent form: rows = tn.index() * P + pid.
  auto k = ts::kernel(
      "strided_rows",
      [](ts::Tensor x) {
        ts::Tensor out = x.new_zeros({x.size(0)});
        for (auto pid : ts::grid(4))
          for (auto tn : ts::tile(ts::floordiv(x.size(0), 4))) {
            ts::Value rows = tn.index() * 4 + pid;
            out(rows) = ts::sum(x(rows, ts::all), 1);
          }
        return out;
      },
      blocks({2}));
  std::vector<double> want(12, 3);
  EXPECT_EQ(k(ts::Buffer::ones({12, 3}, ts::f32)).to_vector(), want);
}

// ---- run time: the interpreter's write log ----

TEST(Races, TwoProgramsScatteringDifferentValuesToOneElementAreAnError) {
  RaceCheck on("1");
  auto k = make_scatter();
  // Programs 0 and 1 both write element 3 (x[3] = 3 and x[4] = 4).
  ts::Buffer idx = buffer({0, 1, 2, 3, 3, 5, 6, 7}, {8}, ts::i64);
  std::string msg = user_error([&] { k(buffer(ramp(8), {8}), idx); });
  expect_message(msg, "scatter",
                 "of the launch both write element (3) of the tensor allocated at line",
                 kDynamicHint);
  EXPECT_TRUE(msg.find("programs 0 and 1") != std::string::npos ||
              msg.find("programs 1 and 0") != std::string::npos)
      << msg;
  EXPECT_TRUE(msg.find("values (3 and 4)") != std::string::npos ||
              msg.find("values (4 and 3)") != std::string::npos)
      << msg;
  // Distinct indices: no conflict, the scatter's values.
  ts::Buffer perm = buffer({7, 6, 5, 4, 3, 2, 1, 0}, {8}, ts::i64);
  EXPECT_EQ(k(buffer(ramp(8), {8}), perm).to_vector(),
            (std::vector<double>{7, 6, 5, 4, 3, 2, 1, 0}));
}

// The variable takes booleans and seeds; anything else is an error at the launch's loop.
TEST(Races, TheVariableTakesBooleansAndSeedsOnly) {
  auto k = make_scatter();
  ts::Buffer idx = buffer({0, 1, 2, 3, 3, 5, 6, 7}, {8}, ts::i64);
  for (const char* on : {"true", "on", "42"}) {
    RaceCheck check(on);
    EXPECT_NE(user_error([&] { k(buffer(ramp(8), {8}), idx); }).find("both write element (3)"),
              std::string::npos)
        << on;
  }
  {
    RaceCheck off("off");
    EXPECT_EQ(k(buffer(ramp(8), {8}), idx).to_vector().size(), 8u);
  }
  RaceCheck bad("abc");
  const std::string msg = user_error([&] { k(buffer(ramp(8), {8}), idx); });
  EXPECT_NE(msg.find("kernel 'scatter', races_test.cpp:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("TESSEL_CHECK_RACES is 'abc', neither a boolean nor a seed. set it to 1 or "
                     "a number below 2^64"),
            std::string::npos)
      << msg;
  // A seed past 2^64 - 1, or with a sign, is no seed (not a saturated or wrapped one).
  for (const char* no_seed : {"99999999999999999999999", "-3", "+3", " 3"}) {
    RaceCheck wide(no_seed);
    EXPECT_NE(
        user_error([&] { k(buffer(ramp(8), {8}), idx); }).find("neither a boolean nor a seed"),
        std::string::npos)
        << no_seed;
  }
}

TEST(Races, TheConflictNamesTheElementsIndexTuple) {
  RaceCheck on("7");
  auto k = ts::kernel(
      "halves",
      [](ts::Tensor x) {
        ts::Tensor out = x.new_zeros({x.size(0), 2});
        for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) {
          g_line = __LINE__ + 1;
          out(tm, tn.index() % 2) = x(tm, tn);  // depends on tn, yet shared
        }
        return out;
      },
      blocks({2, 2}));
  std::string msg = user_error([&] { k(buffer(ramp(4 * 4), {4, 4})); });
  expect_message(msg, "halves", "both write element (", kDynamicHint);
  EXPECT_NE(msg.find(", 0) of the tensor allocated at line"), std::string::npos) << msg;
}

TEST(Races, OneStoreWritingAnElementTwiceWithDifferentValuesIsAnError) {
  RaceCheck on("1");
  auto k = make_scatter();
  std::string msg = user_error([&] {
    k(buffer({10, 20, 30, 40}, {4}), buffer({0, 1, 1, 2}, {4}, ts::i64));
  });
  expect_message(msg, "scatter",
                 "this store writes element (1) of the tensor allocated at line " +
                     std::to_string(g_line - 3) +
                     " twice in program 0, with different values (20 and 30)",
                 "make the indices of a scatter distinct");
}

// A histogram by scatter-add: out(idx(t)) += 1 reads the element it writes, so two lanes
// (or programs) reaching one element lose an update even though they store equal values.
static auto make_histogram() {
  return ts::kernel(
      "hist",
      [](ts::Tensor idx) {
        ts::Tensor out = idx.new_zeros({4}, ts::f32);
        for (auto t : ts::tile(idx.size(0))) {
          g_line = __LINE__ + 1;
          out(idx(t)) += 1.0;
        }
        return out;
      },
      blocks({8}));
}

TEST(Races, AScatterAddReachingAnElementTwiceInOneProgramIsAnError) {
  RaceCheck on("1");
  auto k = make_histogram();
  std::string msg = user_error([&] { k(buffer({0, 1, 1, 2, 3, 3, 3, 0}, {8}, ts::i64)); });
  expect_message(msg, "hist", "this read-modify-write of the tensor allocated at line",
                 "make the indices distinct");
  EXPECT_NE(msg.find("twice in program 0"), std::string::npos) << msg;
  // Distinct indices are fine.
  EXPECT_EQ(k(buffer({3, 1, 0, 2}, {4}, ts::i64)).to_vector(), (std::vector<double>{1, 1, 1, 1}));
}

TEST(Races, AScatterAddOfTwoProgramsToOneElementIsARaceWithAnAtomicForAHint) {
  // Each program's indices are distinct; the second program to run reads out[0] (its
  // first element), which the first wrote.
  auto k = make_histogram();
  std::vector<double> idx = ramp(8);
  idx.insert(idx.end(), idx.begin(), idx.end());
  std::string msg = user_error([&] { k(buffer(idx, {16}, ts::i64)); });
  expect_message(msg, "hist", "of the launch reads element (0) of the tensor allocated at line",
                 "where programs update shared elements (a scatter-add, a counter), use an atomic "
                 "(ts::atomic_add, ...)");
}

// An aliased read-modify-write: b(tm, 1) = a(tm, 1) + 1 with k(x, x) stores from every
// column program into memory the value reads (the one-argument form is refused alike).
TEST(Races, AReadModifyWriteThroughAnAliasIsRefusedAtTraceTime) {
  auto k = ts::kernel("alias_rmw", [](ts::Tensor a, ts::Tensor b) {
    for (auto [tm, tn] : ts::tile(a.size(0), a.size(1), {.block_size = {1, 1}})) {
      g_line = __LINE__ + 1;
      b(tm, 1) = a(tm, 1) + 1;
    }
  });
  ts::Buffer x = ts::Buffer::zeros({2, 4}, ts::f32);
  std::string msg = user_error([&] { k(x, x); });
  expect_message(msg, "alias_rmw", "a read-modify-write from every program", kStaticHint);
  ts::Buffer y = ts::Buffer::zeros({2, 4}, ts::f32);
  k(x, y);  // separate tensors: every program writes the same value
  EXPECT_EQ(y.to_vector(), (std::vector<double>{0, 1, 0, 0, 0, 1, 0, 0}));
}

TEST(Races, EqualValuesFromSeveralProgramsAreAllowedAtRunTime) {
  RaceCheck on("1");
  auto k = ts::kernel(
      "scatter_same",
      [](ts::Tensor x, ts::Tensor idx) {
        ts::Tensor out = x.new_zeros({x.size(0)});
        for (auto t : ts::tile(x.size(0))) out(idx(t)) = x(idx(t));
        return out;
      },
      blocks({2}));
  ts::Buffer idx = buffer({0, 0, 0, 3, 3, 5, 5, 5}, {8}, ts::i64);
  EXPECT_EQ(k(buffer(ramp(8, 10), {8}), idx).to_vector(),
            (std::vector<double>{10, 0, 0, 13, 0, 15, 0, 0}));
}

TEST(Races, AnElementProgramsAgreeOnAndOneOverwritesIsAnError) {
  RaceCheck on("1");
  auto k = ts::kernel(
      "agree_then_differ",
      [](ts::Tensor x, ts::Tensor idx) {
        ts::Tensor out = x.new_zeros({x.size(0)});
        for (auto t : ts::tile(x.size(0))) {
          out(idx(t)) = 5;
          out(idx(t)) = x(t);
        }
        return out;
      },
      blocks({1}));
  // Every program writes 5 to element 0, then its own x: the first program's second write
  // races with the other programs' first.
  std::string msg = user_error([&] { k(buffer({1, 2, 3}, {3}), buffer({0, 0, 0}, {3}, ts::i64)); });
  g_line = 0;  // either store may be the second
  expect_message(msg, "agree_then_differ",
                 "of the launch both write element (0) of the tensor allocated at line",
                 kDynamicHint);
}

TEST(Races, BuffersOverOneMemoryAreOneMemoryToTheCheck) {
  RaceCheck on("1");
  auto k = ts::kernel(
      "two_views",
      [](ts::Tensor x, ts::Tensor a, ts::Tensor b) {
        for (auto t : ts::tile(x.size(0))) {
          a(t) = x(t);
          g_line = __LINE__ + 1;
          b(t) = x(t) + 100;
        }
      },
      blocks({4}));
  // Every other float (views that are not dense: a call refuses dense ones that overlap in
  // part before any program runs, CallOverlaps below).
  std::vector<float> memory(24, 0);
  ts::Buffer a = ts::Buffer::from_blob(memory.data(), {8}, {2}, ts::f32, ts::cpu());
  ts::Buffer b =
      ts::Buffer::from_blob(memory.data() + 8, {8}, {2}, ts::f32, ts::cpu());  // a[4:] is b[:4]
  std::string msg = user_error([&] { k(buffer(ramp(8), {8}), a, b); });
  expect_message(msg, "two_views", "both write element", kDynamicHint);
  // Separate memory: no conflict.
  std::vector<float> other(8, 0);
  ts::Buffer c = ts::Buffer::from_blob(other.data(), {8}, {1}, ts::f32, ts::cpu());
  k(buffer(ramp(8), {8}), a, c);
  EXPECT_EQ(c.to_vector(), ramp(8, 100));
}

TEST(Races, TensorsOfTwoDtypesOverOneMemoryAreOneMemoryToTheCheck) {
  RaceCheck on("3");
  auto k = ts::kernel(
      "two_dtypes",
      [](ts::Tensor x, ts::Tensor a, ts::Tensor b) {
        for (auto t : ts::tile(x.size(0))) {
          g_line = __LINE__ + 1;
          a(t) = x(t);
          b(t) = x(t).to(ts::f64);
        }
      },
      blocks({4}));
  // a (f32) is the first 32 bytes of b (f64, every other double: not dense, so the call
  // leaves the overlap to this check): a's elements 4 and 5 (program 1) are b's element 1
  // (program 0).
  std::vector<double> memory(16, 0);
  ts::Buffer a = ts::Buffer::from_blob(memory.data(), {8}, {1}, ts::f32, ts::cpu());
  ts::Buffer b = ts::Buffer::from_blob(memory.data(), {8}, {2}, ts::f64, ts::cpu());
  std::string msg = user_error([&] { k(buffer(ramp(8, 1), {8}), a, b); });
  // Either store may come second, as the shuffle orders the programs.
  const std::string a_line = "races_test.cpp:" + std::to_string(g_line) + ": ";
  const std::string b_line = "races_test.cpp:" + std::to_string(g_line + 1) + ": ";
  EXPECT_TRUE(msg.find(a_line) != std::string::npos || msg.find(b_line) != std::string::npos)
      << msg;
  g_line = 0;
  expect_message(msg, "two_dtypes", "of the launch both write element", kDynamicHint);
  EXPECT_TRUE(msg.find("programs 0 and 1") != std::string::npos ||
              msg.find("programs 1 and 0") != std::string::npos)
      << msg;
}

TEST(Races, ShuffledProgramsKeepTheirProgramIds) {
  auto k = ts::kernel(
      "pids",
      [](ts::Tensor x) {
        ts::Tensor out = x.new_zeros({x.size(0)}, ts::i64);
        for (auto t : ts::tile(x.size(0))) out(t) = ts::program_id() + x(t).to(ts::i64) * 0;
        return out;
      },
      blocks({2}));
  for (const char* seed : {"0" /* off */, "1", "12345"}) {
    RaceCheck on(seed);
    EXPECT_EQ(k(ts::Buffer::zeros({7}, ts::f32)).to_vector(),
              (std::vector<double>{0, 0, 1, 1, 2, 2, 3}))
        << seed;
  }
}

// ---- run time: one program reads what another writes ----

TEST(Races, OverlappingViewsShiftedByOneElementAreARace) {
  expect_shifted_views_race(make_scale());
}

TEST(Races, APersistentKernelsTilesAreProgramsToo) {
  ts::Settings s = blocks({4});
  s.config->pid_type = ts::PidType::persistent_blocked;
  expect_shifted_views_race(make_scale(s));
}

TEST(Races, ReadingTheNextTileOfTheStoredTensorIsARace) {
  auto k = ts::kernel(
      "shift_left",
      [](ts::Tensor x) {
        for (auto t : ts::tile(x.size(0))) {
          g_line = __LINE__ + 1;
          x(t) = x(t.index() + 1);
        }
      },
      blocks({4}));
  ts::Buffer x = buffer(ramp(8), {8});
  std::string msg = user_error([&] { k(x); });
  // Program 0 reads x[4], which program 1 writes.
  const bool read_second =
      msg.find("program 0 of the launch reads element (4)") != std::string::npos;
  expect_message(msg, "shift_left",
                 read_second ? "which program 1 writes (the store at "
                             : "program 1 of the launch writes element (4) of tensor argument 0, "
                               "which program 0 reads (the load at ",
                 kOverlapHint);
}

TEST(Races, AFlagReadByEveryProgramAndSetByOneIsARace) {
  auto k = ts::kernel(
      "first_sets_flag",
      [](ts::Tensor x) {
        ts::Tensor flag = x.new_zeros({1});
        ts::Tensor out = ts::empty_like(x);
        for (auto t : ts::tile(x.size(0))) {
          out(t) = x(t) + flag(0);
          g_line = __LINE__ + 1;
          flag(t.id() * 0) = ts::where(t.id() == 0, 1.0, flag(0));
        }
        return out;
      },
      blocks({2}));
  // The first program to run sets flag[0]; the next one's first load reads it.
  std::string msg = user_error([&] { k(buffer(ramp(8), {8})); });
  expect_message(msg, "first_sets_flag", "element (0) of the tensor allocated at line ",
                 kOverlapHint);
}

TEST(Races, AProgramReadsWhatItWroteItself) {
  auto k = ts::kernel(
      "in_place",
      [](ts::Tensor x) {
        ts::Tensor total = x.new_zeros({x.size(0)});
        for (auto tm : ts::tile(x.size(0))) {
          x(tm, ts::all) = x(tm, ts::all) * 2;
          ts::Value acc = ts::zeros({tm});
          for (auto tn : ts::tile(x.size(1))) acc = acc + ts::sum(x(tm, tn), 1);  // reads back
          total(tm) = acc;
        }
        return total;
      },
      blocks({2, 4}));
  ts::Buffer x = buffer(ramp(4 * 8), {4, 8});
  ts::Buffer total = k(x);
  EXPECT_EQ(total.to_vector(), (std::vector<double>{56, 184, 312, 440}));
  std::vector<double> want = ramp(32, 0, 2);
  EXPECT_EQ(x.to_vector(), want);
}

TEST(Races, DisjointViewsOfOneBufferAreNoRace) {
  ts::Buffer base = buffer(ramp(16), {16});
  make_scale()(base.narrow(0, 0, 8), base.narrow(0, 8, 8));
  std::vector<double> want = ramp(16);
  for (int i = 0; i < 8; ++i) want[i] = 2 * (8 + i);
  EXPECT_EQ(base.to_vector(), want);
}

TEST(Races, ReadingAnotherProgramsInputIsNoRace) {
  auto k = ts::kernel(
      "shift_out",
      [](ts::Tensor x) {
        ts::Tensor out = ts::empty_like(x);
        for (auto t : ts::tile(x.size(0))) out(t) = x(t.index() + 1);
        return out;
      },
      blocks({4}));
  EXPECT_EQ(k(buffer(ramp(8), {8})).to_vector(), (std::vector<double>{1, 2, 3, 4, 5, 6, 7, 0}));
}

TEST(Races, AtomicsAreOrderedByTheAtomic) {
  auto k = ts::kernel(
      "pair_sums",
      [](ts::Tensor x) {
        ts::Tensor sums = x.new_zeros({2});
        for (auto t : ts::tile(x.size(0))) ts::atomic_add(sums, {t.index() % 2}, x(t));
        return sums;
      },
      blocks({2}));
  EXPECT_EQ(k(buffer(ramp(8), {8})).to_vector(), (std::vector<double>{12, 16}));
}

TEST(Races, ALaunchSeesTheWritesOfTheLaunchesBeforeIt) {
  auto k = ts::kernel(
      "two_launches",
      [](ts::Tensor x) {
        ts::Tensor tmp = ts::empty_like(x);
        ts::Tensor out = ts::empty_like(x);
        for (auto t : ts::tile(x.size(0))) tmp(t) = x(t) * 2;
        for (auto t : ts::tile(x.size(0))) out(t) = tmp(t.index() + 1);
        return out;
      },
      blocks({4, 4}));
  EXPECT_EQ(k(buffer(ramp(8), {8})).to_vector(), (std::vector<double>{2, 4, 6, 8, 10, 12, 14, 0}));
}

TEST(Races, AReadAfterAWaitForTheWriterIsNoRace) {
  // Program 1 reads data[0], which program 0 writes before signalling pad[0].
  // data and pad have one element: data(p) and pad(p) are masked in program 1.
  auto k = ts::kernel("handoff", [](ts::Tensor data, ts::Tensor pad) {
    ts::Tensor out = data.new_zeros({2});
    for (auto p : ts::grid(2)) {
      data(p) = 5.0;
      ts::signal(pad, {p}, 1);
      ts::wait(pad, {p * 0}, 1);  // both wait for program 0's signal
      out(p) = data(p * 0);
    }
    return out;
  });
  EXPECT_EQ(k(ts::Buffer::zeros({1}, ts::f32), ts::Buffer::zeros({1}, ts::i32)).to_vector(),
            (std::vector<double>{5, 5}));
}
