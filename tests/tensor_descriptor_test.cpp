// Loads by tensor descriptor on the CPU (Config::indexing "tensor_descriptor",
// passes/tensor_descriptor.hpp): which loads take the TMA and which keep pointers, their
// kernel IR (access, shared stage, mbarrier) read back, the CUDA they print compiled with
// NVRTC for sm_90, the CUtensorMap fields a call passes, and the interpreter's values
// (indexing changes no value). GPU: tests/gpu/tensor_descriptor_gpu_test.cpp.
#include "passes/tensor_descriptor.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <tessel/tessel.hpp>
#include <tessel/testing.hpp>

#include "driver/launch_abi.hpp"
#include "examples/kernels/basic.hpp"
#include "examples/kernels/norms.hpp"
#include "passes/shared_plan.hpp"
#include "tests/nvrtc_test_util.hpp"
#include "tests/stage_test_util.hpp"
#include "tests/tensor_descriptor_kernels.hpp"
#include "tests/user_error_util.hpp"

namespace ts = tessel;
namespace cg = tessel::codegen;
namespace passes = tessel::passes;
using namespace tensor_descriptor_test;
using stage_test::cuda_of;
using stage_test::edited;
using stage_test::line_of;
using stage_test::parse_error;
using stage_test::Staged;

namespace {

template <class K, class... A>
Staged staged(const K& k, const ts::Config& c, const A&... args) {
  return stage_test::staged("kernel_ir", true, k, c, args...);
}

std::vector<const ts::ir::Node*> loads_of(const cg::LoopStages& l) {
  std::vector<const ts::ir::Node*> out;
  ts::ir::walk(l.loop->body, [&](const ts::ir::Node* n) {
    if (n->op == ts::ir::Op::Load) out.push_back(n);
  });
  return out;
}

TEST(TensorDescriptor, EachLoadCopiesItsTileAsOneBoxIntoSharedMemory) {
  auto add = examples::make_add_2d();
  ts::Buffer x = ts::Buffer::ones({100, 200}, ts::f32), y = ts::Buffer::ones({100, 200}, ts::f32);
  Staged s = staged(add, tma_config({32, 64}), x, y);
  const cg::LoopStages& l = s.stages.loops.at(0);
  std::vector<const ts::ir::Node*> loads = loads_of(l);
  ASSERT_EQ(loads.size(), 2u);
  // [32, 64] f32 boxes: 8192 bytes each, 128-byte aligned, then their two mbarriers.
  for (size_t i = 0; i < 2; ++i)
    EXPECT_EQ(line_of(s.text, loads[i]),
              fmt::format(
                  "//   %{} load f32[t0, t1]: registers L0; access L0 tma, box [32, 64], vectors; "
                  "shared stage tma at {}, 8192 bytes, no barrier before",
                  loads[i]->id, 8192 * i))
        << s.text;
  EXPECT_EQ(l.nir.shared_bytes, 16384 + 16);
  EXPECT_EQ(l.nir.stage(loads[0])->mbarrier, 16384);
  EXPECT_EQ(l.nir.stage(loads[1])->mbarrier, 16392);
  const passes::TmaBox& box = l.nir.access(loads[0]).tma;
  EXPECT_EQ(box.dims, (std::vector<int>{1, 0}));  // the contiguous dim first
  EXPECT_EQ(box.box, (std::vector<int64_t>{64, 32}));
  const std::string& src = l.kernel.source;
  EXPECT_EQ(nvrtc_test::count(src, "ts::tma_load<2>("), 2) << src;
  // Each thread reads its elements from the boxes in 16-byte vectors.
  EXPECT_EQ(nvrtc_test::count(src, "ts::ld_vec<float, TS_V, true, true>(s"), 2) << src;
  EXPECT_EQ(nvrtc_test::count(src, "const __grid_constant__ ts::TensorMap "), 2) << src;
  EXPECT_EQ(nvrtc_test::count(src, "ts::mbarrier_init(ts_smem + "), 2) << src;
  EXPECT_NE(src.find("#include \"tessel/tma.cuh\""), std::string::npos);
  EXPECT_NE(src.find("__align__(128) unsigned char ts_smem[]"), std::string::npos);
  // The store keeps pointers (16-byte vectors).
  EXPECT_EQ(nvrtc_test::count(src, "ts::st_vec<"), 1) << src;
  // Two kernel parameters of 128 bytes.
  int maps = 0;
  for (const cg::Param& p : l.kernel.params) maps += p.kind == cg::Param::tensor_map;
  EXPECT_EQ(maps, 2);
}

TEST(TensorDescriptor, GeneratedKernelsCompileForSm90) {
  REQUIRE_NVRTC();
  ts::Settings s{.config = tma_config({32, 64})};
  ts::Buffer x = ts::Buffer::ones({100, 200}, ts::f32), y = ts::Buffer::ones({200, 100}, ts::f32);
  ts::Buffer bias = ts::Buffer::ones({200}, ts::f32);
  ts::Buffer h = ts::Buffer::ones({100, 200}, ts::bf16);
  for (const std::string& src :
       {nvrtc_test::compile(examples::make_add_2d(s), h, h),
        nvrtc_test::compile(examples::make_transpose(s), x),
        nvrtc_test::compile(examples::make_add_transposed(s), x, y),
        nvrtc_test::compile(examples::make_add_bias(s), x, bias),
        nvrtc_test::compile(make_row_sum(s), x),
        nvrtc_test::compile(make_scaled_row({.config = tma_config({64})}), x, int64_t{3}),
        nvrtc_test::compile(make_gather_rows(s), x, ts::Buffer::zeros({50}, ts::i64))})
    EXPECT_NE(src.find("ts::tma_load<"), std::string::npos) << src;
}

TEST(TensorDescriptor, ALoadThatConvertedItsLayoutReadsTheBoxInTheNestsLayout) {
  // y[n, m] is contiguous along tm: with pointers its load runs in a layout of its own and
  // converts through shared memory; its box lands in shared memory and is read in L0.
  auto k = examples::make_add_transposed();
  ts::Buffer x = ts::Buffer::ones({64, 96}, ts::f32), y = ts::Buffer::ones({96, 64}, ts::f32);
  Staged pointers = staged(k, ts::Config{.block_sizes = std::vector<int64_t>{32, 32}}, x, y);
  EXPECT_EQ(pointers.stages.loops.at(0).nir.layouts.size(), 2u) << pointers.text;
  Staged s = staged(k, tma_config({32, 32}), x, y);
  const cg::LoopStages& l = s.stages.loops.at(0);
  EXPECT_EQ(l.nir.layouts.size(), 1u) << s.text;
  const ts::ir::Node* yload = nullptr;
  for (const ts::ir::Node* n : loads_of(l))
    if (n->args[0]->ival == 1) yload = n;  // argument 1's load
  ASSERT_TRUE(yload);
  // y's contiguous dim is its dim 1, indexed by tm: the nest's outer dim.
  EXPECT_EQ(l.nir.access(yload).tma.dims, (std::vector<int>{1, 0}));
  // Read element by element: the nest's vectors run along tn, y is contiguous along tm.
  EXPECT_EQ(line_of(s.text, yload).find("access L0 tma, box [32, 32];"),
            line_of(s.text, yload).find("access"))
      << s.text;
  EXPECT_NE(parse_error(stage_test::edited(s.text, yload, "box [32, 32]", "box [32, 32], vectors"),
                        s.stages.program(), l.nir)
                .find("its box cannot be read in vectors"),
            std::string::npos);
}

TEST(TensorDescriptor, ABoxReusedByADeviceLoopWaitsForItsReaders) {
  auto k = make_row_sum();
  ts::Buffer x = ts::Buffer::ones({64, 1024}, ts::f32);
  Staged s = staged(k, tma_config({8, 128}), x);
  const cg::LoopStages& l = s.stages.loops.at(0);
  const ts::ir::Node* load = loads_of(l).at(0);
  // The previous iteration's reads of the box come just before the next copy into it.
  EXPECT_NE(line_of(s.text, load).find("shared stage tma at 0, 4096 bytes, barrier before"),
            std::string::npos)
      << s.text;
  const std::string& src = l.kernel.source;
  EXPECT_NE(src.find("__syncthreads();  // earlier readers of shared memory are done"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find(fmt::format("ph{} ^= 1u;", load->id)), std::string::npos) << src;
}

TEST(TensorDescriptor, AStageAfterABoxStillWaitsForTheStageBeforeIt) {
  // softmax over one row per program: two reductions stage partial results; a box between
  // them is no barrier between the threads (its wait is each thread's own).
  auto k = examples::make_softmax();
  ts::Buffer x = ts::Buffer::ones({4, 256}, ts::f32);
  Staged s = staged(k,
                    ts::Config{.block_sizes = std::vector<int64_t>{1},
                               .num_warps = 8,
                               .indexing = std::vector<std::string>{"tensor_descriptor"}},
                    x);
  const cg::LoopStages& l = s.stages.loops.at(0);
  EXPECT_EQ(passes::shared_plan_error(l.nir), "");
  int boxes = 0;
  ts::ir::walk(l.loop->body, [&](const ts::ir::Node* n) {
    if (const passes::SharedStage* st = l.nir.stage(n))
      boxes += st->kind == passes::SharedStage::Kind::tma;
  });
  EXPECT_GE(boxes, 1) << s.text;
}

TEST(TensorDescriptor, LoadsTheTmaCannotMoveKeepPointers) {
  ts::Buffer x = ts::Buffer::ones({100, 200}, ts::f32);
  ts::Buffer idx = ts::Buffer::zeros({50}, ts::i64);
  // A gather keeps pointers; the index's own load is a box.
  {
    auto k = make_gather_rows();
    Staged s = staged(k, tma_config({32, 64}), x, idx);
    const cg::LoopStages& l = s.stages.loops.at(0);
    std::vector<const ts::ir::Node*> loads = loads_of(l);
    ASSERT_EQ(loads.size(), 2u);
    EXPECT_EQ(l.nir.access(loads[0]).form, passes::Access::Form::tma) << s.text;
    EXPECT_NE(l.nir.access(loads[1]).form, passes::Access::Form::tma) << s.text;
  }
  auto add = examples::make_add_2d();
  auto forms = [&](const ts::Config& c, const ts::Buffer& a, const ts::Buffer& b) {
    Staged s = staged(add, c, a, b);
    std::vector<passes::Access::Form> f(2);  // by load id (source order: x, then y)
    for (const ts::ir::Node* n : loads_of(s.stages.loops.at(0)))
      f.at(static_cast<size_t>(n->load_id)) = s.stages.loops.at(0).nir.access(n).form;
    return f;
  };
  const auto tma = passes::Access::Form::tma;
  // Rows of 199 f32 are 796 bytes apart: not a multiple of 16.
  ts::Buffer odd = ts::Buffer::ones({100, 199}, ts::f32);
  for (auto f : forms(tma_config({32, 64}), odd, odd)) EXPECT_NE(f, tma);
  // A box dim of 512 elements (at most 256), and a contiguous dim of 8 bytes (16 or more).
  for (auto f : forms(tma_config({1, 512}), x, x)) EXPECT_NE(f, tma);
  for (auto f : forms(tma_config({64, 2}), x, x)) EXPECT_NE(f, tma);
  // A dim of one element never uses its stride (4 bytes here): the rows still take boxes.
  ts::Buffer row = ts::Buffer::ones({199, 1}, ts::f32).transpose(0, 1);
  for (auto f : forms(tma_config({1, 64}), row, row)) EXPECT_EQ(f, tma);
  // One entry per memory op: loads first, then the store (which keeps pointers).
  ts::Config per_op{
      .block_sizes = std::vector<int64_t>{32, 64},
      .indexing = std::vector<std::string>{"pointer", "tensor_descriptor", "tensor_descriptor"}};
  std::vector<passes::Access::Form> f = forms(per_op, x, x);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_NE(f[0], tma);
  EXPECT_EQ(f[1], tma);
}

TEST(TensorDescriptor, TheKernelIrReadsBackATmaAccessAsPlannedOnly) {
  auto add = examples::make_add_2d();
  ts::Buffer x = ts::Buffer::ones({100, 200}, ts::f32);
  Staged s = staged(add, tma_config({32, 64}), x, x);
  const cg::LoopStages& l = s.stages.loops.at(0);
  const ts::ir::Node* load = loads_of(l).at(0);
  EXPECT_EQ(cuda_of(s, s.text), l.kernel.source);
  const ts::ir::Graph& g = s.stages.program();
  EXPECT_NE(parse_error(edited(s.text, load, "box [32, 64]", "box [32, 32]"), g, l.nir)
                .find("the access's box is not the planned one"),
            std::string::npos);
  EXPECT_NE(parse_error(edited(s.text, load, "box [32, 64]", "box [32]"), g, l.nir)
                .find("the box has 1 dims, the tensor 2"),
            std::string::npos);
  // Its box read element by element instead of in vectors.
  const std::string scalar_reads = edited(s.text, load, "box [32, 64], vectors", "box [32, 64]");
  EXPECT_EQ(nvrtc_test::count(cuda_of(s, scalar_reads), "ts::ld_vec<float, TS_V, true, true>(s"),
            1);
  EXPECT_NE(parse_error(edited(s.text, load, "tma, box [32, 64], vectors", "elements"), g, l.nir)
                .find("the access is tma (a tensor descriptor's box): it is kept as planned"),
            std::string::npos);
  EXPECT_NE(parse_error(edited(s.text, load, "tma, box [32, 64], vectors", "tma"), g, l.nir)
                .find("expected the tma access's box"),
            std::string::npos);
  EXPECT_NE(parse_error(edited(s.text, load, "at 0,", "at 16,"), g, l.nir)
                .find("offset 16 is not a multiple of 128"),
            std::string::npos);
  // A pointer load cannot become a box.
  Staged p = staged(add, ts::Config{.block_sizes = std::vector<int64_t>{32, 64}}, x, x);
  const cg::LoopStages& pl = p.stages.loops.at(0);
  const ts::ir::Node* pload = loads_of(pl).at(0);
  EXPECT_NE(parse_error(edited(p.text, pload, "vector dim 1, 4 wide, aligned", "tma, box [32, 64]"),
                        p.stages.program(), pl.nir)
                .find("the access cannot be tma: Config::indexing"),
            std::string::npos);
}

TEST(TensorDescriptor, ACallPassesEachDimsSizeAndByteStrideInTmaOrder) {
  ts::Buffer x = ts::Buffer::ones({100, 200}, ts::f32);
  ts::rt::TensorMapSpec m = ts::rt::tensor_map_spec(x, {1, 0}, {64, 32});
  EXPECT_EQ(m.elem_bytes, 4);
  EXPECT_EQ(m.rank, 2);
  EXPECT_EQ(m.base, x.data_ptr());
  EXPECT_EQ(m.sizes[0], 200u);
  EXPECT_EQ(m.sizes[1], 100u);
  EXPECT_EQ(m.strides[1], 800u);
  EXPECT_EQ(m.box[0], 64u);
  EXPECT_EQ(m.box[1], 32u);
  // A transposed view: dim 0 is contiguous; the rows of x are its dim 1.
  ts::Buffer t = x.transpose(0, 1);
  ts::rt::TensorMapSpec mt = ts::rt::tensor_map_spec(t, {0, 1}, {32, 32});
  EXPECT_EQ(mt.sizes[0], 200u);
  EXPECT_EQ(mt.sizes[1], 100u);
  EXPECT_EQ(mt.strides[1], 800u);
  // A dim of size 1 (its stride, 7 elements here, never used) takes the bytes the dims
  // inside it span, rounded up to 16.
  ts::Buffer b = ts::Buffer::ones({3, 24}, ts::bf16).view_as_strided({3, 1, 24}, {24, 7, 1}, 0);
  ts::rt::TensorMapSpec mb = ts::rt::tensor_map_spec(b, {2, 1, 0}, {8, 1, 1});
  EXPECT_EQ(mb.strides[1], 48u);
  EXPECT_EQ(mb.strides[2], 48u);
  // A stride the TMA cannot take is a tessel bug (the key promised aligned strides).
  ts::Buffer odd = ts::Buffer::ones({3, 20}, ts::bf16);
  EXPECT_THROW(ts::rt::tensor_map_spec(odd, {1, 0}, {8, 1}), ts::InternalError);
}

TEST(TensorDescriptor, IndexingChangesNoInterpretedValue) {
  ts::Buffer x = ts::Buffer::randn({37, 200}, ts::f32, ts::cpu(), 1);
  auto plain = make_row_sum({.config = ts::Config{.block_sizes = std::vector<int64_t>{8, 64}}});
  auto boxes = make_row_sum({.config = tma_config({8, 64})});
  EXPECT_EQ(ts::count_mismatches(boxes(x), plain(x), 0, 0), 0);
}

}  // namespace

// Config::from_json: one indexing strategy for every memory op may be a string (Helion's
// form); a strategy tessel does not have is refused where the JSON is read.
TEST(TensorDescriptor, FromJsonTakesOneIndexingStringAndRefusesUnknownOnes) {
  const ts::Config c = ts::Config::from_json(R"({"indexing": "tensor_descriptor"})");
  ASSERT_TRUE(c.indexing);
  EXPECT_EQ(*c.indexing, std::vector<std::string>{"tensor_descriptor"});
  EXPECT_EQ(*ts::Config::from_json(R"({"indexing": ["pointer", "tensor_descriptor"]})").indexing,
            (std::vector<std::string>{"pointer", "tensor_descriptor"}));
  try {
    ts::Config::from_json(R"({"indexing": ["pointer", "block_ptr"]})");
    ADD_FAILURE() << "no UserError";
  } catch (const ts::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("\"block_ptr\" is not supported"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("use \"pointer\" or \"tensor_descriptor\""),
              std::string::npos)
        << e.what();
  }
}
