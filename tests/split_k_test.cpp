// Split-K (Config::split_k, src/codegen/emit_split_k.cpp) on the CPU: the config key, its
// errors, the generated program (tile and share from the program id, the share of K's
// tiles, partial sums to the workspace, the last program's reduction) compiled by NVRTC,
// the grid and workspace a call plans. GPU values: tests/gpu/dot_gpu_test.cpp
// (DotGpu.SplitK*).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <tessel/tessel.hpp>

#include "codegen/compile_pipeline.hpp"
#include "driver/gpu_program.hpp"
#include "examples/kernels/matmul.hpp"
#include "nvrtc_test_util.hpp"
#include "passes/default_config.hpp"
#include "runtime/kernel_tuning.hpp"
#include "tests/dot_test_util.hpp"

namespace ts = tessel;

namespace {

using dot_test::blocks;
using dot_test::make_dot;

ts::Config split(int64_t m, int64_t n, int64_t k, int warps, int stages, int s) {
  ts::Config c = blocks(m, n, k, warps);
  c.num_stages = stages;
  c.split_k = s;
  return c;
}

template <class F>
std::string user_error(F&& f) {
  try {
    f();
  } catch (const ts::UserError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no UserError";
  return "";
}

}  // namespace

TEST(SplitK, TheConfigKeyRoundTripsAndBadValuesAreUserErrors) {
  ts::Config c = split(64, 128, 64, 4, 4, 4);
  EXPECT_NE(c.to_json().find("\"split_k\":4"), std::string::npos) << c.to_json();
  EXPECT_EQ(ts::Config::from_json(c.to_json()), c);
  EXPECT_NE(c.to_cpp().find(".split_k = 4"), std::string::npos) << c.to_cpp();
  auto k = make_dot();
  ts::Buffer x = ts::Buffer::zeros({200, 72}, ts::bf16), y = ts::Buffer::zeros({72, 272}, ts::bf16);
  std::vector<ts::detail::CallArg> args = {ts::detail::to_call_arg(x), ts::detail::to_call_arg(y)};
  const ts::ir::Graph& g = ts::rt::traced_graph(k.impl(), args);
  for (int s : {0, 3, 32}) {
    std::string msg =
        user_error([&] { ts::passes::complete_config(g, split(64, 128, 64, 4, 4, s), "dot"); });
    EXPECT_NE(msg.find(fmt::format("split_k {} is not a power of two in [1, 16]", s)),
              std::string::npos)
        << msg;
  }
  ts::Config persistent = split(64, 128, 64, 4, 4, 2);
  persistent.pid_type = ts::PidType::persistent_blocked;
  std::string msg = user_error([&] { ts::passes::complete_config(g, persistent, "dot"); });
  EXPECT_NE(msg.find("split_k 2 with pid_type persistent_blocked"), std::string::npos) << msg;
  EXPECT_NE(msg.find("split-K runs on pid_type flat"), std::string::npos) << msg;
}

// 200 x 272 x 264 in 64 x 128 x 64 tiles: 12 output tiles of 5 tiles of K, shared by 4
// programs each (2, 1, 1, 1 tiles: split * 5 / 4). The kernel takes the workspace, the
// call launches 48 programs, the workspace holds 4 partial sums of 64 x 128 f32 per tile.
TEST(SplitK, ProgramsShareATilesLoopOverKAndTheLastAddsThePartialSums) {
  REQUIRE_NVRTC();
  ts::Buffer x = ts::Buffer::zeros({200, 264}, ts::bf16),
             y = ts::Buffer::zeros({264, 272}, ts::bf16);
  auto k = make_dot(ts::Settings{.config = split(64, 128, 64, 4, 4, 4)});
  const std::string cu = nvrtc_test::compile(k, x, y);
  for (const char* want :
       {"unsigned char* __restrict__ ts_split", "const long long pid = blockIdx.x / 4;",
        "const int split = (int)(blockIdx.x % 4);",
        "lb12_0 = lbk12 + split * nk12 / 4 * 64, le12_0 = min(lbk12 + (split + 1) * nk12 / 4 * "
        "64, lek12);",
        "if (tid == 0) arrived = atomicAdd(count, 1);",
        "if (!__syncthreads_or(tid == 0 && arrived == 3)) return;", "if (tid == 0) *count = 0;",
        // Vectors past M or N (200 x 272 in 64 x 128 tiles) neither written nor read.
        "auto in_tensor = [&](int r) { return ",
        "r += 4) if (in_tensor(r) || in_tensor(r + 1) || in_tensor(r + 2) || in_tensor(r + 3)) "
        "__stcg(",
        ": (in_tensor(r) || in_tensor(r + 1) || in_tensor(r + 2) || in_tensor(r + 3)) ? "
        "__ldcg("})
    EXPECT_NE(cu.find(want), std::string::npos) << want << "\n" << cu;
  // The sum goes on into the store: after the reduction, before the store.
  EXPECT_LT(cu.find("*count = 0;"), cu.find("ts::st_vec<float"));
  std::vector<ts::rt::LaunchRecord> rec;
  ts::rt::LaunchObserver o{.dry = true, .record = &rec};
  ts::rt::LaunchObserver* before = ts::rt::observe_launches(&o);
  k(x, y);
  ts::rt::observe_launches(before);
  ASSERT_EQ(rec.size(), 1u);
  EXPECT_EQ(rec[0].grid[0], 48u);
  std::vector<ts::detail::CallArg> args = {ts::detail::to_call_arg(x), ts::detail::to_call_arg(y)};
  ts::codegen::CompiledStages stages = ts::codegen::compile_pipeline(
      ts::rt::traced_graph(k.impl(), args), ts::rt::specialization_config(k.impl(), args), {});
  ASSERT_EQ(stages.loops.size(), 1u);
  EXPECT_EQ(stages.loops[0].kernel.split_k, 4);
  EXPECT_EQ(stages.loops[0].kernel.split_bytes, 4 * 64 * 128 * 4);
}

// A fused epilogue runs in the last program, after the reduction; two dots in one loop
// (gate and up) are both reduced.
TEST(SplitK, EpiloguesAndTwoDotsOfOneLoopCompile) {
  REQUIRE_NVRTC();
  ts::Buffer x = ts::Buffer::zeros({200, 264}, ts::bf16),
             y = ts::Buffer::zeros({264, 272}, ts::bf16), b = ts::Buffer::zeros({272}, ts::bf16);
  const std::string fused = nvrtc_test::compile(
      examples::make_matmul_bias_gelu(ts::Settings{.config = split(128, 256, 64, 8, 4, 2)}), x, y,
      b);
  EXPECT_LT(fused.find("*count = 0;"), fused.find("tanh"));
  const std::string two = nvrtc_test::compile(
      dot_test::make_gate_up(ts::Settings{.config = split(64, 128, 64, 4, 3, 2)}), x, y, y);
  EXPECT_EQ(nvrtc_test::count(two, "__stcg("), 2) << two;
  EXPECT_EQ(nvrtc_test::count(two, "__ldcg("), 2) << two;
}

// Where no loop over K runs on wgmma into accumulators from zeros, the kernel runs unsplit
// (one program per tile, no workspace) and its CUDA says why.
TEST(SplitK, IsNotAppliedWithoutADotOnWgmmaIntoAnAccumulatorFromZeros) {
  REQUIRE_NVRTC();
  ts::Buffer x = ts::Buffer::zeros({200, 264}, ts::bf16),
             y = ts::Buffer::zeros({264, 272}, ts::bf16);
  auto unsplit = [](const std::string& cu, const std::string& why) {
    EXPECT_NE(cu.find("// split_k 2 is not applied: " + why), std::string::npos) << cu;
    EXPECT_EQ(cu.find("ts_split"), std::string::npos) << cu;
    EXPECT_NE(cu.find("const long long pid = blockIdx.x;"), std::string::npos) << cu;
  };
  // K's block of 32: mma.sync.
  unsplit(nvrtc_test::compile(make_dot(ts::Settings{.config = split(128, 128, 32, 4, 2, 2)}), x, y),
          "the program has no loop whose ts::dot runs on wgmma (not on wgmma: factor %");
  const std::string mma_sync =
      nvrtc_test::compile(make_dot(ts::Settings{.config = split(128, 128, 32, 4, 2, 2)}), x, y);
  EXPECT_NE(mma_sync.find(")) has rows of 64 bytes along its contiguous dim, not a multiple "
                          "of the 128-byte swizzle)"),
            std::string::npos);
  // The sum's own comment says it too.
  EXPECT_NE(mma_sync.find("(mma.sync m16n8k16, bf16; not wgmma: factor %"), std::string::npos)
      << mma_sync;
  unsplit(
      nvrtc_test::compile(make_dot(ts::Settings{.config = split(64, 128, 64, 4, 4, 2)}, 1.0), x, y),
      "the loop over K carries a value other than a dot's accumulator from ts::zeros");
  // A write before the loop over K would run in each share.
  auto writes_first = ts::kernel(
      "writes_first",
      [](ts::Tensor a, ts::Tensor b, ts::Tensor out) {
        for (auto [tm, tn] : ts::tile(a.size(0), b.size(1))) {
          out(tm, tn) = out(tm, tn) + 1.0;
          ts::Value acc = ts::zeros({tm, tn});
          for (auto tk : ts::tile(a.size(1))) acc = ts::dot(a(tm, tk), b(tk, tn), acc);
          out(tm, tn) = out(tm, tn) + acc;
        }
      },
      ts::Settings{.config = split(64, 128, 64, 4, 4, 2)});
  ts::Buffer o = ts::Buffer::zeros({200, 272}, ts::f32);
  unsplit(nvrtc_test::compile(writes_first, x, y, o),
          "the program writes memory before the loop over K (each share would)");
  // An elementwise kernel has no loop over K.
  auto add = ts::kernel(
      "add2",
      [](ts::Tensor a, ts::Tensor c) {
        ts::Tensor out = ts::empty_like(a);
        for (auto t : ts::tile(a.size(0))) out(t) = a(t) + c(t);
        return out;
      },
      ts::Settings{.config = ts::Config{.split_k = 2}});
  ts::Buffer v = ts::Buffer::zeros({100}, ts::f32);
  unsplit(nvrtc_test::compile(add, v, v), "the program has no loop whose ts::dot runs on wgmma");
}
