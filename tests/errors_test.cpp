// Deliberately wrong kernels: each must raise a UserError that names the kernel, the
// user's file and line, and says what to do.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <optional>
#include <regex>
#include <string>
#include <tessel/tessel.hpp>
#include <tessel/testing.hpp>

#include "user_error_util.hpp"

namespace ts = tessel;

namespace {

int g_line = 0;  // the line of the offending statement, recorded while tracing

using user_error_test::user_error;

// `msg` names kernel `kernel`, this file at `line` (when > 0), and contains `what` and
// `hint`.
void expect_message(const std::string& msg, const std::string& kernel, int line,
                    const std::string& what, const std::string& hint) {
  user_error_test::expect_message(msg, kernel, "errors_test.cpp", line, what, hint);
}

ts::Buffer vec(int n) { return ts::Buffer::zeros({n}, ts::f32); }
ts::Buffer mat(int m, int n) { return ts::Buffer::zeros({m, n}, ts::f32); }

}  // namespace

TEST(Errors, BitwiseOpOnFloats) {
  auto k = ts::kernel("bits_on_floats", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) {
      g_line = __LINE__ + 1;
      out(t) = x(t) & x(t);
    }
    return out;
  });
  std::string msg = user_error([&] { k(vec(8)); });
  expect_message(msg, "bits_on_floats", g_line,
                 "bitwise operator & needs integer or bool operands, got f32",
                 "convert with .to(ts::i32) first");
}

TEST(Errors, TooManyIndicesForTheRank) {
  auto k = ts::kernel("rank_mismatch", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto [i, j] : ts::grid(x.size(0), x.size(1))) {
      g_line = __LINE__ + 1;
      out(i, j) = x(i, j, 0);
    }
    return out;
  });
  std::string msg = user_error([&] { k(mat(2, 3)); });
  expect_message(msg, "rank_mismatch", g_line, "has 2 dimensions but is indexed with 3 indices",
                 "index each dimension once");
}

// Counts of one read in the singular.
TEST(Errors, ASingleDimensionIsSaidInTheSingular) {
  auto k = ts::kernel("rank_one", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto i : ts::grid(x.size(0))) {
      g_line = __LINE__ + 1;
      out(i) = x(i, 0);
    }
    return out;
  });
  std::string msg = user_error([&] { k(vec(8)); });
  expect_message(msg, "rank_one", g_line, "has 1 dimension but is indexed with 2 indices",
                 "index each dimension once");
}

TEST(Errors, StoreOfATileIntoASmallerIndexedShape) {
  auto k = ts::kernel("store_shape", [](ts::Tensor x) {
    ts::Tensor out = ts::empty({x.size(0)}, ts::f32);
    for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) {
      g_line = __LINE__ + 1;
      out(tm) = x(tm, tn) * 2;
    }
    return out;
  });
  std::string msg = user_error([&] { k(mat(4, 4)); });
  expect_message(msg, "store_shape", g_line, "shape mismatch in a store",
                 "the value must broadcast to the indexed shape");
}

TEST(Errors, SizeOfADimensionPastTheRank) {
  auto k = ts::kernel("size_rank", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    g_line = __LINE__ + 1;
    ts::Value n = x.size(5);
    for (auto t : ts::tile(n)) out(t) = x(t);
    return out;
  });
  std::string msg = user_error([&] { k(mat(2, 2)); });
  expect_message(msg, "size_rank", g_line, "size(5) is out of range", "use a dimension in [-2, 1]");
}

TEST(Errors, HostTensorUsedAsAValueInsideALoop) {
  auto k = ts::kernel("host_tensor_value", [](ts::Tensor x, ts::Tensor bound) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) {
      g_line = __LINE__ + 1;
      out(t) = x(t) + bound;
    }
    return out;
  });
  std::string msg = user_error([&] { k(vec(8), ts::Buffer::scalar(3, ts::i32)); });
  expect_message(msg, "host_tensor_value", g_line,
                 "is used as a value inside a device loop without loading it",
                 "use ts::load(x) or x.item()");
}

TEST(Errors, LoopBoundFromTrueDivision) {
  auto k = ts::kernel("float_bound", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    g_line = __LINE__ + 1;
    for (auto t : ts::tile(x.size(0) / 2)) out(t) = x(t);
    return out;
  });
  std::string msg = user_error([&] { k(vec(8)); });
  expect_message(msg, "float_bound", g_line, "a loop bound is not an integer",
                 "use ts::floordiv for integer division");
}

TEST(Errors, CpuBufferPassedWithAGpuBuffer) {
  if (!ts::gpu_available()) GTEST_SKIP() << "no GPU: mixing devices needs a cuda Buffer";
  auto k = ts::kernel("mixed_devices", [](ts::Tensor x, ts::Tensor y) {
    for (auto t : ts::tile(x.size(0))) y(t) = x(t);
  });
  std::string msg = user_error([&] { k(vec(4), ts::Buffer::zeros({4}, ts::f32, ts::cuda(0))); });
  expect_message(msg, "mixed_devices", 0, "argument 1 is on cuda:0 but argument 0 is on cpu",
                 "a CPU buffer cannot be passed with a GPU buffer");
}

TEST(Errors, BreakOutOfALoopBody) {
  auto k = ts::kernel("early_break", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    g_line = __LINE__ + 1;
    for (auto t : ts::tile(x.size(0))) {
      out(t) = x(t);
      break;
    }
    return out;
  });
  std::string msg = user_error([&] { k(vec(8)); });
  expect_message(msg, "early_break", g_line, "the body of this loop was left early",
                 "device loops cannot be left early");
}

TEST(Errors, ReturnOutOfALoopBody) {
  auto k = ts::kernel("early_return", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto i : ts::grid(x.size(0))) {
      g_line = __LINE__ + 1;
      for (auto t : ts::tile(x.size(1))) {
        out(i, t) = x(i, t);
        return out;
      }
    }
    return out;
  });
  std::string msg = user_error([&] { k(mat(2, 4)); });
  expect_message(msg, "early_return", g_line, "the body of this loop was left early",
                 "device loops cannot be left early");
}

TEST(Errors, ValueComputedInsideALoopUsedAfterIt) {
  auto k = ts::kernel("escaped_value", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto i : ts::grid(x.size(0))) {
      std::vector<ts::Value> saved;
      for (auto t : ts::tile(x.size(1))) {
        g_line = __LINE__ + 1;
        saved.push_back(x(i, t) * 2);
      }
      out(i, 0) = saved[0];
    }
    return out;
  });
  std::string msg = user_error([&] { k(mat(2, 4)); });
  expect_message(msg, "escaped_value", g_line,
                 "a value computed inside a loop is used after the loop ends",
                 "declare the variable before the loop");
}

TEST(Errors, HostVariableAssignedInsideTheTopLevelLoop) {
  auto k = ts::kernel("top_level_carry", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    ts::Value acc = 0.0;
    for (auto t : ts::tile(x.size(0))) {
      g_line = __LINE__ + 1;
      acc = acc + ts::sum(x(t), 0);
    }
    return out;
  });
  std::string msg = user_error([&] { k(vec(8)); });
  expect_message(msg, "top_level_carry", g_line,
                 "a variable declared outside the top-level loop is assigned inside it",
                 "declare the variable inside the loop");
}

TEST(Errors, DeviceScalarIndexOutOfRange) {
  // Raised by the interpreter when the launch reads the element.
  auto k = ts::kernel("dev_scalar_oob", [](ts::Tensor x, ts::Tensor sizes) {
    ts::Tensor out = ts::zeros_like(x);
    g_line = __LINE__ + 1;
    ts::Value n = sizes(5);
    for (auto t : ts::tile(n)) out(t) = x(t);
    return out;
  });
  std::string msg = user_error([&] { k(vec(8), ts::Buffer::zeros({3}, ts::i32)); });
  expect_message(msg, "dev_scalar_oob", g_line, "a device scalar reads index 5 of dimension 0",
                 "must lie inside the tensor when the kernel runs");
}

TEST(Errors, TileUsedOutsideItsLoop) {
  auto k = ts::kernel("tile_escape", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto i : ts::grid(x.size(0))) {
      std::vector<ts::Tile> tiles;
      for (auto t : ts::tile(x.size(1))) tiles.push_back(t);
      g_line = __LINE__ + 1;
      out(i, tiles[0]) = 1;
    }
    return out;
  });
  std::string msg = user_error([&] { k(mat(2, 4)); });
  expect_message(msg, "tile_escape", g_line, "a tile is used outside the loop that defines it",
                 "use a tile only inside its ts::tile loop");
}

namespace {

TEST(Errors, CompoundAssignmentNamesTheUsersLine) {
  auto k = ts::kernel("acc_pluseq", [](ts::Tensor x) {
    ts::Tensor out = x.new_empty({x.size(0)}, ts::i32);
    for (auto tm : ts::tile(x.size(0))) {
      ts::Value acc = ts::zeros({tm}, ts::i32);
      for (auto tn : ts::tile(x.size(1))) {
        g_line = __LINE__ + 1;
        acc += ts::sum(x(tm, tn), 1);
      }
      out(tm) = acc;
    }
    return out;
  });
  std::string msg = user_error([&] { k(ts::Buffer::zeros({4, 4}, ts::i32)); });
  expect_message(msg, "acc_pluseq", g_line, "a loop-carried variable changes from i32",
                 "initialize it");
}

TEST(Errors, ValueFromOneTopLevelLoopUsedInAnother) {
  auto k = ts::kernel("cross_loop", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    ts::Value v;
    for (auto t : ts::tile(x.size(0), {.block_size = 4})) {
      g_line = __LINE__ + 1;
      v = ts::sum(x(t), 0);
    }
    for (auto t : ts::tile(x.size(0), {.block_size = 4})) out(t) = v;
    return out;
  });
  std::string msg = user_error([&] { k(ts::Buffer::zeros({8}, ts::f32)); });
  expect_message(msg, "cross_loop", g_line,
                 "a value computed inside one loop is used in another loop", "recompute the value");
}

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

TEST(Errors, ConstReferenceParametersWork) {
  auto k = ts::kernel("constref", [](const ts::Tensor& x, const ts::Value& s) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) + s;
    return out;
  });
  EXPECT_EQ(k(ts::Buffer::ones({3}, ts::f32), 2.0).to_vector(), (std::vector<double>{3, 3, 3}));
}

}  // namespace

// x(tm, tn) + y(tm, tn) with the loop over x's sizes and a y of fewer columns: torch
// raises; tessel would read y's missing columns as masked zeros, so every call checks
// that y covers the loop's bound (a larger y is read as a prefix, as a view would be).
TEST(Errors, TensorSmallerThanTheTileLoopIndexingIt) {
  for (bool fixed : {false, true}) {
    auto k = ts::kernel(
        "add_mismatch",
        [](ts::Tensor x, ts::Tensor y) {
          ts::Tensor out = ts::empty_like(x);
          for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) {
            g_line = __LINE__ + 1;
            out(tm, tn) = x(tm, tn) + y(tm, tn);
          }
          return out;
        },
        ts::Settings{.static_shapes = fixed});
    std::string msg = user_error([&] { k(mat(8, 12), mat(8, 10)); });
    expect_message(
        msg, "add_mismatch", g_line,
        "tensor argument 1 size(1) is 10, less than the bound tensor argument 0 size(1) = 12",
        "pass tensors whose sizes match");
    // Equal shapes, and a larger y, are fine; a second call with a smaller y is caught.
    ts::Buffer ok = k(mat(8, 12), ts::Buffer::full({9, 13}, 1.0, ts::f32));
    EXPECT_EQ(ok.to_vector(), std::vector<double>(96, 1.0));
    EXPECT_EQ(k(mat(8, 12), mat(8, 12)).to_vector(), std::vector<double>(96, 0.0));
    EXPECT_NE(user_error([&] { k(mat(16, 16), mat(15, 16)); }), "<no error>");
  }
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
       "indexing \"block_ptr\" is not supported", "pointer indexing only"}};
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

// ts::full with a value its integer dtype cannot hold (torch.full raises too): it wrapped.
TEST(Errors, FullValueOutsideItsIntegerDtype) {
  const int line = __LINE__ + 3;
  auto k = ts::kernel("full_range", [](ts::Tensor x) {
    ts::Tensor out = x.new_empty({x.size(0)}, ts::i64);
    for (auto t : ts::tile(x.size(0))) out(t) = ts::full({t}, 9223372036854775808.0, ts::i64);
    return out;
  });
  expect_message(user_error([&] { k(vec(8)); }), "full_range", line,
                 "the constant 9.223372036854776e+18 cannot be converted to i64 without overflow",
                 "a wider integer dtype, or a float dtype");
  auto u = ts::kernel("full_u64", [](ts::Tensor x) {
    ts::Tensor out = x.new_empty({x.size(0)}, ts::u64);
    for (auto t : ts::tile(x.size(0))) out(t) = ts::full({t}, 9223372036854775808.0, ts::u64);
    return out;
  });
  EXPECT_EQ(u(vec(2)).to_vector(), std::vector<double>(2, 9223372036854775808.0));
}

// A tile constructor with a negative constant extent.
TEST(Errors, NegativeExtentOfATileConstructor) {
  const int line = __LINE__ + 3;
  auto k = ts::kernel("negative", [](ts::Tensor x) {
    ts::Tensor out = x.new_empty({x.size(0)});
    for (auto t : ts::tile(x.size(0))) out(t) = ts::sum(ts::zeros({t, -4}, ts::f32), 1);
    return out;
  });
  expect_message(user_error([&] { k(vec(8)); }), "negative", line, "the extent -4 is negative",
                 "use a size of 0 or more");
}

// A ts::tile range iterated twice: each range makes one loop.
TEST(Errors, ATileRangeIteratedTwice) {
  const int line = __LINE__ + 3;  // the range's line
  auto k = ts::kernel("twice", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    auto tiles = ts::tile(x.size(0));
    for (auto t : tiles) out(t) = x(t);
    for (auto t : tiles) out(t) = out(t) + x(t);
    return out;
  });
  expect_message(user_error([&] { k(vec(8)); }), "twice", line,
                 "this ts::tile range is iterated a second time", "call ts::tile(...) again");
}

// An output argument whose elements overlap (stride 0) would race on a GPU.
TEST(Errors, WrittenTensorWithAZeroStride) {
  auto k = ts::kernel("fill_into", [](ts::Tensor out) {
    for (auto t : ts::tile(out.size(0))) out(t) = ts::full({t}, 2.0, ts::f32);
  });
  ts::Buffer one = ts::Buffer::zeros({1}, ts::f32);
  std::string msg = user_error([&] { k(one.view_as_strided({8}, {0}, 0)); });
  expect_message(msg, "fill_into", 0,
                 "tensor argument 0 is written by the kernel but its dim 0 has stride 0",
                 "do not overlap");
  ts::Buffer ok = ts::Buffer::zeros({8}, ts::f32);
  k(ok);
  EXPECT_EQ(ok.to_vector(), std::vector<double>(8, 2.0));
}

// A tensor without elements overlaps nothing: a zero stride beside a size-0 dim (every
// other column of an [8, 0] tensor) is written without complaint.
TEST(Errors, WrittenEmptyTensorWithAZeroStrideIsAccepted) {
  auto k = ts::kernel("fill_rows", [](ts::Tensor out) {
    for (auto t : ts::tile(out.size(0))) out(t, ts::all) = ts::full({t, out.size(1)}, 2.0, ts::f32);
  });
  ts::Buffer empty = ts::Buffer::zeros({1}, ts::f32).view_as_strided({8, 0}, {0, 2}, 0);
  k(empty);
  EXPECT_EQ(empty.numel(), 0);
}

// A launch of 2^31 programs or more is refused on the interpreter as on the GPU (instead
// of running for hours).
TEST(Errors, GridOfTooManyProgramsOnTheInterpreter) {
  const int line = __LINE__ + 3;
  auto k = ts::kernel("many", [](ts::Tensor x, ts::Value n) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(n, {.block_size = 1})) out(t) = x(t) + 1;
    return out;
  });
  expect_message(user_error([&] { k(vec(8), int64_t{1} << 33); }), "many", line,
                 "the launch needs 8589934592 programs, more than a grid can hold",
                 "a persistent pid_type");
  EXPECT_EQ(k(vec(8), int64_t{8}).to_vector(), std::vector<double>(8, 1.0));
}

// A C++ integer that does not fit the i32 tile value it meets (torch refuses it too).
TEST(Errors, IntegerConstantBeyondTheTileDtype) {
  const int line = __LINE__ + 3;
  auto k = ts::kernel("wide_constant", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) + (int64_t{1} << 40);
    return out;
  });
  ts::Buffer x = ts::Buffer::zeros({4}, ts::i32);
  expect_message(user_error([&] { k(x); }), "wide_constant", line,
                 "the constant 1099511627776 does not fit i32, the dtype of the other operand",
                 ".to(ts::i64)");
  EXPECT_EQ(k(ts::Buffer::zeros({4}, ts::i64)).to_vector(),
            std::vector<double>(4, 1099511627776.0));
}

// C++ unsigned integers past 2^63 - 1 fit u64 tile values only; a negative C++ integer
// next to a u64 value wraps as two's complement (torch's integer scalars do).
TEST(Errors, UnsignedConstantsMeetTheirTileDtype) {
  auto plus_max = ts::kernel("plus_max", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) {
      g_line = __LINE__ + 1;
      out(t) = x(t) + std::numeric_limits<uint64_t>::max();
    }
    return out;
  });
  auto minus_one = ts::kernel("minus_one", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) + (-1);
    return out;
  });
  ts::Buffer u = ts::Buffer::from_vector({5, 0}, {2}, ts::u64);
  for (const ts::Buffer& r : {plus_max(u), minus_one(u)}) {
    const uint64_t* p = static_cast<const uint64_t*>(r.data_ptr());
    EXPECT_EQ(p[0], 4u);
    EXPECT_EQ(p[1], UINT64_MAX);
  }
  EXPECT_EQ(plus_max.cuda(/*compile=*/true, u).size(), 1u);  // NVRTC takes the u64 constant
  std::string msg = user_error([&] { plus_max(ts::Buffer::zeros({2}, ts::i64)); });
  expect_message(msg, "plus_max", g_line, "the constant 18446744073709551615 does not fit i64",
                 "convert the tile value to ts::u64 first");
}

// An allocation in host code whose element count overflows names the kernel's line.
TEST(Errors, AllocationBeyond2To63Elements) {
  const int line = __LINE__ + 2;
  auto k = ts::kernel("huge_alloc", [](ts::Tensor x, ts::Value n) {
    ts::Tensor out = ts::empty({n * n, n * n}, ts::f32);
    for (auto t : ts::tile(x.size(0))) out(t, 0) = x(t);
    return out;
  });
  expect_message(user_error([&] { k(vec(4), int64_t{1} << 20); }), "huge_alloc", line,
                 "cannot allocate a f32 tensor of shape [1099511627776, 1099511627776] (more "
                 "than 2^63 - 1 bytes: its byte count overflows 64 bits)",
                 "check the sizes");
}

// A 0-dimensional tensor argument indexed by dimension.
TEST(Errors, SizeOfAZeroDimensionalTensor) {
  const int line = __LINE__ + 2;
  auto k = ts::kernel("rank0", [](ts::Tensor x) {
    ts::Tensor out = ts::empty({x.size(0)}, ts::f32);
    for (auto t : ts::tile(out.size(0))) out(t) = ts::full({t}, 1.0, ts::f32);
    return out;
  });
  ts::Buffer scalar = ts::Buffer::ones({1}, ts::f32).view_as_strided({}, {}, 0);
  expect_message(user_error([&] { k(scalar); }), "rank0", line,
                 "size(0) is out of range: tensor argument 0 has 0", "pass a tensor of shape [1]");
}

// A ts::Value kept from an earlier trace is refused where it is read; assigning it anew
// is fine.
TEST(Errors, ValueFromAnEarlierTrace) {
  static ts::Value kept;
  auto k = ts::kernel("keeps", [](ts::Tensor x, bool reuse) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) {
      if (!reuse) kept = x(t) * 2;
      g_line = __LINE__ + 1;
      out(t) = kept + 1;
    }
    return out;
  });
  EXPECT_EQ(k(vec(4), false).to_vector(), std::vector<double>(4, 1.0));
  std::string msg = user_error([&] { k(vec(4), true); });
  expect_message(msg, "keeps", g_line,
                 "a ts::Value from another trace (an earlier call, or another kernel) is used",
                 "declare ts::Value variables inside the kernel's lambda");
  EXPECT_EQ(k(ts::Buffer::ones({4}, ts::f32), false).to_vector(), std::vector<double>(4, 3.0));
}

// An argument that needs 64-bit indices under a forced i32 is an error of the call: it
// points at the call's line.
TEST(Errors, ArgumentBeyond32BitsUnderForcedI32PointsAtTheCall) {
  auto k = ts::kernel(
      "zs32",
      [](ts::Tensor x) {
        ts::Tensor out = x.new_zeros({1});
        for (auto i : ts::grid(1)) out(i) = x(i);
        return out;
      },
      ts::Settings{.index_dtype = ts::i32});
  ts::Buffer x = ts::Buffer::zeros({1}, ts::f32).view_as_strided({int64_t{1} << 33}, {0}, 0);
  const int call = __LINE__ + 1;
  std::string msg = user_error([&] { k(x); });
  expect_message(msg, "zs32", call, "beyond 32-bit index arithmetic (Settings::index_dtype i32)",
                 "ts::i64");
}

// An allocation sized by a true division names the cause: `/` gives a float.
TEST(Errors, AllocationSizedByATrueDivision) {
  auto k = ts::kernel("half_alloc", [](ts::Tensor x) {
    g_line = __LINE__ + 1;
    ts::Tensor out = ts::empty({x.size(0) / 2}, x.dtype());
    for (auto t : ts::tile(out.size(0))) out(t) = x(t);
    return out;
  });
  std::string msg = user_error([&] { k(vec(8)); });
  expect_message(msg, "half_alloc", g_line, "an allocation's size is a f32 value, not an integer",
                 "use ts::floordiv(a, b)");
}

// A ts::Tensor kept from an earlier trace (another kernel's argument) is refused where it
// is used, as a stale ts::Value is.
TEST(Errors, TensorFromAnEarlierTrace) {
  static std::optional<ts::Tensor> saved;
  auto save = ts::kernel("save", [](ts::Tensor x) {
    saved = x;
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t);
    return out;
  });
  auto use = ts::kernel("use", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) {
      g_line = __LINE__ + 1;
      out(t) = (*saved)(t) + x(t);
    }
    return out;
  });
  save(vec(4));
  std::string msg = user_error([&] { use(vec(4)); });
  expect_message(msg, "use", g_line,
                 "a ts::Tensor from another trace (an earlier call, or another kernel) is used",
                 "a ts::Tensor cannot outlive the call that traced it");
}

// A kernel called from inside a kernel's lambda (it would run once, at trace time, or
// wait on itself when recursive).
TEST(Errors, KernelCalledWhileTracing) {
  auto inc = ts::kernel("inc", [](ts::Tensor c) {
    for (auto t : ts::tile(c.size(0))) c(t) = c(t) + 1;
  });
  ts::Buffer count = ts::Buffer::zeros({1}, ts::f32);
  const int inner_line = __LINE__ + 3;  // the call inside the lambda
  auto outer = ts::kernel("outer", [&](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    inc(count);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t);
    return out;
  });
  expect_message(user_error([&] { outer(vec(4)); }), "inc", inner_line,
                 "called while kernel 'outer' is being traced",
                 "call kernels from host code outside any ts::kernel lambda");
  std::function<ts::Buffer(ts::Buffer)> again;
  auto rec = ts::kernel("rec", [&](ts::Tensor x) {
    again(ts::Buffer::zeros({3}, ts::f32));
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t);
    return out;
  });
  again = [&](ts::Buffer b) { return rec(b); };
  EXPECT_NE(user_error([&] { rec(vec(4)); }).find("called while kernel 'rec' is being traced"),
            std::string::npos);
  inc(count);  // from host code: fine
  EXPECT_EQ(count.item(), 1.0);
}

// A kernel without a name (errors and generated code name kernels).
TEST(Errors, KernelWithoutAName) {
  std::string msg = user_error([] { ts::kernel("", [](ts::Tensor x) { return x; }); });
  EXPECT_NE(msg.find("a kernel needs a name"), std::string::npos) << msg;
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
  expect_message(msg, "scale", call,
                 "argument 1 is 2.7, but the kernel's parameter 1 is an integer",
                 "pass an integer");
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

// A bool tensor or value as an index is refused (PyTorch reads it as a mask).
TEST(Errors, BoolIndexIsRefused) {
  auto k = ts::kernel("bool_index", [](ts::Tensor x, ts::Tensor m) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = x(m(t));
    return out;
  });
  std::string msg = user_error([&] { k(vec(4), ts::Buffer::zeros({4}, ts::boolean)); });
  expect_message(msg, "bool_index", __LINE__ - 4, "got a bool value", "ts::where(mask, value, 0)");
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

// A negative constant index is refused (PyTorch would count it from the end).
// An error while a call starts tracing (here: an argument beyond 32-bit indexing with
// index_dtype i32) leaves later calls of any kernel working.
/// out[i] = x[i] for i < n (n a symbolic bound, any value), 0 after.
static auto make_first_n(const std::string& name, ts::Settings s) {
  return ts::kernel(
      name,
      [](ts::Tensor x, ts::Value n) {
        ts::Tensor o = ts::zeros_like(x);
        for (auto t : ts::tile(n)) o(t) = x(t);
        return o;
      },
      s);
}

TEST(Errors, AFailedTraceStartLeavesLaterCallsWorking) {
  auto a = make_first_n("a", ts::Settings{.index_dtype = ts::i32});
  auto b = ts::kernel("b", [](ts::Tensor x) {
    ts::Tensor o = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) o(t) = x(t) + 1;
    return o;
  });
  ts::Buffer x = ts::Buffer::ones({4}, ts::f32);
  for (int i = 0; i < 2; ++i) {
    std::string msg = user_error([&] { a(x, int64_t{1} << 40); });
    EXPECT_NE(msg.find("beyond 32-bit index arithmetic"), std::string::npos) << msg;
    EXPECT_EQ(b(x).to_vector(), std::vector<double>(4, 2.0));
    EXPECT_EQ(a(x, 3).to_vector(), (std::vector<double>{1, 1, 1, 0}));
  }
}

// Loop bounds past 2^62 (block size defaults and size buckets saturate instead of
// overflowing): the call completes, with every access past the tensor masked.
TEST(Errors, LoopBoundPastTwoToThe62) {
  auto k = make_first_n(
      "huge_bound",
      ts::Settings{.config = ts::Config{.pid_type = ts::PidType::persistent_interleaved}});
  ts::Buffer x = ts::Buffer::ones({4}, ts::f32);
  EXPECT_EQ(k(x, std::numeric_limits<int64_t>::max()).to_vector(), std::vector<double>(4, 1.0));
  EXPECT_FALSE(k.cuda(false, x, (int64_t{1} << 62) + 1).empty());
}

// A constant an integer dtype cannot hold is an error at its line, as Buffer::full's
// values are (torch: "value cannot be converted to type int32 without overflow"):
// +-inf, NaN and values out of range, in ts::full and in host allocations' fills; an
// integral negative value for u64 wraps as two's complement. (A cast of a constant
// converts as the same cast of a tile value does at run time.)
TEST(Errors, ConstantsAnIntegerDtypeCannotHold) {
  const double inf = std::numeric_limits<double>::infinity();
  // The value and the dtype are specialized C++ arguments (constants of the trace).
  auto dev = ts::kernel("full_tile", [](ts::Tensor x, double value, int dt) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) {
      g_line = __LINE__ + 1;
      out(t) = x(t) + ts::full({t}, value, static_cast<ts::DType>(dt)).to(x.dtype());
    }
    return out;
  });
  auto host = ts::kernel("full_host", [](ts::Tensor x, double value, int dt) {
    g_line = __LINE__ + 1;
    ts::Tensor out = x.new_full({x.size(0)}, value, static_cast<ts::DType>(dt));
    for (auto t : ts::tile(x.size(0))) out(t) = x(t).to(static_cast<ts::DType>(dt));
    return out;
  });
  for (auto [value, dt] : {std::pair<double, ts::DType>{-inf, ts::i32},
                           {inf, ts::i64},
                           {NAN, ts::i64},
                           {3e9, ts::i32},
                           {-1.5, ts::u64},
                           {1e19, ts::i64}}) {
    std::string what = fmt::format("the constant {} cannot be converted to {} without overflow",
                                   value, ts::dtype_name(dt));
    std::string msg = user_error([&] { dev(vec(4), value, static_cast<int>(dt)); });
    expect_message(msg, "full_tile", g_line, what, "a float dtype");
    msg = user_error([&] { host(vec(4), value, static_cast<int>(dt)); });
    expect_message(msg, "full_host", g_line, what, "a float dtype");
  }
  auto wrap = ts::kernel("u64_wrap", [](ts::Tensor x) {
    ts::Tensor out = x.new_empty({x.size(0)}, ts::u64);
    for (auto t : ts::tile(x.size(0))) out(t) = ts::full({t}, -1, ts::u64);
    return out;
  });
  ts::Buffer w = wrap(vec(3));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(static_cast<const uint64_t*>(w.data_ptr())[i], UINT64_MAX);
}
