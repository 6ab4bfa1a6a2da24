// The kernel_ir stage (passes/kernel_ir.hpp, passes/shared_plan.hpp): each value's layout and
// memory space, the shared memory stages with their offsets and barriers, the stage's text
// read back (an edited offset or barrier is what code generation prints), and plans that
// would race refused.
#include "passes/kernel_ir.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <tessel/tessel.hpp>

#include "codegen/compile_pipeline.hpp"
#include "examples/kernels/basic.hpp"
#include "examples/kernels/matmul.hpp"
#include "examples/kernels/norms.hpp"
#include "ir/parser.hpp"
#include "passes/shared_plan.hpp"
#include "tests/atomic_kernels.hpp"
#include "tests/autotune_test_util.hpp"

namespace ts = tessel;
namespace cg = tessel::codegen;
namespace passes = tessel::passes;

namespace {

struct Staged {
  cg::CompiledStages stages;
  std::string text;  // the kernel_ir stage's dump
};

// The stages of kernel k (which must outlive them) on `args` under config c, CUDA included.
template <class K, class... A>
Staged staged(const K& k, const ts::Config& c, const A&... args) {
  const ts::ir::Graph& g = autotune_test::graph_of(k, args...);
  Staged s{cg::compile_pipeline(g, c, {.record_ir = true}), ""};
  s.text = s.stages.stage_ir.at(5).ir;
  EXPECT_EQ(s.stages.stage_ir.at(5).stage, "kernel_ir");
  return s;
}

// The kernel IR's line for node n (the line starting "//   %<id> " after "// kernel IR of
// loop"), or "".
std::string line_of(const std::string& text, const ts::ir::Node* n) {
  const std::string head = fmt::format("//   %{} ", n->id);
  size_t at = text.find(head, text.find("// kernel IR of loop"));
  if (at == std::string::npos) return "";
  return text.substr(at, text.find('\n', at) - at);
}

const ts::ir::Node* first(const cg::LoopStages& l, ts::ir::Op op) {
  const ts::ir::Node* found = nullptr;
  ts::ir::walk(l.loop->body, [&](const ts::ir::Node* n) {
    if (!found && n->op == op) found = n;
  });
  return found;
}

TEST(KernelIr, ATransposeConvertsItsStoreThroughSharedMemoryWithoutABarrier) {
  ts::Buffer a = ts::Buffer::ones({64, 96}, ts::f32);
  auto transpose = examples::make_transpose();
  Staged s = staged(transpose, ts::Config{.block_sizes = std::vector<int64_t>{32, 32}}, a);
  const cg::LoopStages& l = s.stages.loops.at(0);
  const ts::ir::Node* load = first(l, ts::ir::Op::Load);
  const ts::ir::Node* store = first(l, ts::ir::Op::Store);
  ASSERT_TRUE(load && store);
  EXPECT_NE(
      s.text.find(fmt::format("// kernel IR of loop %{}: layouts: L0 the nest's; L1 %{}'s own",
                              l.loop->id, store->id)),
      std::string::npos)
      << s.text;
  EXPECT_EQ(line_of(s.text, load),
            fmt::format("//   %{} load f32[t0, t1]: registers L0", load->id));
  // 32 x 32 f32 elements, one pad element per row of 32: 4224 bytes.
  EXPECT_EQ(line_of(s.text, store),
            fmt::format(
                "//   %{} store: shared stage convert L0 -> L1 at 0, 4224 bytes, no barrier before",
                store->id));
  EXPECT_EQ(l.nir.shared_bytes, 4224);
  EXPECT_EQ(l.kernel.shared_bytes, 4224);
  EXPECT_EQ(l.nir.own_layout(store), &l.nir.layouts.at(1));
}

TEST(KernelIr, AContractionsFactorsAreSharedAndItsProductIsNotHeld) {
  ts::Buffer a = ts::Buffer::ones({64, 96}, ts::f32), b = ts::Buffer::ones({96, 64}, ts::f32);
  auto matmul = examples::make_matmul();
  Staged s = staged(
      matmul, ts::Config{.block_sizes = std::vector<int64_t>{64, 64, 32}, .num_warps = 4}, a, b);
  const cg::LoopStages& l = s.stages.loops.at(0);
  ASSERT_EQ(l.nir.nest().contractions.size(), 1u);
  const ts::passes::Contraction& c = l.nir.nest().contractions[0];
  for (int i = 0; i < 2; ++i) {
    const passes::TileType& t = l.nir.types.at(c.match.factor[i].value());
    EXPECT_EQ(t.space, passes::MemorySpace::shared);
    EXPECT_EQ(l.nir.layout_names.at(static_cast<size_t>(t.layout)),
              fmt::format("factor {} of %{}", i, c.match.sum->id));
  }
  EXPECT_EQ(l.nir.types.at(c.match.product).space, passes::MemorySpace::none);
  EXPECT_EQ(l.nir.types.at(c.match.sum).space, passes::MemorySpace::registers);
  // In its loop over k, the contraction may follow itself: a barrier before its writes.
  const passes::SharedStage* st = l.nir.stage(c.match.sum);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->kind, passes::SharedStage::Kind::contract);
  EXPECT_TRUE(st->barrier);
  EXPECT_NE(line_of(s.text, c.match.sum).find("shared stage contract at 0, "), std::string::npos)
      << s.text;
}

TEST(KernelIr, BackToBackReductionsTakeDisjointBytesAndOneBarrier) {
  ts::Buffer x = ts::Buffer::ones({4, 4096}, ts::f32);
  auto softmax = examples::make_softmax();
  // One row per program over 8 warps: the row's max and sum combine across warps.
  Staged s = staged(softmax, ts::Config{.block_sizes = std::vector<int64_t>{1}, .num_warps = 8}, x);
  const cg::LoopStages& l = s.stages.loops.at(0);
  std::vector<const passes::SharedStage*> reduces;
  ts::ir::walk(l.loop->body, [&](const ts::ir::Node* n) {
    if (const passes::SharedStage* st = l.nir.stage(n)) reduces.push_back(st);
  });
  ASSERT_EQ(reduces.size(), 2u) << s.text;
  EXPECT_EQ(reduces[0]->offset, 0);
  EXPECT_FALSE(reduces[0]->barrier);  // the program's first stage: nothing ran before it
  EXPECT_GE(reduces[1]->offset, reduces[0]->offset + reduces[0]->bytes);
  EXPECT_FALSE(reduces[1]->barrier);
  EXPECT_EQ(passes::shared_plan_error(l.nir), "");
}

// The stage text with `from` replaced by `to` in node n's line.
std::string edited(const std::string& text, const ts::ir::Node* n, const std::string& from,
                   const std::string& to) {
  std::string out = text;
  const std::string line = line_of(text, n);
  std::string now = line;
  size_t at = now.find(from);
  EXPECT_NE(at, std::string::npos) << line;
  if (at == std::string::npos) return out;
  now.replace(at, from.size(), to);
  out.replace(out.find(line), line.size(), now);
  return out;
}

std::string parse_error(const std::string& text, const ts::ir::Graph& g, ts::passes::NestIr nir) {
  try {
    passes::parse_kernel_ir(text, g, nir);
  } catch (const ts::ir::ParseError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ParseError for " << text;
  return "";
}

TEST(KernelIr, TheSharedPlanRoundTripsAndAnEditedOffsetIsWhatTheCudaUses) {
  ts::Buffer x = ts::Buffer::ones({4, 4096}, ts::f32);
  auto softmax = examples::make_softmax();
  Staged s = staged(softmax, ts::Config{.block_sizes = std::vector<int64_t>{1}, .num_warps = 8}, x);
  const cg::LoopStages& l = s.stages.loops.at(0);
  passes::NestIr nir = l.nir;
  passes::parse_kernel_ir(s.text, s.stages.program(), nir);
  EXPECT_EQ(passes::describe(nir), passes::describe(l.nir));

  std::vector<const ts::ir::Node*> ops;
  for (const auto& [n, st] : l.nir.shared) ops.push_back(n);
  std::sort(ops.begin(), ops.end(), [](auto* a, auto* b) { return a->id < b->id; });
  ASSERT_EQ(ops.size(), 2u);
  const passes::SharedStage& second = l.nir.shared.at(ops[1]);
  // The second reduction moved to 1024 with its barrier kept: the CUDA reads it there.
  std::string moved = edited(s.text, ops[1], fmt::format("at {},", second.offset), "at 1024,");
  passes::NestIr m = l.nir;
  passes::parse_kernel_ir(moved, s.stages.program(), m);
  EXPECT_EQ(m.shared.at(ops[1]).offset, 1024);
  EXPECT_EQ(m.shared_bytes, 1024 + second.bytes);
  const std::string cuda = cg::generate_cuda(s.stages.program(), l.plan, m).source;
  EXPECT_NE(cuda.find("ts_smem + 1024"), std::string::npos) << cuda;
  EXPECT_EQ(cg::generate_cuda(s.stages.program(), l.plan, m).shared_bytes, 1024 + second.bytes);

  // The second reduction on the first's bytes without a barrier would race.
  std::string racing = edited(s.text, ops[1], fmt::format("at {},", second.offset), "at 0,");
  EXPECT_NE(parse_error(racing, s.stages.program(), l.nir)
                .find(fmt::format("%{} needs a barrier", ops[1]->id)),
            std::string::npos);
  EXPECT_NE(parse_error(edited(s.text, ops[1], fmt::format("{} bytes", second.bytes), "16 bytes"),
                        s.stages.program(), l.nir)
                .find(fmt::format("%{} stages {} bytes", ops[1]->id, second.bytes)),
            std::string::npos);
  EXPECT_NE(parse_error(edited(s.text, ops[1], "stage reduce", "stage convert"), s.stages.program(),
                        l.nir)
                .find("is a reduce stage, not convert"),
            std::string::npos);
  EXPECT_NE(parse_error(edited(s.text, ops[1], fmt::format("at {},", second.offset), "at 8,"),
                        s.stages.program(), l.nir)
                .find("is not a multiple of 16"),
            std::string::npos);
  std::string dropped = s.text;
  const std::string line = line_of(s.text, ops[1]);
  dropped.erase(dropped.find(line), line.size());
  EXPECT_NE(parse_error(dropped, s.stages.program(), l.nir)
                .find(fmt::format("no shared stage for %{}", ops[1]->id)),
            std::string::npos);
}

TEST(KernelIr, ALoopThatRewritesAnotherThreadsStoresWaitsAtAMemoryBarrier) {
  auto k = ts::kernel("clear_then_fill", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto b : ts::grid(x.size(0))) {
      out(b, ts::all) = 0;  // the whole row, then part of it in tiles by other threads
      for (auto t : ts::tile(x.size(1) - 3)) out(b, t) = x(b, t);
    }
    return out;
  });
  ts::Buffer x = ts::Buffer::ones({4, 100}, ts::f32);
  Staged s = staged(k, ts::Config{.block_sizes = std::vector<int64_t>{64}}, x);
  const cg::LoopStages& l = s.stages.loops.at(0);
  const ts::ir::Node* inner = nullptr;
  ts::ir::walk(l.loop->body, [&](const ts::ir::Node* n) {
    if (n->op == ts::ir::Op::Loop) inner = n;
  });
  ASSERT_TRUE(inner);
  EXPECT_EQ(l.nir.barrier_before, std::set<const ts::ir::Node*>{inner});  // once, not per tile
  EXPECT_EQ(line_of(s.text, inner), fmt::format("//   %{} loop: memory barrier", inner->id));
  passes::NestIr nir = l.nir;
  passes::parse_kernel_ir(s.text, s.stages.program(), nir);
  EXPECT_EQ(nir.barrier_before, l.nir.barrier_before);
  // Without it the tiles' stores could land before the row's zeros.
  std::string dropped = edited(s.text, inner, ": memory barrier", ":");
  EXPECT_NE(parse_error(dropped, s.stages.program(), l.nir)
                .find(fmt::format("%{} needs a memory barrier", inner->id)),
            std::string::npos);
  EXPECT_NE(l.kernel.source.find("// the loop below reads or writes memory another thread"),
            std::string::npos)
      << l.kernel.source;
}

TEST(KernelIr, AStagePastTheSharedMemoryOfAProgramIsAUserErrorAtItsLine) {
  // The old values of an atomic on rows[tm] reach the copies along tn through shared
  // memory: a 256 x 256 tile of them is 256 KiB, past the 227 KiB a program has.
  auto k = atomic_test::make_row_sum_olds();
  ts::Buffer x = ts::Buffer::ones({256, 256}, ts::f32), olds = ts::Buffer::zeros({256, 1}, ts::f32);
  const ts::ir::Graph& g = autotune_test::graph_of(k, x, olds);
  try {
    cg::compile_pipeline(
        g, ts::Config{.block_sizes = std::vector<int64_t>{256, 256}, .num_warps = 32}, {});
    ADD_FAILURE() << "no error";
  } catch (const ts::UserError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("the old values of this atomic reach 1024 threads through 262144 bytes of "
                       "shared memory, more than a program has (232448)"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("atomic_kernels.hpp:77"), std::string::npos) << msg;
    EXPECT_NE(msg.find("index the atomic with every tile of the loop"), std::string::npos) << msg;
  }
}

}  // namespace
