// GPU results against the CPU interpreter (the oracle) for the example kernels, over
// dtypes, ragged sizes, strides and configs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <tessel/testing.hpp>

#include "examples/kernels/basic.hpp"
#include "examples/kernels/norms.hpp"
#include "examples/kernels/seed002.hpp"
#include "gpu_test_util.hpp"
#include "tests/cast_kernels.hpp"
#include "tests/emit_registers_kernels.hpp"
#include "tests/eviction_kernels.hpp"
#include "tests/reduce_kernels.hpp"

namespace ts = tessel;

namespace {

ts::Buffer on_cpu(const ts::Buffer& b) { return b.to(ts::cpu()); }

/// Runs `k` on GPU Buffers and on their CPU copies; expects equal outputs within tolerance.
template <class K, class... A>
void expect_matches_interpreter(const K& k, double atol, double rtol, const A&... gpu_args) {
  ts::Buffer got = k(gpu_args...);
  ts::Buffer want = k(on_cpu(gpu_args)...);
  ASSERT_EQ(got.shape(), want.shape());
  EXPECT_EQ(ts::count_mismatches(on_cpu(got), want, atol, rtol), 0) << got.str();
}

// NaN, infinities and out-of-range floats cast to i32, i64 and u64 as on the interpreter
// (CUDA's own 64-bit conversions give 0x8000000000000000 for NaN).
TEST(KernelsGpu, FloatToIntegerCastsMatchTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  auto k = cast_kernels::make_to_integers();
  auto [a, b, c] = k(cast_kernels::special_floats(ts::cuda(0)));
  auto [wa, wb, wc] = k(cast_kernels::special_floats());
  EXPECT_EQ(ts::count_mismatches(on_cpu(a), wa, 0, 0), 0);
  EXPECT_EQ(ts::count_mismatches(on_cpu(b), wb, 0, 0), 0);
  EXPECT_EQ(ts::count_mismatches(on_cpu(c), wc, 0, 0), 0);
  EXPECT_EQ(std::memcmp(on_cpu(b).data_ptr(), wb.data_ptr(), 80),
            0);  // every bit of the i64 results
  EXPECT_EQ(std::memcmp(on_cpu(c).data_ptr(), wc.data_ptr(), 80), 0);
}

TEST(KernelsGpu, AddF32Ragged) {
  TESSEL_REQUIRE_GPU();
  auto k = examples::make_add();
  for (int64_t n : {1, 7, 1000, 4097, 1 << 20})
    expect_matches_interpreter(k, 0, 0, ts::Buffer::randn({n}, ts::f32, ts::cuda(0), 1),
                               ts::Buffer::randn({n}, ts::f32, ts::cuda(0), 2));
}

TEST(KernelsGpu, AddBf16AndF16Promotion) {
  TESSEL_REQUIRE_GPU();
  auto k = examples::make_add();
  expect_matches_interpreter(k, 0, 0, ts::Buffer::randn({3000}, ts::bf16, ts::cuda(0), 1),
                             ts::Buffer::randn({3000}, ts::bf16, ts::cuda(0), 2));
  expect_matches_interpreter(k, 0, 0, ts::Buffer::randn({3000}, ts::f16, ts::cuda(0), 1),
                             ts::Buffer::randn({3000}, ts::bf16, ts::cuda(0), 2));
}

TEST(KernelsGpu, Add2dSmallBlocksRaggedEdges) {
  TESSEL_REQUIRE_GPU();
  auto k = examples::make_add_2d(
      ts::Settings{.config = ts::Config{.block_sizes = std::vector<int64_t>{16, 32}}});
  expect_matches_interpreter(k, 0, 0, ts::Buffer::randn({77, 131}, ts::f32, ts::cuda(0), 1),
                             ts::Buffer::randn({77, 131}, ts::f32, ts::cuda(0), 2));
}

TEST(KernelsGpu, Add2dStridedTransposedInput) {
  TESSEL_REQUIRE_GPU();
  auto k = examples::make_add_2d();
  ts::Buffer a = ts::Buffer::randn({96, 64}, ts::f32, ts::cuda(0), 1).transpose(0, 1);
  ts::Buffer b = ts::Buffer::randn({64, 96}, ts::f32, ts::cuda(0), 2);
  expect_matches_interpreter(k, 0, 0, a, b);
}

TEST(KernelsGpu, AddBiasBroadcast) {
  TESSEL_REQUIRE_GPU();
  auto k = examples::make_add_bias();
  expect_matches_interpreter(k, 0, 0, ts::Buffer::randn({300, 515}, ts::f32, ts::cuda(0), 1),
                             ts::Buffer::randn({515}, ts::f32, ts::cuda(0), 2));
}

TEST(KernelsGpu, PaddedSumAllForms) {
  TESSEL_REQUIRE_GPU();
  ts::Buffer x = ts::Buffer::randn({1000, 100}, ts::f32, ts::cuda(0), 5);
  for (int64_t n : {0, 1, 80, 999, 1000, 5000}) {
    ts::Buffer size = ts::Buffer::scalar(static_cast<double>(n), ts::i32, ts::cuda(0));
    expect_matches_interpreter(examples::make_padded_sum(), 1e-5, 1e-5, x, size);
    expect_matches_interpreter(examples::make_padded_sum_index(), 1e-5, 1e-5, x, size);
    expect_matches_interpreter(examples::make_padded_sum_item(), 1e-5, 1e-5, x, size);
  }
  ts::Buffer size = ts::Buffer::scalar(80, ts::i32, ts::cuda(0));
  ts::Buffer ones = ts::Buffer::ones({100, 100}, ts::f32, ts::cuda(0));
  expect_matches_interpreter(examples::make_padded_sum_manual(), 0, 0, ones, size);
}

TEST(KernelsGpu, MathAndReductionsMatchInterpreter) {
  TESSEL_REQUIRE_GPU();
  auto k = ts::kernel("math_rows", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto tm : ts::tile(x.size(0))) {
      ts::Value row = x(tm, ts::all);
      ts::Value m = ts::max(row, 1, true);
      ts::Value e = ts::exp(row - m);
      ts::Value s = ts::sum(e, 1, true);
      out(tm, ts::all) =
          e / s + ts::sigmoid(row) * ts::tanh(row) - ts::sqrt(ts::abs(row)) + ts::cos(row);
    }
    return out;
  });
  expect_matches_interpreter(k, 1e-5, 1e-4, ts::Buffer::randn({37, 300}, ts::f32, ts::cuda(0), 9));
}

TEST(KernelsGpu, ArgmaxAndMinAlongRows) {
  TESSEL_REQUIRE_GPU();
  // The default config, and one row per program over 8 and 32 warps (the warps' values
  // combined across lanes). Rounded values: many ties, where the first index wins.
  std::vector<double> v = ts::Buffer::randn({130, 1000}, ts::f32, ts::cpu(), 4).to_vector();
  for (double& e : v) e = std::round(e * 2);
  ts::Buffer ties = ts::Buffer::from_vector(v, {130, 1000}, ts::f32, ts::cuda(0));
  for (auto [rows, warps] : {std::pair<int64_t, int>{0, 0}, {1, 8}, {1, 32}}) {
    ts::Settings s;
    if (rows) s.config = ts::Config{.block_sizes = std::vector<int64_t>{rows}, .num_warps = warps};
    auto k = ts::kernel(
        "argmax_rows",
        [](ts::Tensor x) {
          ts::Tensor out = x.new_empty({x.size(0)}, ts::i64);
          for (auto tm : ts::tile(x.size(0)))
            out(tm) = ts::argmax(x(tm, ts::all), 1) * 10000 + ts::argmin(x(tm, ts::all), 1);
          return out;
        },
        s);
    SCOPED_TRACE(s.config ? s.config->to_json() : std::string("default"));
    expect_matches_interpreter(k, 0, 0, ts::Buffer::randn({130, 1000}, ts::f32, ts::cuda(0), 4));
    expect_matches_interpreter(k, 0, 0, ties);
  }
}

TEST(KernelsGpu, CastsRoundedByStores) {
  // A bf16 cast stored and doubled (rounded in registers), and the doubled value only
  // stored (rounded by its store): bit-identical to the interpreter. Also one row per
  // program over 8 warps, where each row's value is the same in every register.
  TESSEL_REQUIRE_GPU();
  ts::Buffer x = ts::Buffer::randn({100, 300}, ts::f32, ts::cuda(0), 6);
  for (ts::Settings s :
       {ts::Settings{},
        ts::Settings{
            .config = ts::Config{.block_sizes = std::vector<int64_t>{1, 512}, .num_warps = 8}}}) {
    auto k = emit_registers::make_cast_stored_and_used(s);
    auto [y, z] = k(x);
    auto [y_ref, z_ref] = k(x.to(ts::cpu()));
    EXPECT_EQ(ts::count_mismatches(y.to(ts::cpu()), y_ref, 0, 0), 0);
    EXPECT_EQ(ts::count_mismatches(z.to(ts::cpu()), z_ref, 0, 0), 0);
  }
}

TEST(KernelsGpu, WideIndexValuesAreMaskedBeforeNarrowing) {
  // i64 index values past 2^32 computed on the GPU with 32-bit index arithmetic: masked (0),
  // as on the interpreter, not wrapped into range. A gather, then cross_entropy with a
  // target of 2^32 + 1 (its target logit reads as 0). A scalar index the host computes
  // past the size is refused at the call instead (runtime/host_indices.hpp), as torch raises
  // IndexError.
  TESSEL_REQUIRE_GPU();
  const int64_t far = int64_t{1} << 32;
  auto k = ts::kernel("shift_gather", [far](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t.index().to(ts::i64) + far);
    return out;
  });
  ts::Buffer x = ts::Buffer::from_vector({1, 2, 3, 4}, {4}, ts::f32, ts::cuda(0));
  EXPECT_EQ(k(x).to_vector(), std::vector<double>(4, 0.0));
  auto scalar = ts::kernel("shift_scalar", [far](ts::Tensor x, ts::Value i) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) + x(i + far);
    return out;
  });
  try {
    scalar(x, 1);
    ADD_FAILURE() << "a host index of 2^32 + 1 into 4 elements was not refused";
  } catch (const ts::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("index 4294967297 is out of range for dimension 0"),
              std::string::npos)
        << e.what();
  }
  ts::Buffer logits = ts::Buffer::randn({2, 3}, ts::f32, ts::cuda(0), 7);
  ts::Buffer target = ts::Buffer::from_vector({1, 4294967297.0}, {2}, ts::i64, ts::cuda(0));
  auto ce = examples::make_cross_entropy();
  EXPECT_EQ(ts::count_mismatches(ce(logits, target).to(ts::cpu()),
                                 ce(logits.to(ts::cpu()), target.to(ts::cpu())), 1e-5, 1e-5),
            0);
}

TEST(KernelsGpu, TileReductionsOverBothDims) {
  // Back-to-back cross-warp reductions (disjoint shared memory, one barrier each), dense
  // register numbering, an argmax among them, and a config with maxnreg.
  TESSEL_REQUIRE_GPU();
  ts::Buffer x = ts::Buffer::randn({100, 300}, ts::f32, ts::cuda(0), 5);
  for (const ts::Config& c : reduce_test::tile_reduction_configs()) {
    SCOPED_TRACE(c.to_json());
    expect_matches_interpreter(reduce_test::make_tile_reductions({.config = c}), 1e-4, 1e-5, x);
  }
}

TEST(KernelsGpu, LoopCarriedAccumulatorInNestedTileLoop) {
  TESSEL_REQUIRE_GPU();
  auto k = ts::kernel("row_sum_looped", [](ts::Tensor x) {
    ts::Tensor out = x.new_empty({x.size(0)});
    for (auto tm : ts::tile(x.size(0))) {
      ts::Value acc = ts::zeros({tm}, ts::f32);
      for (auto tk : ts::tile(x.size(1))) acc = acc + ts::sum(x(tm, tk), 1);
      out(tm) = acc;
    }
    return out;
  });
  expect_matches_interpreter(k, 1e-4, 1e-5,
                             ts::Buffer::randn({100, 3001}, ts::f32, ts::cuda(0), 4));
}

// A loop bound computed on the host beyond 32 bits, with 32-bit index arithmetic (every
// tensor and argument fits 32 bits): refused at launch instead of wrapping tile indices.
// Config::load_eviction_policies are hints: every access width (1-byte vectors, 2-, 4-
// and 8-byte elements, a gather, a scalar, 16-byte vectors) and the online softmax's two
// passes give the interpreter's values with either policy.
TEST(KernelsGpu, EvictionPoliciesKeepValues) {
  TESSEL_REQUIRE_GPU();
  using E = ts::EvictionPolicy;
  const int64_t n = 3001;
  std::vector<double> idx(n), mask(n);
  for (int64_t i = 0; i < n; ++i) {
    idx[i] = static_cast<double>((i * 7 + 3) % n);
    mask[i] = i % 3 == 0;
  }
  ts::Buffer m = ts::Buffer::from_vector(mask, {n}, ts::boolean, ts::cuda(0));
  ts::Buffer h = ts::Buffer::randn({n}, ts::f16, ts::cuda(0), 1);
  ts::Buffer x = ts::Buffer::randn({n}, ts::f32, ts::cuda(0), 2);
  ts::Buffer i = ts::Buffer::from_vector(idx, {n}, ts::i64, ts::cuda(0));
  ts::Buffer rows = ts::Buffer::randn({37, 5000}, ts::bf16, ts::cuda(0), 3);
  for (E p : {E::first, E::last}) {
    ts::Config c{.block_sizes = std::vector<int64_t>{128, 256, 512},
                 .load_eviction_policies = std::vector<E>(eviction_test::kLoads, p)};
    expect_matches_interpreter(eviction_test::make_mixed_loads({.config = c}), 0, 0, m, h, x, i);
    ts::Config two{.block_sizes = std::vector<int64_t>{1, 1024},
                   .num_warps = 4,
                   .num_stages = 2,
                   .load_eviction_policies = std::vector<E>{p, p == E::first ? E::last : E::first}};
    expect_matches_interpreter(examples::make_softmax_two_pass({.config = two}), 1e-2, 1e-2, rows);
  }
}

// A loop bound computed on the host past 2^31 indexes in 64 bits when index_dtype is
// unset (the call selects a 64-bit specialization; the bound is clamped to x's size), and
// is a UserError under a forced i32.
TEST(GpuRuntime, HostComputedLoopBoundBeyond32Bits) {
  TESSEL_REQUIRE_GPU();
  auto make = [](ts::Settings s) {
    return ts::kernel(
        "scaled_bound",
        [](ts::Tensor x, ts::Value n) {
          ts::Tensor out = ts::zeros_like(x);
          for (auto t : ts::tile(n * 1000)) out(t) = x(t) + 1;
          return out;
        },
        s);
  };
  auto k = make({});
  ts::Buffer x = ts::Buffer::zeros({16}, ts::f32, ts::cuda(0));
  EXPECT_EQ(k(x, int64_t{1}).to(ts::cpu()).to_vector(), std::vector<double>(16, 1.0));
  EXPECT_EQ(k(x, int64_t{3000000}).to(ts::cpu()).to_vector(), std::vector<double>(16, 1.0));
  auto forced = make({.index_dtype = ts::i32});
  try {
    forced(x, int64_t{3000000});
    FAIL() << "expected a UserError";
  } catch (const ts::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("beyond 32-bit index arithmetic"), std::string::npos)
        << e.what();
  }
}

// pid_type xyz puts dim 1 of the loop on grid axis y, whose limit is 65535 programs.
TEST(KernelsGpu, XyzGridBeyondTheAxisLimitIsAnError) {
  TESSEL_REQUIRE_GPU();
  auto k = examples::make_add_2d(
      ts::Settings{.config = ts::Config{.block_sizes = std::vector<int64_t>{1, 16},
                                        .pid_type = ts::PidType::xyz}});
  ts::Buffer x = ts::Buffer::zeros({1, 16 * 70000}, ts::f32, ts::cuda(0));
  try {
    k(x, x);
    FAIL() << "expected a UserError";
  } catch (const ts::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("pid_type xyz needs 70000 programs along grid axis y"),
              std::string::npos)
        << e.what();
  }
}

// TESSEL_INTERPRET=1 runs GPU Buffers on the interpreter: arguments are staged through
// the host and the outputs come back on the GPU, with the GPU's values.
TEST(KernelsGpu, InterpretFlagStagesGpuBuffers) {
  TESSEL_REQUIRE_GPU();
  auto k = examples::make_add();
  ts::Buffer x = ts::Buffer::randn({1000}, ts::f32, ts::cuda(0), 1),
             y = ts::Buffer::randn({1000}, ts::f32, ts::cuda(0), 2);
  ts::Buffer on_gpu = k(x, y);
  setenv("TESSEL_INTERPRET", "1", 1);
  ts::Buffer interpreted = k(x, y);
  unsetenv("TESSEL_INTERPRET");
  EXPECT_TRUE(interpreted.device().is_cuda());
  EXPECT_EQ(ts::count_mismatches(on_cpu(interpreted), on_cpu(on_gpu), 0, 0), 0);
}

}  // namespace
