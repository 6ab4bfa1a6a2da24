// The kernel plan (src/passes/kernel_plan.hpp): the config applied once per top-level loop
// nest, in the layout stage; code generation reads the plan and nothing else of the config.
#include "passes/kernel_plan.hpp"

#include <gtest/gtest.h>

#include <tessel/tessel.hpp>

#include "codegen/compile_pipeline.hpp"
#include "examples/kernels/basic.hpp"
#include "examples/kernels/norms.hpp"
#include "tests/autotune_test_util.hpp"

namespace ts = tessel;
namespace cg = tessel::codegen;

namespace {

TEST(KernelPlan, HoldsTheBlocksKnobsAndProgramMapOfTheConfig) {
  ts::Buffer x = ts::Buffer::ones({100, 300}, ts::f32), y = ts::Buffer::ones({100, 300}, ts::f32);
  auto add_2d = examples::make_add_2d();
  const ts::ir::Graph& g = autotune_test::graph_of(add_2d, x, y);
  ts::Config c{.block_sizes = std::vector<int64_t>{8, 64},
               .num_warps = 2,
               .num_stages = 3,
               .maxnreg = 128,
               .pid_type = ts::PidType::persistent_interleaved,
               .loop_orders = std::vector<std::vector<int>>{{1, 0}},
               .flatten_loops = std::vector<bool>{true}};
  cg::CompiledStages s = cg::compile_pipeline(g, c, {.emit = cg::PipelineOptions::Emit::none});
  ASSERT_EQ(s.loops.size(), 1u);
  const ts::passes::KernelPlan& p = s.loops[0].plan;
  const ts::ir::Node* loop = s.loops[0].loop;
  EXPECT_EQ(p.loop, loop);
  EXPECT_EQ(p.block(loop->dims[0]), 8);
  EXPECT_EQ(p.block(loop->dims[1]), 64);
  EXPECT_EQ(p.block(loop->dims[0].sym), 8);
  EXPECT_EQ(p.block(static_cast<const ts::ir::Sym*>(nullptr)), 1);
  EXPECT_EQ(p.tile_elems(loop), 8 * 64);
  EXPECT_EQ(p.knobs(loop).order, (std::vector<int>{1, 0}));
  EXPECT_TRUE(p.knobs(loop).flatten);
  EXPECT_EQ(p.pid_type, ts::PidType::persistent_interleaved);
  EXPECT_TRUE(p.persistent);
  EXPECT_EQ(p.num_stages, 3);
  EXPECT_EQ(p.maxnreg, 128);
  EXPECT_EQ(p.config_json, s.config.to_json());
  std::string d = ts::passes::describe(p);
  EXPECT_NE(d.find("plan: sm_90, pid_type persistent_interleaved, num_stages 3, maxnreg 128"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("blocks [8, 64], order [1, 0], flattened"), std::string::npos) << d;
}

// Nested loops have knobs of their own, in pre-order; a loop of another kernel has none
// and a Sym of another kernel no block (InternalErrors, not a silent default).
TEST(KernelPlan, CoversNestedLoopsAndRefusesWhatIsNotInTheNest) {
  ts::Buffer x = ts::Buffer::ones({16, 1000}, ts::f32);
  auto softmax = examples::make_softmax_online();
  const ts::ir::Graph& g = autotune_test::graph_of(softmax, x);
  cg::CompiledStages s =
      cg::compile_pipeline(g, ts::Config{.block_sizes = std::vector<int64_t>{2, 256}},
                           {.emit = cg::PipelineOptions::Emit::none});
  ASSERT_EQ(s.loops.size(), 1u);
  const ts::passes::KernelPlan& p = s.loops[0].plan;
  ASSERT_EQ(p.knobs_by_loop.size(), 3u);  // the row loop and its two column loops
  EXPECT_EQ(p.knobs_by_loop[0].first, s.loops[0].loop);
  for (const auto& [l, k] : p.knobs_by_loop) {
    EXPECT_EQ(l->op, ts::ir::Op::Loop);
    EXPECT_EQ(p.block(l->dims[0]), l == p.loop ? 2 : 256);
  }
  ts::Buffer a = ts::Buffer::ones({64}, ts::f32);
  auto add = examples::make_add();
  const ts::ir::Graph& other = autotune_test::graph_of(add, a, a);
  const ts::ir::Node* other_loop = nullptr;
  for (const ts::ir::Node* n : other.host)
    if (n->op == ts::ir::Op::Loop) other_loop = n;
  ASSERT_NE(other_loop, nullptr);
  EXPECT_THROW(p.knobs(other_loop), ts::InternalError);
  ts::ir::Sym foreign;
  foreign.id = 1000;
  foreign.name = "a foreign tile";
  EXPECT_THROW(p.block(&foreign), ts::InternalError);
}

}  // namespace
