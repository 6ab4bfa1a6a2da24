// ts::dot (src/frontend/dot.cpp): its values on the interpreter against a plain reference
// (f16, bf16, f32 under each Settings::dot_precision, batched, acc and out_dtype, whole K
// dims), its errors, TF32 rounding, and the contractions it makes on tensor cores
// (src/passes/tensor_cores.hpp): which qualify, their layouts and shared memory, the CUDA
// (ldmatrix, mma.sync) NVRTC compiles for sm_90, and the layout stage's text read back.
// GPU values: tests/gpu/dot_gpu_test.cpp.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <tessel/tessel.hpp>

#include "autotune/config_space.hpp"
#include "common/element.hpp"
#include "examples/kernels/matmul.hpp"
#include "examples/kernels/moe.hpp"
#include "layout/mma_layouts.hpp"
#include "nvrtc_test_util.hpp"
#include "passes/layout.hpp"
#include "passes/layout_text.hpp"
#include "stage_test_util.hpp"
#include "tests/dot_test_util.hpp"
#include "tests/moe_dot_test_util.hpp"
#include "user_error_util.hpp"

namespace ts = tessel;
namespace passes = tessel::passes;

namespace {

using dot_test::blocks;
using dot_test::make_dot;
using dot_test::reference;

int g_line = 0;

// The layout of the first loop nest of kernel k on `args` under config c, after the layout
// stage (tensor cores planned).
template <class K, class... A>
passes::Layout nest_layout(const K& k, const ts::Config& c, const A&... args) {
  stage_test::Staged s = stage_test::staged("layout", false, k, c, args...);
  return s.stages.loops.at(0).layout;
}

const passes::Contraction& only_contraction(const passes::Layout& L) {
  EXPECT_EQ(L.contractions.size(), 1u);
  return L.contractions.at(0);
}

}  // namespace

TEST(Dot, SixteenBitOperandsAreMultipliedAndSummedInF32) {
  for (ts::DType t : {ts::bf16, ts::f16}) {
    ts::Buffer x = ts::Buffer::randn({100, 50}, t, ts::cpu(), 1);
    ts::Buffer y = ts::Buffer::randn({50, 72}, t, ts::cpu(), 2);
    auto k = make_dot(ts::Settings{.config = blocks(64, 64, 32, 4)});
    ts::Buffer got = k(x, y);
    ASSERT_EQ(got.dtype(), ts::f32);
    std::vector<double> want = reference(x, y), have = got.to_vector();
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(have[i], want[i], 1e-5 * (1 + std::abs(want[i]))) << i;
  }
}

TEST(Dot, TruncateTf32ClearsThe13LowMantissaBits) {
  auto bits = [](float f) { return std::bit_cast<uint32_t>(ts::truncate_tf32(f)); };
  auto f = [](uint32_t u) { return std::bit_cast<float>(u); };
  EXPECT_EQ(bits(f(0x3f800fffu)), 0x3f800000u);
  EXPECT_EQ(bits(f(0x3f801fffu)), 0x3f800000u);  // toward zero, past half of the 13 bits
  EXPECT_EQ(bits(f(0xbf801fffu)), 0xbf800000u);  // also for negatives
  EXPECT_EQ(bits(f(0x3f803000u)), 0x3f802000u);
  EXPECT_EQ(bits(f(0x7f7fffffu)), 0x7f7fe000u);  // the largest f32: the largest TF32
  EXPECT_EQ(bits(std::numeric_limits<float>::infinity()), 0x7f800000u);
  EXPECT_TRUE(std::isnan(ts::truncate_tf32(f(0x7f800001u))));  // a NaN stays a NaN
}

// 1 + 2^-12 needs 12 mantissa bits: TF32 keeps 10, so each product is 1 under tf32 and
// 1 + 2^-12 under ieee (and tf32x3, computed as ieee).
TEST(Dot, F32OperandsAreRoundedAsDotPrecisionSays) {
  const double v = 1 + std::ldexp(1.0, -12);
  ts::Buffer x = ts::Buffer::full({8, 64}, v, ts::f32), y = ts::Buffer::ones({64, 8}, ts::f32);
  for (auto [p, each] : {std::pair{ts::DotPrecision::tf32, 1.0},
                         {ts::DotPrecision::ieee, v},
                         {ts::DotPrecision::tf32x3, v}}) {
    auto k = make_dot(ts::Settings{.config = blocks(16, 16, 16, 4), .dot_precision = p});
    for (double got : k(x, y).to_vector()) EXPECT_EQ(got, static_cast<float>(64 * each));
  }
  auto dflt = make_dot(ts::Settings{.config = blocks(16, 16, 16, 4)});  // unset: tf32
  for (double got : dflt(x, y).to_vector()) EXPECT_EQ(got, 64.0);
  // The rounding is in the traced IR, ahead of the products.
  std::string ir = dflt.ir(x, y);
  EXPECT_NE(ir.find("unary tf32"), std::string::npos) << ir;
}

TEST(Dot, AnAccumulatorIsAddedInItsDtypeAndOutDtypeRoundsTheProduct) {
  ts::Buffer x = ts::Buffer::randn({40, 48}, ts::bf16, ts::cpu(), 3);
  ts::Buffer y = ts::Buffer::randn({48, 24}, ts::bf16, ts::cpu(), 4);
  auto k = ts::kernel(
      "dot_out_dtype",
      [](ts::Tensor x, ts::Tensor y) {
        ts::Tensor out = ts::empty({x.size(0), y.size(1)}, ts::f32);
        ts::Tensor rounded = ts::empty({x.size(0), y.size(1)}, ts::f32);
        for (auto [tm, tn] : ts::tile(x.size(0), y.size(1))) {
          ts::Value acc = ts::full({tm, tn}, 0.5);
          for (auto tk : ts::tile(x.size(1))) acc = ts::dot(x(tm, tk), y(tk, tn), acc);
          out(tm, tn) = acc;
          rounded(tm, tn) = ts::dot(x(tm, ts::all), y(ts::all, tn), ts::bf16).to(ts::f32);
        }
        return std::make_tuple(out, rounded);
      },
      ts::Settings{.config = blocks(16, 8, 16, 4)});
  auto [out, rounded] = k(x, y);
  std::vector<double> want = reference(x, y), acc = out.to_vector(), r = rounded.to_vector();
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(acc[i], want[i] + 0.5, 1e-5 * (1 + std::abs(want[i])));
    EXPECT_EQ(r[i], ts::bf16_bits_to_float(ts::float_to_bf16_bits(static_cast<float>(want[i]))))
        << i;
  }
}

TEST(Dot, BatchedOperandsMultiplyPerBatch) {
  auto k = dot_test::make_tiled_batched_dot(
      ts::Settings{.config = ts::Config{.block_sizes = std::vector<int64_t>{2, 16, 16, 16}}});
  ts::Buffer x = ts::Buffer::randn({3, 20, 30}, ts::f16, ts::cpu(), 5);
  ts::Buffer y = ts::Buffer::randn({3, 30, 10}, ts::f16, ts::cpu(), 6);
  std::vector<double> got = k(x, y).to_vector(), xv = x.to_vector(), yv = y.to_vector();
  for (int b = 0; b < 3; ++b)
    for (int m = 0; m < 20; ++m)
      for (int n = 0; n < 10; ++n) {
        double s = 0;
        for (int q = 0; q < 30; ++q) s += xv[(b * 20 + m) * 30 + q] * yv[(b * 30 + q) * 10 + n];
        EXPECT_NEAR(got[(b * 20 + m) * 10 + n], s, 1e-4) << b << " " << m << " " << n;
      }
  REQUIRE_NVRTC();
  std::string cu = nvrtc_test::compile(k, x, y);  // on the CUDA cores: not a 2-D product
  EXPECT_EQ(cu.find("mma_16816"), std::string::npos);
  EXPECT_NE(cu.find("of products, factors in shared memory"), std::string::npos) << cu;
}

// ts::zeros({tm, y.size(1)}) and y(tk, ts::all) have one shape whatever y's size, 1 included
// (a size the key fixes is a constant: it was a size-1 dim in one and an extent in the other).
TEST(Dot, AZerosOfATensorsSizeOfOneMatchesItsWholeDim) {
  auto k = ts::kernel("dot_whole_n", [](ts::Tensor x, ts::Tensor y) {
    ts::Tensor out = ts::empty({x.size(0), y.size(1)}, ts::f32);
    for (auto tm : ts::tile(x.size(0))) {
      ts::Value acc = ts::zeros({tm, y.size(1)});
      for (auto tk : ts::tile(x.size(1))) acc = ts::dot(x(tm, tk), y(tk, ts::all), acc);
      out(tm, ts::all) = acc;
    }
    return out;
  });
  for (int64_t n : {3, 1}) {
    ts::Buffer x = ts::Buffer::randn({20, 40}, ts::bf16, ts::cpu(), 8);
    ts::Buffer y = ts::Buffer::randn({40, n}, ts::bf16, ts::cpu(), 9);
    std::vector<double> want = reference(x, y), got = k(x, y).to_vector();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_NEAR(got[i], want[i], 1e-4 * (1 + std::abs(want[i]))) << n << " " << i;
  }
}

TEST(Dot, WholeKDimsOfEqualSizeMultiply) {
  auto k = ts::kernel(
      "dot_all",
      [](ts::Tensor x, ts::Tensor y) {
        ts::Tensor out = ts::empty({x.size(0), y.size(1)}, ts::f32);
        for (auto [tm, tn] : ts::tile(x.size(0), y.size(1)))
          out(tm, tn) = ts::dot(x(tm, ts::all), y(ts::all, tn));
        return out;
      },
      ts::Settings{.config = ts::Config{.block_sizes = std::vector<int64_t>{16, 16}}});
  ts::Buffer x = ts::Buffer::randn({33, 40}, ts::bf16, ts::cpu(), 7);
  ts::Buffer y = ts::Buffer::randn({40, 17}, ts::bf16, ts::cpu(), 8);
  std::vector<double> want = reference(x, y), got = k(x, y).to_vector();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4) << i;
  ts::Buffer short_k = ts::Buffer::randn({39, 17}, ts::bf16, ts::cpu(), 9);
  std::string msg = user_error_test::user_error([&] { k(x, short_k); });
  EXPECT_NE(msg.find("40 vs 39"), std::string::npos) << msg;
}

// Each error names the kernel and the ts::dot line.
TEST(Dot, OperandsItCannotMultiplyAreUserErrors) {
  struct Case {
    std::function<ts::Value(ts::Tensor&, ts::Tensor&, ts::Tile&, ts::Tile&, ts::Tile&)> body;
    std::string what, hint;
  };
  const std::vector<Case> cases{
      {[](ts::Tensor& x, ts::Tensor& y, ts::Tile& tm, ts::Tile& tn, ts::Tile& tk) {
         g_line = __LINE__ + 1;
         return ts::dot(x(tm, tk), y(tk, 0));
       },
       "ts::dot of values of shapes", "index the operands to 2-D tiles"},
      {[](ts::Tensor& x, ts::Tensor& y, ts::Tile& tm, ts::Tile& tn, ts::Tile& tk) {
         g_line = __LINE__ + 1;
         return ts::dot(x(tm, tk), y(tk, tn).to(ts::f16));
       },
       "ts::dot of a bf16 and an f16 value", "cast one of them, e.g. .to(ts::bf16)"},
      {[](ts::Tensor& x, ts::Tensor& y, ts::Tile& tm, ts::Tile& tn, ts::Tile& tk) {
         g_line = __LINE__ + 1;
         return ts::dot(x(tm, tk).to(ts::i32), y(tk, tn).to(ts::i32));
       },
       "ts::dot of an i32 value", "cast the operand: .to(ts::i8)"},
      {[](ts::Tensor& x, ts::Tensor& y, ts::Tile& tm, ts::Tile& tn, ts::Tile& tk) {
         g_line = __LINE__ + 1;
         return ts::dot(x(tm, tk), y(tm, tn));
       },
       "ts::dot's operands differ in K", "with the same tile"},
      {[](ts::Tensor& x, ts::Tensor& y, ts::Tile& tm, ts::Tile& tn, ts::Tile& tk) {
         g_line = __LINE__ + 1;
         return ts::dot(x(tm, tk), y(tk, tn), ts::i32);
       },
       "ts::dot's out_dtype is i32", "use ts::f32"},
      {[](ts::Tensor& x, ts::Tensor& y, ts::Tile& tm, ts::Tile& tn, ts::Tile& tk) {
         ts::Value acc = ts::zeros({tn, tm});
         g_line = __LINE__ + 1;
         return ts::dot(x(tm, tk), y(tk, tn), acc);
       },
       "ts::dot's accumulator has shape", "the product's shape"},
  };
  ts::Buffer x = ts::Buffer::zeros({32, 32}, ts::bf16), y = ts::Buffer::zeros({32, 32}, ts::bf16);
  for (const Case& c : cases) {
    auto k = ts::kernel("bad_dot", [&c](ts::Tensor x, ts::Tensor y) {
      ts::Tensor out = ts::empty({x.size(0), y.size(1)}, ts::f32);
      for (auto [tm, tn] : ts::tile(x.size(0), y.size(1)))
        for (auto tk : ts::tile(x.size(1))) out(tm, tn) = c.body(x, y, tm, tn, tk);
      return out;
    });
    std::string msg = user_error_test::user_error([&] { k(x, y); });
    user_error_test::expect_message(msg, "bad_dot", g_line, c.what, c.hint);
  }
}

TEST(TensorCores, ASixteenBitDotRunsOnTensorCoresInTheAccumulatorsLayout) {
  ts::Buffer x = ts::Buffer::zeros({256, 256}, ts::bf16),
             y = ts::Buffer::zeros({256, 256}, ts::bf16);
  auto k = make_dot();
  struct Case {
    int64_t m, n, k;
    int warps, wm, wn;
  };
  // (A K of 64 here would put the dot on wgmma: TensorCores.WgmmaTakesTilesOf64RowsPerWarpgroup.)
  for (Case c : {Case{64, 64, 32, 4, 2, 2}, Case{128, 128, 32, 8, 2, 4}, Case{128, 64, 32, 4, 2, 2},
                 Case{16, 32, 16, 4, 1, 4}, Case{64, 16, 16, 2, 2, 1}}) {
    passes::Layout L = nest_layout(k, blocks(c.m, c.n, c.k, c.warps), x, y);
    const passes::Contraction& con = only_contraction(L);
    ASSERT_TRUE(con.mma) << c.m << "x" << c.n;
    EXPECT_EQ(con.mma->operand, ts::bf16);
    EXPECT_EQ(con.mma->warps_m, c.wm);
    EXPECT_EQ(con.mma->warps_n, c.wn);
    EXPECT_TRUE(con.mma->k_inner[con.mma->a]);       // x's rows run along K
    EXPECT_FALSE(con.mma->k_inner[1 - con.mma->a]);  // y's along N
    // 16-bit elements in rows padded by 8.
    EXPECT_EQ(con.shared_bytes, c.m * (c.k + 8) * 2 + c.k * (c.n + 8) * 2);
    const ts::layout::LinearLayout mma = ts::layout::mma_sync_accumulator(
        {static_cast<int32_t>(c.m), static_cast<int32_t>(c.n)}, {c.wm, c.wn});
    EXPECT_EQ(passes::with_placement(L, mma).slot_bits, L.slot_bits);
  }
}

TEST(TensorCores, ContractionsThatDoNotFitStayOnTheCudaCores) {
  ts::Buffer xb = ts::Buffer::zeros({64, 64}, ts::bf16), yb = ts::Buffer::zeros({64, 64}, ts::bf16);
  ts::Buffer xf = ts::Buffer::zeros({64, 64}, ts::f32), yf = ts::Buffer::zeros({64, 64}, ts::f32);
  auto k = make_dot();
  EXPECT_FALSE(only_contraction(nest_layout(k, blocks(64, 64, 8, 4), xb, yb)).mma);  // K < 16
  EXPECT_FALSE(
      only_contraction(nest_layout(k, blocks(16, 8, 16, 4), xb, yb)).mma);  // 4 warps, 16 x 8
  auto ieee = make_dot(ts::Settings{.dot_precision = ts::DotPrecision::ieee});
  EXPECT_FALSE(only_contraction(nest_layout(ieee, blocks(64, 64, 32, 4), xf, yf)).mma);  // f32
}

// Where a dot stays on the CUDA cores, the layout stage says why: K's block and the warps'
// split.
TEST(TensorCores, TheLayoutStageSaysWhyADotIsNotOnTensorCores) {
  ts::Buffer x = ts::Buffer::zeros({64, 64}, ts::bf16), y = ts::Buffer::zeros({64, 64}, ts::bf16);
  auto k = make_dot();
  auto why = [&](const ts::Config& c) {
    stage_test::Staged s = stage_test::staged("layout", false, k, c, x, y);
    EXPECT_FALSE(s.stages.loops.at(0).layout.contractions.at(0).mma) << s.text;
    return s.text;
  };
  EXPECT_NE(why(blocks(64, 64, 8, 4))
                .find("not on tensor cores: K's block 8 is not a multiple "
                      "of 16"),
            std::string::npos);
  EXPECT_NE(why(blocks(16, 8, 16, 4)).find("not on tensor cores: no split of 4 warps"),
            std::string::npos);
}

// A result stored transposed (out(tn, tm) = acc.t()): the loop's layout holds the
// accumulator [M, N] (on tensor cores, mma.sync and wgmma) and the store converts to a
// layout of its own whose vectors run along M, out's contiguous dim; values as the
// reference's. GPU values: DotGpu.AResultStoredTransposedMatchesTheInterpreter.
TEST(TensorCores, AResultStoredTransposedStaysOnTensorCores) {
  auto transposed = dot_test::make_dot_stored_transposed();
  ts::Buffer x = ts::Buffer::zeros({256, 256}, ts::bf16),
             y = ts::Buffer::zeros({256, 256}, ts::bf16);
  ts::Config wgmma = blocks(128, 128, 64, 4);
  wgmma.num_stages = 3;
  for (const ts::Config& c : {blocks(64, 64, 32, 4), wgmma}) {
    stage_test::Staged s = stage_test::staged("layout", false, transposed, c, x, y);
    const passes::Layout& L = s.stages.loops.at(0).layout;
    ASSERT_TRUE(L.contractions.at(0).mma) << s.text;
    EXPECT_EQ(L.contractions.at(0).mma->wgmma, c.num_stages > 1) << s.text;
    EXPECT_EQ(L.own_order.size(), 1u) << s.text;  // the store
  }
  ts::Buffer xr = ts::Buffer::randn({40, 24}, ts::bf16, ts::cpu(), 3),
             yr = ts::Buffer::randn({24, 56}, ts::bf16, ts::cpu(), 4);
  const std::vector<double> want = reference(xr, yr), got = transposed(xr, yr).to_vector();
  for (int64_t i = 0; i < 40; ++i)
    for (int64_t j = 0; j < 56; ++j)
      ASSERT_NEAR(got[static_cast<size_t>(j * 40 + i)], want[static_cast<size_t>(i * 56 + j)],
                  1e-4 * (1 + std::abs(want[static_cast<size_t>(i * 56 + j)])));
  REQUIRE_NVRTC();
  ts::Config wide = blocks(128, 128, 64, 8);  // two warpgroups
  wide.num_stages = 3;
  // 144 KiB of ring and a 64 KiB conversion: the conversion reuses the ring's bytes.
  ts::Config big = blocks(128, 256, 64, 8);
  big.num_stages = 3;
  for (const ts::Config& c : {blocks(64, 64, 32, 4), wgmma, wide, big}) {
    auto k = dot_test::make_dot_stored_transposed(ts::Settings{.config = c});
    const std::string cu = nvrtc_test::compile(k, x, y);
    EXPECT_NE(cu.find(c.num_stages > 1 ? "wgmma.mma_async" : "ts::mma_16816_bf16("),
              std::string::npos)
        << cu;
  }
}

TEST(TensorCores, TheCudaLoadsFragmentsWithLdmatrixAndCompiles) {
  REQUIRE_NVRTC();
  auto k = make_dot();
  for (ts::DType t : {ts::bf16, ts::f16}) {
    ts::Buffer x = ts::Buffer::zeros({200, 96}, t), y = ts::Buffer::zeros({96, 136}, t);
    std::string cu = nvrtc_test::compile(k, x, y);  // the default config
    EXPECT_NE(cu.find("#include \"tessel/mma.cuh\""), std::string::npos) << cu;
    EXPECT_NE(cu.find("ts::mma_16816_" + ts::dtype_name(t)), std::string::npos) << cu;
    EXPECT_NE(cu.find("ts::ldmatrix_x4<false>(a[i]"), std::string::npos) << cu;  // K-major A
    EXPECT_NE(cu.find("ts::ldmatrix_x4<true>(q"), std::string::npos) << cu;      // N-major B
  }
  // Transposed views: A is M-major (.trans), B K-major (no .trans); 8 columns: ldmatrix .x2.
  ts::Buffer xt = ts::Buffer::zeros({96, 200}, ts::bf16), yt = ts::Buffer::zeros({8, 96}, ts::bf16);
  auto kt = make_dot(ts::Settings{.config = blocks(64, 8, 32, 4)});
  std::string cu = nvrtc_test::compile(kt, xt.transpose(0, 1), yt.transpose(0, 1));
  EXPECT_NE(cu.find("ts::ldmatrix_x4<true>(a[i]"), std::string::npos) << cu;
  EXPECT_NE(cu.find("ts::ldmatrix_x2<false>(b[0]"), std::string::npos) << cu;
}

TEST(TensorCores, TheLayoutStagesTextReadsBackAndKeepsTheAccumulatorsPlacement) {
  ts::Buffer x = ts::Buffer::zeros({128, 128}, ts::bf16),
             y = ts::Buffer::zeros({128, 128}, ts::bf16);
  auto k = make_dot();
  stage_test::Staged s = stage_test::staged("layout", false, k, blocks(64, 64, 32, 4), x, y);
  EXPECT_NE(
      s.text.find(
          "on tensor cores (mma.sync m16n8k16 bf16, warps 2 x 2; not wgmma: factor %18 (a tile of "
          "tensor argument 0 ('x')) has rows of 64 bytes along its contiguous dim"),
      std::string::npos)
      << s.text;
  const ts::codegen::LoopStages& l = s.stages.loops.at(0);
  passes::Layout parsed =
      passes::parse_layouts(s.text, s.stages.program(), s.stages.config).at(l.loop);
  EXPECT_EQ(passes::describe(parsed, l.loop), passes::describe(l.layout, l.loop));
  EXPECT_EQ(parsed.slot_bits, l.layout.slot_bits);
  // Another placement is refused: the fragments' order is the accumulator's.
  std::string text = s.text;
  const std::string mma = passes::linear_layout(l.layout).to_string();
  std::string line = mma, other = ts::layout::mma_sync_accumulator({64, 64}, {1, 4}).to_string();
  for (std::string* t : {&line, &other})
    for (size_t p = t->find('\n'); p != std::string::npos; p = t->find('\n', p))
      t->replace(p, 1, "; ");
  ASSERT_NE(text.find(line), std::string::npos) << text;
  text.replace(text.find(line), line.size(), other);
  try {
    passes::parse_layouts(text, s.stages.program(), s.stages.config);
    ADD_FAILURE() << "no ParseError";
  } catch (const ts::ir::ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("keeps the mma.sync accumulator's placement"),
              std::string::npos)
        << e.what();
  }
}

// examples::make_bmm: a 3-D dot whose batch tile has one element, 2-D products per program on
// tensor cores (passes/unit_tiles.hpp).
TEST(TensorCores, ABatchOfTwoDimensionalDotsRunsOnTensorCores) {
  ts::Buffer x = ts::Buffer::randn({3, 40, 24}, ts::bf16, ts::cpu(), 20);
  ts::Buffer y = ts::Buffer::randn({3, 24, 20}, ts::bf16, ts::cpu(), 21);
  auto k = examples::make_bmm(ts::Settings{.config = blocks(32, 16, 16, 4)});
  std::vector<double> got = k(x, y).to_vector(), xv = x.to_vector(), yv = y.to_vector();
  for (int b = 0; b < 3; ++b)
    for (int m = 0; m < 40; ++m)
      for (int n = 0; n < 20; ++n) {
        double s = 0;
        for (int q = 0; q < 24; ++q) s += xv[(b * 40 + m) * 24 + q] * yv[(b * 24 + q) * 20 + n];
        // out is bf16: one rounding of s.
        EXPECT_NEAR(got[(b * 40 + m) * 20 + n], s, 0.01 * (1 + std::abs(s)));
      }
  EXPECT_TRUE(only_contraction(nest_layout(k, blocks(32, 16, 16, 4), x, y)).mma);
  REQUIRE_NVRTC();
  EXPECT_NE(nvrtc_test::compile(k, x, y).find("ts::mma_16816_bf16"), std::string::npos);
}

// `acc = ts::dot(a, b, acc)` in a loop over K: the products are summed into the carried
// accumulator's own registers (no sum, add or copies), on tensor cores and CUDA cores.
TEST(TensorCores, TheProductsAreSummedIntoTheAccumulator) {
  REQUIRE_NVRTC();
  auto k = make_dot();
  for (ts::DType t : {ts::bf16, ts::f32}) {
    ts::Buffer x = ts::Buffer::zeros({128, 64}, t), y = ts::Buffer::zeros({64, 128}, t);
    std::string cu = nvrtc_test::compile(k, x, y);
    EXPECT_EQ(nvrtc_test::count_matches(cu, R"(// c[0-9]+: the sum over .*, summed into it)"), 1)
        << cu;
    EXPECT_EQ(nvrtc_test::count_matches(cu, R"(TS_FOR\(r\) c[0-9]+\[r\] = y[0-9]+\[r\];)"), 0)
        << cu;  // no copy back
    // The add is not emitted: no `c[r] + v[r]` of the accumulator and the sum.
    EXPECT_EQ(nvrtc_test::count_matches(cu, R"(\[r\] \+ v[0-9]+\[r\];)"), 0) << cu;
  }
}

// f32 operands under DotPrecision::tf32 (the default): mma.sync.m16n8k8.tf32, K in steps of
// 8, rows padded by 16 bytes along K and by 32 along M or N; ieee stays on the CUDA cores.
TEST(TensorCores, Tf32DotsRunOnTensorCoresAndIeeeOnesDoNot) {
  ts::Buffer x = ts::Buffer::zeros({128, 64}, ts::f32), y = ts::Buffer::zeros({64, 128}, ts::f32);
  auto k = make_dot();
  const passes::Layout L = nest_layout(k, blocks(64, 64, 8, 4), x, y);
  const passes::Contraction& c = only_contraction(L);
  ASSERT_TRUE(c.mma);
  EXPECT_EQ(c.mma->operand, ts::f32);
  EXPECT_EQ(c.shared_bytes, 64 * (8 + 4) * 4 + 8 * (64 + 8) * 4);
  auto ieee = make_dot(ts::Settings{.dot_precision = ts::DotPrecision::ieee});
  EXPECT_FALSE(only_contraction(nest_layout(ieee, blocks(64, 64, 8, 4), x, y)).mma);
  REQUIRE_NVRTC();
  // K blocks of 16: rows of 64 bytes, which wgmma's 128-byte swizzle cannot take.
  auto kc = make_dot(ts::Settings{.config = blocks(64, 64, 16, 4)});
  std::string cu = nvrtc_test::compile(kc, x, y);
  EXPECT_NE(cu.find("ts::mma_1688_tf32"), std::string::npos) << cu;
  EXPECT_NE(cu.find("ts::truncate_tf32"), std::string::npos) << cu;
  std::string cut = nvrtc_test::compile(kc, x.transpose(0, 1).contiguous().transpose(0, 1),
                                        y.transpose(0, 1).contiguous().transpose(0, 1));
  EXPECT_NE(cut.find("ts::mma_1688_tf32"), std::string::npos) << cut;
}

// A dot of a computed operand holds its whole product: past the register budget the error
// names the dot's line and says why.
TEST(Dot, AHeldProductPastTheRegisterBudgetNamesTheDot) {
  auto k = ts::kernel(
      "scaled_dot",
      [](ts::Tensor x, ts::Tensor y) {
        ts::Tensor out = ts::empty({x.size(0), y.size(1)}, ts::f32);
        for (auto [tm, tn] : ts::tile(x.size(0), y.size(1))) {
          ts::Value acc = ts::zeros({tm, tn});
          for (auto tk : ts::tile(x.size(1))) {
            g_line = __LINE__ + 1;
            acc = ts::dot(x(tm, tk) * 2, y(tk, tn), acc);
          }
          out(tm, tn) = acc;
        }
        return out;
      },
      ts::Settings{.config = blocks(64, 64, 64, 4)});
  ts::Buffer x = ts::Buffer::zeros({128, 128}, ts::bf16),
             y = ts::Buffer::zeros({128, 128}, ts::bf16);
  std::string msg = user_error_test::user_error([&] { k(x, y); });
  EXPECT_NE(msg.find("dot_test.cpp:" + std::to_string(g_line) + " (a ts::dot"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("holds its whole [t0, t2, t1] product"), std::string::npos) << msg;
  EXPECT_NE(msg.find("a computed value, a cast to another dtype first"), std::string::npos) << msg;
  EXPECT_NE(msg.find("load both operands of the product in the loop"), std::string::npos) << msg;
  // Small tiles fit: the values are the product's.
  auto small = ts::kernel(
      "scaled_dot_small",
      [](ts::Tensor x, ts::Tensor y) {
        ts::Tensor out = ts::empty({x.size(0), y.size(1)}, ts::f32);
        for (auto [tm, tn] : ts::tile(x.size(0), y.size(1))) {
          ts::Value acc = ts::zeros({tm, tn});
          for (auto tk : ts::tile(x.size(1))) acc = ts::dot(x(tm, tk) * 2, y(tk, tn), acc);
          out(tm, tn) = acc;
        }
        return out;
      },
      ts::Settings{.config = blocks(16, 16, 16, 4)});
  ts::Buffer xr = ts::Buffer::randn({20, 30}, ts::bf16, ts::cpu(), 30);
  ts::Buffer yr = ts::Buffer::randn({30, 10}, ts::bf16, ts::cpu(), 31);
  std::vector<double> want = reference(xr, yr), got = small(xr, yr).to_vector();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], 2 * want[i], 1e-4) << i;
}

TEST(Dot, BatchDimsFromDifferentTilesAreAUserError) {
  auto k = ts::kernel("bad_bmm", [](ts::Tensor x, ts::Tensor y) {
    ts::Tensor out = ts::empty({x.size(0), x.size(1), y.size(2)}, ts::f32);
    for (auto [tb, tm, tn] : ts::tile(x.size(0), x.size(1), y.size(2)))
      for (auto [tb2, tk] : ts::tile(x.size(0), x.size(2))) {
        g_line = __LINE__ + 1;
        out(tb, tm, tn) = ts::dot(x(tb, tm, tk), y(tb2, tk, tn));
      }
    return out;
  });
  ts::Buffer x = ts::Buffer::zeros({2, 16, 16}, ts::f16),
             y = ts::Buffer::zeros({2, 16, 16}, ts::f16);
  std::string msg = user_error_test::user_error([&] { k(x, y); });
  user_error_test::expect_message(msg, "bad_bmm", g_line,
                                  "ts::dot's operands differ in the batch dim",
                                  "index the batch of both with the same tile");
}

// The quick search starts from known-good matrix-product tiles (ConfigSpace::matmul_points).
TEST(DotTuning, TheConfigSpaceOffersKnownGoodMatmulTiles) {
  auto k = examples::make_dot_matmul();
  ts::Buffer x = ts::Buffer::zeros({4096, 4096}, ts::bf16),
             y = ts::Buffer::zeros({4096, 4096}, ts::bf16);
  const ts::ir::Graph& g = autotune_test::graph_of(k, x, y);
  ts::autotune::ConfigSpace space(g, {}, "dot_matmul");
  std::vector<std::string> configs;
  for (const ts::autotune::Point& p : space.matmul_points()) {
    EXPECT_TRUE(space.valid(p));
    ts::Config c = space.config(p);
    const bool persistent = c.pid_type == ts::PidType::persistent_blocked;
    configs.push_back(fmt::format(
        "{}x{}x{} w{} s{}{}{}{}", c.block_sizes->at(0), c.block_sizes->at(1), c.block_sizes->at(2),
        *c.num_warps, *c.num_stages, persistent ? " p" : "",
        c.split_k ? fmt::format(" k{}", *c.split_k) : "", c.warp_specialize ? " ws" : ""));
  }
  EXPECT_NE(std::find(configs.begin(), configs.end(), "128x128x32 w4 s2"), configs.end());
  EXPECT_NE(std::find(configs.begin(), configs.end(), "128x256x32 w8 s2"), configs.end());
  EXPECT_NE(std::find(configs.begin(), configs.end(), "128x256x64 w8 s4"), configs.end())  // wgmma
      << fmt::format("{}", fmt::join(configs, "; "));
  // wgmma in persistent programs, the ring running across their tiles
  EXPECT_NE(std::find(configs.begin(), configs.end(), "128x256x64 w8 s4 p"), configs.end())
      << fmt::format("{}", fmt::join(configs, "; "));
  // split-K for M = 16 (decode)
  EXPECT_NE(std::find(configs.begin(), configs.end(), "64x128x64 w4 s4 k2"), configs.end())
      << fmt::format("{}", fmt::join(configs, "; "));
  EXPECT_NE(std::find(configs.begin(), configs.end(), "64x256x64 w8 s4 k4"), configs.end())
      << fmt::format("{}", fmt::join(configs, "; "));
  // and with a producer warpgroup (warp_specialize)
  EXPECT_NE(std::find(configs.begin(), configs.end(), "128x256x64 w8 s4 p ws"), configs.end())
      << fmt::format("{}", fmt::join(configs, "; "));
  EXPECT_NE(std::find(configs.begin(), configs.end(), "256x128x64 w8 s4 ws"), configs.end())
      << fmt::format("{}", fmt::join(configs, "; "));
  EXPECT_EQ(configs.size(), 15u) << fmt::format("{}", fmt::join(configs, "; "));
  // split_k 1, 2, 4, canonically 1 in persistent programs.
  const auto& knobs = space.knobs();
  auto split = std::find_if(knobs.begin(), knobs.end(),
                            [](const ts::autotune::Knob& k) { return k.name == "split_k"; });
  ASSERT_NE(split, knobs.end());
  EXPECT_EQ(split->choices, (std::vector<int64_t>{1, 2, 4}));
  ts::Config persistent = space.config(space.default_point());
  persistent.pid_type = ts::PidType::persistent_blocked;
  persistent.split_k = 4;
  EXPECT_FALSE(space.config(space.canonical(space.point(persistent))).split_k.has_value());
  // M = 16 (decode): M's block still reaches wgmma's 64 rows, so the split-K seed applies;
  // and 16 rows on wgmma's transposed product, split in 2.
  ts::Buffer x16 = ts::Buffer::zeros({16, 4096}, ts::bf16);
  ts::autotune::ConfigSpace decode(autotune_test::graph_of(k, x16, y), {}, "dot_matmul");
  bool seeded = false, swapped = false;
  for (const ts::autotune::Point& p : decode.matmul_points()) {
    ts::Config c = decode.config(p);
    seeded |= c.block_sizes->at(0) == 64 && c.block_sizes->at(1) == 128 && c.split_k == 2;
    swapped |= c.block_sizes->at(0) == 16 && c.block_sizes->at(1) == 128 && c.split_k == 2;
  }
  EXPECT_TRUE(seeded);
  EXPECT_TRUE(swapped);
  // A batched dot: the same tiles for each program's [M, N], its batch block (tuned here) 1.
  ts::Buffer xb = ts::Buffer::zeros({8, 2048, 2048}, ts::bf16),
             yb = ts::Buffer::zeros({8, 2048, 2048}, ts::bf16);
  auto tiled = dot_test::make_tiled_batched_dot();  // the space reads its graph
  ts::autotune::ConfigSpace batched(autotune_test::graph_of(tiled, xb, yb), {}, "bmm");
  std::vector<std::string> bconfigs;
  for (const ts::autotune::Point& p : batched.matmul_points()) {
    ts::Config c = batched.config(p);
    bconfigs.push_back(fmt::format("{}x{}x{}x{} w{} s{}{}", c.block_sizes->at(0),
                                   c.block_sizes->at(1), c.block_sizes->at(2), c.block_sizes->at(3),
                                   *c.num_warps, *c.num_stages, c.warp_specialize ? " ws" : ""));
  }
  EXPECT_NE(std::find(bconfigs.begin(), bconfigs.end(), "1x128x256x64 w8 s4"), bconfigs.end())
      << fmt::format("{}", fmt::join(bconfigs, "; "));
  EXPECT_NE(std::find(bconfigs.begin(), bconfigs.end(), "1x256x128x64 w8 s4 ws"), bconfigs.end())
      << fmt::format("{}", fmt::join(bconfigs, "; "));
  // examples::make_bmm fixes the batch block: its M, N and K blocks are seeded.
  auto bmm_kernel = examples::make_bmm();
  ts::autotune::ConfigSpace bmm(autotune_test::graph_of(bmm_kernel, xb, yb), {}, "bmm");
  bool bmm_seeded = false;
  for (const ts::autotune::Point& p : bmm.matmul_points()) {
    ts::Config c = bmm.config(p);
    bmm_seeded |= *c.block_sizes == std::vector<int64_t>{128, 256, 64} && c.num_warps == 8;
  }
  EXPECT_TRUE(bmm_seeded);
  // The grouped GEMM fixes M's block (64 rows): its N and K blocks, warps and stages are
  // seeded, 8 warps giving two warpgroups along N (wgmma 64 x 128 each).
  moe_test::Routed r = moe_test::route({64, 128}, 256, 256, 192, ts::bf16);
  auto grouped = examples::make_grouped_matmul();
  ts::autotune::ConfigSpace gs(autotune_test::graph_of(grouped, r.x, r.w, r.n_rows, r.block_expert),
                               {}, "grouped_matmul");
  std::vector<std::string> gconfigs;
  for (const ts::autotune::Point& p : gs.matmul_points()) {
    ts::Config c = gs.config(p);
    gconfigs.push_back(fmt::format("{}x{} w{} s{}", c.block_sizes->at(0), c.block_sizes->at(1),
                                   *c.num_warps, *c.num_stages));
  }
  EXPECT_NE(std::find(gconfigs.begin(), gconfigs.end(), "256x64 w8 s4"), gconfigs.end())
      << fmt::format("{}", fmt::join(gconfigs, "; "));
  // f32 operands (TF32): the same bytes of K, half the elements (a wgmma tile of 128x256x32,
  // an mma.sync one of 128x128x16).
  ts::Buffer xf = ts::Buffer::zeros({4096, 4096}, ts::f32),
             wf = ts::Buffer::zeros({4096, 4096}, ts::f32);
  ts::autotune::ConfigSpace fs(autotune_test::graph_of(k, xf, wf.transpose(0, 1)), {},
                               "dot_matmul");
  std::vector<std::string> fconfigs;
  for (const ts::autotune::Point& p : fs.matmul_points()) {
    ts::Config c = fs.config(p);
    fconfigs.push_back(fmt::format("{}x{}x{} w{} s{}", c.block_sizes->at(0), c.block_sizes->at(1),
                                   c.block_sizes->at(2), *c.num_warps, *c.num_stages));
  }
  for (const char* want : {"128x256x32 w8 s4", "128x128x16 w4 s2"})
    EXPECT_NE(std::find(fconfigs.begin(), fconfigs.end(), want), fconfigs.end())
        << want << ": " << fmt::format("{}", fmt::join(fconfigs, "; "));
  // A row-major f32 y (copied K-major by the consumers): 256 x 128 x 32 with a producer
  // warpgroup (the fastest in dot_bench's TF32 rows at 849a380).
  ts::autotune::ConfigSpace rs(autotune_test::graph_of(k, xf, wf), {}, "dot_matmul");
  bool tf32_ws = false;
  for (const ts::autotune::Point& p : rs.matmul_points()) {
    ts::Config c = rs.config(p);
    tf32_ws |= c.block_sizes->at(0) == 256 && c.block_sizes->at(1) == 128 &&
               c.block_sizes->at(2) == 32 && c.warp_specialize.value_or(false);
  }
  EXPECT_TRUE(tf32_ws);
  // Without a sum of products, none.
  auto add = ts::kernel("add", [](ts::Tensor a, ts::Tensor b) {
    ts::Tensor out = ts::empty_like(a);
    for (auto t : ts::tile(a.size(0))) out(t) = a(t) + b(t);
    return out;
  });
  ts::Buffer v = ts::Buffer::zeros({1024}, ts::f32);
  ts::autotune::ConfigSpace none(autotune_test::graph_of(add, v, v), {}, "add");
  EXPECT_TRUE(none.matmul_points().empty());
}

// examples::make_grouped_matmul: a tile loop over a device-resident row count, each tile's
// expert loaded on the GPU, its dot on tensor cores (bf16).
TEST(TensorCores, AGroupedMatmulOverDeviceResidentRowsMultipliesEachGroupByItsExpert) {
  moe_test::Routed r = moe_test::route({5, 70, 0, 64}, 48, 40, 320, ts::bf16);
  auto k = examples::make_grouped_matmul(
      ts::Settings{.config = ts::Config{.block_sizes = std::vector<int64_t>{32, 16}}});
  std::vector<double> got = k(r.x, r.w, r.n_rows, r.block_expert).to_vector();
  for (size_t i = 0; i < r.want.size(); ++i)
    ASSERT_NEAR(got[i], r.want[i], 0.01 * (1 + std::abs(r.want[i]))) << i;  // bf16 out
  EXPECT_TRUE(
      only_contraction(nest_layout(k, ts::Config{.block_sizes = std::vector<int64_t>{32, 16}}, r.x,
                                   r.w, r.n_rows, r.block_expert))
          .mma);
  // Groups padded to 128 rows, block_expert per 128 rows: 128-row tiles (two warpgroups of
  // wgmma along M where the tile fits it).
  moe_test::Routed r128 = moe_test::route({5, 130, 0, 64}, 48, 40, 512, ts::bf16, 128);
  const ts::Config c128{.block_sizes = std::vector<int64_t>{32, 16}, .num_warps = 8};
  auto k128 = examples::make_grouped_matmul(ts::Settings{.config = c128}, 128);
  for (int call = 0; call < 2; ++call) {
    std::vector<double> got128 = k128(r128.x, r128.w, r128.n_rows, r128.block_expert).to_vector();
    for (size_t i = 0; i < r128.want.size(); ++i)
      ASSERT_NEAR(got128[i], r128.want[i], 0.01 * (1 + std::abs(r128.want[i]))) << i;
  }
  const passes::Layout L128 =
      nest_layout(k128, c128, r128.x, r128.w, r128.n_rows, r128.block_expert);
  EXPECT_EQ(L128.slot_block.at(0), 128);
}

// Whole K dims of sizes that differ by a power of two are refused at trace time, as K.
TEST(Dot, WholeKDimsOfDifferentPaddedSizesAreAKError) {
  auto k = ts::kernel("dot_all_k", [](ts::Tensor x, ts::Tensor y) {
    ts::Tensor out = ts::empty({x.size(0), y.size(1)}, ts::f32);
    for (auto [tm, tn] : ts::tile(x.size(0), y.size(1))) {
      g_line = __LINE__ + 1;
      out(tm, tn) = ts::dot(x(tm, ts::all), y(ts::all, tn));
    }
    return out;
  });
  ts::Buffer x = ts::Buffer::zeros({32, 128}, ts::bf16), y = ts::Buffer::zeros({64, 32}, ts::bf16);
  std::string msg = user_error_test::user_error([&] { k(x, y); });
  user_error_test::expect_message(msg, "dot_all_k", g_line, "ts::dot's operands differ in K",
                                  "transpose it (.t())");
}

// K tiled over x's size: a y of another K (longer, or a [N, K] weight passed as [K, N]) is
// refused on the call at the dot's line, where torch.matmul raises; a shorter one is the
// tile loop's cover check.
// A batch tiled over x's size: a y of more batches is refused on the call at the dot's line,
// as torch.bmm raises; fewer is the tile loop's cover check.
TEST(Dot, OperandsOfDifferentBatchSizesAreAUserErrorOnTheCall) {
  auto k = ts::kernel("bmm_sizes", {"x", "y"}, [](ts::Tensor x, ts::Tensor y) {
    ts::Tensor out = ts::empty({x.size(0), x.size(1), y.size(2)}, ts::f32);
    for (auto [tb, tm, tn] :
         ts::tile(x.size(0), x.size(1), y.size(2), ts::TileOptions{.block_size = {1, 0, 0}})) {
      ts::Value acc = ts::zeros({tb, tm, tn});
      g_line = __LINE__ + 1;
      for (auto tk : ts::tile(x.size(2))) acc = ts::dot(x(tb, tm, tk), y(tb, tk, tn), acc);
      out(tb, tm, tn) = acc;
    }
    return out;
  });
  ts::Buffer x = ts::Buffer::ones({3, 16, 32}, ts::bf16);
  std::string msg = user_error_test::user_error([&] {
    k(x, ts::Buffer::ones({4, 32, 16}, ts::bf16));
  });
  user_error_test::expect_message(msg, "bmm_sizes", g_line,
                                  "ts::dot's operands differ in the batch dim on this call: tensor "
                                  "argument 0 ('x') size(0) is 3, tensor argument 1 ('y') size(0) "
                                  "is 4",
                                  "torch.bmm");
  EXPECT_NE(user_error_test::user_error([&] {
              k(x, ts::Buffer::ones({2, 32, 16}, ts::bf16));
            }).find("less than the bound"),
            std::string::npos);
  EXPECT_EQ(k(x, ts::Buffer::ones({3, 32, 16}, ts::bf16)).to_vector()[0], 32.0);
}

TEST(Dot, OperandsOfDifferentKSizesAreAUserErrorOnTheCall) {
  auto k = ts::kernel("dot_k", {"x", "y"}, [](ts::Tensor x, ts::Tensor y) {
    ts::Tensor out = ts::empty({x.size(0), y.size(1)}, ts::f32);
    for (auto [tm, tn] : ts::tile(x.size(0), y.size(1))) {
      ts::Value acc = ts::zeros({tm, tn});
      g_line = __LINE__ + 1;
      for (auto tk : ts::tile(x.size(1))) acc = ts::dot(x(tm, tk), y(tk, tn), acc);
      out(tm, tn) = acc;
    }
    return out;
  });
  ts::Buffer x = ts::Buffer::ones({100, 40}, ts::f32);
  for (std::vector<int64_t> y_shape :
       {std::vector<int64_t>{41, 72}, std::vector<int64_t>{72, 40}}) {
    ts::Buffer y = ts::Buffer::ones(y_shape, ts::f32);
    std::string msg = user_error_test::user_error([&] { k(x, y); });
    user_error_test::expect_message(
        msg, "dot_k", g_line,
        fmt::format("ts::dot's operands differ in K on this call: tensor argument 0 ('x') size(1) "
                    "is 40, tensor argument 1 ('y') size(0) is {}",
                    y_shape[0]),
        "w.transpose(0, 1)");
  }
  // cuda() makes the call's size checks too (code is shown for arguments a call takes).
  ts::Buffer y39 = ts::Buffer::ones({39, 72}, ts::f32), y41 = ts::Buffer::ones({41, 72}, ts::f32);
  EXPECT_NE(user_error_test::user_error([&] { k.cuda(false, x, y41); }).find("differ in K"),
            std::string::npos);
  EXPECT_NE(user_error_test::user_error([&] { k.cuda(false, x, y39); }).find("less than the bound"),
            std::string::npos);
  // Equal K on this specialization's calls: the same kernel runs.
  EXPECT_EQ(k(x, ts::Buffer::ones({40, 72}, ts::f32)).to_vector()[0], 40.0);
  // x @ x^T through one tensor (x(tn, tk).t()) and sizes the key fixes need no check.
  auto gram = ts::kernel(
      "gram",
      [](ts::Tensor x) {
        ts::Tensor out = ts::empty({x.size(0), x.size(0)}, ts::f32);
        for (auto [tm, tn] : ts::tile(x.size(0), x.size(0))) {
          ts::Value acc = ts::zeros({tm, tn});
          for (auto tk : ts::tile(x.size(1))) acc = ts::dot(x(tm, tk), x(tn, tk).t(), acc);
          out(tm, tn) = acc;
        }
        return out;
      },
      ts::Settings{.static_shapes = true});
  EXPECT_EQ(gram(x).to_vector()[5], 40.0);
  EXPECT_EQ(gram.ir(x).find("shape_check"), std::string::npos) << gram.ir(x);
}
