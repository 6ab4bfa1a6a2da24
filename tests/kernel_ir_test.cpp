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
#include "tests/stage_test_util.hpp"

namespace ts = tessel;
namespace cg = tessel::codegen;
namespace passes = tessel::passes;

namespace {

using stage_test::cuda_of;
using stage_test::edited;
using stage_test::first;
using stage_test::line_of;
using stage_test::parse_error;
using stage_test::Staged;

// The stages of kernel k (which must outlive them) on `args` under config c, CUDA included.
template <class K, class... A>
Staged staged(const K& k, const ts::Config& c, const A&... args) {
  return stage_test::staged("kernel_ir", true, k, c, args...);
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
            fmt::format("//   %{} load f32[t0, t1]: registers L0; access L0 vector dim 1, 4 wide, "
                        "whole, aligned",
                        load->id));
  // 32 x 32 f32 elements, one pad element per row of 32: 4224 bytes. The store's vectors
  // run along its own layout's innermost dim (the loop's dim 0).
  EXPECT_EQ(line_of(s.text, store),
            fmt::format("//   %{} store: access L1 vector dim 1, 4 wide, whole, aligned; shared "
                        "stage convert L0 -> L1 at 0, 4224 bytes, no barrier before",
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

// The number of times `what` occurs in `text`.
size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(KernelIr, AnAccessReadBackMayBeWeakenedButNotStrengthened) {
  auto transpose = examples::make_transpose();
  ts::Config blocks{.block_sizes = std::vector<int64_t>{32, 32}};
  ts::Buffer a = ts::Buffer::ones({64, 96}, ts::f32);
  Staged s = staged(transpose, blocks, a);
  const cg::LoopStages& l = s.stages.loops.at(0);
  const ts::ir::Node* load = first(l, ts::ir::Op::Load);
  const ts::ir::Node* store = first(l, ts::ir::Op::Store);
  EXPECT_EQ(cuda_of(s, s.text), l.kernel.source);  // the text as printed: the same CUDA
  EXPECT_EQ(count(l.kernel.source, "ts::ld_vec<"), 1u) << l.kernel.source;
  // The load weakened to one element per register: no vector load is left.
  const std::string weak =
      edited(s.text, load, "access L0 vector dim 1, 4 wide, whole, aligned", "access L0 elements");
  EXPECT_EQ(count(cuda_of(s, weak), "ts::ld_vec<"), 0u);
  EXPECT_NE(parse_error(edited(s.text, store, "access L1", "access L0"), s.stages.program(), l.nir)
                .find(fmt::format("%{}: the access runs in L1, not L0", store->id)),
            std::string::npos);
  EXPECT_NE(
      parse_error(edited(s.text, load, "vector dim 1", "vector dim 0"), s.stages.program(), l.nir)
          .find("its vectors run along dim 1, not 0"),
      std::string::npos);
  EXPECT_NE(parse_error(edited(s.text, load, "4 wide", "8 wide"), s.stages.program(), l.nir)
                .find("L0's vectors are 4 wide"),
            std::string::npos);

  // 60 x 90: a row's vectors may be partly valid, and rows are 360 bytes apart.
  ts::Buffer ragged = ts::Buffer::ones({60, 90}, ts::f32);
  Staged r = staged(transpose, blocks, ragged);
  const cg::LoopStages& rl = r.stages.loops.at(0);
  const ts::ir::Node* rload = first(rl, ts::ir::Op::Load);
  ASSERT_NE(line_of(r.text, rload).find("access L0 vector dim 1, 4 wide"), std::string::npos)
      << r.text;
  EXPECT_EQ(line_of(r.text, rload).find("whole"), std::string::npos) << r.text;
  EXPECT_NE(
      parse_error(edited(r.text, rload, "4 wide", "4 wide, whole"), r.stages.program(), rl.nir)
          .find("not known to be wholly valid or wholly invalid"),
      std::string::npos);
  EXPECT_NE(
      parse_error(edited(r.text, rload, "4 wide", "4 wide, aligned"), r.stages.program(), rl.nir)
          .find("not known to be aligned to 16 bytes"),
      std::string::npos);
  // An access planned as elements cannot become a vector.
  const std::string no_vectors = edited(r.text, rload, "vector dim 1, 4 wide", "elements");
  passes::NestIr nir = rl.nir;
  passes::parse_kernel_ir(no_vectors, r.stages.program(), nir);
  EXPECT_EQ(nir.access(rload).form, passes::Access::Form::elements);
  EXPECT_NE(
      parse_error(edited(no_vectors, rload, "elements", "per_thread"), r.stages.program(), nir)
          .find("the access is elements; it can only be weakened from vector to elements"),
      std::string::npos);
  std::string dropped = r.text;
  const std::string line = line_of(r.text, rload);
  dropped.replace(dropped.find(line), line.size(), line.substr(0, line.find(';')));
  EXPECT_NE(parse_error(dropped, r.stages.program(), rl.nir)
                .find(fmt::format("the text gives no access for %{}", rload->id)),
            std::string::npos);
}

TEST(KernelIr, TheLoadsADeviceLoopIssuesEarlyAreReadBack) {
  ts::Buffer x = ts::Buffer::ones({4, 1024}, ts::f32), w = ts::Buffer::ones({1024}, ts::f32);
  auto rms_norm = examples::make_rms_norm();
  ts::Config rolled{.block_sizes = std::vector<int64_t>{2},
                    .num_stages = 3,
                    .reduction_loops = std::vector<std::optional<int64_t>>{256}};
  Staged s = staged(rms_norm, rolled, x, w, 1e-5);
  const cg::LoopStages& l = s.stages.loops.at(0);
  ASSERT_FALSE(l.nir.prefetch.empty()) << s.text;
  const auto& [loop, p] = *l.nir.prefetch.begin();
  EXPECT_EQ(p.tiles_ahead, 2);  // num_stages - 1
  ASSERT_FALSE(p.loads.empty());
  for (const ts::ir::Node* m : p.loads)
    EXPECT_EQ(l.nir.access(m).form, passes::Access::Form::vector);
  const std::string line = line_of(s.text, loop);
  EXPECT_NE(line.find(fmt::format("prefetch %{}, ", p.loads[0]->id)), std::string::npos) << line;
  EXPECT_NE(line.find(", 2 tiles ahead"), std::string::npos) << line;
  EXPECT_NE(l.kernel.source.find("loaded 2 iterations early"), std::string::npos);
  passes::NestIr nir = l.nir;
  passes::parse_kernel_ir(s.text, s.stages.program(), nir);
  EXPECT_EQ(passes::describe(nir), passes::describe(l.nir));

  // Without the prefetch parts the loops load each tile where it stands.
  std::string none = s.text;
  for (const auto& [each, unused] : l.nir.prefetch) {
    const std::string its = line_of(s.text, each);
    none.replace(none.find(its), its.size(), fmt::format("//   %{} loop:", each->id));
  }
  EXPECT_EQ(cuda_of(s, none).find("iterations early"), std::string::npos);
  EXPECT_NE(
      parse_error(edited(s.text, loop, "2 tiles ahead", "3 tiles ahead"), s.stages.program(), l.nir)
          .find("loads 2 tiles ahead"),
      std::string::npos);
  const ts::ir::Node* store = first(l, ts::ir::Op::Store);
  EXPECT_NE(parse_error(edited(s.text, loop, fmt::format("prefetch %{}", p.loads[0]->id),
                               fmt::format("prefetch %{}", store->id)),
                        s.stages.program(), l.nir)
                .find(fmt::format("%{} is not a load %{} can issue early", store->id, loop->id)),
            std::string::npos);
  // A prefetched load weakened to elements cannot be issued early.
  const ts::ir::Node* early = p.loads[0];
  const std::string weak = edited(s.text, early, "vector dim", "elements dim");
  std::string weak_line = line_of(weak, early);
  const size_t at = weak_line.find("elements dim");
  weak_line.erase(at + 8, weak_line.find(';', at) == std::string::npos
                              ? std::string::npos
                              : weak_line.find(';', at) - at - 8);
  std::string weakened = weak;
  weakened.replace(weakened.find(line_of(weak, early)), line_of(weak, early).size(), weak_line);
  EXPECT_NE(parse_error(weakened, s.stages.program(), l.nir)
                .find(fmt::format("%{} is issued early by %{} but is not a vector access",
                                  early->id, loop->id)),
            std::string::npos)
      << line_of(weakened, early);
}

TEST(KernelIr, AValueItsStoreRoundsIsReadBack) {
  auto k = ts::kernel("add_bf16", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) + x(t);
    return out;
  });
  ts::Buffer x = ts::Buffer::ones({256}, ts::bf16);
  Staged s = staged(k, ts::Config{.block_sizes = std::vector<int64_t>{128}}, x);
  const cg::LoopStages& l = s.stages.loops.at(0);
  ASSERT_EQ(l.nir.rounded_by_store.size(), 1u) << s.text;
  const ts::ir::Node* sum = *l.nir.rounded_by_store.begin();
  EXPECT_NE(line_of(s.text, sum).find("; rounded by its store"), std::string::npos) << s.text;
  EXPECT_EQ(l.kernel.source.find("ts::round_bf16("), std::string::npos) << l.kernel.source;
  EXPECT_EQ(cuda_of(s, s.text), l.kernel.source);
  // Without it the sum rounds itself (then the store again: the same value).
  EXPECT_NE(cuda_of(s, edited(s.text, sum, "; rounded by its store", "")).find("ts::round_bf16("),
            std::string::npos);
  const ts::ir::Node* load = first(l, ts::ir::Op::Load);
  EXPECT_NE(parse_error(edited(s.text, load, "registers L0", "registers L0; rounded by its store"),
                        s.stages.program(), l.nir)
                .find(fmt::format("%{} is not rounded by a store", load->id)),
            std::string::npos);
}

TEST(KernelIr, APersistentProgramLoadsTheNextProgramsTileEarly) {
  auto k = ts::kernel("twice", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) * 2;
    return out;
  });
  ts::Buffer x = ts::Buffer::ones({4096}, ts::f32);
  Staged s = staged(k,
                    ts::Config{.block_sizes = std::vector<int64_t>{256},
                               .num_stages = 2,
                               .pid_type = ts::PidType::persistent_blocked},
                    x);
  const cg::LoopStages& l = s.stages.loops.at(0);
  const passes::Prefetch* p = l.nir.prefetched(l.loop);
  ASSERT_TRUE(p) << s.text;
  const ts::ir::Node* load = first(l, ts::ir::Op::Load);
  EXPECT_EQ(p->loads, std::vector<const ts::ir::Node*>{load});
  EXPECT_EQ(line_of(s.text, l.loop),
            fmt::format("//   %{} loop: prefetch %{}, 1 tile ahead", l.loop->id, load->id));
  EXPECT_NE(l.kernel.source.find("the next program's tile, loaded early"), std::string::npos);
  EXPECT_EQ(cuda_of(s, s.text), l.kernel.source);
}

}  // namespace
