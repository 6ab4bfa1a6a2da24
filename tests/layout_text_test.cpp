// The layout stage's text read back (passes/layout_text.hpp): every kind of linear layout
// round-trips through its one-line form, a kernel's layouts through its layout-stage dump
// (nests with own-layout accesses, contractions, shared slots, a placement other than the
// blocked one), an edited placement is what code generation then reads, and bad text is a
// ParseError at its line.
#include "passes/layout_text.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <tessel/tessel.hpp>

#include "codegen/compile_pipeline.hpp"
#include "examples/kernels/basic.hpp"
#include "examples/kernels/matmul.hpp"
#include "examples/kernels/norms.hpp"
#include "ir/parser.hpp"
#include "layout/distributed_layouts.hpp"
#include "layout/mma_layouts.hpp"
#include "layout/shared_layouts.hpp"
#include "tests/autotune_test_util.hpp"
#include "tests/placement_kernels.hpp"
#include "tests/stage_test_util.hpp"

namespace ts = tessel;
namespace cg = tessel::codegen;
namespace ly = tessel::layout;
namespace passes = tessel::passes;

namespace {

TEST(LayoutText, EveryKindOfLinearLayoutRoundTrips) {
  const ly::LinearLayout b = ly::blocked({64, 64}, {1, 4}, {4, 8}, {4, 1}, {1, 0});
  const std::vector<ly::LinearLayout> all{
      b,
      ly::slice(b, 1),
      ly::broadcast(b, 0),
      ly::mma_sync_accumulator({64, 64}, {2, 2}),
      ly::mma_sync_a({64, 32}, {2, 2}),
      ly::mma_sync_b({32, 64}, {2, 2}),
      ly::wgmma_accumulator({128, 128}, 128, {8, 1}),
      ly::swizzled_shared({64, 64}, 2, 128),
      ly::swizzled_shared({32, 64}, 4, 64, {0, 1}),
  };
  for (const ly::LinearLayout& l : all) {
    EXPECT_EQ(passes::parse_linear_layout(l.to_string()), l) << l.to_string();
    std::string one = l.to_string();
    for (size_t p = one.find('\n'); p != std::string::npos; p = one.find('\n', p))
      one.replace(p, 1, "; ");
    EXPECT_EQ(passes::parse_linear_layout(one), l) << one;
  }
}

// The message of the ParseError that parsing `text` throws.
std::string parse_error(const std::string& text) {
  try {
    passes::parse_linear_layout(text, 7);
  } catch (const ts::ir::ParseError& e) {
    EXPECT_EQ(e.line(), 7);
    return e.what();
  }
  ADD_FAILURE() << "no ParseError for " << text;
  return "";
}

TEST(LayoutText, BadLinearLayoutsAreParseErrors) {
  EXPECT_NE(parse_error("register[4]: (1); -> dim0[4]").find("needs 2 bases, not 1"),
            std::string::npos);
  EXPECT_NE(parse_error("register[2]: (1, 0); -> dim0[2]").find("2 coordinates for 1 output"),
            std::string::npos);
  EXPECT_NE(parse_error("register[3]: (1); -> dim0[2]").find("3 is not a power of two"),
            std::string::npos);
  EXPECT_NE(parse_error("register[2] (1); -> dim0[2]").find("expected ':'"), std::string::npos);
  EXPECT_NE(parse_error("register[2]: (1); -> dim0[2] x").find("expected the end"),
            std::string::npos);
}

using stage_test::Staged;

// The stages of kernel k (which must outlive them) on `args` under config c, to the layout stage.
template <class K, class... A>
Staged staged(const K& k, const ts::Config& c, const A&... args) {
  return stage_test::staged("layout", false, k, c, args...);
}

// Every nest's layout read back from the dump prints as the dump did.
void expect_round_trip(const Staged& s) {
  std::map<const ts::ir::Node*, passes::Layout> parsed =
      passes::parse_layouts(s.text, s.stages.program(), s.stages.config);
  ASSERT_EQ(parsed.size(), s.stages.loops.size());
  for (const cg::LoopStages& l : s.stages.loops) {
    const passes::Layout& p = parsed.at(l.loop);
    EXPECT_EQ(passes::describe(p, l.loop), passes::describe(l.layout, l.loop));
    EXPECT_EQ(p.slot_bits, l.layout.slot_bits);
  }
}

TEST(LayoutText, KernelLayoutsRoundTripThroughTheLayoutStagesText) {
  ts::Buffer a = ts::Buffer::ones({64, 96}, ts::f32), b = ts::Buffer::ones({96, 64}, ts::f32);
  ts::Config blocks32{.block_sizes = std::vector<int64_t>{32, 32}};
  auto transpose = examples::make_transpose();  // kernels own their traced graphs
  Staged t = staged(transpose, blocks32, a);
  EXPECT_NE(t.text.find("in its own layout"), std::string::npos) << t.text;
  expect_round_trip(t);
  ts::Config mm{.block_sizes = std::vector<int64_t>{64, 64, 32}, .num_warps = 4};
  auto matmul = examples::make_matmul();
  Staged m = staged(matmul, mm, a, b);
  EXPECT_NE(m.text.find("contracts"), std::string::npos) << m.text;
  expect_round_trip(m);
  ts::Buffer x = ts::Buffer::ones({4, 1024}, ts::f32), w = ts::Buffer::ones({1024}, ts::f32);
  ts::Config rolled{.block_sizes = std::vector<int64_t>{2},
                    .reduction_loops = std::vector<std::optional<int64_t>>{256}};
  auto rms_norm = examples::make_rms_norm();
  Staged r = staged(rms_norm, rolled, x, w, 1e-5);
  expect_round_trip(r);
}

// The placement line edited to the mma.sync accumulator's: the parsed layout is that
// placement, and its CUDA the one with_placement's layout gives.
TEST(LayoutText, AnEditedPlacementIsTheLayoutCodeGenerationReads) {
  ts::Buffer x = ts::Buffer::ones({128, 128}, ts::f32);
  auto mix = placement_test::make_tile_mix();
  Staged s = staged(mix, placement_test::mix_config(), x, x);
  const cg::LoopStages& l = s.stages.loops.at(0);
  std::string blocked = ts::passes::linear_layout(l.layout).to_string();
  const ly::LinearLayout mma = ly::mma_sync_accumulator({64, 64}, {2, 2});
  std::string want_line = mma.to_string(), have_line = blocked;
  for (std::string* t : {&want_line, &have_line})
    for (size_t p = t->find('\n'); p != std::string::npos; p = t->find('\n', p))
      t->replace(p, 1, "; ");
  std::string text = s.text;
  size_t at = text.find(have_line);
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, have_line.size(), want_line);
  passes::Layout parsed =
      passes::parse_layouts(text, s.stages.program(), s.stages.config).at(l.loop);
  passes::Layout placed = passes::with_placement(l.layout, mma);
  EXPECT_EQ(parsed.slot_bits, placed.slot_bits);
  EXPECT_EQ(parsed.vec, 2);
  EXPECT_EQ(cg::generate_cuda(s.stages.program(), l.plan, parsed).source,
            cg::generate_cuda(s.stages.program(), l.plan, placed).source);
}

// The message of the ParseError that parse_layouts throws for `text`, at line `line`.
std::string layouts_error(const Staged& s, const std::string& text, int line) {
  try {
    passes::parse_layouts(text, s.stages.program(), s.stages.config);
  } catch (const ts::ir::ParseError& e) {
    EXPECT_EQ(e.line(), line) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no ParseError for " << text;
  return "";
}

TEST(LayoutText, LayoutsTheKernelCannotHaveAreParseErrors) {
  ts::Buffer a = ts::Buffer::ones({64, 96}, ts::f32);
  auto transpose = examples::make_transpose();
  Staged t = staged(transpose, ts::Config{.block_sizes = std::vector<int64_t>{32, 32}}, a);
  const int id = t.stages.loops.at(0).loop->id;
  auto head = [&](const std::string& slots) {
    return fmt::format(
        "// layout of loop %{}: 128 threads, vectors of 4, 2 groups, 8 registers per "
        "value; slots outer to inner: {}\n",
        id, slots);
  };
  EXPECT_NE(layouts_error(t, "// layout of loop %999: slots outer to inner: [t0: 32]", 1)
                .find("%999 is not a top-level loop"),
            std::string::npos);
  EXPECT_NE(
      layouts_error(t, head("[t0: 32] [t1: 64]"), 1).find("holds 32 elements in this loop, not 64"),
      std::string::npos);
  EXPECT_NE(layouts_error(t, head("[t1: 32] [t0: 32]"), 1).find("slots differ"), std::string::npos);
  EXPECT_NE(layouts_error(t, head("[t0: 32] [t9: 32]"), 1).find("t9 is not a tile dim"),
            std::string::npos);
  EXPECT_NE(layouts_error(
                t, head("[t0: 32] [t1: 32]") + "//   %1 (load) in its own layout: [t1: 32]\n", 2)
                .find("orders all of the nest's slots"),
            std::string::npos);
  // A placement that XORs two bits.
  EXPECT_NE(layouts_error(t,
                          head("[t0: 32] [t1: 32]") +
                              "//   as a linear layout: register[8]: (0, 3) (0, 2) (16, 0); "
                              "lane[32]: (0, 4) (0, 8) (0, 16) (1, 0) (2, 0); warp[4]: (4, 0) (8, "
                              "0); -> t0[32], t1[32]\n",
                          2)
                .find("a placement this layout cannot take"),
            std::string::npos);
}

}  // namespace
