// i8 (torch.int8, tessel/dtype.hpp): names, promotion, host conversions, kernels whose i8
// arithmetic wraps modulo 2^8 and whose float-to-i8 casts saturate, and ts::dot of i8
// operands summed in i32: on wgmma m64nNk32 s8 where both are K-major (the CUDA NVRTC
// compiles for sm_90a), else on the CUDA cores. GPU values: tests/gpu/i8_gpu_test.cpp.
#include <dlpack/dlpack.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <tessel/tessel.hpp>

#include "common/element.hpp"
#include "examples/kernels/matmul.hpp"
#include "nvrtc_test_util.hpp"
#include "passes/layout.hpp"
#include "stage_test_util.hpp"
#include "tests/dot_test_util.hpp"
#include "tests/i8_test_util.hpp"

namespace ts = tessel;

namespace {

using dot_test::blocks;

// A deterministic spread of i8 values over [-128, 127].
std::vector<double> i8_values(int64_t n, int64_t seed) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i)
    v.push_back(static_cast<double>((i * 37 + seed * 101) % 256 - 128));
  return v;
}

// x @ w^T exactly (x [M, K], w [N, K] row-major), wrapped to i32 as the accumulation is.
std::vector<double> int_reference(const std::vector<double>& x, const std::vector<double>& w,
                                  int64_t m, int64_t n, int64_t k) {
  std::vector<double> out;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int64_t s = 0;
      for (int64_t q = 0; q < k; ++q)
        s += static_cast<int64_t>(x[i * k + q]) * static_cast<int64_t>(w[j * k + q]);
      out.push_back(static_cast<int32_t>(static_cast<uint32_t>(s)));
    }
  return out;
}

}  // namespace

TEST(I8, DtypeNamesPromotionAndHostValues) {
  EXPECT_EQ(ts::dtype_size(ts::i8), 1);
  EXPECT_EQ(ts::dtype_name(ts::i8), "i8");
  EXPECT_EQ(ts::dtype_from_name("int8"), ts::i8);
  EXPECT_TRUE(ts::is_integer(ts::i8));
  EXPECT_FALSE(ts::is_float(ts::i8));
  EXPECT_EQ(ts::promote(ts::i8, ts::i32), ts::i32);
  EXPECT_EQ(ts::promote(ts::i64, ts::i8), ts::i64);
  EXPECT_EQ(ts::promote(ts::i8, ts::boolean), ts::i8);
  EXPECT_EQ(ts::promote(ts::i8, ts::f16), ts::f16);
  EXPECT_EQ(ts::promote(ts::i8, ts::f8e4m3), ts::f8e4m3);
  EXPECT_EQ(ts::promote_weak(ts::i8, ts::i64), ts::i8);  // x_i8 + 1 stays i8
  EXPECT_EQ(ts::promote_weak(ts::i8, ts::f32), ts::f32);
  ts::Buffer b = ts::Buffer::from_vector({-128, 127, 2.7, -2.7}, {4}, ts::i8);
  EXPECT_EQ(b.to_vector(), (std::vector<double>{-128, 127, 2, -2}));
  // Out of range is an error, as torch's "value cannot be converted to type int8_t".
  EXPECT_THROW(ts::Buffer::from_vector({128}, {1}, ts::i8), ts::UserError);
  EXPECT_THROW(ts::Buffer::full({2}, -129, ts::i8), ts::UserError);
  // DLPack: kDLInt of 8 bits (torch.int8) both ways.
  DLManagedTensor* t = b.to_dlpack();
  EXPECT_EQ(t->dl_tensor.dtype.code, kDLInt);
  EXPECT_EQ(t->dl_tensor.dtype.bits, 8);
  ts::Buffer back = ts::Buffer::from_dlpack(t);
  EXPECT_EQ(back.dtype(), ts::i8);
  EXPECT_EQ(back.to_vector(), b.to_vector());
}

// i8 arithmetic wraps modulo 2^8 (torch: int8 100 + 100 is -56); a float converts to i8 by
// truncation toward zero, saturating, NaN 0; i8 with i32 computes in i32. The interpreter's
// values; NVRTC compiles the CUDA, which holds i8 values as signed char.
TEST(I8, KernelsWrapArithmeticAndSaturateFloatCasts) {
  auto k = ts::kernel("i8_ops", [](ts::Tensor x, ts::Tensor y, ts::Tensor f) {
    ts::Tensor sum = ts::empty_like(x), prod = ts::empty_like(x), neg = ts::empty_like(x);
    ts::Tensor cast = ts::empty_like(x), wide = ts::empty({x.size(0)}, ts::i32);
    for (auto t : ts::tile(x.size(0))) {
      sum(t) = x(t) + y(t);
      prod(t) = ts::floordiv(x(t) * 3, 2);  // wraps before the division
      neg(t) = -x(t);
      cast(t) = f(t).to(ts::i8);
      wide(t) = x(t).to(ts::i32) + y(t).to(ts::i32);
    }
    return std::tuple{sum, prod, neg, cast, wide};
  });
  const double nan = std::nan("");
  ts::Buffer x = ts::Buffer::from_vector({100, -128, 127, -5, 60}, {5}, ts::i8);
  ts::Buffer y = ts::Buffer::from_vector({100, -1, 1, 7, 70}, {5}, ts::i8);
  ts::Buffer f = ts::Buffer::from_vector({300.7, -1e9, nan, -3.9, 127.9}, {5}, ts::f32);
  auto [sum, prod, neg, cast, wide] = k(x, y, f);
  EXPECT_EQ(sum.dtype(), ts::i8);
  EXPECT_EQ(sum.to_vector(), (std::vector<double>{-56, 127, -128, 2, -126}));
  // 100 * 3 = 300 wraps to 44, // 2 = 22; -128 * 3 = -384 wraps to -128, // 2 = -64; 381
  // wraps to 125; -15 // 2 = -8 (floor); 180 wraps to -76.
  EXPECT_EQ(prod.to_vector(), (std::vector<double>{22, -64, 62, -8, -38}));
  EXPECT_EQ(neg.to_vector(), (std::vector<double>{-100, -128, -127, 5, -60}));
  EXPECT_EQ(cast.to_vector(), (std::vector<double>{127, -128, 0, -3, 127}));
  EXPECT_EQ(wide.to_vector(), (std::vector<double>{200, -129, 128, 2, 130}));
  REQUIRE_NVRTC();
  const std::string cu = nvrtc_test::compile(k, x, y, f);
  EXPECT_NE(cu.find("signed char"), std::string::npos) << cu;
  EXPECT_NE(cu.find("ts::to_i8("), std::string::npos) << cu;
}

// ts::dot of i8 operands sums exact i32 products; examples::make_int8_matmul (x w^T, the
// products of extreme values included) and its row-wise scaled form into bf16.
TEST(I8, DotsSumInI32) {
  const int64_t m = 70, n = 50, k = 45;
  const std::vector<double> xs = i8_values(m * k, 1), ws = i8_values(n * k, 2);
  ts::Buffer x = ts::Buffer::from_vector(xs, {m, k}, ts::i8);
  ts::Buffer w = ts::Buffer::from_vector(ws, {n, k}, ts::i8);
  auto mm = examples::make_int8_matmul(ts::Settings{.config = blocks(64, 64, 32, 4)});
  ts::Buffer out = mm(x, w.transpose(0, 1));
  EXPECT_EQ(out.dtype(), ts::i32);
  EXPECT_EQ(out.to_vector(), int_reference(xs, ws, m, n, k));
  ts::Buffer sx = ts::Buffer::arange(m, ts::f32), sy = ts::Buffer::full({n}, 0.5, ts::f32);
  ts::Buffer r = examples::make_int8_matmul_rowwise()(x, w.transpose(0, 1), sx, sy);
  EXPECT_EQ(r.dtype(), ts::bf16);
  const std::vector<double> rv = r.to_vector(), want = int_reference(xs, ws, m, n, k);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      ASSERT_EQ(rv[i * n + j],
                ts::round_to(ts::bf16, static_cast<float>(want[i * n + j] * i * 0.5f)))
          << i << "," << j;
}

// Both factors K-major (x w^T): wgmma m64nNk32 s8 into s32 accumulators, boxes of 128 bytes
// of K; the partial last tile of K zeroed a byte at a time; a row-major y copied K-major by
// the threads; K blocks under 128 bytes on mma.sync m16n8k32 where both factors are K-major,
// else on the CUDA cores.
TEST(I8, KMajorDotsTakeWgmmaS8) {
  ts::Buffer x = ts::Buffer::zeros({512, 512}, ts::i8), w = ts::Buffer::zeros({512, 512}, ts::i8);
  ts::Config c = blocks(128, 256, 128, 8);
  c.num_stages = 4;
  auto k = examples::make_int8_matmul(ts::Settings{.config = c});
  stage_test::Staged s = stage_test::staged("layout", false, k, c, x, w.transpose(0, 1));
  const ts::passes::Contraction& con = s.stages.loops.at(0).layout.contractions.at(0);
  ASSERT_TRUE(con.mma && con.mma->wgmma) << s.text;
  EXPECT_EQ(con.mma->operand, ts::i8);
  EXPECT_EQ(con.mma->stage_bytes, (128 + 256) * 128);
  EXPECT_NE(s.text.find("wgmma m64n256k32 s8, 2 warpgroups"), std::string::npos) << s.text;
  stage_test::Staged row = stage_test::staged("layout", false, k, c, x, w);
  const auto& rm = row.stages.loops.at(0).layout.contractions.at(0).mma;
  ASSERT_TRUE(rm && rm->wgmma && rm->transposed[1]) << row.text;
  REQUIRE_NVRTC();
  const std::string cu = nvrtc_test::compile(k, x, w.transpose(0, 1));
  EXPECT_NE(cu.find("wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8"), std::string::npos) << cu;
  EXPECT_NE(cu.find("ts_wgmma_256_s8_00(int* d"), std::string::npos) << cu;
  ts::Buffer xr = ts::Buffer::zeros({200, 80}, ts::i8), wr = ts::Buffer::zeros({136, 80}, ts::i8);
  const std::string ragged = nvrtc_test::compile(k, xr, wr.transpose(0, 1));
  EXPECT_NE(ragged.find("*reinterpret_cast<unsigned char*>(buf + "), std::string::npos) << ragged;
  const std::string copied = nvrtc_test::compile(k, x, w);
  EXPECT_NE(copied.find("alignas(16) unsigned char v[16];"), std::string::npos) << copied;
  // K blocks of 32 bytes: mma.sync m16n8k32 for x w^T (staged K-major, rows padded by 16
  // bytes; ldmatrix at byte offsets), the CUDA cores for a row-major y, which ldmatrix
  // cannot transpose by bytes (the layout stage says so).
  auto small = examples::make_int8_matmul(ts::Settings{.config = blocks(64, 64, 32, 4)});
  stage_test::Staged ms =
      stage_test::staged("layout", false, small, blocks(64, 64, 32, 4), x, w.transpose(0, 1));
  const auto& sync = ms.stages.loops.at(0).layout.contractions.at(0).mma;
  ASSERT_TRUE(sync && !sync->wgmma) << ms.text;
  EXPECT_NE(ms.text.find("on tensor cores (mma.sync m16n8k32 i8,"), std::string::npos) << ms.text;
  EXPECT_EQ(sync->pitch[0], 32 + 16);
  const std::string on_sync = nvrtc_test::compile(small, x, w.transpose(0, 1));
  EXPECT_NE(on_sync.find("ts::mma_16832_s8("), std::string::npos) << on_sync;
  EXPECT_NE(on_sync.find("signed char s[TS_V];"), std::string::npos) << on_sync;
  stage_test::Staged rs = stage_test::staged("layout", false, small, blocks(64, 64, 32, 4), x, w);
  EXPECT_NE(rs.text.find("mma.sync reads 8-bit factors K-major only"), std::string::npos)
      << rs.text;
  const std::string cuda_cores = nvrtc_test::compile(small, x, w);
  EXPECT_EQ(cuda_cores.find("wgmma.mma_async"), std::string::npos);
  EXPECT_NE(cuda_cores.find("int* f"), std::string::npos) << cuda_cores;  // i32 factors
  // Split-K adds i32 partial sums (int4 vectors); the row-wise example compiles too.
  ts::Config split = c;
  split.split_k = 2;
  const std::string sk = nvrtc_test::compile(
      examples::make_int8_matmul(ts::Settings{.config = split}), x, w.transpose(0, 1));
  EXPECT_NE(sk.find("make_int4("), std::string::npos) << sk;
  ts::Buffer s512 = ts::Buffer::ones({512}, ts::f32);
  const std::string rowwise =
      nvrtc_test::compile(examples::make_int8_matmul_rowwise(ts::Settings{.config = c}), x,
                          w.transpose(0, 1), s512, s512);
  EXPECT_NE(rowwise.find("m64n256k32.s32.s8.s8"), std::string::npos) << rowwise;
}

// A K block of 256 i8 values: the factors' f32 staging for the CUDA cores (384 KiB) would
// not fit shared memory, but two stages of the wgmma ring (2 x 96 KiB) do, so the dot is
// kept for tensor cores and lands on wgmma; where it cannot, the error names the dot's
// line, the shared memory and why it is not on wgmma.
TEST(I8, AKBlockOf256TakesWgmmaWhereItsRingFits) {
  ts::Buffer x = ts::Buffer::zeros({512, 512}, ts::i8), w = ts::Buffer::zeros({512, 512}, ts::i8);
  ts::Config c = blocks(128, 256, 256, 8);
  c.num_stages = 2;
  auto k = examples::make_int8_matmul(ts::Settings{.config = c});
  stage_test::Staged s = stage_test::staged("layout", false, k, c, x, w.transpose(0, 1));
  const ts::passes::Contraction& con = s.stages.loops.at(0).layout.contractions.at(0);
  ASSERT_TRUE(con.mma && con.mma->wgmma) << s.text;
  EXPECT_EQ(con.shared_bytes, 2 * (128 + 256) * 256);
  REQUIRE_NVRTC();
  const std::string cu = nvrtc_test::compile(k, x, w.transpose(0, 1));
  EXPECT_NE(cu.find("wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8"), std::string::npos) << cu;
  // An M-major x: its two K-major copies (2 x 32 KiB) past the ring leave no room for two
  // stages, and the CUDA cores' staging does not fit either: a UserError.
  const ts::Buffer xm = x.transpose(0, 1).contiguous().transpose(0, 1);
  try {
    k.cuda(false, xm, w.transpose(0, 1));
    FAIL() << "neither a ring nor the CUDA cores staging fits";
  } catch (const ts::UserError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("KiB of shared memory (at most 227 KiB) where it is not on wgmma"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("matmul.hpp:"), std::string::npos) << m;
    EXPECT_NE(m.find("two stages of its rings do not fit"), std::string::npos) << m;
    EXPECT_NE(m.find("use a smaller block size for the summed dim"), std::string::npos) << m;
  }
}

TEST(I8, DotsOfI8RefuseFloatAccumulatorsAndOutDtypes) {
  ts::Buffer x = ts::Buffer::zeros({16, 16}, ts::i8), y = ts::Buffer::zeros({16, 16}, ts::i8);
  // The error names the line of the dot (or atomic): this file's, or the example's.
  auto expect_error = [](auto&& call, const std::string& what, const char* file = "i8_test.cpp") {
    try {
      call();
      FAIL() << "expected a UserError: " << what;
    } catch (const ts::UserError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
    }
  };
  // dot_test::make_dot accumulates in f32.
  expect_error([&] { dot_test::make_dot()(x, y); },
               "ts::dot of i8 operands with an f32 accumulator", "dot_test_util.hpp");
  auto f16_out = ts::kernel("i8_f16_out", [](ts::Tensor x, ts::Tensor y) {
    ts::Tensor out = ts::empty({x.size(0), y.size(1)}, ts::f16);
    for (auto [tm, tn] : ts::tile(x.size(0), y.size(1)))
      out(tm, tn) = ts::dot(x(tm, ts::all), y(ts::all, tn), ts::f16);
    return out;
  });
  expect_error([&] { f16_out(x, y); }, "ts::dot of i8 operands with out_dtype f16");
  ts::Buffer b = ts::Buffer::zeros({16, 16}, ts::bf16);
  expect_error([&] { examples::make_int8_matmul()(x, b); }, "ts::dot of an i8 and a bf16 value",
               "matmul.hpp");
  // No 8-bit atomics on the GPU: an atomic add into an i8 tensor is refused.
  auto atomic = ts::kernel("i8_atomic", [](ts::Tensor c, ts::Tensor v) {
    for (auto t : ts::tile(v.size(0))) ts::atomic_add(c, {t}, v(t));
  });
  ts::Buffer c8 = ts::Buffer::zeros({16}, ts::i8);
  expect_error([&] { atomic(c8, c8); }, "supported dtypes are i32, i64, u64");
}

// max, min, argmax and argmin of i8 rows pad with i8's own lowest and highest values:
// ragged rows (a tile past the row's end) and rows past one tile's reach (16384 columns:
// a loop over chunks), all-negative and all-equal rows.
TEST(I8, ReductionsPadWithI8sIdentities) {
  auto k = i8_test::make_row_extremes();
  for (int64_t cols : {37, 20001}) {
    // Row 0: all -50 but the last, -3; row 1: all 7; row 2: all 100 but the first, 120.
    std::vector<double> v;
    for (int64_t j = 0; j < cols; ++j) v.push_back(j == cols - 1 ? -3 : -50);
    for (int64_t j = 0; j < cols; ++j) v.push_back(7);
    for (int64_t j = 0; j < cols; ++j) v.push_back(j == 0 ? 120 : 100);
    auto [mx, mn, amx, amn] = k(ts::Buffer::from_vector(v, {3, cols}, ts::i8));
    EXPECT_EQ(mx.to_vector(), (std::vector<double>{-3, 7, 120})) << cols;
    EXPECT_EQ(mn.to_vector(), (std::vector<double>{-50, 7, 100})) << cols;
    EXPECT_EQ(amx.to_vector(), (std::vector<double>{static_cast<double>(cols - 1), 0, 0})) << cols;
    EXPECT_EQ(amn.to_vector(), (std::vector<double>{0, 0, 1})) << cols;
  }
  REQUIRE_NVRTC();
  const std::string cu = nvrtc_test::compile(k, ts::Buffer::zeros({3, 37}, ts::i8));
  EXPECT_NE(cu.find("(signed char)(-128)"), std::string::npos) << cu;
  EXPECT_NE(cu.find("(signed char)(127)"), std::string::npos) << cu;
}

// A C++ integer next to an i8 value takes i8: one outside [-128, 127] is an error at its line
// (torch refuses int8 + 1000), in arithmetic, comparisons and ts::where; a C++ fraction as an
// i8 dot's accumulator too; Buffer::arange past 127.
TEST(I8, ConstantsOutsideI8AreErrors) {
  ts::Buffer x = ts::Buffer::zeros({8}, ts::i8);
  auto expect_error = [](auto&& call, const std::string& what) {
    try {
      call();
      FAIL() << "expected a UserError: " << what;
    } catch (const ts::UserError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("i8_test.cpp"), std::string::npos) << e.what();
    }
  };
  auto less = ts::kernel("i8_less", [](ts::Tensor x) {
    ts::Tensor o = ts::empty({x.size(0)}, ts::boolean);
    for (auto t : ts::tile(x.size(0))) o(t) = x(t) < 200;
    return o;
  });
  expect_error([&] { less(x); }, "the constant 200 does not fit i8");
  auto times = ts::kernel("i8_times", [](ts::Tensor x) {
    ts::Tensor o = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) o(t) = x(t) * 1000;
    return o;
  });
  expect_error([&] { times(x); }, "the constant 1000 does not fit i8");
  auto pick = ts::kernel("i8_where", [](ts::Tensor x) {
    ts::Tensor o = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) o(t) = ts::where(x(t) > 0, x(t), -129);
    return o;
  });
  expect_error([&] { pick(x); }, "the constant -129 does not fit i8");
  auto in_range = ts::kernel("i8_in_range", [](ts::Tensor x) {
    ts::Tensor o = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) o(t) = ts::where(x(t) < 127, x(t) * 2, -128);
    return o;
  });
  EXPECT_EQ(in_range(ts::Buffer::from_vector({1, -70, 127}, {3}, ts::i8)).to_vector(),
            (std::vector<double>{2, 116, -128}));
  auto weak_acc = ts::kernel("i8_weak_acc", [](ts::Tensor x, ts::Tensor y) {
    ts::Tensor out = ts::empty({x.size(0), y.size(1)}, ts::i32);
    for (auto [tm, tn] : ts::tile(x.size(0), y.size(1)))
      out(tm, tn) = ts::dot(x(tm, ts::all), y(ts::all, tn), 0.5);
    return out;
  });
  ts::Buffer m = ts::Buffer::ones({16, 16}, ts::i8);
  expect_error([&] { weak_acc(m, m); },
               "ts::dot of i8 operands with a float constant as accumulator");
  EXPECT_THROW(ts::Buffer::arange(129, ts::i8), ts::UserError);
  EXPECT_EQ(ts::Buffer::arange(128, ts::i8).to_vector().back(), 127);
}

// A C++ integer stored into an i8 tensor, or atomically added to an i32 one, must fit its
// dtype (torch: "value cannot be converted to type int8_t without overflow"); one that fits
// is stored as it is.
TEST(I8, StoredConstantsMustFitTheTensor) {
  auto fill = [](int64_t v) {
    return ts::kernel("i8_fill", [v](ts::Tensor x) {
      ts::Tensor o = ts::empty_like(x);
      for (auto t : ts::tile(x.size(0))) o(t) = v;
      return o;
    });
  };
  ts::Buffer x = ts::Buffer::zeros({4}, ts::i8);
  try {
    fill(300)(x);
    FAIL() << "a store of 300 into an i8 tensor";
  } catch (const ts::UserError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("the constant 300 does not fit i8, the dtype of "), std::string::npos) << m;
    EXPECT_NE(m.find("i8_test.cpp"), std::string::npos) << m;
  }
  EXPECT_EQ(fill(-128)(x).to_vector(), std::vector<double>(4, -128));
  auto add_big = ts::kernel("i32_add_big", [](ts::Tensor c) {
    for (auto t : ts::tile(c.size(0))) ts::atomic_add(c, {t}, int64_t{1} << 33);
    return c;
  });
  EXPECT_THROW(add_big(ts::Buffer::zeros({4}, ts::i32)), ts::UserError);
  EXPECT_EQ(add_big(ts::Buffer::zeros({4}, ts::i64)).to_vector(),
            std::vector<double>(4, 8589934592.0));
}

// ts::arange in i8 counts at most to 127: an extent of at most 128 (100 and 128: sizes of
// one specialization) is taken, a larger one is an error at its line that says to count in
// i32 and convert.
TEST(I8, AnI8ArangePast127IsAnError) {
  auto count = ts::kernel("i8_arange", [](ts::Tensor x) {
    ts::Tensor o = ts::empty({x.size(0)}, ts::i8);
    for (auto t : ts::grid(1)) {
      (void)t;
      o(ts::all) = ts::arange(x.size(0), ts::i8);
    }
    return o;
  });
  for (int64_t size : {100, 128}) {
    const std::vector<double> got = count(ts::Buffer::zeros({size}, ts::i8)).to_vector();
    for (int64_t i = 0; i < size; ++i) ASSERT_EQ(got[static_cast<size_t>(i)], i);
  }
  try {
    count(ts::Buffer::zeros({200}, ts::i8));
    FAIL() << "an i8 arange over 200 elements";
  } catch (const ts::UserError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("ts::arange of dtype i8 over 200 elements: i8 counts to 127 only"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("ts::arange(n).to(ts::i8)"), std::string::npos) << m;
    EXPECT_NE(m.find("i8_test.cpp"), std::string::npos) << m;
  }
}
