// Contractions (src/passes/contractions.hpp) on the GPU: matmuls written as a broadcast
// multiply and a sum, their factors staged in shared memory. Inputs are small integers,
// so every product and sum is exact in f32 and each result equals the interpreter's
// exactly, across dtypes, ragged sizes (M = 1, N = 1, K = 1), block sizes, warp counts,
// num_stages and persistent programs.
#include <gtest/gtest.h>

#include <tessel/tessel.hpp>
#include <tessel/testing.hpp>

#include "examples/kernels/matmul.hpp"
#include "gpu_test_util.hpp"
#include "tests/matmul_test_util.hpp"

namespace ts = tessel;

namespace {

using matmul_test::ints;

template <class Make, class... A>
void expect_same_as_interpreter(const Make& make, const ts::Config& c, const A&... cpu_args) {
  auto k = make(ts::Settings{.config = c});
  ts::Buffer want = k(cpu_args...);
  ts::Buffer got = k(cpu_args.to(ts::cuda(0))...);
  ASSERT_EQ(got.shape(), want.shape()) << c.to_json();
  EXPECT_EQ(ts::count_mismatches(got.to(ts::cpu()), want, 0, 0), 0) << c.to_json();
}

struct Blocks {
  int64_t m, n, k;
  int warps;
};
const std::vector<Blocks> kConfigs{
    {64, 64, 32, 4}, {32, 32, 16, 4}, {16, 64, 8, 1}, {128, 64, 32, 8}, {64, 32, 64, 2}};

ts::Config config(const Blocks& b, int stages = 1, ts::PidType pid = ts::PidType::flat) {
  return ts::Config{.block_sizes = std::vector<int64_t>{b.m, b.n, b.k},
                    .num_warps = b.warps,
                    .num_stages = stages,
                    .pid_type = pid};
}

}  // namespace

TEST(ContractionsGpu, MatmulMatchesTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  auto make = [](ts::Settings s) { return examples::make_matmul(s); };
  struct Shape {
    int64_t m, k, n;
  };
  for (ts::DType t : {ts::f32, ts::bf16})
    for (Shape s : {Shape{128, 96, 64}, Shape{100, 50, 72}, Shape{1, 33, 1}, Shape{77, 1, 130}})
      for (const Blocks& b : kConfigs)
        expect_same_as_interpreter(make, config(b), ints(s.m, s.k, t, 1), ints(s.k, s.n, t, 2));
}

TEST(ContractionsGpu, PipelinedAndPersistentMatmulsMatchTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  auto make = [](ts::Settings s) { return examples::make_matmul(s); };
  for (int stages : {1, 2, 3})
    for (ts::PidType pid :
         {ts::PidType::flat, ts::PidType::persistent_interleaved, ts::PidType::persistent_blocked})
      expect_same_as_interpreter(make, config(kConfigs[0], stages, pid), ints(300, 200, ts::f32, 3),
                                 ints(200, 150, ts::f32, 4));
}

TEST(ContractionsGpu, AFusedEpilogueMatchesTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  auto make = [](ts::Settings s) { return examples::make_matmul_bias_relu(s); };
  std::vector<double> b(130);
  for (size_t n = 0; n < b.size(); ++n) b[n] = static_cast<double>(n % 9) * 20 - 80;
  for (const Blocks& c : kConfigs)
    expect_same_as_interpreter(make, config(c), ints(90, 70, ts::f32, 5), ints(70, 130, ts::f32, 6),
                               ts::Buffer::from_vector(b, {130}, ts::f32));
}

TEST(ContractionsGpu, TheDefaultConfigMatchesTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  auto k = examples::make_matmul();
  ts::Buffer x = ints(513, 257, ts::f32, 7), y = ints(257, 129, ts::f32, 8);
  ts::Buffer want = k(x, y);
  ts::Buffer got = k(x.to(ts::cuda(0)), y.to(ts::cuda(0)));
  EXPECT_EQ(ts::count_mismatches(got.to(ts::cpu()), want, 0, 0), 0);
}

TEST(ContractionsGpu, TransposedViewFactorsMatchTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  // x = a.t() and y = w.t() of row-major a [K, M] and w [N, K]: each factor loads along
  // its dim of stride 1.
  auto make = [](ts::Settings s) { return examples::make_matmul(s); };
  const int64_t M = 130, K = 72, N = 100;
  for (ts::DType t : {ts::f32, ts::bf16}) {
    ts::Buffer a = ints(K, M, t, 9), w = ints(N, K, t, 10), x2 = ints(M, K, t, 11);
    ts::Buffer ga = a.to(ts::cuda(0)), gw = w.to(ts::cuda(0)), gx2 = x2.to(ts::cuda(0));
    auto x_of = [&](const ts::Buffer& b) { return b.view_as_strided({M, K}, {1, M}, 0); };
    auto y_of = [&](const ts::Buffer& b) { return b.view_as_strided({K, N}, {1, K}, 0); };
    for (const Blocks& b : kConfigs) {
      auto k = make(ts::Settings{.config = config(b)});
      EXPECT_EQ(
          ts::count_mismatches(k(x_of(ga), y_of(gw)).to(ts::cpu()), k(x_of(a), y_of(w)), 0, 0), 0)
          << config(b).to_json();
      EXPECT_EQ(ts::count_mismatches(k(gx2, y_of(gw)).to(ts::cpu()), k(x2, y_of(w)), 0, 0), 0)
          << config(b).to_json();
    }
  }
}
