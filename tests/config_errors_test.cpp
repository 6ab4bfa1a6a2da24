// Invalid configs and settings (values out of range, entries that do not match the
// kernel's loops, block sizes outside a declared range, index dtypes): each a UserError
// naming the kernel and its line, raised before anything runs.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <optional>
#include <regex>
#include <string>
#include <tessel/tessel.hpp>

#include "user_error_util.hpp"

namespace ts = tessel;

namespace {

int g_line = 0;  // the line of the offending statement, recorded while tracing

using namespace user_error_test;  // expect_message, user_error, vec, mat

TEST(Errors, HugeBlockSizesAreRejectedBeforeAllocating) {
  auto k = ts::kernel(
      "huge_tiles",
      [](ts::Tensor x) {
        ts::Tensor out = ts::empty_like(x);
        for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) out(tm, tn) = x(tm, tn);
        return out;
      },
      ts::Settings{.config = ts::Config{.block_sizes = std::vector<int64_t>{1 << 20, 1 << 20}}});
  std::string msg = user_error([&] { k(ts::Buffer::zeros({4, 4}, ts::f32)); });
  expect_message(msg, "huge_tiles", 0, "registers per thread", "use smaller block sizes");
}

// Invalid config values and settings: a UserError naming the kernel and its first loop's
// line, before anything runs.
TEST(Errors, InvalidConfigValuesAndSettings) {
  auto make = [](ts::Settings s) {
    return ts::kernel(
        "configured",
        [](ts::Tensor x) {
          ts::Tensor out = ts::empty_like(x);
          g_line = __LINE__ + 1;
          for (auto t : ts::tile(x.size(0))) out(t) = x(t) + 1;
          return out;
        },
        s);
  };
  struct Case {
    ts::Config config;
    std::string what, hint;
  };
  std::vector<Case> cases = {
      {ts::Config{.block_sizes = std::vector<int64_t>{-16}},
       "block size -16 is not a positive power of two", "use 1, 2, 4"},
      {ts::Config{.num_stages = 0}, "num_stages 0 is not a positive integer",
       "use 1 (no pipelining)"},
      {ts::Config{.maxnreg = 16}, "maxnreg 16 is outside [24, 255]", "between 24 and 255"},
      {ts::Config{.num_warps = 16, .maxnreg = 255},
       "maxnreg 255 with num_warps 16 needs 130560 registers",
       "use maxnreg <= 128 for num_warps 16"},
      {ts::Config{.num_sm_multiplier = 3}, "num_sm_multiplier 3 is not a positive power of two",
       "use 1, 2, 4 or 8"},
      {ts::Config{.num_sm_multiplier = -1}, "num_sm_multiplier -1", "use 1, 2, 4 or 8"},
      {ts::Config{.indexing = std::vector<std::string>(3, "pointer")},
       "3 indexing entries given, the kernel has 2 loads and stores", "one per load and store"},
      {ts::Config{.indexing = std::vector<std::string>{}}, "0 indexing entries given",
       "one entry for all"},
      {ts::Config{.indexing = std::vector<std::string>{"block_ptr"}},
       "indexing \"block_ptr\" is not supported", "\"tensor_descriptor\" (TMA loads)"}};
  for (const Case& c : cases) {
    auto k = make(ts::Settings{.config = c.config});
    std::string msg = user_error([&] { k(vec(8)); });
    expect_message(msg, "configured", g_line, "config: " + c.what, c.hint);
  }
  expect_message(user_error([&] { make(ts::Settings{.max_sms = -3}); }), "configured", 0,
                 "Settings::max_sms = -3 is not a positive number of SMs", "use at least 1");
  expect_message(user_error([&] { make(ts::Settings{.reserved_sms = -1}); }), "configured", 0,
                 "Settings::reserved_sms = -1 is negative", "use 0 or more");
}

// Config entries that do not match the kernel's loops name the kernel's first loop.
TEST(Errors, ConfigEntryCountsNameTheFirstLoop) {
  const int loop_line = __LINE__ + 7;
  auto make = [](ts::Config c) {
    return ts::kernel(
        "counted",
        [](ts::Tensor x) {
          ts::Tensor out = x.new_empty({x.size(0)});
          ts::register_reduction_dim(x.size(1));
          for (auto t : ts::tile(x.size(0))) out(t) = ts::sum(x(t, ts::all), 1);
          return out;
        },
        ts::Settings{.config = c});
  };
  ts::Buffer x = ts::Buffer::zeros({8, 64}, ts::f32);
  using R = std::vector<std::optional<int64_t>>;
  expect_message(user_error([&] {
                   make({.reduction_loops = R{16, 16}})(x);
                 }),
                 "counted", loop_line,
                 "config: 2 reduction_loops given, the kernel has 1 reduction dimensions",
                 "one entry");
  expect_message(user_error([&] { make({.reduction_loops = R{48}})(x); }), "counted", loop_line,
                 "reduction_loops chunk 48 is not a power of two", "use a power of two");
  expect_message(user_error([&] { make({.flatten_loops = std::vector<bool>{true}})(x); }),
                 "counted", loop_line, "flatten_loops has 1 entries, the kernel has 0",
                 "give one entry");
}

// A config block size outside the range ts::register_block_size declares.
TEST(Errors, BlockSizeOutsideItsDeclaredRange) {
  auto make = [](ts::Config c) {
    return ts::kernel(
        "ranged",
        [](ts::Tensor x) {
          ts::Tensor out = ts::empty_like(x);
          ts::BlockSize b = ts::register_block_size(16, 64);
          for (auto t : ts::tile(x.size(0), {.block_size = b})) out(t) = x(t) + 1;
          return out;
        },
        ts::Settings{.config = c});
  };
  for (int64_t bad : {4, 128}) {
    std::string msg =
        user_error([&] { make({.block_sizes = std::vector<int64_t>{bad}})(vec(100)); });
    EXPECT_NE(msg.find(fmt::format("block_sizes[0] = {} is outside the range [16, 64]", bad)),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("within the declared range"), std::string::npos) << msg;
  }
  EXPECT_EQ(make({.block_sizes = std::vector<int64_t>{32}})(vec(100)).to_vector()[99], 1.0);
}

// Tile indices are computed in the index dtype: a constant loop bound beyond 32 bits (here
// a reduction over ts::arange(2^40), rolled into a loop) needs index_dtype i64, which the
// unset index dtype picks; forcing i32 is an error.
TEST(Errors, ConstantLoopBoundBeyond32BitIndexArithmetic) {
  auto make = [](ts::Settings s) {
    return ts::kernel(
        "arange_sum",
        [](ts::Tensor x) {
          ts::Tensor out = ts::empty_like(x);
          for (auto t : ts::tile(x.size(0)))
            out(t) = x(t) + ts::sum(ts::arange(int64_t{1} << 40, ts::i64), 0);
          return out;
        },
        s);
  };
  ts::Buffer x = ts::Buffer::ones({8}, ts::i64);
  std::string wide = make({}).cuda(false, x).at(0);
  EXPECT_NE(wide.find("const long long pid"), std::string::npos) << wide;  // 64-bit tile indices
  std::string msg = user_error([&] { make({.index_dtype = ts::i32}).ir(x); });
  EXPECT_NE(msg.find("the loop bound 1099511627776 goes beyond 32-bit index arithmetic"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("set Settings::index_dtype = ts::i64"), std::string::npos) << msg;
  EXPECT_NE(msg.find("errors_test.cpp"), std::string::npos) << msg;
  EXPECT_NE(make({.index_dtype = ts::i64}).ir(x).find("1099511627776"), std::string::npos);
}

// A fractional number for an integer parameter, and an index dtype that is not i32/i64.
TEST(Errors, FractionalIntegerArgumentAndNonIndexDtype) {
  // Errors of a call point at the call's line (the argument count and kinds are checked
  // by the C++ compiler: tests/compile_errors).
  auto scale = ts::kernel("scale", [](ts::Tensor x, int a) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) * a;
    return out;
  });
  int call = __LINE__ + 1;
  std::string msg = user_error([&] { scale(vec(8), 2.7); });
  expect_message(msg, "scale", call, "argument 1 is 2.7, but the kernel's parameter is an integer",
                 "pass an integer");
  // Where the kernel names its parameters, the error names the argument.
  auto named = ts::kernel("scale_named", {"x", "a"}, [](ts::Tensor x, int a) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) * a;
    return out;
  });
  call = __LINE__ + 1;
  msg = user_error([&] { named(vec(8), 2.7); });
  expect_message(msg, "scale_named", call,
                 "argument 1 ('a') is 2.7, but the kernel's parameter is an integer",
                 "pass an integer");
  // An unsigned value past INT64_MAX, or 2^63 as a double, is refused, not wrapped.
  auto wide = ts::kernel("wide", {"x", "n"}, [](ts::Tensor x, int64_t n) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) * n;
    return out;
  });
  call = __LINE__ + 1;
  msg = user_error([&] { wide(vec(4), UINT64_MAX); });
  expect_message(msg, "wide", call,
                 "argument 1 ('n') is 1.8446744073709552e+19, outside the range "
                 "[-9223372036854775808, 9223372036854775807]",
                 "a kernel's integer parameters hold at most 2^63 - 1");
  call = __LINE__ + 1;
  msg = user_error([&] { wide(vec(4), 9223372036854775808.0); });
  expect_message(msg, "wide", call, "argument 1 ('n') is 9.223372036854776e+18, outside",
                 "hold at most 2^63 - 1");
  call = __LINE__ + 1;
  msg = user_error([&] { named(ts::Buffer(), 2); });
  expect_message(msg, "scale_named", call,
                 "argument 0 ('x') is an undefined Buffer (default-constructed or moved from)",
                 "pass a Buffer that holds a tensor");
  EXPECT_EQ(scale(ts::Buffer::full({4}, 1.5, ts::f32), 2.0).to_vector(),
            std::vector<double>(4, 3.0));
  // Values an `int` cannot hold are refused, not truncated.
  call = __LINE__ + 1;
  msg = user_error([&] { scale(vec(8), int64_t{1} << 32); });
  expect_message(msg, "scale", call,
                 "argument 1 is 4294967296, outside the range [-2147483648, 2147483647]",
                 "declare the parameter as int64_t");
  call = __LINE__ + 1;
  msg = user_error([&] { scale(vec(8), 3e9); });
  expect_message(msg, "scale", call, "argument 1 is 3000000000, outside",
                 "declare the parameter as int64_t");
  auto flag = ts::kernel("flag", [](ts::Tensor x, bool b) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) * b;
    return out;
  });
  call = __LINE__ + 1;
  msg = user_error([&] { flag(vec(8), 2); });
  expect_message(msg, "flag", call, "argument 1 is 2, outside the range [0, 1]",
                 "pass a value that fits");
  EXPECT_EQ(scale(ts::Buffer::full({2}, 1.0, ts::f32), int64_t{-2147483648}).to_vector(),
            std::vector<double>(2, -2147483648.0));
  for (ts::DType t : {ts::boolean, ts::f16, ts::f32}) {
    std::string msg = user_error([&] {
      ts::kernel(
          "idx", [](ts::Tensor x) { return x; }, ts::Settings{.index_dtype = t});
    });
    expect_message(msg, "idx", 0, "is not an index dtype", "use ts::i32 or ts::i64");
  }
}

// A register_block_size range without a power of two is refused where it is declared; a
// range holding one gets a power of two by default.
TEST(Errors, BlockSizeRangeWithoutAPowerOfTwo) {
  auto make = [](int64_t lo, int64_t hi) {
    return ts::kernel("ranged_default", [lo, hi](ts::Tensor x) {
      ts::Tensor out = ts::empty_like(x);
      ts::BlockSize b = ts::register_block_size(lo, hi);
      for (auto t : ts::tile(x.size(0), {.block_size = b})) out(t) = x(t) + 1;
      return out;
    });
  };
  std::string msg = user_error([&] { make(5, 7)(vec(100)); });
  EXPECT_NE(msg.find("block size range [5, 7] holds no power of two"), std::string::npos) << msg;
  EXPECT_NE(msg.find("errors_test.cpp:" + std::to_string(__LINE__ - 7)), std::string::npos) << msg;
  EXPECT_NE(msg.find("e.g. [4, 8]"), std::string::npos) << msg;
  for (auto [lo, hi] : {std::pair<int64_t, int64_t>{3, 6}, {5, 8}, {1, 3}}) {
    auto k = make(lo, hi);
    EXPECT_EQ(k(vec(100)).to_vector()[99], 1.0) << lo << " " << hi;
    // The default config, as the generated code's header prints it.
    std::string src = k.cuda(false, vec(100)).at(0);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(src, m, std::regex(R"("block_sizes":\[(\d+)\])"))) << src;
    int64_t b = std::stoll(m[1]);
    EXPECT_TRUE(b >= lo && b <= hi && (b & (b - 1)) == 0) << lo << " " << hi << ": " << b;
  }
}

// A PidType value outside the enum is an error naming the kernel, on the interpreter too.
TEST(Errors, OutOfRangePidType) {
  auto k = ts::kernel(
      "bad_pid",
      [](ts::Tensor x) {
        ts::Tensor out = ts::empty_like(x);
        for (auto t : ts::tile(x.size(0))) out(t) = x(t);
        return out;
      },
      ts::Settings{.config = ts::Config{.pid_type = static_cast<ts::PidType>(9)}});
  std::string msg = user_error([&] { k(vec(4)); });
  EXPECT_NE(msg.find("kernel 'bad_pid'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("pid_type value 9 is not one of flat, xyz"), std::string::npos) << msg;
}

}  // namespace

// A boolean environment variable takes 1/0, true/false, on/off or yes/no; anything else is an
// error at the call naming the variable, not a silent choice.
TEST(Errors, ABooleanEnvironmentVariableTakesOnlyBooleans) {
  auto add_one = ts::kernel("add_one", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) + 1.0;
    return out;
  });
  for (const char* on : {"1", "yes", "TRUE", "On"}) {
    ::setenv("TESSEL_CHECK_BOUNDS", on, 1);
    EXPECT_EQ(add_one(vec(4)).to_vector(), std::vector<double>(4, 1.0)) << on;
  }
  ::setenv("TESSEL_CHECK_BOUNDS", "maybe", 1);
  const int call = __LINE__ + 1;
  std::string msg = user_error([&] { add_one(vec(4)); });
  ::unsetenv("TESSEL_CHECK_BOUNDS");
  expect_message(msg, "add_one", call, "TESSEL_CHECK_BOUNDS=maybe is not a boolean",
                 "set TESSEL_CHECK_BOUNDS=1 to turn it on, or 0 (or unset it) to turn it off");
  EXPECT_EQ(add_one(vec(4)).to_vector(), std::vector<double>(4, 1.0));
  // Read whatever Settings::check_bounds says.
  auto checked = ts::kernel(
      "add_one_checked",
      [](ts::Tensor x) {
        ts::Tensor out = ts::empty_like(x);
        for (auto t : ts::tile(x.size(0))) out(t) = x(t) + 1.0;
        return out;
      },
      ts::Settings{.check_bounds = true});
  EXPECT_EQ(checked(vec(4)).to_vector(), std::vector<double>(4, 1.0));
  ::setenv("TESSEL_CHECK_BOUNDS", "maybe", 1);
  msg = user_error([&] { checked(vec(4)); });
  ::unsetenv("TESSEL_CHECK_BOUNDS");
  EXPECT_NE(msg.find("TESSEL_CHECK_BOUNDS=maybe is not a boolean"), std::string::npos) << msg;
  // TESSEL_INTERPRET is checked on CPU Buffers too, TESSEL_PRINT_CODE at the trace.
  ::setenv("TESSEL_INTERPRET", "2", 1);
  msg = user_error([&] { add_one(vec(4)); });
  ::unsetenv("TESSEL_INTERPRET");
  EXPECT_NE(msg.find("TESSEL_INTERPRET=2 is not a boolean"), std::string::npos) << msg;
  ::setenv("TESSEL_PRINT_CODE", "maybe", 1);
  msg = user_error([&] { add_one(vec(7)); });
  ::unsetenv("TESSEL_PRINT_CODE");
  EXPECT_NE(msg.find("TESSEL_PRINT_CODE=maybe is not a boolean"), std::string::npos) << msg;
}
