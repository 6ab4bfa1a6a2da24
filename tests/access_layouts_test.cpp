// Loads and stores in a layout of their own (src/passes/access_layouts.hpp), converted
// through shared memory: which accesses get one, the CUDA they make (16-byte vectors on
// both sides of a transpose), and NVRTC compiling it. Values: the interpreter here, the
// GPU in tests/gpu/access_layouts_gpu_test.cpp.
#include "passes/access_layouts.hpp"

#include <gtest/gtest.h>

#include <tessel/tessel.hpp>

#include "examples/kernels/basic.hpp"
#include "ir/parser.hpp"
#include "nvrtc_test_util.hpp"
#include "passes/default_config.hpp"
#include "passes/layout.hpp"
#include "runtime/kernel_tuning.hpp"
#include "user_error_util.hpp"

namespace ts = tessel;

namespace {

// The accesses with a layout of their own, printed as "load" / "store" in program order,
// of kernel k's first loop nest under its default config for `args`.
template <class K, class... A>
std::vector<std::string> own_layout_accesses(const K& k, const ts::Config& c, const A&... args) {
  const ts::ir::Graph& g = ts::rt::traced_graph(k.impl(), ts::detail::call_args(args...));
  ts::Config cfg = ts::passes::complete_config(g, c, "test");
  std::vector<std::string> out;
  for (const ts::ir::Node* n : g.host) {
    if (n->op != ts::ir::Op::Loop) continue;
    ts::passes::Layout L = ts::passes::compute_layout(n, cfg, &g);
    ts::passes::assign_access_layouts(g, n, cfg, L);
    ts::ir::walk(n->body, [&](const ts::ir::Node* m) {
      if (L.own_order.count(m)) out.push_back(m->op == ts::ir::Op::Load ? "load" : "store");
    });
  }
  return out;
}

ts::Buffer iota(int64_t m, int64_t n, ts::DType t) {
  return ts::Buffer::arange(m * n, t).view_as_strided({m, n}, {n, 1}, 0);
}

const ts::Config kBlocks32{.block_sizes = std::vector<int64_t>{32, 32}};

}  // namespace

TEST(AccessLayouts, ATransposeConvertsOneSideAndBothMoveVectors) {
  auto k = examples::make_transpose(ts::Settings{.config = kBlocks32});
  ts::Buffer x = iota(64, 96, ts::f32);
  EXPECT_EQ(own_layout_accesses(k, kBlocks32, x).size(), 1u);
  ts::Buffer out = k(x);
  ASSERT_EQ(out.shape(), (std::vector<int64_t>{96, 64}));
  std::vector<double> xv = x.to_vector(), ov = out.to_vector();
  for (int64_t i = 0; i < 64; ++i)
    for (int64_t j = 0; j < 96; ++j) ASSERT_EQ(ov[j * 64 + i], xv[i * 96 + j]) << i << "," << j;
  REQUIRE_NVRTC();
  std::string cuda = nvrtc_test::compile(k, x);
  EXPECT_EQ(nvrtc_test::count(cuda, "layout conversion"), 1) << cuda;
  EXPECT_EQ(nvrtc_test::count(cuda, "ts::ld_vec<"), 1) << cuda;
  EXPECT_EQ(nvrtc_test::count(cuda, "ts::st_vec<"), 1) << cuda;
  // One barrier, between the conversion's writes and reads: a program converts one tile,
  // and nothing read shared memory before (passes/shared_plan.hpp).
  EXPECT_EQ(nvrtc_test::count(cuda, "__syncthreads()"), 1) << cuda;
}

// A persistent program converts one tile after another: each conversion follows the
// previous tile's (the program loop's back edge) on the same bytes, so it starts with a
// barrier (passes/shared_plan.hpp).
TEST(AccessLayouts, APersistentTransposeWaitsForThePreviousTilesConversion) {
  REQUIRE_NVRTC();
  ts::Config c = kBlocks32;
  c.pid_type = ts::PidType::persistent_interleaved;
  auto k = examples::make_transpose(ts::Settings{.config = c});
  std::string cuda = nvrtc_test::compile(k, iota(64, 96, ts::f32));
  EXPECT_EQ(nvrtc_test::count(cuda, "layout conversion"), 1) << cuda;
  EXPECT_EQ(
      nvrtc_test::count(cuda, "__syncthreads();  // earlier readers of shared memory are done"), 1)
      << cuda;
  EXPECT_EQ(nvrtc_test::count(cuda, "__syncthreads()"), 2) << cuda;
}

TEST(AccessLayouts, ALoadContiguousAlongTheOtherDimConvertsIntoTheNest) {
  auto k = examples::make_add_transposed(ts::Settings{.config = kBlocks32});
  ts::Buffer x = iota(40, 72, ts::f32), y = iota(72, 40, ts::f32);
  EXPECT_EQ(own_layout_accesses(k, kBlocks32, x, y), (std::vector<std::string>{"load"}));
  std::vector<double> xv = x.to_vector(), yv = y.to_vector(), ov = k(x, y).to_vector();
  for (int64_t i = 0; i < 40; ++i)
    for (int64_t j = 0; j < 72; ++j) ASSERT_EQ(ov[i * 72 + j], xv[i * 72 + j] + yv[j * 40 + i]);
  REQUIRE_NVRTC();
  std::string cuda = nvrtc_test::compile(k, x, y);
  EXPECT_EQ(nvrtc_test::count(cuda, "ts::ld_vec<"), 2) << cuda;
  EXPECT_EQ(nvrtc_test::count(cuda, "ts::st_vec<"), 1) << cuda;
}

TEST(AccessLayouts, AccessesAlongTheNestsInnermostDimKeepItsLayout) {
  ts::Buffer x = iota(64, 96, ts::f32), y = iota(64, 96, ts::f32);
  EXPECT_TRUE(own_layout_accesses(examples::make_add_2d(), kBlocks32, x, y).empty());
  // A row value stored along tm covers no element of the inner dim: no conversion.
  auto row_sums = ts::kernel("row_sums", [](ts::Tensor x) {
    ts::Tensor out = x.new_empty({x.size(0)});
    for (auto tm : ts::tile(x.size(0))) out(tm) = ts::sum(x(tm, ts::all), 1);
    return out;
  });
  EXPECT_TRUE(own_layout_accesses(row_sums, ts::Config{}, x).empty());
}

TEST(AccessLayouts, TransposingATransposedViewIsACopyWithoutConversions) {
  // x.t() of a contiguous [96, 64] has stride 1 along dim 0 (tm), and so has the
  // transpose's row-major out[tn, tm]: the nest's innermost slot is tm, and both sides
  // move 16-byte vectors with no conversion.
  ts::Buffer base = iota(96, 64, ts::f32);
  ts::Buffer xt = base.view_as_strided({64, 96}, {1, 64}, 0);
  auto k = examples::make_transpose(ts::Settings{.config = kBlocks32});
  EXPECT_TRUE(own_layout_accesses(k, kBlocks32, xt).empty());
  EXPECT_EQ(k(xt).to_vector(), base.to_vector());
  REQUIRE_NVRTC();
  std::string cu = nvrtc_test::compile(k, xt);
  EXPECT_EQ(nvrtc_test::count(cu, "ts::ld_vec<float, TS_V, true, true>"), 1) << cu;
  EXPECT_EQ(nvrtc_test::count(cu, "ts::st_vec<float, TS_V, true, true>"), 1) << cu;
  EXPECT_EQ(nvrtc_test::count(cu, "layout conversion"), 0) << cu;
}

TEST(AccessLayouts, ATransposedViewArgumentLoadsInVectorsAlongItsDimZero) {
  // A copy of x.t(): the nest's innermost slot is tn (the store's), the load is
  // contiguous along tm (ArgFacts::unit_stride_dim 0): it runs in a layout of its own
  // with 16-byte vectors along tm and converts into the nest's.
  ts::Buffer base = iota(96, 64, ts::f32);
  ts::Buffer xt = base.view_as_strided({64, 96}, {1, 64}, 0);
  auto k = ts::kernel(
      "copy_2d",
      [](ts::Tensor x) {
        ts::Tensor out = x.new_empty({x.size(0), x.size(1)});
        for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) out(tm, tn) = x(tm, tn);
        return out;
      },
      ts::Settings{.config = kBlocks32});
  EXPECT_EQ(own_layout_accesses(k, kBlocks32, xt), std::vector<std::string>{"load"});
  const ts::ir::Graph& g = ts::rt::traced_graph(k.impl(), ts::detail::call_args(xt));
  ASSERT_EQ(g.arg_facts.size(), 1u);
  EXPECT_EQ(g.arg_facts[0].unit_stride_dim, 0);
  EXPECT_NE(ts::ir::print(g).find("arg_facts 0 unit_stride_dim 0 "), std::string::npos)
      << ts::ir::print(g);
  EXPECT_EQ(ts::ir::print(*ts::ir::parse(ts::ir::print(g))), ts::ir::print(g));
  EXPECT_EQ(k(xt).to_vector(), xt.contiguous().to_vector());
  REQUIRE_NVRTC();
  std::string cu = nvrtc_test::compile(k, xt);
  EXPECT_EQ(nvrtc_test::count(cu, "ts::ld_vec<float, TS_V, true, true>"), 1) << cu;
  EXPECT_EQ(nvrtc_test::count(cu, "layout conversion: the access's layout"), 1) << cu;
  EXPECT_EQ(cu.find("stride0,"), std::string::npos) << cu;  // dim 0's stride is 1
}

TEST(AccessLayouts, PermuteReordersDimsOnTheInterpreter) {
  // out[k, m, n] = x[m, n, k]: a 3-D permute stored along its own contiguous dim.
  auto k = ts::kernel("permute_3d", [](ts::Tensor x) {
    ts::Tensor out = x.new_empty({x.size(2), x.size(0), x.size(1)});
    for (auto [tm, tn, tk] : ts::tile(x.size(0), x.size(1), x.size(2)))
      out(tk, tm, tn) = x(tm, tn, tk).permute({2, 0, 1});
    return out;
  });
  const int64_t M = 5, N = 6, K = 7;
  ts::Buffer x =
      ts::Buffer::arange(M * N * K, ts::f32).view_as_strided({M, N, K}, {N * K, K, 1}, 0);
  std::vector<double> xv = x.to_vector(), ov = k(x).to_vector();
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < K; ++c)
        ASSERT_EQ(ov[(c * M + m) * N + n], xv[(m * N + n) * K + c]) << m << n << c;
  REQUIRE_NVRTC();
  nvrtc_test::compile(k, x);
}

TEST(AccessLayouts, PermuteOfNotAPermutationIsAnErrorAtItsLine) {
  ts::Buffer x = iota(4, 4, ts::f32);
  int line = 0;
  auto twice = ts::kernel("twice", [&](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) {
      line = __LINE__ + 1;
      out(tm, tn) = x(tm, tn).permute({0, 0});
    }
    return out;
  });
  std::string msg = user_error_test::user_error([&] { twice(x); });  // traces: sets line
  user_error_test::expect_message(msg, "twice", "access_layouts_test.cpp", line,
                                  "permute(0, 0) of a value of 2 dimensions",
                                  "give each dim 0..rank-1 once");
  auto t_of_3d = ts::kernel("t_of_3d", [&](ts::Tensor x) {
    ts::Tensor out = x.new_empty({x.size(0), x.size(1), 1});
    for (auto tm : ts::tile(x.size(0))) {
      line = __LINE__ + 1;
      out(tm, ts::all, ts::all) = x(tm, ts::all)(ts::all, ts::all, ts::newaxis).t();
    }
    return out;
  });
  msg = user_error_test::user_error([&] { t_of_3d(x); });
  user_error_test::expect_message(msg, "t_of_3d", "access_layouts_test.cpp", line,
                                  "t() of a value of 3 dimensions", "use permute(dims)");
  // 0-D and 1-D values are their own transpose, as in PyTorch.
  auto t_of_1d = ts::kernel("t_of_1d", [](ts::Tensor x) {
    ts::Tensor out = x.new_empty({x.size(0)});
    for (auto tm : ts::tile(x.size(0))) out(tm) = x(tm, 0).t() + x(tm, 1).t().t();
    return out;
  });
  std::vector<double> xv = x.to_vector(), ov = t_of_1d(x).to_vector();
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(ov[i], xv[i * 4] + xv[i * 4 + 1]);
}

TEST(AccessLayouts, AKernelNameWithANewlineStaysInItsCommentLine) {
  auto k = ts::kernel("two\nlines \"q\"", [](ts::Tensor x) {
    ts::Tensor out = x.new_empty({x.size(1), x.size(0)});
    for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) out(tn, tm) = x(tm, tn).t();
    return out;
  });
  ts::Buffer x = iota(8, 16, ts::f32);
  REQUIRE_NVRTC();
  std::string cuda = nvrtc_test::compile(k, x);
  EXPECT_NE(cuda.find("// Generated by tessel for kernel 'two lines \"q\"'"), std::string::npos)
      << cuda;
}

TEST(AccessLayouts, AnInPlaceTransposeIsARaceRefusedAtTheStore) {
  int line = 0;
  auto in_place = ts::kernel("in_place_t", [&](ts::Tensor x) {
    for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) {
      line = __LINE__ + 1;
      x(tn, tm) = x(tm, tn).t();
    }
  });
  ts::Buffer x = iota(64, 64, ts::f32);
  std::string msg = user_error_test::user_error([&] { in_place(x); });
  user_error_test::expect_message(msg, "in_place_t", "access_layouts_test.cpp", line,
                                  "programs of the launch read elements of tensor argument 0 "
                                  "that other programs write",
                                  "write the result into another tensor");
  // The same tiles in the load and the store: each program updates its own elements.
  auto scale = ts::kernel("in_place_scale", [](ts::Tensor x) {
    for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) x(tm, tn) = x(tm, tn) * 2;
  });
  scale(x);
  EXPECT_EQ(x.to_vector()[5], 10.0);
}

TEST(AccessLayouts, ATransposedViewsLastStrideAlignmentIsPartOfTheKey) {
  // y = a.t() of a row-major a [48, M]: vectors run along dim 0, so whether y's last
  // stride (M elements) is a multiple of 16 bytes decides the vectors' alignment. M = 20
  // (80 bytes) and M = 18 (72 bytes) are two specializations.
  auto k = ts::kernel(
      "add_views", {"x", "y"},
      [](ts::Tensor x, ts::Tensor y) {
        ts::Tensor out = ts::empty_like(x);
        for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) out(tm, tn) = x(tm, tn) + y(tm, tn);
        return out;
      },
      ts::Settings{.config = kBlocks32});
  auto y_of = [](int64_t m) { return iota(48, m, ts::f32).view_as_strided({m, 48}, {1, m}, 0); };
  std::string aligned = k.cuda(false, iota(20, 48, ts::f32), y_of(20)).at(0);
  std::string unaligned = k.cuda(false, iota(18, 48, ts::f32), y_of(18)).at(0);
  EXPECT_NE(aligned.find("ts::ld_vec<float, TS_V, false, true>(y +"), std::string::npos) << aligned;
  EXPECT_NE(unaligned.find("ts::ld_vec<float, TS_V, false, false>(y +"), std::string::npos)
      << unaligned;
  EXPECT_EQ(k(iota(18, 48, ts::f32), y_of(18)).to_vector(),
            k(iota(18, 48, ts::f32), y_of(18).contiguous()).to_vector());
}
