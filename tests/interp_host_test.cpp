// Interpreter: host code around the loops (allocations, several outputs, scalar
// arguments) and loop-carried values.
#include <gtest/gtest.h>

#include "interp_test_util.hpp"

namespace ts = tessel;
using interp_test::blocks;
using interp_test::buffer;
using interp_test::ramp;

namespace {

int g_traces = 0;  // counts traces of the kernels that check specialization

}  // namespace

TEST(InterpHost, LikeAllocationsCopyShapeAndDtype) {
  auto k = ts::kernel("likes", [](ts::Tensor x) {
    ts::Tensor e = ts::empty_like(x);
    ts::Tensor z = ts::zeros_like(x);
    ts::Tensor f = ts::full_like(x, 2.5);
    for (auto t : ts::tile(x.size(0))) e(t) = x(t);
    return std::make_tuple(e, z, f);
  });
  auto [e, z, f] = k(buffer(ramp(6), {3, 2}, ts::f16));
  for (const ts::Buffer& b : {e, z, f}) {
    EXPECT_EQ(b.shape(), (std::vector<int64_t>{3, 2}));
    EXPECT_EQ(b.dtype(), ts::f16);
  }
  EXPECT_EQ(e.to_vector(), ramp(6));
  EXPECT_EQ(z.to_vector(), std::vector<double>(6, 0));
  EXPECT_EQ(f.to_vector(), std::vector<double>(6, 2.5));
}

TEST(InterpHost, NewAllocationsTakeShapeAndOptionalDtype) {
  auto k = ts::kernel("news", [](ts::Tensor x) {
    ts::Tensor a = x.new_empty({x.size(1)});
    ts::Tensor b = x.new_empty({2, 3}, ts::i64);
    ts::Tensor c = x.new_zeros({x.size(0), 4});
    ts::Tensor d = x.new_zeros({5}, ts::i32);
    ts::Tensor e = x.new_full({2}, 7);
    ts::Tensor f = x.new_full({3}, -1, ts::boolean);
    for (auto t : ts::tile(x.size(1))) a(t) = x(0, t);
    return std::make_tuple(a, b, c, d, e, f);
  });
  auto [a, b, c, d, e, f] = k(buffer(ramp(6, 1), {2, 3}, ts::bf16));
  EXPECT_EQ(a.dtype(), ts::bf16);
  EXPECT_EQ(a.to_vector(), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(b.dtype(), ts::i64);
  EXPECT_EQ(b.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(c.shape(), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(c.to_vector(), std::vector<double>(8, 0));
  EXPECT_EQ(d.dtype(), ts::i32);
  EXPECT_EQ(d.to_vector(), std::vector<double>(5, 0));
  EXPECT_EQ(e.dtype(), ts::bf16);
  EXPECT_EQ(e.to_vector(), std::vector<double>(2, 7));
  EXPECT_EQ(f.dtype(), ts::boolean);
  EXPECT_EQ(f.to_vector(), std::vector<double>(3, 1));
}

TEST(InterpHost, EmptyWithAnExplicitShape) {
  auto k = ts::kernel("explicit", [](ts::Tensor x) {
    ts::Tensor out = ts::empty({x.size(1), x.size(0)}, ts::f32);
    for (auto [i, j] : ts::grid(x.size(0), x.size(1))) out(j, i) = x(i, j);
    return out;
  });
  ts::Buffer out = k(buffer(ramp(6), {2, 3}, ts::i32));
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(out.dtype(), ts::f32);
  EXPECT_EQ(out.to_vector(), (std::vector<double>{0, 3, 1, 4, 2, 5}));
}

TEST(InterpHost, SeveralOutputsReturnAsATuple) {
  auto k = ts::kernel("two_out", [](ts::Tensor x) {
    ts::Tensor plus = ts::empty_like(x);
    ts::Tensor times = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) {
      plus(t) = x(t) + 1;
      times(t) = x(t) * 3;
    }
    return std::make_tuple(plus, times);
  });
  auto [plus, times] = k(buffer(ramp(5), {5}));
  EXPECT_EQ(plus.to_vector(), ramp(5, 1));
  EXPECT_EQ(times.to_vector(), ramp(5, 0, 3));
}

TEST(InterpHost, KernelWithoutOutputsWritesItsArguments) {
  auto k = ts::kernel("in_place", [](ts::Tensor x) {
    for (auto t : ts::tile(x.size(0))) x(t) = x(t) * x(t);
  });
  ts::Buffer x = buffer(ramp(4, 1), {4});
  k(x);
  EXPECT_EQ(x.to_vector(), (std::vector<double>{1, 4, 9, 16}));
}

TEST(InterpHost, SymbolicScalarArgumentsAreRuntimeValues) {
  auto k = ts::kernel("scale", [](ts::Tensor x, ts::Value s, ts::Value n) {
    ++g_traces;
    ts::Tensor out = ts::zeros_like(x);
    for (auto t : ts::tile(n)) out(t) = x(t) * s;
    return out;
  });
  g_traces = 0;
  ts::Buffer x = buffer(ramp(6, 1), {6});
  EXPECT_EQ(k(x, 2.0, 6).to_vector(), ramp(6, 2, 2));
  EXPECT_EQ(k(x, 0.5, 3).to_vector(), (std::vector<double>{0.5, 1, 1.5, 0, 0, 0}));
  EXPECT_EQ(g_traces, 1);
}

TEST(InterpHost, PlainNumberArgumentsAreSpecialized) {
  auto k = ts::kernel("specialized", [](ts::Tensor x, int add, double mul) {
    ++g_traces;
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = (x(t) + add) * mul;
    return out;
  });
  g_traces = 0;
  ts::Buffer x = buffer(ramp(3), {3});
  EXPECT_EQ(k(x, 1, 2.0).to_vector(), (std::vector<double>{2, 4, 6}));
  EXPECT_EQ(k(x, 10, 0.5).to_vector(), (std::vector<double>{5, 5.5, 6}));
  EXPECT_EQ(g_traces, 2);
}

TEST(InterpHost, ScalarArgumentMathInHostCode) {
  // Host-side math on a symbolic argument (including a function the host evaluator
  // lacks) is computed for each call.
  auto k = ts::kernel("host_math", [](ts::Tensor x, ts::Value s) {
    ts::Tensor out = ts::empty_like(x);
    ts::Value scale = ts::exp(s) * 2;
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) * scale;
    return out;
  });
  EXPECT_EQ(k(buffer({1, 2}, {2}), 0.0).to_vector(), (std::vector<double>{2, 4}));
}

TEST(InterpHost, LoopCarriedAccumulatorOverANestedGridLoop) {
  // acc = acc + x(tk, tn) over the rows of a [K, N] matrix: column sums.
  auto k = ts::kernel(
      "col_acc",
      [](ts::Tensor x) {
        ts::Tensor out = ts::empty({x.size(1)}, ts::f32);
        for (auto tn : ts::tile(x.size(1))) {
          ts::Value acc = ts::zeros({tn}, ts::f32);
          for (auto k2 : ts::grid(x.size(0))) acc = acc + x(k2, tn);
          out(tn) = acc;
        }
        return out;
      },
      blocks({4}));
  const int K = 5, N = 6;
  std::vector<double> x = ramp(K * N), want(N, 0);
  for (int i = 0; i < K; ++i)
    for (int j = 0; j < N; ++j) want[j] += x[i * N + j];
  EXPECT_EQ(k(buffer(x, {K, N})).to_vector(), want);
}

TEST(InterpHost, CarriedValuesUpdateTogether) {
  // (a, b) <- (b, a + b): the next values are read before any is replaced.
  auto k = ts::kernel("fib", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) {
      ts::Value a = ts::zeros({t}, ts::i64), b = ts::full({t}, 1, ts::i64);
      for (auto i : ts::grid(x(t.begin()))) {
        ts::Value c = a + b;
        a = b;
        b = c;
      }
      out(t) = a;
    }
    return out;
  });
  EXPECT_EQ(k(ts::Buffer::full({1}, 10, ts::i64)).to_vector(), (std::vector<double>{55}));
}

TEST(InterpHost, ZeroTripLoopKeepsTheInitialValue) {
  auto k = ts::kernel("zero_trip", [](ts::Tensor x, ts::Tensor n) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) {
      ts::Value acc = x(t);
      for (auto i : ts::grid(n)) acc = acc * 2;
      out(t) = acc;
    }
    return out;
  });
  EXPECT_EQ(k(buffer(ramp(3, 1), {3}), ts::Buffer::scalar(0, ts::i32)).to_vector(), ramp(3, 1));
  EXPECT_EQ(k(buffer(ramp(3, 1), {3}), ts::Buffer::scalar(3, ts::i32)).to_vector(), ramp(3, 8, 8));
}

TEST(InterpHost, CarriedThroughTwoNestedLoops) {
  // acc declared at depth 1 and updated at depth 3: sum over a [B, K] block per column.
  auto k = ts::kernel(
      "depth3_acc",
      [](ts::Tensor x) {
        ts::Tensor out = ts::empty({x.size(2)}, ts::f32);
        for (auto tn : ts::tile(x.size(2))) {
          ts::Value acc = ts::zeros({tn}, ts::f32);
          for (auto b : ts::grid(x.size(0)))
            for (auto tk : ts::tile(x.size(1))) acc = acc + ts::sum(x(b, tk, tn), 0);
          out(tn) = acc;
        }
        return out;
      },
      blocks({2, 4}));
  const int B = 2, K = 3, N = 5;
  std::vector<double> x = ramp(B * K * N), want(N, 0);
  for (int b = 0; b < B; ++b)
    for (int i = 0; i < K; ++i)
      for (int j = 0; j < N; ++j) want[j] += x[(b * K + i) * N + j];
  EXPECT_EQ(k(buffer(x, {B, K, N})).to_vector(), want);
}

TEST(InterpHost, ArangeAndFullInsideLoops) {
  auto k = ts::kernel("ctor", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto i : ts::grid(x.size(0)))
      out(i, ts::all) = ts::arange(x.size(1)) * 10 + ts::full({x.size(1)}, 1, ts::i32);
    return out;
  });
  EXPECT_EQ(k(ts::Buffer::zeros({2, 3}, ts::i32)).to_vector(),
            (std::vector<double>{1, 11, 21, 1, 11, 21}));
}
