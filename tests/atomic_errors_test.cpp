// Errors of atomics, signals and waits: unsupported dtypes, host code, and the race check
// accepting what atomics are for (asserted messages).
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <tessel/tessel.hpp>

#include "user_error_util.hpp"

namespace ts = tessel;
using user_error_test::expect_message;
using user_error_test::user_error;

namespace {

int g_line = 0;  // the line of the call under test, set while tracing

ts::Buffer vec(int n, ts::DType t) { return ts::Buffer::zeros({n}, t); }

}  // namespace

TEST(AtomicErrors, AddOnBoolNamesTheSupportedDtypes) {
  auto k = ts::kernel("add_bool", [](ts::Tensor x) {
    for (auto t : ts::tile(x.size(0))) {
      g_line = __LINE__;
      ts::atomic_add(x, {t}, 1);
    }
    return x;
  });
  std::string msg = user_error([&] { k(vec(8, ts::boolean)); });
  expect_message(msg, "add_bool", "atomic_errors_test.cpp", g_line + 1,
                 "ts::atomic_add on tensor argument 0 of dtype bool: supported dtypes are i32, "
                 "i64, u64, f16, bf16, f32 and f64",
                 "use a tensor of a supported dtype");
}

TEST(AtomicErrors, MaxOnFloatsIsRefused) {
  auto k = ts::kernel("max_f32", [](ts::Tensor x) {
    for (auto t : ts::tile(x.size(0))) {
      g_line = __LINE__;
      ts::atomic_max(x, {t}, 1.0);
    }
    return x;
  });
  std::string msg = user_error([&] { k(vec(8, ts::f32)); });
  expect_message(msg, "max_f32", "atomic_errors_test.cpp", g_line + 1,
                 "ts::atomic_max on tensor argument 0 of dtype f32: supported dtypes are "
                 "i32, i64 and u64",
                 "use a tensor of a supported dtype");
}

TEST(AtomicErrors, XorOnBoolIsRefused) {
  auto k = ts::kernel("xor_bool", [](ts::Tensor x) {
    for (auto t : ts::tile(x.size(0))) {
      g_line = __LINE__;
      ts::atomic_xor(x, {t}, true);
    }
    return x;
  });
  std::string msg = user_error([&] { k(vec(8, ts::boolean)); });
  expect_message(msg, "xor_bool", "atomic_errors_test.cpp", g_line + 1,
                 "of dtype bool: supported dtypes are i32", "an i32 tensor for flags and counters");
}

TEST(AtomicErrors, AnAtomicInHostCodeIsRefused) {
  auto k = ts::kernel("host_atomic", [](ts::Tensor x) {
    g_line = __LINE__;
    ts::atomic_add(x, {0}, 1);
    return x;
  });
  std::string msg = user_error([&] { k(vec(8, ts::i32)); });
  expect_message(msg, "host_atomic", "atomic_errors_test.cpp", g_line + 1,
                 "ts::atomic_add on tensor argument 0 outside a device loop",
                 "inside a ts::tile or ts::grid loop");
}

TEST(AtomicErrors, AValueOfAnotherShapeIsRefused) {
  auto k = ts::kernel("atomic_shape", [](ts::Tensor x, ts::Tensor y) {
    for (auto [tm, tn] : ts::tile(x.size(0), y.size(0))) {
      g_line = __LINE__;
      ts::atomic_add(x, {tm}, y(tn));
    }
    return x;
  });
  std::string msg = user_error([&] { k(vec(8, ts::i32), vec(4, ts::i32)); });
  expect_message(msg, "atomic_shape", "atomic_errors_test.cpp", g_line + 1,
                 "shape mismatch in ts::atomic_add",
                 "the value must broadcast to the indexed shape");
}

TEST(AtomicErrors, ASignalPadOfFloatsIsRefused) {
  auto k = ts::kernel("float_pad", [](ts::Tensor pad) {
    for (auto p : ts::grid(pad.size(0))) {
      g_line = __LINE__;
      ts::signal(pad, {p});
    }
    return pad;
  });
  std::string msg = user_error([&] { k(vec(4, ts::f32)); });
  expect_message(msg, "float_pad", "atomic_errors_test.cpp", g_line + 1,
                 "ts::signal on tensor argument 0 of dtype f32: a signal pad is an integer tensor",
                 "allocate the pad as an i32 tensor");
}

TEST(AtomicErrors, AWaitOnAFloatPadIsRefused) {
  auto k = ts::kernel("float_wait", [](ts::Tensor pad) {
    for (auto p : ts::grid(pad.size(0))) {
      g_line = __LINE__;
      ts::wait(pad, {p});
    }
    return pad;
  });
  std::string msg = user_error([&] { k(vec(4, ts::f64)); });
  expect_message(msg, "float_wait", "atomic_errors_test.cpp", g_line + 1,
                 "ts::wait on tensor argument 0 of dtype f64", "i32 tensor of zeros");
}

TEST(AtomicErrors, TheRaceCheckAcceptsAtomicsFromEveryProgram) {
  // The same store from every tn program is refused; the atomic is what it suggests.
  auto store = ts::kernel("racy_sum", [](ts::Tensor x) {
    ts::Tensor rows = x.new_zeros({x.size(0)});
    for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) rows(tm) += ts::sum(x(tm, tn), 1);
    return rows;
  });
  std::string msg = user_error([&] { store(ts::Buffer::zeros({8, 64}, ts::f32)); });
  EXPECT_NE(msg.find("ts::atomic_add"), std::string::npos) << msg;
  auto atomic = ts::kernel("atomic_sum", [](ts::Tensor x) {
    ts::Tensor rows = x.new_zeros({x.size(0)});
    for (auto [tm, tn] : ts::tile(x.size(0), x.size(1)))
      ts::atomic_add(rows, {tm}, ts::sum(x(tm, tn), 1));
    return rows;
  });
  ts::Buffer x = ts::Buffer::full({8, 64}, 1, ts::f32);
  EXPECT_EQ(user_error([&] { atomic(x); }), "<no error>");
}

TEST(AtomicErrors, StoringAnAtomicsOldValueFromEveryProgramIsARace) {
  // The old values differ from program to program: one element written by all is a race.
  auto k = ts::kernel("store_old", [](ts::Tensor x) {
    ts::Tensor count = x.new_zeros({1}, ts::i32);
    ts::Tensor last = x.new_zeros({1}, ts::i32);
    for (auto t : ts::tile(x.size(0))) {
      g_line = __LINE__;
      last(0) = ts::atomic_add(count, {0}, 1);
    }
    return last;
  });
  std::string msg = user_error([&] { k(vec(64, ts::f32)); });
  expect_message(msg, "store_old", "atomic_errors_test.cpp", g_line + 1,
                 "several programs of the launch write the same elements", "use an atomic");
}

TEST(AtomicErrors, CheckBoundsReportsAnAtomicsIndexOutOfRange) {
  auto k = ts::kernel(
      "atomic_oob",
      [](ts::Tensor hist, ts::Tensor bins) {
        for (auto t : ts::tile(bins.size(0))) {
          g_line = __LINE__;
          ts::atomic_add(hist, {bins(t)}, 1);
        }
        return hist;
      },
      ts::Settings{.check_bounds = true});
  ts::Buffer bins = ts::Buffer::from_vector({0, 5, 1}, {3}, ts::i32);
  std::string msg = user_error([&] { k(vec(4, ts::i32), bins); });
  expect_message(
      msg, "atomic_oob", "atomic_errors_test.cpp", g_line + 1,
      "an atomic's index 5 is out of range for dimension 0 of tensor argument 0 (size 4)",
      "index within [0, size)");
}

TEST(AtomicErrors, CheckBoundsNamesTheSignalOrWaitWhoseIndexIsOutOfRange) {
  auto k = ts::kernel(
      "pad_oob",
      [](ts::Tensor pad) {
        for (auto i : ts::grid(pad.size(0))) {
          ts::signal(pad, {i + 10}, 1);
          ts::wait(pad, {i + 10}, 1);
        }
        return pad;
      },
      ts::Settings{.check_bounds = true});
  std::string msg = user_error([&] { k(vec(4, ts::i32)); });
  // Whichever program runs first reports (the race check shuffles their order): program i's
  // index is i + 10.
  EXPECT_TRUE(
      std::regex_search(msg, std::regex("a ts::(signal|wait)'s index 1[0-3] is out of range")))
      << msg;
}
