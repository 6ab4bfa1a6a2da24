// Loads and stores in a layout of their own (passes/access_layouts.hpp) on the GPU: the
// tile converts through shared memory; every result equals the interpreter's exactly
// (a transpose moves values, it computes nothing), across dtypes, ragged sizes, block
// sizes and warp counts, beside a reduction sharing the shared memory, and persistent.
#include <gtest/gtest.h>

#include <tessel/tessel.hpp>
#include <tessel/testing.hpp>
#include <tuple>

#include "examples/kernels/basic.hpp"
#include "gpu_test_util.hpp"

namespace ts = tessel;

namespace {

ts::Buffer values(std::vector<int64_t> shape, ts::DType t, uint64_t seed) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] =
        static_cast<double>((i * 7 + static_cast<int64_t>(seed) * 5 + i / 13) % 101 - 50);
  return ts::Buffer::from_vector(v, std::move(shape), t);
}

template <class Make, class... A>
void expect_same_as_interpreter(const Make& make, const ts::Config& c, const A&... cpu_args) {
  auto k = make(ts::Settings{.config = c});
  auto want = k(cpu_args...);
  auto got = k(cpu_args.to(ts::cuda(0))...);
  if constexpr (std::is_same_v<decltype(want), ts::Buffer>) {
    ASSERT_EQ(got.shape(), want.shape()) << c.to_json();
    EXPECT_EQ(ts::count_mismatches(got.to(ts::cpu()), want, 0, 0), 0) << c.to_json();
  } else {  // (out, sums)
    EXPECT_EQ(ts::count_mismatches(std::get<0>(got).to(ts::cpu()), std::get<0>(want), 0, 0), 0)
        << c.to_json();
    EXPECT_EQ(ts::count_mismatches(std::get<1>(got).to(ts::cpu()), std::get<1>(want), 0, 0), 0)
        << c.to_json();
  }
}

const std::vector<std::pair<std::vector<int64_t>, int>> kConfigs{
    {{32, 32}, 4}, {{64, 16}, 4}, {{16, 64}, 1}, {{128, 32}, 8}, {{64, 64}, 8}};

}  // namespace

TEST(AccessLayoutsGpu, TransposeMatchesTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  auto make = [](ts::Settings s) { return examples::make_transpose(s); };
  for (ts::DType t : {ts::f32, ts::bf16, ts::f64, ts::boolean, ts::i64})
    for (std::vector<int64_t> shape : {std::vector<int64_t>{64, 96}, {333, 517}, {1, 130}})
      for (const auto& [blocks, warps] : kConfigs)
        expect_same_as_interpreter(make, ts::Config{.block_sizes = blocks, .num_warps = warps},
                                   values(shape, t, 1));
}

TEST(AccessLayoutsGpu, ATransposedLoadMatchesTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  auto make = [](ts::Settings s) { return examples::make_add_transposed(s); };
  for (ts::DType t : {ts::f32, ts::f16})
    for (const auto& [blocks, warps] : kConfigs)
      for (ts::PidType pid : {ts::PidType::flat, ts::PidType::persistent_interleaved})
        for (int stages : {1, 2})
          expect_same_as_interpreter(
              make,
              ts::Config{
                  .block_sizes = blocks, .num_warps = warps, .num_stages = stages, .pid_type = pid},
              values({200, 77}, t, 2), values({77, 200}, t, 3));
}

TEST(AccessLayoutsGpu, AConvertedStoreBesideARowReduction) {
  TESSEL_REQUIRE_GPU();
  // Rows of x stored as columns of out, and their sums: the conversion and the sum's
  // cross-warp step share the program's shared memory.
  auto make = [](ts::Settings s) {
    return ts::kernel(
        "transpose_and_sum",
        [](ts::Tensor x) {
          ts::Tensor out = x.new_empty({x.size(1), x.size(0)});
          ts::Tensor sums = x.new_empty({x.size(0)});
          for (auto tm : ts::tile(x.size(0))) {
            ts::Value v = x(tm, ts::all);
            out(ts::all, tm) = v.t();
            sums(tm) = ts::sum(v, 1);
            out(ts::all, tm) = out(ts::all, tm) + 0 * v.t();  // reloads what was stored
          }
          return std::make_tuple(out, sums);
        },
        s);
  };
  for (const auto& [rows, warps] : std::vector<std::pair<int64_t, int>>{{4, 4}, {16, 8}, {8, 1}})
    expect_same_as_interpreter(
        make, ts::Config{.block_sizes = std::vector<int64_t>{rows}, .num_warps = warps},
        values({45, 256}, ts::f32, 4));
}

TEST(AccessLayoutsGpu, PermuteOfThreeDims) {
  TESSEL_REQUIRE_GPU();
  auto make = [](ts::Settings s) {
    return ts::kernel(
        "permute_3d",
        [](ts::Tensor x) {
          ts::Tensor out = x.new_empty({x.size(2), x.size(0), x.size(1)});
          for (auto [tm, tn, tk] : ts::tile(x.size(0), x.size(1), x.size(2)))
            out(tk, tm, tn) = x(tm, tn, tk).permute({2, 0, 1});
          return out;
        },
        s);
  };
  for (std::vector<int64_t> blocks : {std::vector<int64_t>{4, 8, 32}, {2, 16, 16}, {8, 8, 8}})
    expect_same_as_interpreter(make, ts::Config{.block_sizes = blocks},
                               values({9, 20, 70}, ts::f32, 5));
}

TEST(AccessLayoutsGpu, TransposedViewArgumentsMatchTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  // x.t() of a row-major tensor is contiguous along dim 0 (ArgFacts::unit_stride_dim): a
  // copy loads it in a layout of its own; a transpose of it is a copy without conversions.
  auto copy = [](ts::Settings s) {
    return ts::kernel(
        "copy_2d",
        [](ts::Tensor x) {
          ts::Tensor out = x.new_empty({x.size(0), x.size(1)});
          for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) out(tm, tn) = x(tm, tn);
          return out;
        },
        s);
  };
  auto transpose = [](ts::Settings s) { return examples::make_transpose(s); };
  for (ts::DType t : {ts::f32, ts::bf16, ts::i64})
    for (std::vector<int64_t> shape : {std::vector<int64_t>{64, 96}, {333, 517}, {1, 130}}) {
      ts::Buffer base = values(shape, t, 5), gpu_base = base.to(ts::cuda(0));
      auto t_of = [&](const ts::Buffer& b) {  // the transposed view, on b's device
        return b.view_as_strided({shape[1], shape[0]}, {1, shape[1]}, 0);
      };
      for (const auto& [blocks, warps] : kConfigs) {
        ts::Settings s{.config = ts::Config{.block_sizes = blocks, .num_warps = warps}};
        auto check = [&](const auto& k, const char* what) {
          ts::Buffer want = k(t_of(base));
          ts::Buffer got = k(t_of(gpu_base));
          EXPECT_EQ(ts::count_mismatches(got.to(ts::cpu()), want, 0, 0), 0)
              << s.config->to_json() << " " << what;
        };
        check(copy(s), "copy");
        check(transpose(s), "transpose");
      }
    }
}

TEST(AccessLayoutsGpu, OneKernelOnTransposedViewsOfAlignedAndUnalignedStrides) {
  TESSEL_REQUIRE_GPU();
  // y = a.t(): its last stride (m elements) is 16-byte aligned for m = 20, not for m = 18;
  // the second call must not reuse the first's aligned vectors.
  auto k = ts::kernel(
      "add_views",
      [](ts::Tensor x, ts::Tensor y) {
        ts::Tensor out = ts::empty_like(x);
        for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) out(tm, tn) = x(tm, tn) + y(tm, tn);
        return out;
      },
      ts::Settings{.config = ts::Config{.block_sizes = std::vector<int64_t>{32, 32}}});
  for (int64_t m : {20, 18, 33, 20}) {
    ts::Buffer x = values({m, 48}, ts::f32, 1), a = values({48, m}, ts::f32, 2);
    auto t_of = [&](const ts::Buffer& b) { return b.view_as_strided({m, 48}, {1, m}, 0); };
    ts::Buffer want = k(x, t_of(a));
    ts::Buffer got = k(x.to(ts::cuda(0)), t_of(a.to(ts::cuda(0))));
    EXPECT_EQ(ts::count_mismatches(got.to(ts::cpu()), want, 0, 0), 0) << m;
  }
}
