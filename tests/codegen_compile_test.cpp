// Every example kernel's generated CUDA compiles with NVRTC for sm_90 (no GPU needed).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <tessel/tessel.hpp>

#include "driver/cuda_api.hpp"
#include "examples/kernels/basic.hpp"
#include "examples/kernels/norms.hpp"
#include "examples/kernels/seed000.hpp"
#include "examples/kernels/seed002.hpp"
#include "nvrtc_test_util.hpp"

namespace ts = tessel;

namespace {

using nvrtc_test::compile;

ts::Buffer f32(std::vector<int64_t> shape) { return ts::Buffer::zeros(shape, ts::f32); }
ts::Buffer bound(int64_t v) { return ts::Buffer::scalar(static_cast<double>(v), ts::i32); }

TEST(CodegenCompile, Seed000F1) {
  REQUIRE_NVRTC();
  EXPECT_NE(compile(examples::make_f1(), f32({64, 96}), bound(8), bound(24)).find("long long"),
            std::string::npos);
}
TEST(CodegenCompile, Seed000F2VectorizedInnerTile) {
  REQUIRE_NVRTC();
  EXPECT_NE(compile(examples::make_f2(), f32({64, 96}), bound(8), bound(24)).find("ts::ld_vec"),
            std::string::npos);
}
TEST(CodegenCompile, Seed000F2Fixed) {
  REQUIRE_NVRTC();
  EXPECT_NE(
      compile(examples::make_f2_fixed(), f32({64, 96}), bound(8), bound(24)).find("gridDim.x"),
      std::string::npos);
}
TEST(CodegenCompile, Seed002PaddedSumForms) {
  REQUIRE_NVRTC();
  ts::Buffer x = f32({100, 100}), size = bound(80);
  EXPECT_NE(compile(examples::make_padded_sum(), x, size).find("warp_allreduce"),
            std::string::npos);
  compile(examples::make_padded_sum_index(), x, size);
  compile(examples::make_padded_sum_item(), x, size);
  compile(examples::make_padded_sum_manual(), x, size);
}
TEST(CodegenCompile, AddCopyAllDtypes) {
  REQUIRE_NVRTC();
  for (ts::DType t : {ts::f32, ts::f16, ts::bf16, ts::i32, ts::i64, ts::boolean}) {
    ts::Buffer x = ts::Buffer::zeros({1000}, t);
    compile(examples::make_add(), x, x);
    compile(examples::make_copy(), x);
  }
}
// A read-only pointer is __restrict__ unless another argument's bytes overlap its own
// (the kernel writes through that one): decided by address ranges, not by storage.
TEST(CodegenCompile, AliasedArgumentsAreNotRestrict) {
  REQUIRE_NVRTC();
  auto k = ts::kernel("scale_into", [](ts::Tensor x, ts::Tensor out) {
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) * 2;
  });
  ts::Buffer a = f32({100}), b = f32({100});
  EXPECT_NE(compile(k, a, b).find("const float* __restrict__"), std::string::npos);
  std::string same = compile(k, a, a);
  EXPECT_EQ(same.find("__restrict__"), std::string::npos) << same;
  std::string halves =
      compile(k, a.narrow(0, 0, 50), a.narrow(0, 50, 50));  // one storage, disjoint
  EXPECT_NE(halves.find("const float* __restrict__"), std::string::npos) << halves;
  std::string view = compile(k, a.narrow(0, 0, 50), a.narrow(0, 49, 50));  // one element shared
  EXPECT_EQ(view.find("__restrict__"), std::string::npos) << view;
  ts::Buffer v = ts::Buffer::arange(8, ts::f32);
  k(v, v);  // in place on the interpreter
  EXPECT_EQ(v.to_vector(), (std::vector<double>{0, 2, 4, 6, 8, 10, 12, 14}));
}

TEST(CodegenCompile, ALoopCarriedValueUnusedAfterItsLoopIsNotComputed) {
  // The running maximum is never read after the loop: its update is dead code. The
  // emitter declared it anyway and failed looking up the dead update (std::out_of_range).
  REQUIRE_NVRTC();
  auto k = ts::kernel("dead_accumulator", [](ts::Tensor x, ts::Tensor out) {
    for (auto tm : ts::tile(x.size(0))) {
      ts::Value acc = ts::full({tm}, -INFINITY, ts::f32);
      for (auto tn : ts::tile(x.size(1))) {
        acc = ts::maximum(acc, ts::max(x(tm, tn), 1));
        out(tm, tn) = x(tm, tn) + 1;
      }
    }
  });
  ts::Buffer x = ts::Buffer::arange(32, ts::f32).view_as_strided({4, 8}, {8, 1}, 0),
             out = f32({4, 8});
  std::string code = compile(k, x, out);
  EXPECT_EQ(code.find("ts::maximum("), std::string::npos) << code;
  k(x, out);
  EXPECT_EQ(out.to_vector()[31], 32);
}

TEST(CodegenCompile, Add2dAndBias) {
  REQUIRE_NVRTC();
  compile(examples::make_add_2d(), f32({33, 65}), f32({33, 65}));
  compile(examples::make_add_bias(), f32({33, 65}), f32({65}));
}
TEST(CodegenCompile, MathReductionsArgmaxAndLoopCarried) {
  REQUIRE_NVRTC();
  auto k = ts::kernel("mix", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    ts::Tensor idx = x.new_empty({x.size(0)}, ts::i64);
    for (auto tm : ts::tile(x.size(0))) {
      ts::Value row = x(tm, ts::all);
      ts::Value e = ts::exp(row - ts::max(row, 1, true));
      out(tm, ts::all) =
          e / ts::sum(e, 1, true) + ts::where(row > 0, ts::sigmoid(row), ts::tanh(row));
      ts::Value acc = ts::zeros({tm}, ts::f32);
      for (auto tk : ts::tile(x.size(1))) acc = acc + ts::sum(x(tm, tk), 1);
      idx(tm) = ts::argmax(row, 1) + acc.to(ts::i64);
    }
    return std::make_tuple(out, idx);
  });
  compile(k, f32({40, 300}));
}

}  // namespace

namespace {
TEST(CodegenCompile, BoolReductionsAnyAll) {
  REQUIRE_NVRTC();
  auto k = ts::kernel("any_all", [](ts::Tensor x) {
    ts::Tensor out = x.new_empty({x.size(0)}, ts::boolean);
    for (auto tm : ts::tile(x.size(0)))
      out(tm) = ts::any(x(tm, ts::all) > 0, 1) && ts::all_of(x(tm, ts::all) < 3, 1);
    return out;
  });
  compile(k, f32({40, 300}));
}
TEST(CodegenCompile, ProgramIdAndSharedBlockSize) {
  REQUIRE_NVRTC();
  auto k = ts::kernel("who", [](ts::Tensor x) {
    ts::Tensor out = x.new_empty({x.size(0)}, ts::i32);
    ts::BlockSize bs = ts::register_block_size(16, 256);
    for (auto t : ts::tile(x.size(0), {.block_size = bs})) out(t) = ts::program_id();
    for (auto t : ts::tile(x.size(0), {.block_size = bs})) out(t) = out(t) + 1;
    return out;
  });
  EXPECT_NE(compile(k, f32({1000})).find("blockIdx.x"), std::string::npos);
}
}  // namespace

// The key records whether each size is a multiple of 16 (Triton's divisibility rule) and
// the 16-byte alignment of pointers and strides; vector accesses that the key proves
// whole (all valid or all past the end) and aligned compile to one predicated vector
// access (ld_vec / st_vec <..., true, true>); the others keep the per-vector checks.
TEST(CodegenCompile, VectorAccessesProvenWholeAndAlignedByTheKey) {
  REQUIRE_NVRTC();
  auto add = examples::make_add_2d();
  std::string even = compile(add, f32({8, 1024}), f32({8, 1024}));
  std::string ragged = compile(add, f32({8, 1000}), f32({8, 1000}));
  EXPECT_NE(even.find("ts::ld_vec<float, TS_V, true, true>"), std::string::npos) << even;
  EXPECT_NE(even.find("ts::st_vec<float, TS_V, true, true>"), std::string::npos) << even;
  EXPECT_EQ(ragged.find("true, true>"), std::string::npos) << ragged;
  // 1000 columns: rows of 4000 bytes are 16-byte aligned, the row's end is not a
  // multiple of 16 elements.
  EXPECT_NE(ragged.find("ts::ld_vec<float, TS_V, false, true>"), std::string::npos) << ragged;
  // A column view starting at column 1: its loads are misaligned (the output is not).
  ts::Buffer wide = f32({8, 1025});
  ts::Buffer view = wide.narrow(1, 1, 1024);
  std::string shifted = compile(add, view, view);
  EXPECT_NE(shifted.find("ts::ld_vec<float, TS_V, true, false>"), std::string::npos) << shifted;
  EXPECT_EQ(shifted.find("ts::ld_vec<float, TS_V, true, true>"), std::string::npos) << shifted;
  EXPECT_NE(shifted.find("ts::st_vec<float, TS_V, true, true>"), std::string::npos) << shifted;
}

// Sizes that differ only in divisibility by 16 are different specializations, and both
// compute the right values (interpreter).
TEST(CodegenCompile, DivisibilityBy16IsPartOfTheSpecialization) {
  auto add = examples::make_add();
  for (int64_t n : {1024, 1000, 1008, 17}) {
    ts::Buffer x = ts::Buffer::arange(n, ts::f32), y = ts::Buffer::full({n}, 2.0, ts::f32);
    std::vector<double> out = add(x, y).to_vector();
    ASSERT_EQ(static_cast<int64_t>(out.size()), n);
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(out[i], static_cast<double>(i) + 2.0);
  }
}

// Rows whose length is a multiple of 16 are masked a vector at a time in reductions (the
// test of a vector's first element stands for its lanes); ragged rows element by element.
TEST(CodegenCompile, ReductionMasksPerVectorWhenTheKeyProvesWholeVectors) {
  REQUIRE_NVRTC();
  ts::Settings one_row{.config =
                           ts::Config{.block_sizes = std::vector<int64_t>{1}, .num_warps = 8}};
  std::string even = compile(examples::make_row_sum(one_row), f32({4, 4096}));
  std::string ragged = compile(examples::make_row_sum(one_row), f32({4, 4001}));
  EXPECT_NE(even.find("(r & ~(TS_V - 1))"), std::string::npos) << even;
  EXPECT_EQ(ragged.find("(r & ~(TS_V - 1))"), std::string::npos) << ragged;
}

// Settings::print_output_code (or TESSEL_PRINT_CODE=1) prints the generated CUDA when
// kernel.cuda(true, ...) compiles it, on a machine without a GPU too.
TEST(CodegenCompile, PrintOutputCodeWhenCompilingWithoutAGpu) {
  REQUIRE_NVRTC();
  ::unsetenv("TESSEL_PRINT_CODE");  // the quiet kernel must be quiet
  auto quiet = examples::make_add();
  auto loud = examples::make_add(ts::Settings{.print_output_code = true});
  testing::internal::CaptureStderr();
  compile(quiet, f32({100}), f32({100}));
  std::string none = testing::internal::GetCapturedStderr();
  testing::internal::CaptureStderr();
  std::string src = compile(loud, f32({100}), f32({100}));
  std::string printed = testing::internal::GetCapturedStderr();
  EXPECT_EQ(none.find("__global__"), std::string::npos) << none;
  EXPECT_NE(printed.find(src), std::string::npos) << printed;
}
