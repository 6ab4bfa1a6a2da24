// The compile pipeline (src/codegen/compile_pipeline.hpp): its stages in order, the one
// register budget that the config space's validity check and a call share, and the IR
// that TESSEL_DUMP_DIR writes after each stage.
#include "codegen/compile_pipeline.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <tessel/tessel.hpp>

#include "autotune/candidate_compiler.hpp"
#include "autotune/config_space.hpp"
#include "examples/kernels/basic.hpp"
#include "examples/kernels/norms.hpp"
#include "tests/autotune_test_util.hpp"
#include "tests/nvrtc_test_util.hpp"
#include "tests/user_error_util.hpp"

namespace ts = tessel;
namespace cg = tessel::codegen;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kStages{
    "traced",       "complete_config", "roll_reductions", "unit_tiles",
    "index_bounds", "layout",          "kernel_ir",       "emit"};

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Softmax rows of 4096 f32 on one warp (32 threads): 128 registers per thread per row of
// a tile value, so `rows` rows take 128 * rows.
ts::Config one_warp(int64_t rows) {
  return ts::Config{.block_sizes = std::vector<int64_t>{rows}, .num_warps = 1};
}

TEST(CompilePipeline, RecordsTheIrAfterEachStageInOrder) {
  EXPECT_EQ(cg::stage_names(), kStages);
  ts::Buffer x = ts::Buffer::ones({8, 100000}, ts::f32);
  auto softmax = examples::make_softmax_basic();
  const ts::ir::Graph& g = autotune_test::graph_of(softmax, x);
  // Rows of 100000 elements default to a looped reduction: roll_reductions changes the IR.
  cg::CompiledStages s = cg::compile_pipeline(g, {}, {.record_ir = true});
  ASSERT_EQ(s.stage_ir.size(), kStages.size());
  for (size_t i = 0; i < kStages.size(); ++i) {
    EXPECT_EQ(s.stage_ir[i].number, static_cast<int>(i) + 1);
    EXPECT_EQ(s.stage_ir[i].stage, kStages[i]);
    EXPECT_EQ(
        s.stage_ir[i].ir.rfind(fmt::format("// stage {}: {}\n// config: {{", i + 1, kStages[i]), 0),
        0u)
        << s.stage_ir[i].ir;
  }
  ASSERT_NE(s.lowered, nullptr);
  EXPECT_EQ(s.stage_ir[0].ir.find("\"reduction_loops\""), std::string::npos);  // as given
  EXPECT_NE(s.stage_ir[1].ir.find("\"reduction_loops\":[4096]"), std::string::npos);
  auto body = [](const std::string& ir) { return ir.substr(ir.find("\nkernel ")); };
  EXPECT_EQ(body(s.stage_ir[0].ir), body(s.stage_ir[1].ir));
  EXPECT_NE(body(s.stage_ir[1].ir), body(s.stage_ir[2].ir));  // rolled
  for (size_t i = 3; i < kStages.size(); ++i)  // the later stages leave the IR as it is
    EXPECT_EQ(body(s.stage_ir[i].ir), body(s.stage_ir[2].ir)) << kStages[i];
  EXPECT_EQ(body(s.stage_ir[5].ir), "\n" + ts::ir::print(s.program()));
  ASSERT_EQ(s.loops.size(), 1u);
  EXPECT_EQ(s.loops[0].loop->op, ts::ir::Op::Loop);
  EXPECT_FALSE(s.loops[0].kernel.source.empty());
  // Without record_ir or emit: the same program and config, no IR, no CUDA.
  cg::CompiledStages checks =
      cg::compile_pipeline(g, {}, {.emit = cg::PipelineOptions::Emit::none});
  EXPECT_TRUE(checks.stage_ir.empty());
  EXPECT_EQ(checks.config, s.config);
  EXPECT_EQ(ts::ir::print(checks.program()), ts::ir::print(s.program()));
  EXPECT_TRUE(checks.loops.at(0).kernel.source.empty());
}

// kernel.cuda() and the GPU path run the pipeline again on the specialization's complete
// config: the same config and the same CUDA as from the user's.
TEST(CompilePipeline, CompletingACompleteConfigChangesNothing) {
  ts::Buffer x = ts::Buffer::ones({37, 1000}, ts::f32), w = ts::Buffer::ones({1000}, ts::f32);
  auto rms = examples::make_rms_norm();
  ts::Buffer long_rows = ts::Buffer::ones({4, 100000}, ts::f32);
  auto softmax = examples::make_softmax_basic();
  for (const ts::ir::Graph* g :
       {&autotune_test::graph_of(rms, x, w, 1e-5), &autotune_test::graph_of(softmax, long_rows)})
    for (const ts::Config& c : {ts::Config{}, ts::Config{.num_warps = 8}}) {
      cg::CompiledStages first = cg::compile_pipeline(*g, c, {});
      cg::CompiledStages again = cg::compile_pipeline(*g, first.config, {});
      EXPECT_EQ(again.config, first.config) << first.config.to_json();
      ASSERT_EQ(again.loops.size(), first.loops.size());
      for (size_t i = 0; i < first.loops.size(); ++i)
        EXPECT_EQ(again.loops[i].kernel.source, first.loops[i].kernel.source);
    }
}

// The config space's validity check is the pipeline a call runs: a point is valid exactly
// when a call with its config compiles, with one register budget (256 per thread).
TEST(CompilePipeline, ValidConfigsAreTheConfigsACallCompiles) {
  ts::Buffer x = ts::Buffer::ones({64, 4096}, ts::f32);
  auto softmax = examples::make_softmax_basic();
  tessel::autotune::ConfigSpace space(autotune_test::graph_of(softmax, x), {}, "softmax");
  auto call_compiles = [&](const ts::Config& c) {
    auto k = examples::make_softmax_basic(ts::Settings{.config = c});
    try {
      return !k.cuda(false, x).empty();
    } catch (const ts::UserError&) {
      return false;
    }
  };
  // 128, 256 and 512 registers per thread: the budget's edge.
  for (int64_t rows : {1, 2, 4}) {
    ts::Config c = space.config(space.point(one_warp(rows)));
    EXPECT_EQ(space.valid(space.point(c)), rows <= 2) << c.to_json();
    EXPECT_EQ(call_compiles(c), rows <= 2) << c.to_json();
  }
  std::mt19937_64 rng(11);
  int valid = 0, invalid = 0;
  for (int i = 0; i < 40; ++i) {
    std::vector<int> p(space.knobs().size());
    for (size_t j = 0; j < p.size(); ++j)
      p[j] = std::uniform_int_distribution<int>(
          0, static_cast<int>(space.knobs()[j].choices.size()) - 1)(rng);
    ts::Config c = space.config(space.canonical(p));
    if (c.maxnreg && 32 * c.num_warps.value_or(4) * *c.maxnreg > 65536) continue;  // launch
    bool ok = space.valid(space.canonical(p));
    (ok ? valid : invalid)++;
    EXPECT_EQ(call_compiles(c), ok) << c.to_json();
  }
  EXPECT_GT(valid, 0);
  EXPECT_GT(invalid, 0);
}

TEST(CompilePipeline, ATileValuePastTheRegisterBudgetIsAUserError) {
  auto k = examples::make_softmax_basic(ts::Settings{.config = one_warp(4)});
  std::string msg = user_error_test::user_error([&] { k(ts::Buffer::ones({8, 4096}, ts::f32)); });
  user_error_test::expect_message(msg, "softmax", "basic.hpp", 0,
                                  "spans 16384 elements, 512 registers per thread (at most 256)",
                                  "use smaller block sizes, more warps (num_warps)");
}

// An autotuning candidate compiles what a call with its config compiles: the same
// lowering (a rolled reduction here), the same complete config and the same CUDA.
class CompilePipelineCandidate : public autotune_test::CacheDirTest {};

TEST_F(CompilePipelineCandidate, ACandidateCompilesTheCudaACallCompiles) {
  REQUIRE_NVRTC();
  ts::Buffer x = ts::Buffer::ones({8, 100000}, ts::f32);
  auto softmax = examples::make_softmax_basic();
  const ts::ir::Graph& g = autotune_test::graph_of(softmax, x);
  ts::Config c{.num_warps = 8, .reduction_loops = std::vector<std::optional<int64_t>>{2048}};
  tessel::autotune::GraphFor traced = [&](const ts::Config&) -> const ts::ir::Graph& { return g; };
  std::vector<std::future<tessel::autotune::BuiltCandidate>> built =
      tessel::autotune::build_candidates({c}, traced, 90, 1);
  tessel::autotune::BuiltCandidate b = built.at(0).get();
  ASSERT_EQ(b.failure, "");
  ASSERT_NE(b.stages.lowered, nullptr);  // rolled
  EXPECT_EQ(b.graph, &b.stages.program());
  auto call = examples::make_softmax_basic(ts::Settings{.config = c});
  EXPECT_EQ(b.config, ts::rt::specialization_config(call.impl(), ts::detail::call_args(x)));
  std::vector<std::string> sources = call.cuda(false, x);
  ASSERT_EQ(b.kernels.size(), sources.size());
  for (size_t i = 0; i < sources.size(); ++i) EXPECT_EQ(b.kernels[i].second.source, sources[i]);
  EXPECT_EQ(b.cubins.size(), sources.size());
}

/// TESSEL_DUMP_DIR in a fresh directory, unset after the test.
class CompilePipelineDump : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tessel_stage_dump_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    ::setenv("TESSEL_DUMP_DIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("TESSEL_DUMP_DIR");
    fs::remove_all(dir_);
  }
  fs::path dir_;
};

TEST_F(CompilePipelineDump, DumpDirHoldsOneIrFilePerStageInOrder) {
  auto k = examples::make_softmax_basic();
  ts::Buffer x = ts::Buffer::ones({4, 100000}, ts::f32);
  ts::Buffer out = k(x);
  EXPECT_NEAR(out.to_vector()[0], 1e-5, 1e-9);  // the interpreter ran it
  std::vector<fs::path> stage_dirs;
  for (const auto& e : fs::directory_iterator(dir_))
    if (e.is_directory()) stage_dirs.push_back(e.path());
  ASSERT_EQ(stage_dirs.size(), 1u);
  std::string name = stage_dirs[0].filename().string();
  EXPECT_EQ(name.rfind("softmax-spec_", 0), 0u) << name;
  // Named after the specialization's .ir file.
  EXPECT_TRUE(fs::exists(dir_ / (name.substr(0, name.size() - 7) + ".ir"))) << name;
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(stage_dirs[0]))
    files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  std::vector<std::string> expected;
  for (size_t i = 0; i < kStages.size(); ++i)
    expected.push_back(fmt::format("{:02}-{}.ir", i + 1, kStages[i]));
  EXPECT_EQ(files, expected);
  for (size_t i = 0; i < kStages.size(); ++i) {
    std::string text = read(stage_dirs[0] / expected[i]);
    EXPECT_EQ(text.rfind("// kernel 'softmax'\n// specialization key: ", 0), 0u) << text;
    EXPECT_NE(text.find(fmt::format("\n// stage {}: {}\n", i + 1, kStages[i])), std::string::npos)
        << text;
    EXPECT_NE(text.find("\nkernel softmax\n"), std::string::npos) << text;
  }
}

}  // namespace
