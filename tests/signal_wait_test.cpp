// Interpreter: signals and waits across programs (a chain where program p waits for
// program p - 1, a ticket lock with signal's wait_for, wait's update), and waits that
// nothing can satisfy, which end with an error instead of hanging.
#include <gtest/gtest.h>

#include <vector>

#include "atomic_kernels.hpp"
#include "interp_test_util.hpp"
#include "user_error_util.hpp"

namespace ts = tessel;
using interp_test::buffer;
using user_error_test::expect_message;
using user_error_test::user_error;

namespace {
int g_line = 0;  // the line of the statement under test, set while tracing
}  // namespace

TEST(SignalWait, EachProgramOfAChainRunsAfterItsPredecessor) {
  for (int64_t n : {1, 2, 16, 64}) {
    ts::Buffer pad = ts::Buffer::zeros({n}, ts::i32);
    static_cast<int32_t*>(pad.data_ptr())[0] = 1;  // program 0 may start
    std::vector<double> want = interp_test::ramp(n, 1);
    EXPECT_EQ(atomic_test::make_chain()(pad).to_vector(), want) << n;
    EXPECT_EQ(pad.to_vector(), std::vector<double>(n, 1)) << n;  // every pad signalled
  }
}

TEST(SignalWait, ATicketPassedOnWithWaitForServesProgramsInOrder) {
  ts::Buffer served = ts::Buffer::zeros({1}, ts::i32);
  auto [ticket, order] = atomic_test::make_ticket()(served);
  EXPECT_EQ(ticket.item(), 1);  // served has one element: one program
  EXPECT_EQ(order.to_vector(), std::vector<double>{0});
  ts::Buffer many = ts::Buffer::zeros({24}, ts::i32);
  auto [ticket24, order24] = atomic_test::make_ticket()(many);
  EXPECT_EQ(ticket24.item(), 24);
  EXPECT_EQ(order24.to_vector(), interp_test::ramp(24));  // program p was served p-th
  EXPECT_EQ(many.to_vector()[0], 24);
}

TEST(SignalWait, SignalReturnsTheOldValues) {
  auto k = ts::kernel("signal_olds", [](ts::Tensor pad) {
    ts::Tensor olds = ts::empty_like(pad);
    for (auto t : ts::tile(pad.size(0))) olds(t) = ts::signal(pad, {t}, 7);
    return olds;
  });
  ts::Buffer pad = buffer({0, 3, 7}, {3}, ts::i64);
  EXPECT_EQ(k(pad).to_vector(), (std::vector<double>{0, 3, 7}));
  EXPECT_EQ(pad.to_vector(), (std::vector<double>{7, 7, 7}));
}

TEST(SignalWait, WaitWithUpdateResetsThePad) {
  // Program 1 signals pad[0] = 2 (pad[p - 1]: masked in program 0); program 0 waits for
  // it and resets it to 0 (pad[p]: masked in program 1).
  auto k = ts::kernel("wait_update", [](ts::Tensor pad) {
    ts::Tensor out = pad.new_zeros({2}, ts::i32);
    for (auto p : ts::grid(2)) {
      ts::signal(pad, {p - 1}, 2);
      ts::wait(pad, {p}, 2, 0);
      out(p) = 1;
    }
    return out;
  });
  ts::Buffer pad = ts::Buffer::zeros({1}, ts::u64);
  EXPECT_EQ(k(pad).to_vector(), (std::vector<double>{1, 1}));
  EXPECT_EQ(pad.item(), 0);
}

TEST(SignalWait, AWaitNothingCanSatisfyIsAnErrorNamingTheElement) {
  auto k = ts::kernel("never", [](ts::Tensor pad) {
    ts::Tensor out = pad.new_zeros({pad.size(0)}, ts::i32);
    for (auto p : ts::grid(pad.size(0))) {
      g_line = __LINE__;
      ts::wait(pad, {p}, 1);
      out(p) = 1;
    }
    return out;
  });
  std::string msg = user_error([&] { k(ts::Buffer::zeros({3}, ts::i32)); });
  expect_message(msg, "never", "signal_wait_test.cpp", g_line + 1,
                 "waits for the value 1 but it holds 0, and no program of the launch can change "
                 "it any more",
                 "signal that element from another program");
  EXPECT_NE(msg.find("element ("), std::string::npos) << msg;
}

TEST(SignalWait, AWaitForAProgramThatAlreadyFinishedIsAnError) {
  // Program 1 signals 1, program 0 waits for 2: once program 1 is done, nothing can help.
  auto k = ts::kernel("wrong_value", [](ts::Tensor pad) {
    ts::Tensor out = pad.new_zeros({2}, ts::i32);
    for (auto p : ts::grid(2)) {
      ts::signal(pad, {p - 1}, 1);
      g_line = __LINE__;
      ts::wait(pad, {p}, 2);
      out(p) = 1;
    }
    return out;
  });
  std::string msg = user_error([&] { k(ts::Buffer::zeros({1}, ts::i32)); });
  expect_message(msg, "wrong_value", "signal_wait_test.cpp", g_line + 1,
                 "element (0) waits for the value 2 but it holds 1", "ts::signal");
}
