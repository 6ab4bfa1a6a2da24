// Reads the interpreter refuses: an element one program of a launch reads and another
// writes (the race check's read log, interp/write_log.hpp), and a ts::empty element read
// before anything wrote it (interp/unwritten.hpp).
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

int g_line = 0;  // the line of the offending access, recorded while tracing

void expect_message(const std::string& msg, const std::string& kernel, const std::string& what,
                    const std::string& hint) {
  user_error_test::expect_message(msg, kernel, "read_races_test.cpp", g_line, what, hint);
}

const char* kOverlapHint =
    "write the result to a separate output tensor, whose memory no program of the launch "
    "reads, or split the work into two kernels";
const char* kUnwrittenHint = "initialise the tensor (ts::zeros_like, ts::full_like";

/// Sets TESSEL_CHECK_RACES to `value` for a scope.
class RaceCheck {
 public:
  explicit RaceCheck(const std::string& value) {
    const char* v = std::getenv("TESSEL_CHECK_RACES");
    if (v) old_ = v;
    setenv("TESSEL_CHECK_RACES", value.c_str(), 1);
  }
  ~RaceCheck() { setenv("TESSEL_CHECK_RACES", old_.c_str(), 1); }

 private:
  std::string old_ = "1";
};

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

/// Runs `k` on dst = base[0, 8) and src = base[1, 9) of one 9-element buffer, under seeds
/// 1..8 of the race check, and checks each error: program 0 reads base[4] (src element 3),
/// which program 1 writes (dst element 4); whichever of them runs second reports it.
/// Both orders occur among the seeds.
template <class K>
void expect_shifted_views_race(K&& k) {
  bool read_second = false, write_second = false;
  for (int seed = 1; seed <= 8; ++seed) {
    RaceCheck check(std::to_string(seed));
    ts::Buffer base = buffer(ramp(9), {9});
    std::string msg = user_error([&] { k(base.narrow(0, 0, 8), base.narrow(0, 1, 8)); });
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
    EXPECT_NE(msg.find("read_races_test.cpp:" + std::to_string(g_line) + ")"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("whichever program runs first"), std::string::npos) << msg;
  }
  EXPECT_TRUE(read_second);
  EXPECT_TRUE(write_second);
}

}  // namespace

// ---- one program reads what another writes ----

TEST(ReadRaces, OverlappingViewsShiftedByOneElementAreARace) {
  expect_shifted_views_race(make_scale());
}

TEST(ReadRaces, APersistentKernelsTilesAreProgramsToo) {
  ts::Settings s = blocks({4});
  s.config->pid_type = ts::PidType::persistent_blocked;
  expect_shifted_views_race(make_scale(s));
}

TEST(ReadRaces, ReadingTheNextTileOfTheStoredTensorIsARace) {
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
  const bool read_second = msg.find("program 0 of the launch reads element (4)") != std::string::npos;
  expect_message(msg, "shift_left",
                 read_second ? "which program 1 writes (the store at "
                             : "program 1 of the launch writes element (4) of tensor argument 0, "
                               "which program 0 reads (the load at ",
                 kOverlapHint);
}

TEST(ReadRaces, AFlagReadByEveryProgramAndSetByOneIsARace) {
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

TEST(ReadRaces, AProgramReadsWhatItWroteItself) {
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

TEST(ReadRaces, DisjointViewsOfOneBufferAreNoRace) {
  ts::Buffer base = buffer(ramp(16), {16});
  make_scale()(base.narrow(0, 0, 8), base.narrow(0, 8, 8));
  std::vector<double> want = ramp(16);
  for (int i = 0; i < 8; ++i) want[i] = 2 * (8 + i);
  EXPECT_EQ(base.to_vector(), want);
}

TEST(ReadRaces, ReadingAnotherProgramsInputIsNoRace) {
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

TEST(ReadRaces, AtomicsAreOrderedByTheAtomic) {
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

TEST(ReadRaces, ALaunchSeesTheWritesOfTheLaunchesBeforeIt) {
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
  EXPECT_EQ(k(buffer(ramp(8), {8})).to_vector(),
            (std::vector<double>{2, 4, 6, 8, 10, 12, 14, 0}));
}

TEST(ReadRaces, AReadAfterAWaitForTheWriterIsNoRace) {
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

// ---- reads of ts::empty memory before a write ----

TEST(ReadRaces, ReadingEmptyMemoryBeforeWritingItIsAnError) {
  auto k = ts::kernel(
      "uninit",
      [](ts::Tensor x) {
        ts::Tensor tmp = ts::empty_like(x);
        ts::Tensor out = ts::empty_like(x);
        for (auto t : ts::tile(x.size(0))) {
          g_line = __LINE__ + 1;
          out(t) = tmp(t) + x(t);
        }
        return out;
      },
      blocks({8}));
  std::string msg = user_error([&] { k(buffer(ramp(4), {4})); });
  expect_message(msg, "uninit",
                 "this load reads element (0) of the tensor allocated at line " +
                     std::to_string(g_line - 4) +
                     ", which ts::empty allocated and nothing has written yet: on a GPU the "
                     "element holds garbage",
                 kUnwrittenHint);
}

TEST(ReadRaces, AnElementNoEarlierLaunchWroteIsAnError) {
  auto k = ts::kernel(
      "partly_written",
      [](ts::Tensor x) {
        ts::Tensor tmp = x.new_empty({x.size(0), 3});
        ts::Tensor out = x.new_zeros({x.size(0)});
        for (auto t : ts::tile(x.size(0))) {
          tmp(t, 0) = x(t);
          tmp(t, 1) = x(t) + 1;
        }
        for (auto t : ts::tile(x.size(0))) {
          g_line = __LINE__ + 1;
          out(t) = ts::sum(tmp(t, ts::all), 1);
        }
        return out;
      },
      blocks({4, 4}));
  std::string msg = user_error([&] { k(buffer(ramp(4), {4})); });
  expect_message(msg, "partly_written",
                 "this load reads element (0, 2) of the tensor allocated at line " +
                     std::to_string(g_line - 8),
                 "or write the element before reading it");
}

TEST(ReadRaces, AnAtomicOnEmptyMemoryReadsIt) {
  auto k = ts::kernel(
      "empty_histogram",
      [](ts::Tensor bins) {
        ts::Tensor hist = bins.new_empty({4}, ts::i32);
        for (auto t : ts::tile(bins.size(0))) {
          g_line = __LINE__ + 1;
          ts::atomic_add(hist, {bins(t)}, 1);
        }
        return hist;
      },
      blocks({8}));
  std::string msg = user_error([&] { k(buffer({2, 2, 1}, {3}, ts::i32)); });
  expect_message(msg, "empty_histogram",
                 "this atomic reads element (2) of the tensor allocated at line " +
                     std::to_string(g_line - 3),
                 kUnwrittenHint);
}

TEST(ReadRaces, EmptyMemoryWrittenBeforeItIsReadIsFine) {
  auto k = ts::kernel(
      "written_first",
      [](ts::Tensor x) {
        ts::Tensor tmp = ts::empty_like(x);
        ts::Tensor hist = x.new_empty({2}, ts::i32);
        ts::Tensor out = ts::empty_like(x);
        for (auto i : ts::grid(2)) hist(i) = 0;
        for (auto t : ts::tile(x.size(0))) {
          tmp(t) = x(t) * 3;
          out(t) = tmp(t) + 1;  // the program's own write
          ts::atomic_add(hist, {t.id() % 2}, 1);
        }
        return std::make_tuple(out, hist);
      },
      blocks({2}));
  auto [out, hist] = k(buffer(ramp(6), {6}));
  EXPECT_EQ(out.to_vector(), (std::vector<double>{1, 4, 7, 10, 13, 16}));
  EXPECT_EQ(hist.to_vector(), (std::vector<double>{2, 1}));
}

TEST(ReadRaces, ZerosMemoryAndArgumentsAreNotTracked) {
  auto k = ts::kernel(
      "zeros_read",
      [](ts::Tensor x, ts::Tensor y) {
        ts::Tensor z = x.new_zeros({x.size(0)});
        ts::Tensor f = ts::full_like(x, 2);
        ts::Tensor out = ts::empty_like(x);
        for (auto t : ts::tile(x.size(0))) out(t) = z(t) + f(t) + x(t) + y(t);
        return out;
      },
      blocks({4}));
  ts::Buffer y = ts::Buffer::empty({4}, ts::f32);  // the caller's memory: not checked
  y.copy_from(buffer({1, 1, 1, 1}, {4}));
  
  EXPECT_EQ(k(buffer(ramp(4), {4}), y).to_vector(), (std::vector<double>{3, 4, 5, 6}));
}
