// Contractions (src/passes/contractions.hpp): which sums of products are lowered without
// materializing the product, the layouts they get (the nest holds only the output tile,
// each factor a layout of its own with 16-byte vectors), the CUDA they make, NVRTC
// compiling it, and the interpreter's values. GPU values: tests/gpu/contractions_gpu_test.cpp.
#include "passes/contractions.hpp"

#include <gtest/gtest.h>

#include <tessel/tessel.hpp>

#include "examples/kernels/matmul.hpp"
#include "ir/parser.hpp"
#include "nvrtc_test_util.hpp"
#include "passes/access_layouts.hpp"
#include "passes/default_config.hpp"
#include "passes/layout.hpp"
#include "runtime/kernel_tuning.hpp"
#include "tests/matmul_test_util.hpp"
#include "user_error_util.hpp"

namespace ts = tessel;

namespace {

// The layout of kernel k's first loop nest under config c for `args` (it points into k's
// traced graph: k must outlive it).
template <class K, class... A>
ts::passes::Layout first_nest_layout(const K& k, const ts::Config& c, const A&... args) {
  const ts::ir::Graph& g = ts::rt::traced_graph(k.impl(), ts::detail::call_args(args...));
  ts::Config cfg = ts::passes::complete_config(g, c, "test");
  for (const ts::ir::Node* n : g.host)
    if (n->op == ts::ir::Op::Loop) return ts::passes::compute_layout(n, cfg);
  ADD_FAILURE() << "no loop";
  return {};
}

using matmul_test::ints;

ts::Config blocks(int64_t m, int64_t n, int64_t k, int warps) {
  return ts::Config{.block_sizes = std::vector<int64_t>{m, n, k}, .num_warps = warps};
}

// Kernels whose sum of products is not a contraction.
auto make_row_dot() {  // no outer product: both factors are [tm, tk]
  return ts::kernel("row_dot", [](ts::Tensor x, ts::Tensor y) {
    ts::Tensor out = x.new_empty({x.size(0)});
    for (auto tm : ts::tile(x.size(0))) {
      ts::Value acc = ts::zeros({tm});
      for (auto tk : ts::tile(x.size(1))) acc = acc + ts::sum(x(tm, tk) * y(tm, tk), 1);
      out(tm) = acc;
    }
    return out;
  });
}
auto make_product_used_twice() {
  return ts::kernel("product_used_twice", [](ts::Tensor x, ts::Tensor y) {
    ts::Tensor out = x.new_empty({x.size(0), y.size(1)});
    for (auto [tm, tn] : ts::tile(x.size(0), y.size(1))) {
      ts::Value acc = ts::zeros({tm, tn});
      for (auto tk : ts::tile(x.size(1))) {
        ts::Value p = x(tm, tk, ts::newaxis) * y(ts::newaxis, tk, tn);
        acc = acc + ts::sum(p, 1) + ts::max(p, 1);
      }
      out(tm, tn) = acc;
    }
    return out;
  });
}
auto make_contracted_dim_stored() {  // the x tile is also stored: tk is held by the nest
  return ts::kernel("contracted_dim_stored", [](ts::Tensor x, ts::Tensor y) {
    ts::Tensor out = x.new_empty({x.size(0), y.size(1)});
    ts::Tensor copy = ts::empty_like(x);
    for (auto [tm, tn] : ts::tile(x.size(0), y.size(1))) {
      ts::Value acc = ts::zeros({tm, tn});
      for (auto tk : ts::tile(x.size(1))) {
        acc = acc + ts::sum(x(tm, tk, ts::newaxis) * y(ts::newaxis, tk, tn), 1);
        copy(tm, tk) = x(tm, tk);
      }
      out(tm, tn) = acc;
    }
    return std::make_tuple(out, copy);
  });
}

}  // namespace

TEST(Contractions, AMatmulHoldsOnlyItsOutputTileAndEachFactorInALayoutOfItsOwn) {
  ts::Buffer x = ints(256, 256, ts::f32, 1), y = ints(256, 256, ts::f32, 2);
  auto k = examples::make_matmul();  // owns the traced graph the layout points into
  ts::passes::Layout L = first_nest_layout(k, blocks(64, 64, 32, 4), x, y);
  ASSERT_EQ(L.contractions.size(), 1u);
  EXPECT_EQ(L.slot_block, (std::vector<int64_t>{64, 64}));  // tm, tn: no slot for tk
  EXPECT_EQ(L.regs(), 32);  // 64 x 64 / 128 threads (the product would hold 1024)
  const ts::passes::Contraction& c = L.contractions[0];
  EXPECT_EQ(c.factor_layout[0].slot_block, (std::vector<int64_t>{64, 32}));  // x: [tm, tk]
  EXPECT_EQ(c.factor_layout[1].slot_block, (std::vector<int64_t>{32, 64}));  // y: [tk, tn]
  for (const ts::passes::Layout& F : c.factor_layout) {
    EXPECT_EQ(F.vec, 4);  // 16 bytes of f32
    EXPECT_EQ(F.regs(), 16);
  }
  EXPECT_TRUE(c.padded[0]);   // x's rows run along tk: a warp reads down a column
  EXPECT_FALSE(c.padded[1]);  // y's rows run along tn
  EXPECT_EQ(c.shared_bytes, (64 * 32 + 64) * 4 + 32 * 64 * 4);
  std::string d = ts::passes::describe(L, c.match.sum->args[0]);
  EXPECT_NE(d.find("contracts"), std::string::npos) << d;
}

TEST(Contractions, BothFactorsLoadInSixteenByteVectorsAndTheCudaCompiles) {
  REQUIRE_NVRTC();
  for (ts::DType t : {ts::f32, ts::bf16}) {
    ts::Buffer x = ints(256, 256, t, 1), y = ints(256, 256, t, 2);
    auto k = examples::make_matmul(ts::Settings{.config = blocks(64, 64, 32, 4)});
    std::string cu = nvrtc_test::compile(k, x, y);
    std::string mem = t == ts::f32 ? "float" : "__nv_bfloat16";
    // Whole, aligned vectors of 16 bytes in each factor's layout.
    EXPECT_EQ(nvrtc_test::count(cu, "ts::ld_vec<" + mem + ", TS_V, true, true>"), 2) << cu;
    // TS_V is 16 bytes' worth of elements wherever the factors' code runs (the nest's own
    // width, or redefined for a factor).
    EXPECT_NE(cu.find(t == ts::f32 ? "#define TS_V 4" : "#define TS_V 8"), std::string::npos);
    EXPECT_EQ(cu.find(t == ts::f32 ? "#define TS_V 8" : "#define TS_V 4"), std::string::npos);
    EXPECT_EQ(nvrtc_test::count(cu, "of products, factors in shared memory"), 1) << cu;
    EXPECT_EQ(cu.find("[1024]"), std::string::npos);
  }
}

// num_stages = S: both factors' loads of the summed loop's tile i + S - 1 are issued while
// tile i's products are summed, into S - 1 buffers each in the factor's layout (TS_N of
// that layout: 16 registers of 64 x 32 on 128 threads), and the factor code loads nothing.
TEST(Contractions, FactorLoadsArePipelinedInTheirLayoutsWithNumStages) {
  REQUIRE_NVRTC();
  for (int stages : {2, 3}) {
    ts::Buffer x = ints(256, 256, ts::f32, 1), y = ints(256, 256, ts::f32, 2);
    ts::Config c = blocks(64, 64, 32, 4);
    c.num_stages = stages;
    auto k = examples::make_matmul(ts::Settings{.config = c});
    std::string cu = nvrtc_test::compile(k, x, y);
    const int ahead = stages - 1;
    std::string early = ahead == 1 ? "loaded one iteration early" : "loaded 2 iterations early";
    EXPECT_EQ(nvrtc_test::count(cu, early), 2 * ahead) << cu;
    // The first tiles before the loop (ahead per factor), then one tile per iteration.
    EXPECT_EQ(nvrtc_test::count(cu, "ts::ld_vec<float, TS_V, true, true>"), 2 * (ahead + 1)) << cu;
    EXPECT_EQ(nvrtc_test::count(cu, "ts::to_regs<float, TS_N>(p"), 2) << cu;
  }
}

// A thread's 32 registers of a 64 x 64 tile on 128 threads are 8 rows and 4 columns: per
// k it reads 8 values of factor 0 and 4 of factor 1 from shared memory (not 32 each), each
// row's address computed once (rows * 33 + k: the padded row of 32 plus one).
TEST(Contractions, EachSharedValueIsReadOncePerSummedIndex) {
  REQUIRE_NVRTC();
  ts::Buffer x = ints(256, 256, ts::f32, 1), y = ints(256, 256, ts::f32, 2);
  auto k = examples::make_matmul(ts::Settings{.config = blocks(64, 64, 32, 4)});
  std::string cu = nvrtc_test::compile(k, x, y);
  EXPECT_NE(cu.find("float a0[8];  // factor 0 at k: one value per setting of register bits 0x1c"),
            std::string::npos)
      << cu;
  EXPECT_NE(cu.find("float a1[4];  // factor 1 at k: one value per setting of register bits 0x3"),
            std::string::npos)
      << cu;
  EXPECT_NE(cu.find("* 33 + k]"), std::string::npos) << cu;
  EXPECT_NE(cu.find("+= a0[((r >> 2) & 7)] * a1[(r & 3)];"), std::string::npos) << cu;
  // Each k tile's staging waits for the previous tile's readers (the loop's back edge, the
  // same bytes), then its own writes: two barriers per tile (passes/shared_plan.hpp).
  EXPECT_EQ(nvrtc_test::count(cu, "__syncthreads();  // earlier readers of shared memory are done"),
            1)
      << cu;
  EXPECT_EQ(nvrtc_test::count(cu, "__syncthreads()"), 2) << cu;
}

TEST(Contractions, SumsOfProductsThatAreNotOuterProductsStayReductions) {
  ts::Buffer x = ints(64, 64, ts::f32, 1), y = ints(64, 64, ts::f32, 2);
  EXPECT_TRUE(first_nest_layout(make_row_dot(), ts::Config{}, x, y).contractions.empty());
  ts::Config c = blocks(16, 16, 8, 4);
  EXPECT_TRUE(first_nest_layout(make_product_used_twice(), c, x, y).contractions.empty());
  EXPECT_TRUE(first_nest_layout(make_contracted_dim_stored(), c, x, y).contractions.empty());
  // And they compute what they did.
  std::vector<double> xv = x.to_vector(), yv = y.to_vector(),
                      got = make_row_dot()(x, y).to_vector();
  for (int64_t m = 0; m < 64; ++m) {
    double want = 0;
    for (int64_t k = 0; k < 64; ++k) want += xv[m * 64 + k] * yv[m * 64 + k];
    ASSERT_EQ(got[m], want) << m;
  }
}

TEST(Contractions, TheInterpreterComputesTheProductAtRaggedSizes) {
  const int64_t M = 37, K = 45, N = 29;
  ts::Buffer x = ints(M, K, ts::f32, 3), y = ints(K, N, ts::f32, 4);
  std::vector<double> b(static_cast<size_t>(N));
  for (int64_t n = 0; n < N; ++n) b[n] = static_cast<double>(n % 7) - 300;
  ts::Buffer bias = ts::Buffer::from_vector(b, {N}, ts::f32);
  std::vector<double> xv = x.to_vector(), yv = y.to_vector();
  std::vector<double> mm = examples::make_matmul()(x, y).to_vector();
  std::vector<double> fused = examples::make_matmul_bias_relu()(x, y, bias).to_vector();
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double want = 0;
      for (int64_t k = 0; k < K; ++k) want += xv[m * K + k] * yv[k * N + n];
      ASSERT_EQ(mm[m * N + n], want) << m << " " << n;
      ASSERT_EQ(fused[m * N + n], std::max(want + b[n], 0.0)) << m << " " << n;
    }
}

TEST(Contractions, AFactorTooLargeForRegistersIsRefusedWithTheConfig) {
  // One warp: the nest's [64, 64] is 128 registers per thread, each factor 512.
  ts::Buffer x = ints(64, 256, ts::f32, 1), y = ints(256, 64, ts::f32, 2);
  auto k = examples::make_matmul(ts::Settings{.config = blocks(64, 64, 256, 1)});
  std::string msg = user_error_test::user_error([&] { k.cuda(false, x, y); });
  EXPECT_NE(msg.find("kernel 'matmul'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("512 registers per thread"), std::string::npos) << msg;
  EXPECT_NE(msg.find("use smaller block sizes"), std::string::npos) << msg;
}

TEST(Contractions, TheStageFindsTheContractionInParsedIrText) {
  // The matmul's IR as text (ir::print), parsed back: the pass needs no tracing.
  ts::Buffer x = ints(256, 256, ts::f32, 1), y = ints(256, 256, ts::f32, 2);
  auto k = examples::make_matmul();
  std::unique_ptr<ts::ir::Graph> g =
      ts::ir::parse(ts::ir::print(ts::rt::traced_graph(k.impl(), ts::detail::call_args(x, y))));
  ts::Config cfg = ts::passes::complete_config(*g, blocks(64, 64, 32, 4), "test");
  for (const ts::ir::Node* n : g->host) {
    if (n->op != ts::ir::Op::Loop) continue;
    std::vector<ts::passes::ContractionMatch> found = ts::passes::find_contractions(n);
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(ts::ir::sym_name(found[0].k), "t2");
    EXPECT_EQ(found[0].factor[0].load()->op, ts::ir::Op::Load);
    ts::passes::Layout L = ts::passes::compute_layout(n, cfg);
    std::string d = ts::passes::describe(L, n);
    EXPECT_NE(d.find("32 registers per value; slots outer to inner: [t0: 64] [t1: 64]\n"),
              std::string::npos)
        << d;
    EXPECT_NE(d.find("contracts %16 over t2, 16640 bytes of shared memory; factors: %15 in vectors "
                     "of 4, 4 groups, [t0: 64] [t2: 32] padded; %14"),
              std::string::npos)
        << d;
  }
}

TEST(Contractions, ATransposedViewFactorLoadsInVectorsAlongItsContiguousDim) {
  // y = w.t() of a row-major w [N, K]: y's stride is 1 along dim 0 (tk), so its factor's
  // layout has tk innermost (rows along tk: padded), and both factors move 16-byte vectors.
  ts::Buffer x = ints(128, 64, ts::f32, 1);
  ts::Buffer w = ints(96, 64, ts::f32, 2);
  ts::Buffer y = w.view_as_strided({64, 96}, {1, 64}, 0);
  auto k = examples::make_matmul(ts::Settings{.config = blocks(64, 64, 32, 4)});
  const ts::ir::Graph& g = ts::rt::traced_graph(k.impl(), ts::detail::call_args(x, y));
  ts::Config cfg = ts::passes::complete_config(g, blocks(64, 64, 32, 4), "test");
  for (const ts::ir::Node* n : g.host) {
    if (n->op != ts::ir::Op::Loop) continue;
    ts::passes::Layout L = ts::passes::compute_layout(n, cfg, &g);
    ts::passes::assign_access_layouts(g, n, cfg, L);
    ASSERT_EQ(L.contractions.size(), 1u);
    const ts::passes::Contraction& c = L.contractions[0];
    const ts::passes::Layout& F = c.factor_layout[1];
    EXPECT_EQ(F.slot_of.at(c.match.k), 1);  // [tn: 64] [tk: 32]
    EXPECT_EQ(F.slot_block, (std::vector<int64_t>{64, 32}));
    EXPECT_TRUE(c.padded[1]);
  }
  std::vector<double> xv = x.to_vector(), wv = w.to_vector(), got = k(x, y).to_vector();
  for (int64_t m = 0; m < 128; ++m)
    for (int64_t n = 0; n < 96; ++n) {
      double want = 0;
      for (int64_t j = 0; j < 64; ++j) want += xv[m * 64 + j] * wv[n * 64 + j];
      ASSERT_EQ(got[m * 96 + n], want) << m << " " << n;
    }
  REQUIRE_NVRTC();
  std::string cu = nvrtc_test::compile(k, x, y);
  EXPECT_EQ(nvrtc_test::count(cu, "ts::ld_vec<float, TS_V, true, true>"), 2) << cu;
}

TEST(Contractions, TheDefaultConfigGivesTheOutputTileTheBudgetAndTheSummedDim32) {
  ts::Buffer x = ints(1024, 1024, ts::f32, 1), y = ints(1024, 1024, ts::f32, 2);
  auto k = examples::make_matmul();
  const ts::ir::Graph& g = ts::rt::traced_graph(k.impl(), ts::detail::call_args(x, y));
  ts::Config c = ts::passes::complete_config(g, ts::Config{}, "test");
  EXPECT_EQ(*c.block_sizes, (std::vector<int64_t>{64, 64, 32})) << c.to_json();
  EXPECT_EQ(c.num_warps, 8);
}

TEST(Contractions, TheGeneratedCudaDoesNotDependOnWhereSymsLiveInMemory) {
  // Fresh kernels (their Syms at other heap addresses) print the same code.
  ts::Buffer x = ints(128, 128, ts::f32, 1), y = ints(128, 128, ts::f32, 2);
  std::set<std::string> seen;
  std::vector<std::unique_ptr<char[]>> noise;
  for (int i = 0; i < 6; ++i) {
    noise.push_back(std::make_unique<char[]>(static_cast<size_t>(100 + 37 * i)));
    auto k = examples::make_matmul(ts::Settings{.config = blocks(64, 64, 32, 4)});
    seen.insert(k.cuda(false, x, y).at(0));
  }
  EXPECT_EQ(seen.size(), 1u);
}

TEST(Contractions, FactorsTooLargeForSharedMemoryAreNamedInTheError) {
  // [64, 512] and [512, 64] f32 factors need 257 KiB: the product stays, and is too large.
  ts::Buffer x = ints(256, 4096, ts::f32, 1), y = ints(4096, 256, ts::f32, 2);
  auto k = examples::make_matmul(ts::Settings{.config = blocks(64, 64, 512, 4)});
  std::string msg = user_error_test::user_error([&] { k.cuda(false, x, y); });
  EXPECT_NE(msg.find("kernel 'matmul'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("the sum of products at matmul.hpp:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("staged for the CUDA cores its factors need 257 KiB of shared memory (at "
                     "most 227 KiB), and on tensor cores two buffers of its factors' tiles need "
                     "512 KiB"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("use a smaller block size for the summed dim (the tile of the loop at "
                     "matmul.hpp:24)"),
            std::string::npos)
      << msg;
  // A bf16 ts::dot too large for both; and on a GPU without tensor cores for it.
  ts::Buffer xb = ts::Buffer::zeros({512, 512}, ts::bf16),
             yb = ts::Buffer::zeros({512, 512}, ts::bf16);
  auto dot = examples::make_dot_matmul(ts::Settings{.config = blocks(256, 256, 256, 4)});
  msg = user_error_test::user_error([&] { dot.cuda(false, xb, yb); });
  EXPECT_NE(msg.find("on tensor cores two buffers of its factors' tiles need 512 KiB"),
            std::string::npos)
      << msg;
  ::setenv("TESSEL_TARGET_ARCH", "75", 1);
  auto on_turing = examples::make_dot_matmul(ts::Settings{.config = blocks(128, 256, 64, 4)});
  msg = user_error_test::user_error([&] { on_turing.cuda(false, xb, yb); });
  ::unsetenv("TESSEL_TARGET_ARCH");
  EXPECT_NE(msg.find("(at most 64 KiB), and sm_75 has no tensor-core instruction for bf16 factors"),
            std::string::npos)
      << msg;
}
