// Errors of the host side of a kernel: allocations in host code that cannot be made (a
// byte count past 2^63 - 1, more memory than exists), and language calls made while no
// kernel is being traced. Each names the user's line and says what to do.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <tessel/tessel.hpp>

#include "user_error_util.hpp"

namespace ts = tessel;

namespace {

using user_error_test::user_error;

int g_line = 0;  // the line of the offending statement, recorded while tracing
const char* const kFile = "host_errors_test.cpp";

// `msg` names no kernel, this file at `line`, and says the call belongs in a kernel body.
void expect_outside_kernel(const std::string& msg, int line) {
  EXPECT_EQ(msg.find("kernel '"), std::string::npos) << msg;
  EXPECT_NE(msg.find(fmt::format("{}:{}: ", kFile, line)), std::string::npos)
      << "expected line " << line << " in: " << msg;
  EXPECT_NE(msg.find("while no kernel is being traced"), std::string::npos) << msg;
  EXPECT_NE(msg.find("must be inside a ts::kernel body"), std::string::npos) << msg;
}

ts::Buffer vec(int n) { return ts::Buffer::zeros({n}, ts::f32); }

constexpr int64_t k2To30 = int64_t{1} << 30, k2To31 = int64_t{1} << 31, k2To40 = int64_t{1} << 40;

}  // namespace

// 2^62 elements fit int64, their 2^64 bytes do not: the message says the count overflows
// (never a wrapped or negative size).
TEST(HostErrors, AllocationWhoseByteCountOverflows) {
  auto k = ts::kernel("bytes_overflow", [](ts::Tensor x) {
    g_line = __LINE__ + 1;
    ts::Tensor out = ts::empty({k2To31, k2To31}, ts::f32);
    for (auto t : ts::tile(x.size(0))) out(t, 0) = x(t);
    return out;
  });
  std::string msg = user_error([&] { k(vec(4)); });
  user_error_test::expect_message(
      msg, "bytes_overflow", kFile, g_line,
      "cannot allocate a f32 tensor of shape [2147483648, 2147483648] (more than "
      "2^63 - 1 bytes: its byte count overflows 64 bits)",
      "allocate less: check the sizes passed to the allocation");
  EXPECT_EQ(msg.find('-', msg.find("shape")), msg.find("- 1 bytes")) << msg;  // no negative size
}

// The trial's case: constant sizes whose element count overflows.
TEST(HostErrors, AllocationWhoseElementCountOverflows) {
  auto k = ts::kernel("elements_overflow", [](ts::Tensor x) {
    g_line = __LINE__ + 1;
    ts::Tensor out = x.new_zeros({k2To40, k2To40}).named("big");
    for (auto t : ts::tile(x.size(0))) out(t, 0) = x(t);
    return out;
  });
  std::string msg = user_error([&] { k(vec(4)); });
  user_error_test::expect_message(
      msg, "elements_overflow", kFile, g_line,
      "cannot allocate a f32 tensor of shape [1099511627776, 1099511627776] (more "
      "than 2^63 - 1 bytes: its byte count overflows 64 bits) for 'big'",
      "allocate less");
}

// 2^62 bytes fit int64 but no machine's memory: the exact count, and out of memory.
TEST(HostErrors, AllocationLargerThanMemory) {
  auto k = ts::kernel("too_much_memory", [](ts::Tensor x, ts::Value n) {
    g_line = __LINE__ + 1;
    ts::Tensor out = x.new_full({n, n}, 1.0);
    for (auto t : ts::tile(x.size(0))) out(t, 0) = x(t);
    return out;
  });
  std::string msg = user_error([&] { k(vec(4), k2To30); });
  user_error_test::expect_message(
      msg, "too_much_memory", kFile, g_line,
      "cannot allocate a f32 tensor of shape [1073741824, 1073741824] "
      "(4611686018427387904 bytes, 4294967296.0 GiB) on cpu: out of memory",
      "allocate less");
}

TEST(HostErrors, AllocationWithANegativeSize) {
  auto k = ts::kernel("negative_alloc", [](ts::Tensor x, ts::Value n) {
    g_line = __LINE__ + 1;
    ts::Tensor out = ts::empty({x.size(0), n - 8}, ts::f32);
    for (auto t : ts::tile(x.size(0))) out(t, 0) = x(t);
    return out;
  });
  std::string msg = user_error([&] { k(vec(4), 3); });
  user_error_test::expect_message(msg, "negative_alloc", kFile, g_line,
                                  "allocation of shape [4, -5] has a negative size -5",
                                  "check the sizes passed to the allocation");
}

// Language calls outside a kernel being traced name the user's line.
TEST(HostErrors, TileOutsideAKernel) {
  std::string msg = user_error([&] {
    g_line = __LINE__ + 1;
    for (auto t : ts::tile(8)) (void)t;
  });
  expect_outside_kernel(msg, g_line);
}

TEST(HostErrors, GridOutsideAKernel) {
  std::string msg = user_error([&] {
    g_line = __LINE__ + 1;
    for (auto i : ts::grid(8)) (void)i;
  });
  expect_outside_kernel(msg, g_line);
}

TEST(HostErrors, AllocationAndValuesOutsideAKernel) {
  std::string msg = user_error([&] {
    g_line = __LINE__ + 1;
    ts::Tensor t = ts::empty({4}, ts::f32);
  });
  expect_outside_kernel(msg, g_line);
  msg = user_error([&] {
    g_line = __LINE__ + 1;
    ts::Value v = 3;
  });
  expect_outside_kernel(msg, g_line);
}

// A tensor or value kept from a trace and used after it: loads, stores and ts::sum.
TEST(HostErrors, LoadsStoresAndReductionsOutsideAKernel) {
  static std::optional<ts::Tensor> kept_tensor;
  static ts::Value kept_value;
  auto k = ts::kernel("keeps_for_later", [](ts::Tensor x) {
    kept_tensor = x;
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) {
      kept_value = x(t);
      out(t) = x(t);
    }
    return out;
  });
  k(vec(4));
  std::string msg = user_error([&] {
    g_line = __LINE__ + 1;
    ts::Value v = (*kept_tensor)(0);
  });
  expect_outside_kernel(msg, g_line);
  msg = user_error([&] {
    g_line = __LINE__ + 1;
    (*kept_tensor)(0) = kept_value;
  });
  expect_outside_kernel(msg, g_line);
  msg = user_error([&] {
    g_line = __LINE__ + 1;
    ts::Value s = ts::sum(kept_value, 0);
  });
  expect_outside_kernel(msg, g_line);
}
