// A loop nest in a register layout other than the blocked one, on the GPU: tile_mix
// (loads, elementwise ops, reductions along both tile dims, a store) with its nest in the
// mma.sync accumulator fragment layout (passes::with_placement), its CUDA generated from
// that layout and launched through the runtime (rt::GpuProgram), equals the interpreter
// (the blocked layout's result) exactly, on full and ragged tiles.
#include <gtest/gtest.h>

#include <tessel/tessel.hpp>
#include <tessel/testing.hpp>

#include "codegen/compile_pipeline.hpp"
#include "driver/gpu_program.hpp"
#include "gpu_test_util.hpp"
#include "interp/host_program.hpp"
#include "layout/mma_layouts.hpp"
#include "tests/autotune_test_util.hpp"
#include "tests/matmul_test_util.hpp"
#include "tests/placement_kernels.hpp"

namespace ts = tessel;
namespace cg = tessel::codegen;

namespace {

// tile_mix on GPU Buffers x and y with the nest placed as `placement`.
ts::Buffer run_placed(const ts::Buffer& x, const ts::Buffer& y,
                      const ts::layout::LinearLayout& placement) {
  auto k = placement_test::make_tile_mix();
  const ts::ir::Graph& g = autotune_test::graph_of(k, x, y);
  cg::CompiledStages s = cg::compile_pipeline(g, placement_test::mix_config(), {});
  cg::LoopStages& l = s.loops.at(0);
  l.layout = ts::passes::with_placement(l.layout, placement);
  l.kernel = cg::generate_cuda(s.program(), l.plan, l.layout);
  EXPECT_NE(l.kernel.source.find("#define TS_V 2"), std::string::npos);
  ts::rt::GpuProgram program(s, ts::Settings{});
  ts::rt::HostEnv env;
  env.graph = &s.program();
  env.args.resize(2);
  env.arg_buffers = {&x, &y};
  for (size_t i = 0; i < 2; ++i) {
    env.args[i].shape = &env.arg_buffers[i]->shape();
    env.args[i].strides = &env.arg_buffers[i]->strides();
  }
  env.device = x.device();
  std::vector<ts::Buffer> out = ts::rt::run_host_program(s.program(), s.config, env, &program);
  return out.at(0).to(ts::cpu());
}

}  // namespace

TEST(RegisterPlacementGpu, ANestInTheMmaSyncAccumulatorLayoutMatchesTheInterpreter) {
  TESSEL_REQUIRE_GPU();
  const ts::layout::LinearLayout mma = ts::layout::mma_sync_accumulator({64, 64}, {2, 2});
  struct Shape {
    int64_t m, n;
  };
  for (Shape sh : {Shape{128, 128}, Shape{64, 64}, Shape{200, 136}, Shape{1, 70}, Shape{70, 3}}) {
    ts::Buffer x = matmul_test::ints(sh.m, sh.n, ts::f32, 1);
    ts::Buffer y = matmul_test::ints(sh.m, sh.n, ts::f32, 2);
    auto k = placement_test::make_tile_mix(ts::Settings{.config = placement_test::mix_config()});
    ts::Buffer want = k(x, y);  // the interpreter
    ts::Buffer got = run_placed(x.to(ts::cuda(0)), y.to(ts::cuda(0)), mma);
    ASSERT_EQ(got.shape(), want.shape());
    EXPECT_EQ(ts::count_mismatches(got, want, 0, 0), 0) << sh.m << " x " << sh.n;
    // The blocked layout's GPU result is the same.
    EXPECT_EQ(
        ts::count_mismatches(k(x.to(ts::cuda(0)), y.to(ts::cuda(0))).to(ts::cpu()), want, 0, 0), 0);
  }
}
