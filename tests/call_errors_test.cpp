// Errors of a call's arguments (devices, shapes, strides, sizes beyond the index dtype,
// grids too large): each a UserError naming the kernel and the line of the call or the
// kernel, and what to do; a failed call leaves later calls working.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <tessel/tessel.hpp>
#include <tessel/testing.hpp>

#include "common/element.hpp"
#include "common/internal_overlap.hpp"
#include "runtime/kernel_tuning.hpp"
#include "user_error_util.hpp"

namespace ts = tessel;

namespace {

int g_line = 0;  // the line of the offending statement, recorded while tracing

using namespace user_error_test;  // expect_message, user_error, vec, mat

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

TEST(Errors, CpuBufferPassedWithAGpuBuffer) {
  if (!ts::gpu_available()) GTEST_SKIP() << "no GPU: mixing devices needs a cuda Buffer";
  auto k = ts::kernel("mixed_devices", [](ts::Tensor x, ts::Tensor y) {
    for (auto t : ts::tile(x.size(0))) y(t) = x(t);
  });
  std::string msg = user_error([&] { k(vec(4), ts::Buffer::zeros({4}, ts::f32, ts::cuda(0))); });
  expect_message(msg, "mixed_devices", 0, "argument 1 is on cuda:0 but argument 0 is on cpu",
                 "a CPU buffer cannot be passed with a GPU buffer");
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

// The same for a grid index: a y of fewer rows than the grid over x's rows would be read
// as zeros past its end (only check_bounds would say so); every call checks it.
TEST(Errors, TensorSmallerThanTheGridLoopIndexingIt) {
  for (bool fixed : {false, true}) {
    auto k = ts::kernel(
        "grid_mismatch",
        [](ts::Tensor x, ts::Tensor y) {
          ts::Tensor out = ts::empty_like(x);
          for (auto i : ts::grid(x.size(0))) {
            for (auto t : ts::tile(x.size(1))) {
              g_line = __LINE__ + 1;
              out(i, t) = x(i, t) + y(i, t);
            }
          }
          return out;
        },
        ts::Settings{.static_shapes = fixed});
    std::string msg = user_error([&] { k(mat(3, 2), mat(2, 2)); });
    expect_message(
        msg, "grid_mismatch", g_line,
        "tensor argument 1 size(0) is 2, less than the bound tensor argument 0 size(0) = 3 of "
        "the loop indexing it",
        "pass tensors whose sizes match");
    ts::Buffer ones = ts::Buffer::full({3, 2}, 1.0, ts::f32);
    EXPECT_EQ(k(ones, ts::Buffer::full({4, 2}, 1.0, ts::f32)).to_vector(),
              std::vector<double>(6, 2.0));
    EXPECT_EQ(k(ones, ones).to_vector(), std::vector<double>(6, 2.0));
  }
  // A bound of the user's own (a number) is not compared: masked past the end by design.
  auto own = ts::kernel("grid_own_bound", [](ts::Tensor x, ts::Value n) {
    ts::Tensor out = x.new_zeros({n});
    for (auto i : ts::grid(n)) out(i) = x(i) + 1;
    return out;
  });
  EXPECT_EQ(own(ts::Buffer::full({2}, 1.0, ts::f32), 3).to_vector(),
            (std::vector<double>{2, 2, 1}));
}

// An i32 count stops at 2^31 - 1 (as i8's at 127): ts::arange of more elements is refused
// when traced, not wrapped.
TEST(Errors, AnI32ArangePast2To31IsRefused) {
  auto k = ts::kernel("count_up", [](ts::Tensor x, int64_t n) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) {
      g_line = __LINE__ + 1;
      out(t) = x(t) + ts::max(ts::arange(n), 0).to(ts::f32);
    }
    return out;
  });
  ts::Buffer x = ts::Buffer::zeros({4}, ts::f32);
  EXPECT_EQ(k(x, int64_t{100}).to_vector(), std::vector<double>(4, 99.0));
  std::string msg = user_error([&] { k(x, (int64_t{1} << 31) + 10); });
  expect_message(msg, "count_up", g_line,
                 "ts::arange of dtype i32 over 2147483658 elements: i32 counts to 2147483647 only",
                 "count in ts::i64: ts::arange(n, ts::i64)");
}

TEST(Errors, AnArangeOfBoolOrAn8BitFloatIsRefused) {
  for (ts::DType t : {ts::boolean, ts::f8e4m3, ts::f8e5m2}) {
    auto k = ts::kernel("count_up_in", [t](ts::Tensor x) {
      ts::Tensor out = ts::empty_like(x);
      for (auto tile : ts::tile(x.size(0))) {
        g_line = __LINE__ + 1;
        out(tile) = x(tile) + ts::arange(x.size(0), t).to(ts::f32);
      }
      return out;
    });
    std::string msg = user_error([&] { k(ts::Buffer::zeros({4}, ts::f32)); });
    expect_message(msg, "count_up_in", g_line,
                   fmt::format("ts::arange of dtype {}: torch.arange has none", ts::dtype_name(t)),
                   "ts::arange(n).to(");
  }
}

// An integer cast to DType inside a kernel: an error at the kernel's line, wherever the
// dtype is given (a conversion, a constructor, an allocation).
TEST(Errors, AnIntegerCastToDTypeInAKernelIsAnErrorAtItsLine) {
  const auto bad = static_cast<ts::DType>(42);
  for (int where = 0; where < 4; ++where) {
    auto k = ts::kernel("bad_dtype", [bad, where](ts::Tensor x) {
      g_line = __LINE__ + 1;
      ts::Tensor out = where == 3 ? ts::empty({x.size(0)}, bad) : ts::empty_like(x);
      for (auto t : ts::tile(x.size(0))) {
        if (where == 0) g_line = __LINE__ + 1;
        if (where == 0) out(t) = x(t).to(bad).to(ts::f32);
        if (where == 1) g_line = __LINE__ + 1;
        if (where == 1) out(t) = ts::full({t}, 1.0, bad).to(ts::f32);
        if (where == 2) g_line = __LINE__ + 1;
        if (where == 2) out(t) = ts::arange(x.size(0), bad).to(ts::f32);
        if (where == 3) out(t) = x(t);
      }
      return out;
    });
    std::string msg = user_error([&] { k(ts::Buffer::zeros({4}, ts::f32)); });
    expect_message(msg, "bad_dtype", g_line, "42 is not a ts::DType", "use one of ts::boolean");
  }
}

// Where the key fixes both sizes (static shapes), a cover check that holds is decided when
// tracing and left out of the host program; one that fails stays and raises on the call.
TEST(Errors, ACoverCheckOfSizesTheKeyFixesIsLeftOutWhenItHolds) {
  auto k = ts::kernel(
      "add_fixed",
      [](ts::Tensor x, ts::Tensor y) {
        ts::Tensor out = ts::empty_like(x);
        for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) out(tm, tn) = x(tm, tn) + y(tm, tn);
        return out;
      },
      ts::Settings{.static_shapes = true});
  auto checks = [&](const ts::Buffer& x, const ts::Buffer& y) {
    int n = 0;
    for (const ts::ir::Node* node :
         ts::rt::traced_graph(k.impl(), ts::detail::call_args(x, y)).host)
      n += node->op == ts::ir::Op::ShapeCheck;
    return n;
  };
  EXPECT_EQ(checks(mat(8, 12), mat(8, 12)), 0);
  EXPECT_EQ(checks(mat(8, 12), mat(9, 13)), 0);
  EXPECT_EQ(checks(mat(8, 12), mat(8, 10)), 1);
  EXPECT_EQ(k(mat(8, 12), ts::Buffer::full({9, 13}, 1.0, ts::f32)).to_vector(),
            std::vector<double>(96, 1.0));
  EXPECT_NE(user_error([&] { k(mat(8, 12), mat(8, 10)); }).find("less than the bound"),
            std::string::npos);
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
  // A named parameter is named.
  auto named = ts::kernel("fill_named", {"out"}, [](ts::Tensor out) {
    for (auto t : ts::tile(out.size(0))) out(t) = ts::full({t}, 2.0, ts::f32);
  });
  EXPECT_NE(user_error([&] { named(one.view_as_strided({8}, {0}, 0)); })
                .find("tensor argument 0 ('out') is written by the kernel but its dim 0 has "
                      "stride 0"),
            std::string::npos);
}

// A C++ float parameter cannot hold a finite value beyond f32's range (C++ leaves the
// conversion undefined): refused, naming it. A double parameter or a ts::Value is a weak
// float: with f64 values it keeps every bit, with f32 values it rounds to inf, as torch's
// scalars do (and as the GPU's conversion does: common/element.hpp to_f32).
TEST(Errors, AFloatParameterBeyondF32IsRefusedADoubleIsNot) {
  auto scale_value = ts::kernel("scale_value", {"x", "s"}, [](ts::Tensor x, ts::Value s) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) * s;
    return out;
  });
  auto scale_float = ts::kernel("scale_float", {"x", "s"}, [](ts::Tensor x, float s) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) * s;
    return out;
  });
  auto scale_double = ts::kernel("scale_double", [](ts::Tensor x, double s) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) * s;
    return out;
  });
  const double inf = std::numeric_limits<double>::infinity();
  ts::Buffer x32 = ts::Buffer::full({3}, 1.0, ts::f32), x64 = ts::Buffer::full({3}, 1.0, ts::f64);
  EXPECT_EQ(scale_value(x64, 1e300).to_vector(), std::vector<double>(3, 1e300));
  EXPECT_EQ(scale_double(x64, -1e300).to_vector(), std::vector<double>(3, -1e300));
  EXPECT_EQ(scale_value(x32, 1e300).to_vector(), std::vector<double>(3, inf));
  EXPECT_EQ(scale_double(x32, -1e39).to_vector(), std::vector<double>(3, -inf));
  EXPECT_EQ(scale_value(x32, 2.0).to_vector(), std::vector<double>(3, 2.0));
  const int line = __LINE__ + 1;
  std::string msg = user_error([&] { scale_float(x32, 1e300); });
  expect_message(msg, "scale_float", line,
                 "argument 1 ('s') is 1e+300, beyond the range of the kernel's float parameter "
                 "(it would round to infinity; the largest float is 3.40282347e+38)",
                 "pass a value within float's range, or declare the parameter as double");
  EXPECT_NE(user_error([&] { scale_float(x32, -1e39); }).find("argument 1 ('s') is -1e+39"),
            std::string::npos);
  EXPECT_EQ(scale_float(x32, inf).to_vector(), std::vector<double>(3, inf));
  EXPECT_EQ(scale_float(x32, 3.0e38).to_vector(),
            std::vector<double>(3, static_cast<double>(3.0e38f)));
  // 3.4028235e38 (the largest float as printed) is a little above it but rounds to it.
  const double fmax = std::numeric_limits<float>::max();
  EXPECT_EQ(scale_float(x32, 3.4028235e38).to_vector(), std::vector<double>(3, fmax));
}

// to_f32 rounds as IEEE does, overflow included (the GPU's cvt.rn.f32.f64).
TEST(Errors, DoublesRoundToF32AsIeeeDoes) {
  const float fmax = std::numeric_limits<float>::max();
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(ts::to_f32(1e300), inf);
  EXPECT_EQ(ts::to_f32(-1e39), -inf);
  EXPECT_EQ(ts::to_f32(0x1.fffffe8p127), fmax);  // below halfway to 2^128
  EXPECT_EQ(ts::to_f32(-0x1.fffffe8p127), -fmax);
  EXPECT_EQ(ts::to_f32(0x1.ffffffp127), inf);  // halfway: to even, the infinity
  EXPECT_EQ(ts::to_f32(0.1), 0.1f);
  EXPECT_TRUE(std::isnan(ts::to_f32(std::nan(""))));
  EXPECT_EQ(ts::to_f32(-std::numeric_limits<double>::infinity()), -inf);
}

TEST(Errors, WrittenTensorOverlappingAnotherInPart) {
  auto k = ts::kernel("plus_one", {"src", "dst"}, [](ts::Tensor src, ts::Tensor dst) {
    for (auto t : ts::tile(src.size(0))) dst(t) = src(t) + 1;
  });
  ts::Buffer y = ts::Buffer::zeros({4001}, ts::f32);
  const int line = __LINE__ + 1;
  std::string msg = user_error([&] { k(y.narrow(0, 0, 4000), y.narrow(0, 1, 4000)); });
  expect_message(msg, "plus_one", line,
                 "tensor argument 1 ('dst') is written by the kernel and overlaps tensor "
                 "argument 0 ('src') in part (f32[4000] cpu and f32[4000] cpu: their memory "
                 "meets but they are not one view): programs would race",
                 "pass tensors that do not overlap, or one tensor twice for in-place work");
  // Of two dtypes over the same bytes' start: a partial overlap too.
  ts::Buffer d = ts::Buffer::zeros({8}, ts::f64);
  ts::Buffer f = ts::Buffer::from_blob(d.data_ptr(), {8}, {1}, ts::f32, ts::cpu());
  EXPECT_NE(user_error([&] { k(d, f); }).find("overlaps tensor argument 0 ('src') in part"),
            std::string::npos);
  // The same view twice: in place.
  ts::Buffer x = ts::Buffer::from_vector({1, 2, 3}, {3}, ts::f32);
  k(x, x);
  EXPECT_EQ(x.to_vector(), (std::vector<double>{2, 3, 4}));
  // Disjoint halves of one Buffer.
  ts::Buffer h = ts::Buffer::from_vector({1, 2, 3, 4}, {4}, ts::f32);
  k(h.narrow(0, 0, 2), h.narrow(0, 2, 2));
  EXPECT_EQ(h.to_vector(), (std::vector<double>{1, 2, 2, 3}));
  // Overlapping tensors that are only read.
  auto add = ts::kernel("add_into", [](ts::Tensor a, ts::Tensor b, ts::Tensor out) {
    for (auto t : ts::tile(a.size(0))) out(t) = a(t) + b(t);
  });
  ts::Buffer r = ts::Buffer::from_vector({1, 2, 3}, {3}, ts::f32);
  ts::Buffer out = ts::Buffer::zeros({2}, ts::f32);
  add(r.narrow(0, 0, 2), r.narrow(0, 1, 2), out);
  EXPECT_EQ(out.to_vector(), (std::vector<double>{3, 5}));
}

// A written tensor whose elements share memory through non-zero strides (shape [4, 4],
// strides [1, 1]: element (0, 1) is element (1, 0)) is refused, naming two such elements;
// one whose dims interleave without sharing any (shape [3, 2], strides [2, 3]) is written.
TEST(Errors, WrittenTensorWhoseElementsOverlap) {
  auto k = ts::kernel("copy_plus", {"src", "dst"}, [](ts::Tensor src, ts::Tensor dst) {
    for (auto [tm, tn] : ts::tile(src.size(0), src.size(1))) dst(tm, tn) = src(tm, tn) + 1;
  });
  ts::Buffer src = ts::Buffer::zeros({4, 4}, ts::f32);
  ts::Buffer seven = ts::Buffer::zeros({7}, ts::f32);
  const int line = __LINE__ + 1;
  std::string msg = user_error([&] { k(src, seven.view_as_strided({4, 4}, {1, 1}, 0)); });
  expect_message(msg, "copy_plus", line,
                 "tensor argument 1 ('dst') is written by the kernel but its elements (0, 1) and "
                 "(1, 0) share one memory location (shape [4, 4], strides [1, 1])",
                 "pass a tensor whose elements do not overlap (e.g. .contiguous())");
  ts::Buffer eight = ts::Buffer::zeros({8}, ts::f32);
  ts::Buffer s32 = ts::Buffer::from_vector({0, 1, 2, 3, 4, 5}, {3, 2}, ts::f32);
  k(s32, eight.view_as_strided({3, 2}, {2, 3}, 0));  // offsets 0 3 2 5 4 7
  EXPECT_EQ(eight.to_vector(), (std::vector<double>{1, 0, 3, 2, 5, 4, 0, 6}));
}

// overlapping_elements: exact where the dims' strides interleave; undecided past the
// elements it may enumerate.
TEST(Errors, OverlappingElementsAreFoundExactly) {
  bool decided = false;
  EXPECT_FALSE(ts::overlapping_elements({3, 2}, {2, 3}, &decided));  // offsets 0 3 2 5 4 7
  EXPECT_TRUE(decided);
  // Offsets 2 i + 3 j: (0, 2) and (3, 0) both at 6, the first pair by offset.
  const auto both = ts::overlapping_elements({4, 3}, {2, 3}, &decided);
  ASSERT_TRUE(both && decided);
  EXPECT_EQ(both->first, 2);                                         // (0, 2)
  EXPECT_EQ(both->second, 9);                                        // (3, 0)
  EXPECT_FALSE(ts::overlapping_elements({4, 5}, {5, 1}, &decided));  // row-major
  EXPECT_TRUE(decided);
  EXPECT_FALSE(ts::overlapping_elements({64, 64}, {3, 2}, &decided, 100));
  EXPECT_FALSE(decided);
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

// An error while a call starts tracing (here: an argument beyond 32-bit indexing with
// index_dtype i32) leaves later calls of any kernel working.
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

}  // namespace
