// The IR's text form round-trips: ir::parse(ir::print(g)) prints as g does and holds what g
// holds (tests/ir_text_util.hpp GraphDiff), for small programs covering every op kind, for
// every example kernel, and for the IR after each stage of the compile pipeline.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <set>
#include <tessel/tessel.hpp>

#include "codegen/compile_pipeline.hpp"
#include "examples/kernels/all_reduce.hpp"
#include "examples/kernels/basic.hpp"
#include "examples/kernels/moe.hpp"
#include "examples/kernels/norms.hpp"
#include "examples/kernels/seed000.hpp"
#include "examples/kernels/seed001.hpp"
#include "examples/kernels/seed002.hpp"
#include "tests/atomic_kernels.hpp"
#include "tests/autotune_test_util.hpp"
#include "tests/ir_text_util.hpp"

namespace ts = tessel;
namespace ir = tessel::ir;
using autotune_test::graph_of;
using ir_text_test::expect_round_trip;

namespace {

ts::Buffer f32(std::vector<int64_t> shape) { return ts::Buffer::zeros(shape, ts::f32); }
ts::Buffer i32(std::vector<int64_t> shape) { return ts::Buffer::zeros(shape, ts::i32); }
ts::Buffer u64(std::vector<int64_t> shape) { return ts::Buffer::zeros(shape, ts::u64); }

/// The ops a small traced program uses beyond the examples: strides, selects, tile
/// constructors, tile attributes, program ids, grid indices and atomics.
auto make_every_attr() {
  return ts::kernel("every_attr", [](ts::Tensor x, ts::Tensor counts) {
    ts::Tensor out = ts::zeros_like(x);
    ts::Value s = x.stride(0);
    for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) {
      ts::Value v = x(tm, tn);
      ts::Value m = ts::where(v > 0.5, v, ts::zeros({tm, tn}, ts::f32));
      ts::Value i = tm.index()(ts::all, ts::newaxis) * s + tn.end() - tn.block_size();
      out(tm, tn) = m + i.to(ts::f32) + ts::program_id().to(ts::f32) + ts::abs(v);
      ts::atomic_add(counts, {tm.id() * 0}, 1, ts::Sem::acq_rel, ts::Scope::sys);
    }
    for (auto g : ts::grid(x.size(0))) counts(g + 1) = g;
    return out;
  });
}

/// A [begin, end) tile range, a ts::register_block_size dim with a range (a block Sym in
/// a carried accumulator) and a user tunable.
auto make_blocked_ranges() {
  return ts::kernel("blocked_ranges", [](ts::Tensor x) {
    ts::Tensor out = x.new_zeros({x.size(0)});
    ts::BlockSize bn = ts::register_block_size(16, 64);
    for (auto tm : ts::tile({2, x.size(0)})) {
      ts::Value acc = ts::zeros({tm, bn}, ts::f32);
      for (auto tn : ts::tile(x.size(1), {.block_size = bn})) acc = acc + x(tm, tn);
      out(tm) = ts::sum(acc, 1) * ts::register_tunable("scale", {1, 2});
    }
    return out;
  });
}

/// The graphs of the round-trip cases, by name.
std::vector<std::pair<std::string, std::function<const ir::Graph&()>>> cases() {
  static auto add = examples::make_add();
  static auto copy = examples::make_copy();
  static auto add_2d = examples::make_add_2d();
  static auto add_bias = examples::make_add_bias();
  static auto transpose = examples::make_transpose();
  static auto add_transposed = examples::make_add_transposed();
  static auto softmax_basic = examples::make_softmax_basic();
  static auto routed = examples::make_silu_and_mul_routed();
  static auto packed = examples::make_silu_and_mul_packed();
  static auto softmax = examples::make_softmax();
  static auto two_pass = examples::make_softmax_two_pass();
  static auto online = examples::make_softmax_online();
  static auto layer_norm = examples::make_layer_norm();
  static auto rms_norm = examples::make_rms_norm();
  static auto rms_norm_out = examples::make_rms_norm_out();
  static auto cross_entropy = examples::make_cross_entropy();
  static auto cross_entropy_online = examples::make_cross_entropy_online();
  static auto row_sum = examples::make_row_sum();
  static auto padded_sum_host = examples::make_padded_sum_host();
  static auto f1 = examples::make_f1();
  static auto f2 = examples::make_f2();
  static auto f2_fixed = examples::make_f2_fixed();
  static auto mc_load = examples::make_multicast_load_2d_tensors();
  static auto mc_load_ptrs = examples::make_multicast_load_2d_dev_ptrs();
  static auto mc_store = examples::make_multicast_store_broadcast();
  static auto mc_arange = examples::make_multicast_store_arange();
  static auto mc_masked = examples::make_multicast_load_masked();
  static auto padded_sum = examples::make_padded_sum();
  static auto padded_sum_index = examples::make_padded_sum_index();
  static auto padded_sum_item = examples::make_padded_sum_item();
  static auto padded_sum_manual = examples::make_padded_sum_manual();
  static auto padded_sum_into = examples::make_padded_sum_into();
  static auto padded_sum_host_into = examples::make_padded_sum_host_into();
  static auto all_reduce = examples::make_one_shot_all_reduce(64);
  static auto every_attr = make_every_attr();
  static auto blocked_ranges = make_blocked_ranges();
  static auto cas_max = atomic_test::make_cas_max();
  static auto reduce_ops = atomic_test::make_reduce_ops();
  static auto chain = atomic_test::make_chain();
  static auto ticket = atomic_test::make_ticket();
  static auto checked = examples::make_add(ts::Settings{.check_bounds = true});
  static auto fast_accum = examples::make_add(ts::Settings{.fast_accum = true});
  static auto static_shapes = examples::make_layer_norm(ts::Settings{.static_shapes = true});
  ts::Buffer x = f32({8, 100}), w = f32({100}), row = f32({100}), v = f32({1000});
  ts::Buffer size = ts::Buffer::scalar(5, ts::i32), bound = ts::Buffer::scalar(4, ts::i64);
  return {
      {"add", [=]() -> const ir::Graph& { return graph_of(add, v, v); }},
      {"copy", [=]() -> const ir::Graph& { return graph_of(copy, v); }},
      {"add_2d", [=]() -> const ir::Graph& { return graph_of(add_2d, x, x); }},
      {"add_bias", [=]() -> const ir::Graph& { return graph_of(add_bias, x, w); }},
      {"transpose", [=]() -> const ir::Graph& { return graph_of(transpose, x); }},
      {"add_transposed",
       [=]() -> const ir::Graph& {
         return graph_of(add_transposed, x, f32({100, 8}));
       }},
      {"softmax_basic", [=]() -> const ir::Graph& { return graph_of(softmax_basic, x); }},
      {"silu_and_mul_routed",
       [=]() -> const ir::Graph& {
         return graph_of(routed, f32({4, 8, 32}), i32({4}));
       }},
      {"silu_and_mul_packed",
       [=]() -> const ir::Graph& {
         return graph_of(packed, f32({8, 32}), size);
       }},
      {"softmax", [=]() -> const ir::Graph& { return graph_of(softmax, x); }},
      {"softmax_two_pass", [=]() -> const ir::Graph& { return graph_of(two_pass, x); }},
      {"softmax_online", [=]() -> const ir::Graph& { return graph_of(online, x); }},
      {"layer_norm", [=]() -> const ir::Graph& { return graph_of(layer_norm, x, w, row, 1e-5); }},
      {"rms_norm", [=]() -> const ir::Graph& { return graph_of(rms_norm, x, w, 1e-6); }},
      {"rms_norm_out",
       [=]() -> const ir::Graph& {
         return graph_of(rms_norm_out, x, w, 1e-6, f32({8, 100}));
       }},
      {"cross_entropy",
       [=]() -> const ir::Graph& {
         return graph_of(cross_entropy, x, ts::Buffer::zeros({8}, ts::i64));
       }},
      {"cross_entropy_online",
       [=]() -> const ir::Graph& {
         return graph_of(cross_entropy_online, x, ts::Buffer::zeros({8}, ts::i64));
       }},
      {"row_sum", [=]() -> const ir::Graph& { return graph_of(row_sum, x); }},
      {"padded_sum_host",
       [=]() -> const ir::Graph& { return graph_of(padded_sum_host, x, int64_t{6}); }},
      {"f1", [=]() -> const ir::Graph& { return graph_of(f1, x, size, size); }},
      {"f2", [=]() -> const ir::Graph& { return graph_of(f2, x, size, size); }},
      {"f2_fixed", [=]() -> const ir::Graph& { return graph_of(f2_fixed, x, size, size); }},
      {"multicast_load_2d_tensors",
       [=]() -> const ir::Graph& {
         return graph_of(mc_load, u64({3}), f32({4, 8}));
       }},
      {"multicast_load_2d_dev_ptrs",
       [=]() -> const ir::Graph& {
         return graph_of(mc_load_ptrs, u64({2, 3}), f32({8}));
       }},
      {"multicast_store_broadcast",
       [=]() -> const ir::Graph& { return graph_of(mc_store, f32({8}), u64({3}), f32({8})); }},
      {"multicast_store_arange",
       [=]() -> const ir::Graph& { return graph_of(mc_arange, u64({3}), f32({8})); }},
      {"multicast_load_masked",
       [=]() -> const ir::Graph& { return graph_of(mc_masked, u64({3}), f32({10})); }},
      {"padded_sum", [=]() -> const ir::Graph& { return graph_of(padded_sum, x, size); }},
      {"padded_sum_index",
       [=]() -> const ir::Graph& { return graph_of(padded_sum_index, x, size); }},
      {"padded_sum_item", [=]() -> const ir::Graph& { return graph_of(padded_sum_item, x, size); }},
      {"padded_sum_manual",
       [=]() -> const ir::Graph& { return graph_of(padded_sum_manual, x, size); }},
      {"padded_sum_into",
       [=]() -> const ir::Graph& { return graph_of(padded_sum_into, x, size, f32({8})); }},
      {"padded_sum_host_into",
       [=]() -> const ir::Graph& {
         return graph_of(padded_sum_host_into, x, int64_t{6}, f32({8}));
       }},
      {"one_shot_all_reduce",
       [=]() -> const ir::Graph& {
         return graph_of(all_reduce, u64({2}), f32({128}), u64({2}), i32({4}),
                         ts::Buffer::zeros({1}, ts::i64), f32({1, 128}));
       }},
      {"every_attr", [=]() -> const ir::Graph& { return graph_of(every_attr, x, i32({16})); }},
      {"blocked_ranges", [=]() -> const ir::Graph& { return graph_of(blocked_ranges, x); }},
      {"cas_max", [=]() -> const ir::Graph& { return graph_of(cas_max, i32({16})); }},
      {"reduce_ops",
       [=]() -> const ir::Graph& {
         return graph_of(reduce_ops, ts::Buffer::zeros({16}, ts::i64));
       }},
      {"chain", [=]() -> const ir::Graph& { return graph_of(chain, i32({8})); }},
      {"ticket", [=]() -> const ir::Graph& { return graph_of(ticket, i32({8})); }},
      {"add_check_bounds", [=]() -> const ir::Graph& { return graph_of(checked, v, v); }},
      {"add_fast_accum", [=]() -> const ir::Graph& { return graph_of(fast_accum, v, v); }},
      {"layer_norm_static_shapes",
       [=]() -> const ir::Graph& { return graph_of(static_shapes, x, w, row, 1e-5); }},
      {"padded_sum_i64_bound",
       [=]() -> const ir::Graph& { return graph_of(padded_sum, x, bound); }},
  };
}

TEST(IrText, EveryTracedCaseRoundTrips) {
  for (const auto& [name, graph] : cases()) {
    SCOPED_TRACE(name);
    expect_round_trip(graph());
  }
}

TEST(IrText, TheCasesHoldEveryKindOfSymAndHeaderFact) {
  std::set<ir::Sym::Kind> kinds;
  bool range = false, tunable = false, reduction = false, fixed = false, begin = false;
  bool checked = false, fast_accum = false;
  for (const auto& [name, graph] : cases()) {
    const ir::Graph& g = graph();
    for (const auto& s : g.syms()) kinds.insert(s->kind);
    for (const auto& r : g.block_size_range) range |= r.first > 0;
    tunable |= !g.tunables.empty();
    reduction |= !g.reduction_syms.empty();
    checked |= g.check_bounds;
    fast_accum |= g.fast_accum;
    ir::walk(g.host, [&](const ir::Node* n) {
      for (const ir::LoopDim& d : n->dims) {
        fixed |= d.fixed_block > 0;
        begin |= d.begin->op == ir::Op::Const && d.begin->ival != 0;
      }
    });
  }
  EXPECT_EQ(kinds.size(), 3u);  // tile, extent and block Syms
  EXPECT_TRUE(range && tunable && reduction && fixed && begin && checked && fast_accum);
}

TEST(IrText, EveryOpKindHasARoundTripCase) {
  std::set<ir::Op> seen;
  for (const auto& [name, graph] : cases())
    ir::walk(graph().host, [&](const ir::Node* n) {
      seen.insert(n->op);
      for (const ir::Node* c : n->carried) seen.insert(c->op);
    });
#define TESSEL_X(name, str) \
  EXPECT_TRUE(seen.count(ir::Op::name)) << "no round-trip case holds op '" << str << "'";
  TESSEL_IR_OPS(TESSEL_X)
#undef TESSEL_X
}

// The CUDA and complete config that the compile pipeline makes of `g` under the default
// config, or the error it refuses `g` with.
std::string compiled(const ir::Graph& g, int& kernels) {
  try {
    ts::codegen::CompiledStages s = ts::codegen::compile_pipeline(
        g, {}, {.emit = ts::codegen::PipelineOptions::Emit::all_reporting_failures});
    std::string out = s.config.to_json();
    for (const ts::codegen::LoopStages& l : s.loops) {
      out += l.kernel.source + l.failure;
      kernels += !l.kernel.source.empty();
    }
    return out;
  } catch (const ts::UserError& e) {
    return e.what();
  }
}

TEST(IrText, AParsedGraphCompilesToTheSameCudaAsTheTracedOne) {
  int kernels = 0, parsed_kernels = 0;
  for (const auto& [name, graph] : cases()) {
    SCOPED_TRACE(name);
    std::unique_ptr<ir::Graph> back = ir::parse(ir::print(graph()));
    EXPECT_EQ(compiled(*back, parsed_kernels), compiled(graph(), kernels));
  }
  EXPECT_GT(kernels, 30);  // most cases lower to CUDA
  EXPECT_EQ(parsed_kernels, kernels);
}

TEST(IrText, TheIrAfterEachPipelineStageRoundTrips) {
  ts::Buffer x = f32({8, 100000});
  auto softmax = examples::make_softmax_basic();
  auto online = examples::make_softmax_online();
  auto add_2d = examples::make_add_2d();
  auto ce = examples::make_cross_entropy();
  std::vector<std::pair<const ir::Graph*, ts::Config>> runs = {
      {&graph_of(softmax, x), {}},  // rows of 100000: a looped reduction (roll_reductions)
      {&graph_of(online, f32({8, 1000})), {}},
      {&graph_of(add_2d, f32({64, 64}), f32({64, 64})),
       ts::Config{.loop_orders = std::vector<std::vector<int>>{{1, 0}},
                  .flatten_loops = std::vector<bool>{true}}},
      {&graph_of(ce, f32({8, 5000}), ts::Buffer::zeros({8}, ts::i64)),
       ts::Config{.reduction_loops = std::vector<std::optional<int64_t>>{1024}}},
  };
  for (const auto& [g, config] : runs) {
    SCOPED_TRACE(g->kernel_name);
    ts::codegen::CompiledStages s = ts::codegen::compile_pipeline(
        *g, config, {.emit = ts::codegen::PipelineOptions::Emit::none, .record_ir = true});
    ASSERT_FALSE(s.stage_ir.empty());
    for (const ts::codegen::StageIr& st : s.stage_ir) {
      SCOPED_TRACE(st.stage);
      std::string body = st.ir.substr(st.ir.find("\nkernel ") + 1);
      EXPECT_EQ(ir::print(*ir::parse(st.ir)), body);  // the stage's header comments skipped
    }
    expect_round_trip(s.program(), /*depth=*/s.lowered == nullptr);
  }
}

// A loop over a tile of x (f32) and c (i32) whose body is `lines`, as ir::print prints it.
std::string program(const std::string& lines, int return_id = 8) {
  return "kernel every_fn\n"
         "  index_dtype i64 forced\n"
         "  loads 2\n"
         "  block_size 0 hint 16 range 16..64\n"
         "  sym t0 loop %4 dim 0 block 0\n"
         "  %0 = arg 0 : f32 tensor rank 1\n"
         "  %1 = arg 1 : i32 tensor rank 1\n"
         "  %2 = size %0 dim 0 : i64\n"
         "  %3 = const 0 : i64\n"
         "  %4 = loop tile(%3..%2) as t0 block 0 {\n"
         "    %5 = load %0[tile %4 as t0] #0 : f32[t0]\n"
         "    %6 = load %1[tile %4 as t0] #1 : i32[t0]\n" +
         lines + "  }\n" + fmt::format("  %{}: return\n", return_id);
}

TEST(IrText, EveryFunctionDtypeMemoryOrderAndScopeRoundTrips) {
  std::string lines;
  int id = 7;
  auto line = [&](const std::string& text) { lines += fmt::format("    %{} = {}\n", id++, text); };
#define TESSEL_X(name, str, f) line(fmt::format("unary {} %5 : f32[t0]", str));
  TESSEL_UNARY_FNS(TESSEL_X)
#undef TESSEL_X
#define TESSEL_X(name, str, k) line(fmt::format("binary {} %6, %6 : i32[t0]", str));
  TESSEL_BINARY_FNS(TESSEL_X)
#undef TESSEL_X
#define TESSEL_X(name, str) line(fmt::format("reduce {} %5 dim 0 : f32", str));
  TESSEL_REDUCE_FNS(TESSEL_X)
#undef TESSEL_X
  for (const char* sem : {"relaxed", "acquire", "release", "acq_rel"})
    for (const char* scope : {"cta", "gpu", "sys"}) {
#define TESSEL_X(name, str)                                                  \
  line(fmt::format("atomic {} %1[tile %4 as t0], %6{} {} {} : i32[t0]", str, \
                   std::string(str) == "cas" ? ", %6" : "", sem, scope));
      TESSEL_ATOMIC_FNS(TESSEL_X)
#undef TESSEL_X
    }
  for (const char* t : {"bool", "i32", "i64", "u64", "f16", "bf16", "f32", "f64"})
    line(fmt::format("cast %5 : {}[t0]", t));
  for (const char* c : {"1 : bool", "-2147483648 : i32", "-9223372036854775808 : i64", "-1 : u64",
                        "0.1 : f16", "-0 : bf16", "1e+30 : f32", "inf : f32", "-inf : f64",
                        "nan : f32", "2.5 ival 7 : f64", "3 fval 3.5 : i32"})
    line(fmt::format("const {}", c));
  const int after_consts = id;
  lines += fmt::format("    %{}: store %0[tile %4 as t0] = %5\n", id++);
  std::string text = program(lines, id);
  std::unique_ptr<ir::Graph> g = ir::parse(text);
  EXPECT_EQ(ir::print(*g), text);
  ir_text_test::expect_round_trip(*g, /*depth=*/true);
  // The values the text spells are the nodes' fields.
  const ir::Block& body = g->host.at(4)->body;
  auto at = [&](int node_id) {
    for (const ir::Node* n : body)
      if (n->id == node_id) return n;
    return static_cast<const ir::Node*>(nullptr);
  };
  const ir::Node* cas = nullptr;
  for (const ir::Node* n : body)
    if (n->op == ir::Op::Atomic && n->afn() == ir::AtomicFn::cas && n->sem == ts::Sem::acq_rel &&
        n->scope == ts::Scope::sys)
      cas = n;
  ASSERT_NE(cas, nullptr);
  EXPECT_EQ(cas->ival, 2);  // expected and value operands
  EXPECT_EQ(cas->args.size(), 4u);
  const ir::Node* first_const = at(after_consts - 12);
  ASSERT_NE(first_const, nullptr);
  EXPECT_EQ(first_const->dtype, ts::DType::boolean);
  EXPECT_EQ(first_const->ival, 1);
  EXPECT_EQ(at(after_consts - 10)->ival, INT64_MIN);
  EXPECT_EQ(at(after_consts - 9)->ival, -1);
  EXPECT_EQ(at(after_consts - 5)->fval, INFINITY);
  EXPECT_EQ(at(after_consts - 5)->ival, 0);  // no i64 holds inf
  EXPECT_TRUE(std::isnan(at(after_consts - 3)->fval));
  EXPECT_EQ(at(after_consts - 2)->ival, 7);  // printed where it is not the fval's integer
  EXPECT_EQ(at(after_consts - 1)->fval, 3.5);
  EXPECT_EQ(g->index_dtype, ts::DType::i64);
  EXPECT_TRUE(g->index_dtype_forced);
  EXPECT_EQ(g->block_size_range.at(0), std::make_pair(int64_t{16}, int64_t{64}));
}

TEST(IrText, ATileSymWithoutASymLineTakesItsLoop) {
  std::string text = program("    %7: store %0[tile %4 as t0] = %5\n");
  text.erase(text.find("  sym t0"), text.find("  %0") - text.find("  sym t0"));
  std::unique_ptr<ir::Graph> g = ir::parse(text);
  const ir::Sym* t0 = g->syms().at(0).get();
  EXPECT_EQ(t0->kind, ir::Sym::tile);
  EXPECT_EQ(t0->loop, g->host.at(4));
  EXPECT_EQ(t0->loop_dim, 0);
  EXPECT_EQ(t0->block_id, 0);
  EXPECT_EQ(ir::print(*g), program("    %7: store %0[tile %4 as t0] = %5\n"));
}

TEST(IrText, GraphDiffFindsAFieldThePrinterWouldShow) {
  auto add = examples::make_add();
  const ir::Graph& g = graph_of(add, f32({64}), f32({64}));
  std::unique_ptr<ir::Graph> back = ir::parse(ir::print(g));
  EXPECT_EQ(ir_text_test::GraphDiff(g, *back, true, true).run(), "");
  ir::walk(back->host, [](ir::Node* n) {
    if (n->op == ir::Op::Load) n->load_id = 5;
  });
  EXPECT_NE(ir_text_test::GraphDiff(g, *back, true, true).run().find("load_id differs"),
            std::string::npos);
}

}  // namespace
