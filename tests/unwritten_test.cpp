// Reads of ts::empty memory before anything wrote it, which the interpreter refuses
// (interp/unwritten.hpp): on a GPU the memory holds garbage.
#include <gtest/gtest.h>

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

int g_line = 0;  // the line of the offending read, recorded while tracing

const char* kHint = "initialise the tensor (ts::zeros_like, ts::full_like";

void expect_message(const std::string& msg, const std::string& kernel, const std::string& what,
                    const std::string& hint) {
  user_error_test::expect_message(msg, kernel, "unwritten_test.cpp", g_line, what, hint);
}

}  // namespace

TEST(Unwritten, ReadingEmptyMemoryBeforeWritingItIsAnError) {
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
                 kHint);
}

TEST(Unwritten, AnElementNoEarlierLaunchWroteIsAnError) {
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

TEST(Unwritten, AnAtomicOnEmptyMemoryReadsIt) {
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
  expect_message(
      msg, "empty_histogram",
      "this atomic reads element (2) of the tensor allocated at line " + std::to_string(g_line - 3),
      kHint);
}

TEST(Unwritten, EmptyMemoryWrittenBeforeItIsReadIsFine) {
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

TEST(Unwritten, ZerosMemoryAndArgumentsAreNotTracked) {
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

TEST(Unwritten, ABoundReadFromEmptyMemoryIsAnError) {
  auto k = ts::kernel("empty_bound", [](ts::Tensor x) {
    ts::Tensor n = x.new_empty({1}, ts::i32);
    ts::Tensor out = x.new_zeros({x.size(0)});
    g_line = __LINE__ + 1;
    for (auto t : ts::tile(n)) out(t) = x(t);
    return out;
  });
  std::string msg = user_error([&] { k(buffer(ramp(4), {4})); });
  expect_message(msg, "empty_bound",
                 "this device scalar (an element read in host code: t(i), t.item(), ts::load(t)) "
                 "reads element (0) of the tensor allocated at line " +
                     std::to_string(g_line - 3),
                 kHint);
}
