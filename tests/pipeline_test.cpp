// Config::num_stages = S >= 2 (codegen/emit_pipeline.cpp): a one-dim device loop's vector
// loads are issued S - 1 iterations early (S up to 4). The generated CUDA compiles with NVRTC for
// sm_90 (no GPU needed); loads of a tensor the loop also stores to are not moved; the interpreter's
// results do not depend on num_stages. (GPU results: NormGpu.*.)
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <tessel/tessel.hpp>
#include <tessel/testing.hpp>

#include "driver/cuda_api.hpp"
#include "examples/kernels/basic.hpp"
#include "examples/kernels/matmul.hpp"
#include "examples/kernels/norms.hpp"
#include "nvrtc_test_util.hpp"

namespace ts = tessel;

namespace {

using nvrtc_test::compile;
using nvrtc_test::count;

ts::Settings cfg(std::vector<int64_t> blocks, int warps, int stages) {
  return ts::Settings{
      .config =
          ts::Config{.block_sizes = std::move(blocks), .num_warps = warps, .num_stages = stages}};
}

const std::string kEarly = "loaded one iteration early";

/// x is read and written in one device loop; out gets x * 2 + 1.
auto make_double_in_place(ts::Settings s) {
  return ts::kernel(
      "double_in_place",
      [](ts::Tensor x) {
        ts::Tensor out = ts::empty_like(x);
        for (auto tm : ts::tile(x.size(0)))
          for (auto tn : ts::tile(x.size(1))) {
            x(tm, tn) = x(tm, tn) * 2;
            out(tm, tn) = x(tm, tn) + 1;
          }
        return out;
      },
      s);
}

}  // namespace

TEST(Pipeline, OnlineSoftmaxLoadsEachLoopsNextTileEarly) {
  REQUIRE_NVRTC();
  for (ts::DType dt : {ts::f32, ts::bf16}) {
    // 1000 = 3 * 256 + 232: the last tile is ragged.
    std::string two = compile(examples::make_softmax_two_pass(cfg({2, 256}, 4, 2)),
                              ts::Buffer::zeros({37, 1000}, dt));
    std::string one = compile(examples::make_softmax_two_pass(cfg({2, 256}, 4, 1)),
                              ts::Buffer::zeros({37, 1000}, dt));
    EXPECT_EQ(count(two, kEarly), 2) << two;  // both loops
    EXPECT_EQ(count(one, kEarly), 0);
  }
}

TEST(Pipeline, MoreStagesLoadMoreTilesAhead) {
  REQUIRE_NVRTC();
  ts::Buffer x = ts::Buffer::zeros({37, 1000}, ts::bf16);
  for (int stages : {3, 4, 8}) {
    int ahead = std::min(stages, 4) - 1;
    std::string src = compile(examples::make_softmax_two_pass(cfg({1, 256}, 4, stages)), x);
    std::string early = "loaded " + std::to_string(ahead) + " iterations early";
    // Each of the two loops: `ahead` buffers, the first tiles loaded before it, buffers
    // moving down one per iteration, the tile `ahead` chunks on loaded into the last.
    EXPECT_EQ(count(src, early), 2 * ahead) << src;
    EXPECT_EQ(count(src, "_0[r] = p"), 2) << src;  // buffer 1 into buffer 0, per loop
    EXPECT_EQ(count(src, "[r] = p"), 2 * (ahead - 1)) << src;
    EXPECT_EQ(count(src, "_ + " + std::to_string(256 * ahead) + " < le"), 2) << src;
  }
  // The interpreter's values do not depend on the stages.
  ts::Buffer y = ts::Buffer::randn({5, 1000}, ts::f32, ts::cpu(), 3);
  EXPECT_EQ(examples::make_softmax_two_pass(cfg({1, 256}, 4, 4))(y).to_vector(),
            examples::make_softmax_two_pass(cfg({1, 256}, 4, 1))(y).to_vector());
}

TEST(Pipeline, RolledReductionLoadsAreIssuedEarly) {
  REQUIRE_NVRTC();
  ts::Settings s = cfg({2}, 4, 2);
  s.config->reduction_loops = std::vector<std::optional<int64_t>>{256};
  ts::Buffer x = ts::Buffer::zeros({37, 1000}, ts::bf16), w = ts::Buffer::zeros({1000}, ts::bf16);
  std::string src = compile(examples::make_layer_norm(s), x, w, w, 1e-5);
  EXPECT_GE(count(src, kEarly), 1) << src;
}

TEST(Pipeline, LoadsOfATensorTheLoopStoresToStayInPlace) {
  REQUIRE_NVRTC();
  std::string src =
      compile(make_double_in_place(cfg({4, 64}, 4, 2)), ts::Buffer::zeros({8, 300}, ts::f32));
  EXPECT_EQ(count(src, kEarly), 0) << src;
}

TEST(Pipeline, KernelsWithoutDeviceLoopsAreUnchanged) {
  REQUIRE_NVRTC();
  ts::Buffer x = ts::Buffer::zeros({37, 1000}, ts::f32);
  std::string one = compile(examples::make_softmax(cfg({2}, 4, 1)), x);
  std::string two = compile(examples::make_softmax(cfg({2}, 4, 2)), x);
  std::regex config_line("// config: [^\n]*\n");
  EXPECT_EQ(std::regex_replace(one, config_line, ""), std::regex_replace(two, config_line, ""));
}

TEST(Pipeline, PersistentProgramsLoadTheNextTileEarly) {
  REQUIRE_NVRTC();
  const std::string kNext = "the next program's tile, loaded early";
  ts::Buffer x = ts::Buffer::zeros({37, 1000}, ts::bf16);
  for (ts::PidType pid : {ts::PidType::persistent_blocked, ts::PidType::persistent_interleaved}) {
    ts::Settings two = cfg({2}, 4, 2), one = cfg({2}, 4, 1), flat = cfg({2}, 4, 2);
    two.config->pid_type = one.config->pid_type = pid;
    std::string src = compile(examples::make_softmax(two), x);
    EXPECT_EQ(count(src, kNext), 1) << src;
    const std::regex next("const long long pid = pid_next[0-9]+;");
    EXPECT_EQ(
        std::distance(std::sregex_iterator(src.begin(), src.end(), next), std::sregex_iterator()),
        1)
        << src;
    EXPECT_EQ(count(compile(examples::make_softmax(one), x), kNext), 0);
    EXPECT_EQ(count(compile(examples::make_softmax(flat), x), kNext), 0);  // one tile per program
  }
  // A 2-D persistent loop (its tile indices come from the program id) and a gather whose
  // index is computed in the loop (cross_entropy's target logit: not moved).
  ts::Settings s = cfg({4, 64}, 4, 2);
  s.config->pid_type = ts::PidType::persistent_interleaved;
  std::string add = compile(examples::make_add_2d(s), ts::Buffer::zeros({33, 300}, ts::f32),
                            ts::Buffer::zeros({33, 300}, ts::f32));
  EXPECT_EQ(count(add, "loaded early  //"), 2) << add;
  ts::Settings c = cfg({1}, 8, 2);
  c.config->pid_type = ts::PidType::persistent_blocked;
  std::string ce = compile(examples::make_cross_entropy(c), ts::Buffer::zeros({64, 4096}, ts::bf16),
                           ts::Buffer::zeros({64}, ts::i64));
  EXPECT_EQ(count(ce, "loaded early  //"), 1) << ce;
}

// A load after a loop over K (a fused epilogue's bias) is taken from its buffer where it
// stands, and the next program's tile of it issued there: through the loop the buffer lives
// (the bias in bf16), not the value beside the accumulator.
TEST(Pipeline, APersistentEpiloguesLoadIsTakenWhereItStands) {
  REQUIRE_NVRTC();
  ts::Config c = ts::Config{.block_sizes = std::vector<int64_t>{128, 256, 64},
                            .num_warps = 8,
                            .num_stages = 4,
                            .pid_type = ts::PidType::persistent_blocked};
  ts::Buffer x = ts::Buffer::zeros({512, 256}, ts::bf16),
             y = ts::Buffer::zeros({256, 512}, ts::bf16);
  std::string src = compile(examples::make_matmul_bias_gelu(ts::Settings{.config = c}), x, y,
                            ts::Buffer::zeros({512}, ts::bf16));
  const size_t loop_end = src.find("ts::wgmma_wait<0>();"), take = src.find("ts::to_regs<");
  ASSERT_NE(loop_end, std::string::npos) << src;
  ASSERT_NE(take, std::string::npos) << src;
  EXPECT_GT(take, loop_end) << src;
  EXPECT_EQ(count(src, "the next program's tile of it"), 1) << src;
  EXPECT_LT(src.find("__nv_bfloat16 p"), loop_end) << src;  // the buffer, before the loop
}

TEST(Pipeline, InterpreterResultsDoNotDependOnStages) {
  ts::Buffer x = ts::Buffer::randn({37, 1000}, ts::f32, ts::cpu(), 3);
  ts::Buffer a = examples::make_softmax_two_pass(cfg({2, 256}, 4, 1))(x);
  ts::Buffer b = examples::make_softmax_two_pass(cfg({2, 256}, 4, 2))(x);
  EXPECT_EQ(a.to_vector(), b.to_vector());
  ts::Buffer y = ts::Buffer::randn({8, 300}, ts::f32, ts::cpu(), 4);
  std::vector<double> v = y.to_vector();
  ts::Buffer out = make_double_in_place(cfg({4, 64}, 4, 2))(y);
  std::vector<double> got = out.to_vector(), doubled = y.to_vector();
  for (size_t i = 0; i < v.size(); ++i) {
    float twice = static_cast<float>(v[i]) * 2.0f;  // f32 arithmetic, as the kernel
    EXPECT_EQ(doubled[i], twice);
    EXPECT_EQ(got[i], twice + 1.0f);
  }
}
