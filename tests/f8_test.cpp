// The 8-bit floats f8e4m3 and f8e5m2 (tessel/dtype.hpp): their conversions (to nearest even,
// saturating), promotion, kernels that load, compute in f32 and store them, and ts::dot of
// 8-bit operands: on wgmma m64nNk32 where both are K-major (the CUDA NVRTC compiles for
// sm_90a), else on the CUDA cores, the layout stage saying why. GPU values:
// tests/gpu/f8_gpu_test.cpp.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <tessel/tessel.hpp>

#include "common/element.hpp"
#include "examples/kernels/matmul.hpp"
#include "nvrtc_test_util.hpp"
#include "passes/layout.hpp"
#include "stage_test_util.hpp"
#include "tests/dot_test_util.hpp"

namespace ts = tessel;

namespace {

using dot_test::blocks;

double f8(double v, ts::DType t) {
  return ts::f8_bits_to_float(ts::float_to_f8_bits(static_cast<float>(v), t), t);
}

}  // namespace

TEST(F8, ConversionsRoundToNearestEvenAndSaturate) {
  const float inf = std::numeric_limits<float>::infinity();
  // e4m3: 1.xxx * 2^e, bias 7, largest finite 448 (0x7e), NaN 0x7f, no infinities.
  EXPECT_EQ(ts::float_to_f8_bits(1.0f, ts::f8e4m3), 0x38);
  EXPECT_EQ(ts::float_to_f8_bits(-1.0f, ts::f8e4m3), 0xb8);
  EXPECT_EQ(ts::float_to_f8_bits(448.0f, ts::f8e4m3), 0x7e);
  EXPECT_EQ(ts::float_to_f8_bits(1e6f, ts::f8e4m3), 0x7e);  // saturates
  EXPECT_EQ(ts::float_to_f8_bits(inf, ts::f8e4m3), 0x7e);   // infinities too
  EXPECT_EQ(ts::float_to_f8_bits(-inf, ts::f8e4m3), 0xfe);
  EXPECT_EQ(ts::float_to_f8_bits(std::nanf(""), ts::f8e4m3), 0x7f);
  EXPECT_EQ(ts::float_to_f8_bits(std::ldexp(1.0f, -9), ts::f8e4m3), 0x01);   // smallest subnormal
  EXPECT_EQ(ts::float_to_f8_bits(std::ldexp(1.0f, -10), ts::f8e4m3), 0x00);  // tie: to even
  EXPECT_EQ(ts::float_to_f8_bits(std::ldexp(3.0f, -10), ts::f8e4m3), 0x02);  // tie: to even
  EXPECT_EQ(ts::float_to_f8_bits(1.0625f, ts::f8e4m3), 0x38);  // tie between 1 and 1.125
  EXPECT_EQ(ts::float_to_f8_bits(1.1875f, ts::f8e4m3), 0x3a);  // tie between 1.125 and 1.25
  EXPECT_EQ(ts::float_to_f8_bits(15.9f, ts::f8e4m3), 0x58);    // carries into 16
  EXPECT_EQ(ts::float_to_f8_bits(std::ldexp(0.99f, -6), ts::f8e4m3), 0x08);  // to the normal
  // e5m2: bias 15, largest finite 57344 (0x7b), infinities 0x7c.
  EXPECT_EQ(ts::float_to_f8_bits(1.0f, ts::f8e5m2), 0x3c);
  EXPECT_EQ(ts::float_to_f8_bits(57344.0f, ts::f8e5m2), 0x7b);
  EXPECT_EQ(ts::float_to_f8_bits(inf, ts::f8e5m2), 0x7b);  // saturating conversions
  EXPECT_EQ(ts::float_to_f8_bits(std::ldexp(1.0f, -16), ts::f8e5m2), 0x01);
  EXPECT_EQ(ts::f8_bits_to_float(0x7c, ts::f8e5m2), inf);  // stored infinities read back
  EXPECT_TRUE(std::isnan(ts::f8_bits_to_float(0x7f, ts::f8e4m3)));
  EXPECT_TRUE(std::isnan(ts::f8_bits_to_float(0x7e, ts::f8e5m2)));
  // Every finite bit pattern reads back to itself.
  for (ts::DType t : {ts::f8e4m3, ts::f8e5m2})
    for (int b = 0; b < 256; ++b) {
      const float v = ts::f8_bits_to_float(static_cast<uint8_t>(b), t);
      if (std::isnan(v) || std::isinf(v)) continue;
      EXPECT_EQ(ts::float_to_f8_bits(v, t), v == 0 ? (b & 0x80) : b) << ts::dtype_name(t) << b;
    }
}

TEST(F8, DtypesNamePromoteAndStoreOneByte) {
  EXPECT_EQ(ts::dtype_size(ts::f8e4m3), 1);
  EXPECT_EQ(ts::dtype_from_name("float8_e4m3fn"), ts::f8e4m3);
  EXPECT_EQ(ts::dtype_from_name("f8e5m2"), ts::f8e5m2);
  EXPECT_TRUE(ts::is_float(ts::f8e5m2));
  EXPECT_EQ(ts::promote(ts::f8e4m3, ts::bf16), ts::bf16);
  EXPECT_EQ(ts::promote(ts::f16, ts::f8e5m2), ts::f16);
  EXPECT_EQ(ts::promote(ts::f8e4m3, ts::f8e5m2), ts::f32);
  EXPECT_EQ(ts::promote(ts::f8e4m3, ts::i32), ts::f8e4m3);
  ts::Buffer b = ts::Buffer::from_vector({0.3, -500.0, 2.5}, {3}, ts::f8e4m3);
  EXPECT_EQ(b.dtype(), ts::f8e4m3);
  EXPECT_EQ(b.to_vector(), (std::vector<double>{0.3125, -448.0, 2.5}));
}

// A kernel reads 8-bit floats into f32, computes, and stores each result rounded to its
// dtype: the interpreter's values are the conversions' own; NVRTC compiles the CUDA.
TEST(F8, KernelsLoadComputeInF32AndStoreRounded) {
  auto k = ts::kernel("f8_axpy", [](ts::Tensor x, ts::Tensor y) {
    ts::Tensor out = ts::empty_like(y);
    ts::Tensor wide = ts::empty({x.size(0)}, ts::f32);
    for (auto t : ts::tile(x.size(0))) {
      out(t) = x(t) * 3.0 + y(t);
      wide(t) = x(t).to(ts::f32) * 3.0;
    }
    return std::tuple{out, wide};
  });
  std::vector<double> xs, ys;
  for (int i = 0; i < 300; ++i) {
    xs.push_back(std::ldexp(1.0 + i % 7, i % 23 - 12) * (i % 2 ? -1 : 1));
    ys.push_back(0.37 * i - 40);
  }
  ts::Buffer x = ts::Buffer::from_vector(xs, {300}, ts::f8e4m3);
  ts::Buffer y = ts::Buffer::from_vector(ys, {300}, ts::f8e5m2);
  auto [out, wide] = k(x, y);
  EXPECT_EQ(out.dtype(), ts::f8e5m2);
  const std::vector<double> o = out.to_vector(), w = wide.to_vector(), xv = x.to_vector(),
                            yv = y.to_vector();
  for (int i = 0; i < 300; ++i) {
    EXPECT_EQ(w[i], static_cast<float>(xv[i] * 3.0)) << i;
    // x * 3.0 is e4m3 (a literal keeps the dtype), + y (e5m2) is f32, stored as e5m2.
    EXPECT_EQ(o[i], f8(static_cast<float>(f8(xv[i] * 3.0, ts::f8e4m3) + yv[i]), ts::f8e5m2)) << i;
  }
  REQUIRE_NVRTC();
  const std::string cu = nvrtc_test::compile(k, x, y);
  EXPECT_NE(cu.find("__nv_fp8_e4m3"), std::string::npos) << cu;
  EXPECT_NE(cu.find("__nv_fp8_e5m2"), std::string::npos) << cu;
  // <cuda_fp8.h> (NVRTC time) only where an 8-bit float is used.
  EXPECT_NE(cu.find("#include \"tessel/fp8.cuh\""), std::string::npos) << cu;
  ts::Buffer f = ts::Buffer::zeros({300}, ts::f32);
  EXPECT_EQ(nvrtc_test::compile(k, f, f).find("tessel/fp8.cuh"), std::string::npos);
}

// ts::dot of 8-bit operands sums exact f32 products (an f8 product has at most 8 significant
// bits) in f32, as the reference does in double here (small integers: exact either way).
TEST(F8, DotsSumExactProducts) {
  auto k = dot_test::make_dot(ts::Settings{.config = blocks(64, 64, 32, 4)});
  for (ts::DType t : {ts::f8e4m3, ts::f8e5m2}) {
    std::vector<double> xs, ws;
    const int64_t m = 70, n = 50, kk = 45;
    for (int64_t i = 0; i < m * kk; ++i) xs.push_back(static_cast<double>(i % 9) - 4);
    for (int64_t i = 0; i < n * kk; ++i) ws.push_back(static_cast<double>(i % 5) * 0.5 - 1);
    ts::Buffer x = ts::Buffer::from_vector(xs, {m, kk}, t);
    ts::Buffer w = ts::Buffer::from_vector(ws, {n, kk}, t);
    const std::vector<double> got = k(x, w.transpose(0, 1)).to_vector();
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double want = 0;
        for (int64_t q = 0; q < kk; ++q) want += xs[i * kk + q] * ws[j * kk + q];
        ASSERT_EQ(got[i * n + j], want) << ts::dtype_name(t) << " " << i << "," << j;
      }
  }
  // Scaled, into bf16 (examples::make_fp8_matmul): per-tensor and per-row scales.
  ts::Buffer x = ts::Buffer::from_vector(std::vector<double>(8 * 32, 2.0), {8, 32}, ts::f8e4m3);
  ts::Buffer w = ts::Buffer::from_vector(std::vector<double>(4 * 32, 0.5), {4, 32}, ts::f8e4m3);
  ts::Buffer sx = ts::Buffer::full({1}, 0.25, ts::f32), sy = ts::Buffer::full({1}, 3.0, ts::f32);
  for (double v : examples::make_fp8_matmul()(x, w.transpose(0, 1), sx, sy).to_vector())
    EXPECT_EQ(v, 32 * 0.25 * 3.0);
  ts::Buffer rx = ts::Buffer::arange(8, ts::f32), ry = ts::Buffer::full({4}, 0.5, ts::f32);
  ts::Buffer r = examples::make_fp8_matmul_rowwise()(x, w.transpose(0, 1), rx, ry);
  EXPECT_EQ(r.dtype(), ts::bf16);
  const std::vector<double> rv = r.to_vector();
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(rv[i * 4 + j], 32 * i * 0.5) << i << "," << j;
}

// Both factors K-major (x w^T): wgmma m64nNk32 e4m3 with boxes of 128 bytes of K; a row-major
// y is copied K-major by the threads (16 bytes of K per store); at K blocks under 128 bytes
// x w^T runs on mma.sync m16n8k32 and a row-major y on the CUDA cores.
TEST(F8, KMajorDotsTakeWgmmaK32) {
  ts::Buffer x = ts::Buffer::zeros({512, 512}, ts::f8e4m3),
             w = ts::Buffer::zeros({512, 512}, ts::f8e4m3);
  ts::Config c = blocks(128, 256, 128, 8);
  c.num_stages = 4;
  auto k = dot_test::make_dot(ts::Settings{.config = c});
  stage_test::Staged s = stage_test::staged("layout", false, k, c, x, w.transpose(0, 1));
  const ts::passes::Contraction& con = s.stages.loops.at(0).layout.contractions.at(0);
  ASSERT_TRUE(con.mma && con.mma->wgmma) << s.text;
  EXPECT_EQ(con.mma->box[0].box, (std::vector<int64_t>{128, 128}));
  EXPECT_EQ(con.mma->stage_bytes, (128 + 256) * 128);
  EXPECT_EQ(con.mma->stages, 4);
  EXPECT_NE(s.text.find("wgmma m64n256k32 e4m3, 2 warpgroups"), std::string::npos) << s.text;
  stage_test::Staged row = stage_test::staged("layout", false, k, c, x, w);
  const auto& rm = row.stages.loops.at(0).layout.contractions.at(0).mma;
  ASSERT_TRUE(rm && rm->wgmma && rm->transposed[1]) << row.text;
  EXPECT_NE(row.text.find("copied K-major by the threads"), std::string::npos) << row.text;
  REQUIRE_NVRTC();
  const std::string cu = nvrtc_test::compile(k, x, w.transpose(0, 1));
  // Each tile of K's products summed into f32 (Settings::fast_accum unset): 128 of the
  // warpgroup's 256 columns per instruction, whose 64 partial sums fit beside the
  // accumulator's 128.
  EXPECT_NE(cu.find("wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3"), std::string::npos)
      << cu;
  EXPECT_NE(s.text.find("each tile of K's sums added into f32, 128 columns at a time"),
            std::string::npos)
      << s.text;
  EXPECT_EQ(con.mma->promote_n, 128);
  EXPECT_NE(cu.find("for (int ks = 0; ks < 4; ++ks)"), std::string::npos) << cu;
  // A ragged K (its partial tile zeroed a byte at a time) in e5m2; the row-major y on the
  // CUDA cores.
  ts::Buffer xr = ts::Buffer::zeros({200, 80}, ts::f8e5m2),
             wr = ts::Buffer::zeros({136, 80}, ts::f8e5m2);
  const std::string cur = nvrtc_test::compile(k, xr, wr.transpose(0, 1));
  EXPECT_NE(cur.find("m64n128k32.f32.e5m2.e5m2"), std::string::npos) << cur;
  EXPECT_NE(cur.find("*reinterpret_cast<unsigned char*>(buf + "), std::string::npos) << cur;
  const std::string copied = nvrtc_test::compile(k, x, w);
  EXPECT_NE(copied.find("alignas(16) unsigned char v[16];"), std::string::npos) << copied;
  auto small = dot_test::make_dot(ts::Settings{.config = blocks(64, 64, 32, 4)});
  const std::string cuda_cores = nvrtc_test::compile(small, x, w);
  EXPECT_EQ(cuda_cores.find("wgmma.mma_async"), std::string::npos);
  EXPECT_EQ(cuda_cores.find("ts::mma_16832_"), std::string::npos);
  const std::string on_sync = nvrtc_test::compile(small, x, w.transpose(0, 1));
  EXPECT_NE(on_sync.find("ts::mma_16832_e4m3("), std::string::npos) << on_sync;
  const std::string e5 = nvrtc_test::compile(small, xr, wr.transpose(0, 1));
  EXPECT_NE(e5.find("ts::mma_16832_e5m2("), std::string::npos) << e5;
}

// On sm_89 (no wgmma) a K block of 128 stages more f32 than a program's shared memory holds
// for the CUDA cores, but 8-bit tiles on mma.sync fit: the K-major view of a [N, K] weight
// keeps its orientation, and the dot runs on mma.sync (it was refused as "not contiguous
// along K").
TEST(F8, AKMajorWeightAtALargeKBlockRunsOnMmaSyncOnSm89) {
  ts::Buffer x = ts::Buffer::zeros({256, 256}, ts::f8e4m3),
             w = ts::Buffer::zeros({256, 256}, ts::f8e4m3);
  const ts::Config c = dot_test::blocks(128, 128, 128, 8);
  auto k = dot_test::make_dot(ts::Settings{.config = c});
  stage_test::Staged s = stage_test::staged_for(89, "layout", false, k, c, x, w.transpose(0, 1));
  const auto& mma = s.stages.loops.at(0).layout.contractions.at(0).mma;
  ASSERT_TRUE(mma && !mma->wgmma) << s.text;
  EXPECT_TRUE(mma->k_inner[0] && mma->k_inner[1]) << s.text;
}

TEST(F8, ADotOfAnF8AndAnotherDtypeIsAnErrorAtItsLine) {
  auto k = dot_test::make_dot();
  ts::Buffer x = ts::Buffer::zeros({16, 16}, ts::f8e4m3), y = ts::Buffer::zeros({16, 16}, ts::bf16);
  try {
    k(x, y);
    FAIL() << "expected a UserError";
  } catch (const ts::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("ts::dot of an f8e4m3 and a bf16 value"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("dot_test_util.hpp"), std::string::npos) << e.what();
  }
}

// examples::make_fp8_matmul and its row-wise form compile for sm_90a on wgmma.
TEST(F8, TheScaledExamplesCompileOnWgmma) {
  REQUIRE_NVRTC();
  ts::Buffer x = ts::Buffer::zeros({256, 256}, ts::f8e4m3),
             w = ts::Buffer::zeros({256, 256}, ts::f8e4m3);
  ts::Buffer s1 = ts::Buffer::ones({1}, ts::f32), s256 = ts::Buffer::ones({256}, ts::f32);
  ts::Config c = blocks(128, 256, 128, 8);
  c.num_stages = 4;
  const std::string tensor = nvrtc_test::compile(
      examples::make_fp8_matmul(ts::Settings{.config = c}), x, w.transpose(0, 1), s1, s1);
  EXPECT_NE(tensor.find("m64n128k32.f32.e4m3.e4m3"), std::string::npos) << tensor;
  const std::string rows =
      nvrtc_test::compile(examples::make_fp8_matmul_rowwise(ts::Settings{.config = c}), x,
                          w.transpose(0, 1), s256, s256);
  EXPECT_NE(rows.find("m64n128k32.f32.e4m3.e4m3"), std::string::npos) << rows;
}

// Settings::fast_accum unset: each tile of K's 8-bit products is summed from zero by wgmma
// into partial sums, waited for, and added into the f32 accumulator by the threads (the
// first tile's sums taken as they are where the accumulator starts from zeros); the
// instruction narrows to columns whose partial sums fit beside the accumulator. fast_accum:
// wgmma adds into the accumulator itself, the tile's products in flight during the next's.
// Not for 16-bit or integer operands (exact or wrapping sums).
TEST(F8, EachTileOfKsSumsIsAddedIntoF32UnlessFastAccum) {
  REQUIRE_NVRTC();
  ts::Buffer x = ts::Buffer::zeros({256, 512}, ts::f8e4m3),
             w = ts::Buffer::zeros({256, 512}, ts::f8e4m3);
  struct Case {
    int64_t m, n;
    int warps;
    int64_t promote_n;
  };
  for (Case t : {Case{128, 256, 8, 128}, Case{128, 128, 4, 128}, Case{256, 128, 8, 128},
                 Case{64, 64, 4, 64}, Case{16, 128, 4, 16}}) {
    ts::Config c = blocks(t.m, t.n, 128, t.warps);
    c.num_stages = 3;
    for (bool fast : {false, true}) {
      auto k = dot_test::make_dot(ts::Settings{.config = c, .fast_accum = fast});
      stage_test::Staged s = stage_test::staged("layout", false, k, c, x, w.transpose(0, 1));
      const auto& mma = s.stages.loops.at(0).layout.contractions.at(0).mma;
      ASSERT_TRUE(mma && mma->wgmma) << s.text;
      EXPECT_EQ(mma->promote_n, fast ? 0 : t.promote_n) << c.to_json() << fast;
      const std::string cu = nvrtc_test::compile(k, x, w.transpose(0, 1));
      EXPECT_EQ(cu.find("float part[") != std::string::npos, !fast) << cu;
      if (!fast) {
        EXPECT_NE(cu.find(fmt::format("ts_wgmma_{}_e4m3_00(part, ", t.promote_n)),
                  std::string::npos)
            << cu;
        EXPECT_NE(cu.find("ts::wgmma_wait<0>();\n"), std::string::npos) << cu;
        // The accumulator is zeroed before the loop, each tile's sums added without a
        // select (not 128 FSELs per tile of K beside the additions).
        EXPECT_NE(cu.find("] += part[r];"), std::string::npos) << cu;
        EXPECT_NE(cu.find("// zeros: each tile of K's sums are added into it"), std::string::npos)
            << cu;
        EXPECT_EQ(cu.find(" : 0.0f) + part[r];"), std::string::npos) << cu;
        EXPECT_EQ(cu.find("ts::wgmma_wait<1>();"), std::string::npos) << cu;
      } else {
        EXPECT_NE(cu.find("ts::wgmma_wait<1>();"), std::string::npos) << cu;
      }
    }
  }
  // From an accumulator of ones (not zeros), every tile's sums are added.
  ts::Config c = blocks(128, 128, 128, 4);
  const std::string ones =
      nvrtc_test::compile(dot_test::make_dot(ts::Settings{.config = c}, 1.0), x, w.transpose(0, 1));
  EXPECT_NE(ones.find("] = c"), std::string::npos) << ones;
  EXPECT_EQ(ones.find(" : 0.0f) + part[r];"), std::string::npos) << ones;
  EXPECT_NE(ones.find("] += part[r];"), std::string::npos) << ones;
  EXPECT_EQ(ones.find("// zeros: each tile of K's sums are added into it"), std::string::npos)
      << ones;
  // bf16 and i8 operands: wgmma sums into the accumulator.
  for (ts::DType t : {ts::bf16, ts::i8}) {
    ts::Config b = blocks(128, 128, t == ts::i8 ? 128 : 64, 4);
    const ts::Buffer a = ts::Buffer::zeros({256, 512}, t);
    const ts::Buffer bt = ts::Buffer::zeros({256, 512}, t).transpose(0, 1);
    const std::string cu =
        t == ts::i8
            ? nvrtc_test::compile(examples::make_int8_matmul(ts::Settings{.config = b}), a, bt)
            : nvrtc_test::compile(dot_test::make_dot(ts::Settings{.config = b}), a, bt);
    EXPECT_EQ(cu.find("float part["), std::string::npos) << ts::dtype_name(t);
    EXPECT_EQ(cu.find("int part["), std::string::npos) << ts::dtype_name(t);
  }
}

// Buffer::rand of an 8-bit float draws k / 2^bits exact in it: in [0, 1), never 1.
TEST(F8, RandStaysBelowOne) {
  for (ts::DType t : {ts::f8e4m3, ts::f8e5m2}) {
    const std::vector<double> v = ts::Buffer::rand({20000}, t, ts::cpu(), 3).to_vector();
    EXPECT_EQ(*std::max_element(v.begin(), v.end()), t == ts::f8e4m3 ? 0.9375 : 0.875);
    EXPECT_GE(*std::min_element(v.begin(), v.end()), 0.0);
  }
}

// ts::mean of a narrower float sums and divides in f32 and rounds once (torch.mean of an f16
// tensor): a sum past the dtype's range and a count it cannot hold do not change the mean.
TEST(F8, AMeanOfANarrowFloatSumsAndDividesInF32) {
  auto k = ts::kernel("mean_all", [](ts::Tensor x) {
    ts::Tensor o = ts::empty({1}, ts::f32);
    for (auto t : ts::tile(1)) o(t) = ts::mean(x(ts::all), 0);
    return o;
  });
  EXPECT_EQ(k(ts::Buffer::from_vector({448, 448}, {2}, ts::f8e4m3)).item(), 448.0);
  EXPECT_EQ(k(ts::Buffer::full({9}, 1.5, ts::f8e5m2)).item(), 1.5);
  EXPECT_EQ(k(ts::Buffer::full({2100}, 1.5, ts::f8e4m3)).item(), 1.5);
  EXPECT_EQ(k(ts::Buffer::from_vector({60000, 60000}, {2}, ts::f16)).item(), 60000.0);
  REQUIRE_NVRTC();
  const std::string cu = nvrtc_test::compile(k, ts::Buffer::full({9}, 1.5, ts::f8e5m2));
  EXPECT_NE(cu.find("ts::round_f8e5m2("), std::string::npos) << cu;  // once, after the division
}

// Atomic adds into an 8-bit float tensor: refused at the call's line (no atomic on them).
TEST(F8, AnAtomicAddIntoAnF8TensorIsAUserError) {
  auto k = ts::kernel("f8_atomic", [](ts::Tensor x) {
    ts::Tensor o = ts::zeros_like(x);
    for (auto t : ts::tile(x.size(0))) ts::atomic_add(o, {t}, x(t));
    return o;
  });
  try {
    k(ts::Buffer::ones({8}, ts::f8e5m2));
    FAIL() << "expected a UserError";
  } catch (const ts::UserError& e) {
    EXPECT_NE(
        std::string(e.what()).find("of dtype f8e5m2: supported dtypes are i32, i64, u64, f16"),
        std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("f8_test.cpp"), std::string::npos) << e.what();
  }
}
