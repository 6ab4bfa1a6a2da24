// What the CUDA emitter keeps out of a thread's registers and what it folds
// (codegen/emit_facts.cpp, emit_memory.cpp): a value the same in every register (a
// [rows] value with one row per program) is loaded once and stored from register 0; an
// f16/bf16 cast or op whose only use is a store into a tensor of that dtype is rounded
// once, by the store; kernels tell the compiler their thread range; a tile index below its
// loop's end is true when every tile is full. Checked on the generated CUDA, compiled with
// NVRTC for sm_90 (no GPU needed); interpreter values against references.
// (GPU values: NormGpu.*, KernelsGpu.CastsRoundedByStores.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tessel/tessel.hpp>
#include <tessel/testing.hpp>
#include <vector>

#include "driver/cuda_api.hpp"
#include "examples/kernels/norms.hpp"
#include "nvrtc_test_util.hpp"
#include "tests/emit_registers_kernels.hpp"

namespace ts = tessel;

namespace {

using nvrtc_test::compile;
using nvrtc_test::count;
using nvrtc_test::count_matches;

ts::Settings one_row(int warps) {
  return ts::Settings{.config =
                          ts::Config{.block_sizes = std::vector<int64_t>{1}, .num_warps = warps}};
}

}  // namespace

TEST(EmitRegisters, ARowValueIsLoadedOnceAndStoredFromRegisterZero) {
  REQUIRE_NVRTC();
  // cross_entropy with one row per program: the row's target and target logit are the
  // same in all of a thread's 64 registers.
  std::string src =
      compile(examples::make_cross_entropy(one_row(8)), ts::Buffer::zeros({4, 16384}, ts::bf16),
              ts::Buffer::zeros({4}, ts::i64));
  EXPECT_EQ(count(src, "_0 = ts::ld("), 2) << src;  // the target, the target logit
  EXPECT_EQ(count(src, "TS_FOR(r) ts::st("), 0) << src;
  EXPECT_EQ(count_matches(src, R"(\{\n\s*const int r = 0;\n(\s*const .*\n)*\s*ts::st\()"), 1)
      << src;
}

TEST(EmitRegisters, RowsSpanningRegistersKeepOneLoadPerRegister) {
  REQUIRE_NVRTC();
  // 32 rows of 256 columns over 4 warps: each thread holds elements of several rows, so
  // the targets differ between registers.
  ts::Settings s{.config = ts::Config{.block_sizes = std::vector<int64_t>{32}, .num_warps = 4}};
  std::string src = compile(examples::make_cross_entropy(s), ts::Buffer::zeros({64, 256}, ts::f32),
                            ts::Buffer::zeros({64}, ts::i64));
  EXPECT_EQ(count(src, "_0 = ts::ld("), 0) << src;
  EXPECT_EQ(count(src, "{ const int r = 0; ts::st("), 0) << src;
}

TEST(EmitRegisters, InterpreterValuesOfTheRowValueKernels) {
  // The kernels above on the interpreter: the loss of a row with one large logit.
  auto k = examples::make_cross_entropy(one_row(8));
  std::vector<double> x(3 * 5, 0.0), t = {1, 4, 0};
  x[1] = 10;
  ts::Buffer loss =
      k(ts::Buffer::from_vector(x, {3, 5}, ts::f32), ts::Buffer::from_vector(t, {3}, ts::i64));
  std::vector<double> got = loss.to_vector();
  double lse0 = std::log(std::exp(10.0) + 4.0);
  EXPECT_NEAR(got[0], lse0 - 10, 1e-5);
  EXPECT_NEAR(got[1], std::log(5.0), 1e-5);
  EXPECT_NEAR(got[2], std::log(5.0), 1e-5);
}

TEST(EmitRegisters, CastsOnlyStoredAreRoundedByTheStore) {
  REQUIRE_NVRTC();
  // softmax into bf16: the cast of the f32 result is only stored.
  std::string src =
      compile(examples::make_softmax(one_row(8)), ts::Buffer::zeros({4, 4096}, ts::bf16));
  EXPECT_EQ(count(src, "ts::round_bf16("), 0) << src;
  // A cast also used by arithmetic keeps its rounding (the arithmetic sees bf16 values);
  // the product, only stored, is rounded by its store.
  src = compile(emit_registers::make_cast_stored_and_used(), ts::Buffer::zeros({4, 256}, ts::f32));
  EXPECT_EQ(count(src, "ts::round_bf16("), 1) << src;
  EXPECT_EQ(count(src, "ts::round_bf16((float)(v"), 1) << src;
}

TEST(EmitRegisters, CastStoredAndUsedRoundsOnTheInterpreter) {
  // 1 + 2^-9 rounds to 1 in bf16 (8 significant bits): stored as 1, and doubled as 2.
  auto k = emit_registers::make_cast_stored_and_used();
  ts::Buffer x = ts::Buffer::full({2, 3}, 1.0 + 1.0 / 512, ts::f32);
  auto [y, z] = k(x);
  EXPECT_EQ(y.to_vector(), std::vector<double>(6, 1.0));
  EXPECT_EQ(z.to_vector(), std::vector<double>(6, 2.0));
}

TEST(EmitRegisters, KernelsKnowTheirThreadRange) {
  REQUIRE_NVRTC();
  std::string src =
      compile(examples::make_softmax(one_row(8)), ts::Buffer::zeros({4, 4096}, ts::f32));
  EXPECT_EQ(count(src, "__builtin_assume(tid >= 0 && tid < TS_T);"), 1) << src;
}

TEST(EmitRegisters, TileIndexBelowItsLoopsEndFoldsWhenEveryTileIsFull) {
  REQUIRE_NVRTC();
  // softmax_online masks columns with tn.index() < x.size(1): always true in chunks of
  // 1024 over 4096 columns (a power of two: a constant of the key), not over 1000.
  ts::Settings s{.config =
                     ts::Config{.block_sizes = std::vector<int64_t>{1, 1024}, .num_warps = 4}};
  auto k = examples::make_softmax_online(s);
  std::string full = compile(k, ts::Buffer::zeros({4, 4096}, ts::f32));
  std::string ragged = compile(k, ts::Buffer::zeros({4, 1000}, ts::f32));
  EXPECT_EQ(count(full, "[r] = true;"), 1) << full;
  EXPECT_EQ(count(ragged, "[r] = true;"), 0) << ragged;
  // Both give softmax on the interpreter (the fold is the CUDA emitter's).
  for (int64_t n : {4096, 1000}) {
    ts::Buffer x = ts::Buffer::randn({3, n}, ts::f32, ts::cpu(), 2);
    std::vector<double> v = x.to_vector(), got = k(x).to_vector();
    for (int64_t i = 0; i < 3; ++i) {
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j < n; ++j) mx = std::max(mx, v[i * n + j]);
      for (int64_t j = 0; j < n; ++j) sum += std::exp(v[i * n + j] - mx);
      for (int64_t j = 0; j < n; ++j)
        EXPECT_NEAR(got[i * n + j], std::exp(v[i * n + j] - mx) / sum, 1e-6);
    }
  }
}
