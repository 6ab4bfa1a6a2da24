// Deliberately wrong kernels, found while tracing: each must raise a UserError that names
// the kernel, the user's file and line, and says what to do. Config errors:
// tests/config_errors_test.cpp; errors of a call's arguments: tests/call_errors_test.cpp.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <tessel/tessel.hpp>

#include "common/element.hpp"
#include "user_error_util.hpp"

namespace ts = tessel;

namespace {

int g_line = 0;  // the line of the offending statement, recorded while tracing

using namespace user_error_test;  // expect_message, user_error, vec, mat

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
    for (auto t : ts::tile(x.size(0), {.block_size = 4})) out(t) = v + 1;
    return out;
  });
  std::string msg = user_error([&] { k(ts::Buffer::zeros({8}, ts::f32)); });
  const int made = g_line;  // recorded while tracing
  // At the use (the second loop's line), naming where the value was made.
  expect_message(msg, "cross_loop", made + 2,
                 fmt::format("a value computed inside one loop (at errors_test.cpp:{}) is used in "
                             "another loop",
                             made),
                 "recompute the value");
}

TEST(Errors, ConstReferenceParametersWork) {
  auto k = ts::kernel("constref", [](const ts::Tensor& x, const ts::Value& s) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) + s;
    return out;
  });
  EXPECT_EQ(k(ts::Buffer::ones({3}, ts::f32), 2.0).to_vector(), (std::vector<double>{3, 3, 3}));
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

// A C++ float stored into a tensor must be a value of its dtype (torch: "value cannot be
// converted to type int32_t without overflow"): 1e20 into i32, 1e10 into f16; in range it
// is stored (a fraction into an integer tensor truncates toward 0, as torch's).
TEST(Errors, StoredFloatConstantsMustFitTheTensor) {
  auto fill = [](double v) {
    return ts::kernel("fill_constant", [v](ts::Tensor x) {
      ts::Tensor o = ts::empty_like(x);
      for (auto t : ts::tile(x.size(0))) {
        g_line = __LINE__ + 1;
        o(t) = v;
      }
      return o;
    });
  };
  std::string msg = user_error([&] { fill(1e20)(ts::Buffer::zeros({4}, ts::i32)); });
  expect_message(msg, "fill_constant", g_line, "the constant 1e+20 does not fit i32",
                 "use a constant in the dtype's range");
  msg = user_error([&] { fill(1e10)(ts::Buffer::zeros({4}, ts::f16)); });
  expect_message(msg, "fill_constant", g_line, "the constant 10000000000 does not fit f16",
                 "use a constant in the dtype's range");
  EXPECT_EQ(fill(-2.7)(ts::Buffer::zeros({2}, ts::i32)).to_vector(), (std::vector<double>{-2, -2}));
  EXPECT_EQ(fill(6e4)(ts::Buffer::zeros({2}, ts::f16)).to_vector(),
            (std::vector<double>{ts::round_to(ts::f16, 6e4), ts::round_to(ts::f16, 6e4)}));
  EXPECT_TRUE(std::isinf(fill(-INFINITY)(ts::Buffer::zeros({1}, ts::f16)).to_vector()[0]));
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
                           {1e19, ts::i64},
                           // As torch.full: a float that would round to infinity.
                           {1e6, ts::f16},
                           {-3.4e38, ts::bf16},
                           {1e39, ts::f32}}) {
    std::string what = fmt::format("the constant {} cannot be converted to {} without overflow",
                                   value, ts::dtype_name(dt));
    const char* hint = ts::is_float(dt) ? "a wider float dtype" : "a float dtype";
    std::string msg = user_error([&] { dev(vec(4), value, static_cast<int>(dt)); });
    expect_message(msg, "full_tile", g_line, what, hint);
    msg = user_error([&] { host(vec(4), value, static_cast<int>(dt)); });
    expect_message(msg, "full_host", g_line, what, hint);
  }
  // Infinity itself and the largest finite values fit.
  EXPECT_TRUE(std::isinf(dev(vec(1), inf, static_cast<int>(ts::f16)).to_vector()[0]));
  EXPECT_EQ(dev(vec(1), 65504, static_cast<int>(ts::f16)).to_vector()[0], 65504);
  auto wrap = ts::kernel("u64_wrap", [](ts::Tensor x) {
    ts::Tensor out = x.new_empty({x.size(0)}, ts::u64);
    for (auto t : ts::tile(x.size(0))) out(t) = ts::full({t}, -1, ts::u64);
    return out;
  });
  ts::Buffer w = wrap(vec(3));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(static_cast<const uint64_t*>(w.data_ptr())[i], UINT64_MAX);
}

}  // namespace
