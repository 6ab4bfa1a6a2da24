// Lowering for the GPU's compute capability (codegen::PipelineOptions::arch, rt::target_arch):
// which tensor-core instructions a dot lands on (wgmma on sm_90, mma.sync from sm_80, fp8
// mma.sync from sm_89, the CUDA cores below), loads by tensor descriptor reading through
// pointers below sm_90, TESSEL_TARGET_ARCH, and the examples compiled with NVRTC for sm_80 and
// sm_89 as lowered for them. GPU: tests/gpu/dot_gpu_test.cpp (DotGpu.LoweredForSm80*).
#include <gtest/gtest.h>

#include <cstdlib>
#include <tessel/tessel.hpp>

#include "driver/cuda_api.hpp"
#include "examples/kernels/basic.hpp"
#include "examples/kernels/matmul.hpp"
#include "examples/kernels/moe.hpp"
#include "examples/kernels/norms.hpp"
#include "examples/kernels/seed000.hpp"
#include "nvrtc_test_util.hpp"
#include "passes/layout.hpp"
#include "stage_test_util.hpp"
#include "tests/dot_test_util.hpp"
#include "tests/moe_dot_test_util.hpp"
#include "tests/tensor_descriptor_kernels.hpp"

namespace ts = tessel;
namespace passes = tessel::passes;

namespace {

using dot_test::blocks;

// TESSEL_TARGET_ARCH set for a scope.
struct TargetArch {
  explicit TargetArch(const char* v) { ::setenv("TESSEL_TARGET_ARCH", v, 1); }
  ~TargetArch() { ::unsetenv("TESSEL_TARGET_ARCH"); }
};

// The only contraction of kernel k's nest lowered for `arch`, and the layout stage's dump.
template <class K, class... A>
std::pair<passes::Contraction, std::string> contraction_for(int arch, const K& k,
                                                            const ts::Config& c, const A&... args) {
  stage_test::Staged s = stage_test::staged_for(arch, "layout", false, k, c, args...);
  const passes::Layout& L = s.stages.loops.at(0).layout;
  EXPECT_EQ(L.contractions.size(), 1u);
  return {L.contractions.at(0), s.text};
}

}  // namespace

TEST(TargetArch, ADotLandsOnTheTensorCoreInstructionsItsGpuHas) {
  auto k = dot_test::make_dot();
  ts::Buffer x = ts::Buffer::zeros({256, 256}, ts::bf16),
             y = ts::Buffer::zeros({256, 256}, ts::bf16);
  ts::Config c = blocks(128, 128, 64, 4);
  c.num_stages = 3;
  auto [on90, text90] = contraction_for(90, k, c, x, y);
  ASSERT_TRUE(on90.mma && on90.mma->wgmma) << text90;
  EXPECT_NE(text90.find("plan: sm_90, "), std::string::npos) << text90;
  for (int arch : {80, 86, 89}) {
    auto [con, text] = contraction_for(arch, k, c, x, y);
    ASSERT_TRUE(con.mma) << text;
    EXPECT_FALSE(con.mma->wgmma) << arch;
    EXPECT_EQ(con.not_wgmma, fmt::format("sm_{} has no wgmma (sm_90 only)", arch));
    EXPECT_NE(text.find(fmt::format("plan: sm_{}, ", arch)), std::string::npos) << text;
  }
  ts::Config c75 = blocks(128, 128, 32, 4);  // 64-deep factors in f32 pass sm_75's 64 KiB
  auto [on75, text75] = contraction_for(75, k, c75, x, y);
  EXPECT_FALSE(on75.mma) << text75;
  EXPECT_EQ(on75.not_wgmma, "sm_75 has no mma.sync for bf16 (sm_80 and later)");
  // Later GPUs have no wgmma either (their tensor cores take other instructions).
  auto [on100, text100] = contraction_for(100, k, c, x, y);
  ASSERT_TRUE(on100.mma);
  EXPECT_FALSE(on100.mma->wgmma);
}

// fp8 products: mma.sync m16n8k32 from sm_89 (both factors K-major, x w^T), the CUDA cores on
// sm_80; i8 ones on mma.sync from sm_80.
TEST(TargetArch, EightBitDotsTakeMmaSyncWhereTheGpuHasIt) {
  auto f32_out = dot_test::make_dot();
  auto i32_out = examples::make_int8_matmul();
  ts::Config c = blocks(64, 64, 64, 4);
  for (ts::DType t : {ts::f8e4m3, ts::f8e5m2, ts::i8}) {
    ts::Buffer x = ts::Buffer::zeros({128, 128}, t), w = ts::Buffer::zeros({128, 128}, t);
    auto plan = [&](int arch) {
      return t == ts::i8 ? contraction_for(arch, i32_out, c, x, w.transpose(0, 1))
                         : contraction_for(arch, f32_out, c, x, w.transpose(0, 1));
    };
    auto [on89, text89] = plan(89);
    ASSERT_TRUE(on89.mma) << text89;
    EXPECT_FALSE(on89.mma->wgmma);
    auto [on80, text80] = plan(80);
    EXPECT_EQ(on80.mma.has_value(), t == ts::i8) << text80;
    if (t != ts::i8)
      EXPECT_EQ(on80.not_wgmma,
                fmt::format("sm_80 has no mma.sync for {} (sm_89 and later)", ts::dtype_name(t)));
  }
}

// Config::indexing "tensor_descriptor" below sm_90 (no TMA): the loads read through
// pointers, as Triton's tensor descriptors do there; the values are the same.
TEST(TargetArch, LoadsByTensorDescriptorReadThroughPointersWithoutATma) {
  auto add = examples::make_add_2d();
  ts::Buffer x = ts::Buffer::ones({100, 200}, ts::f32), y = ts::Buffer::ones({100, 200}, ts::f32);
  const ts::Config c = tensor_descriptor_test::tma_config({32, 64});
  stage_test::Staged tma = stage_test::staged_for(90, "emit", true, add, c, x, y);
  EXPECT_NE(tma.stages.loops.at(0).kernel.source.find("ts::tma_load<2>("), std::string::npos);
  stage_test::Staged ptr = stage_test::staged_for(80, "emit", true, add, c, x, y);
  const std::string& src = ptr.stages.loops.at(0).kernel.source;
  EXPECT_EQ(src.find("tma"), std::string::npos) << src;
  EXPECT_EQ(ptr.stages.loops.at(0).nir.shared_bytes, 0);
  stage_test::Staged plan = stage_test::staged_for(80, "layout", false, add, c, x, y);
  EXPECT_NE(plan.text.find("plan: sm_80, pid_type flat, num_stages 1, indexing tensor_descriptor "
                           "read through pointers (sm_80 has no TMA)"),
            std::string::npos)
      << plan.text;
  EXPECT_EQ(tma.text.find("read through pointers"), std::string::npos) << tma.text;
}

// A program's shared memory is its GPU's: 163 KiB on sm_80, 99 KiB on sm_86 (the opt-in
// maximum per block). TF32 factors staged for mma.sync at 128 x 128 x 128 (128 KiB and
// padding) fit the one and are a clear error on the other.
TEST(TargetArch, SharedMemoryIsTheTargetGpusShare) {
  EXPECT_EQ(passes::shared_bytes_limit(90), 227 * 1024);
  EXPECT_EQ(passes::shared_bytes_limit(80), 163 * 1024);
  EXPECT_EQ(passes::shared_bytes_limit(89), 99 * 1024);
  EXPECT_EQ(passes::shared_bytes_limit(75), 64 * 1024);
  auto k = examples::make_dot_matmul();
  ts::Buffer x = ts::Buffer::zeros({256, 256}, ts::f32), y = ts::Buffer::zeros({256, 256}, ts::f32);
  const ts::Config c = blocks(128, 128, 128, 8);
  stage_test::Staged a100 = stage_test::staged_for(80, "layout", false, k, c, x, y);
  const passes::Layout& L = a100.stages.loops.at(0).layout;
  EXPECT_EQ(L.shared_limit, 163 * 1024);
  ASSERT_TRUE(L.contractions.at(0).mma) << a100.text;
  EXPECT_GT(L.contractions.at(0).shared_bytes, 128 * 1024) << a100.text;
  EXPECT_LE(L.contractions.at(0).shared_bytes, 163 * 1024) << a100.text;
  try {
    (void)stage_test::staged_for(86, "layout", false, k, c, x, y);
    ADD_FAILURE() << "128 KiB of factors on sm_86";
  } catch (const ts::UserError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("KiB of shared memory (at most 99 KiB)"), std::string::npos) << m;
    EXPECT_NE(m.find("matmul.hpp:"), std::string::npos) << m;
  }
}

// A transpose of 128 x 256 f32 tiles converts through 128.5 KiB of shared memory on sm_90; on
// sm_86 (99 KiB) its store keeps the nest's layout and the layout dump says why.
TEST(TargetArch, ATransposeTooLargeToConvertOnItsTargetSaysWhy) {
  auto k = examples::make_transpose();
  ts::Buffer x = ts::Buffer::zeros({512, 512}, ts::f32);
  const ts::Config c{.block_sizes = std::vector<int64_t>{128, 256}, .num_warps = 8};
  stage_test::Staged h100 = stage_test::staged_for(90, "layout", false, k, c, x);
  EXPECT_EQ(h100.stages.loops.at(0).layout.own_order.size(), 1u) << h100.text;
  EXPECT_EQ(h100.text.find("in the nest's layout"), std::string::npos) << h100.text;
  stage_test::Staged a10 = stage_test::staged_for(86, "layout", false, k, c, x);
  const passes::Layout& L = a10.stages.loops.at(0).layout;
  EXPECT_TRUE(L.own_order.empty()) << a10.text;
  EXPECT_EQ(L.own_order_refused.size(), 1u) << a10.text;
  EXPECT_NE(a10.text.find("in the nest's layout: converting its value to vectors along its "
                          "contiguous dim needs 131584 bytes of shared memory, more than a "
                          "program on sm_86 has (101376): one element per thread at a stride"),
            std::string::npos)
      << a10.text;
}

TEST(TargetArch, AValueThatIsNoComputeCapabilityIsAClearError) {
  auto message = [](const char* value) -> std::string {
    TargetArch t(value);
    try {
      (void)ts::rt::target_arch();
    } catch (const ts::UserError& e) {
      return e.what();
    }
    ADD_FAILURE() << value << " was accepted";
    return "";
  };
  for (const char* bad : {"sm_", "9", "999", "hopper", "1000", "sm_90 a"}) {
    const std::string m = message(bad);
    EXPECT_NE(m.find(fmt::format("TESSEL_TARGET_ARCH is '{}', not a compute capability", bad)),
              std::string::npos)
        << m;
    // The targets NVRTC compiles for, where it is present, else examples.
    if (ts::rt::nvrtc_available())
      EXPECT_NE(m.find(fmt::format("one of {}, ", ts::rt::nvrtc_archs().front())),
                std::string::npos)
          << m;
    else
      EXPECT_NE(m.find("e.g. 80 (A100)"), std::string::npos) << m;
  }
  // The architecture-specific targets are tessel's to choose.
  for (const char* specific : {"90a", "sm_100f"}) {
    const std::string m = message(specific);
    EXPECT_NE(m.find("not a compute capability"), std::string::npos) << m;
    EXPECT_NE(
        m.find(std::string(specific).find("100") != std::string::npos ? "give 100 without 'f'"
                                                                      : "give 90 without 'a'"),
        std::string::npos)
        << m;
  }
  TargetArch sm(" sm_86 ");
  EXPECT_EQ(ts::rt::target_arch(), 86);
  TargetArch upper("SM_89");
  EXPECT_EQ(ts::rt::target_arch(), 89);
}

// A call names its kernel and line (once per specialization, where a GPU would compile).
TEST(TargetArch, ABadValueIsAnErrorAtTheCall) {
  TargetArch bad("hopper");
  auto add = examples::make_add();
  ts::Buffer x = ts::Buffer::ones({10}, ts::f32);
  try {
    add(x, x);
    ADD_FAILURE() << "TESSEL_TARGET_ARCH=hopper was accepted";
  } catch (const ts::UserError& e) {
    EXPECT_EQ(e.kernel(), "add");
    EXPECT_NE(std::string(e.what()).find("target_arch_test.cpp:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("TESSEL_TARGET_ARCH is 'hopper'"), std::string::npos)
        << e.what();
  }
}

// A compute capability NVRTC does not compile for (sm_70: CUDA 13 has no Volta) is refused
// with the list it does compile for.
TEST(TargetArch, AComputeCapabilityNvrtcCannotCompileForIsAClearError) {
  REQUIRE_NVRTC();
  const std::vector<int> archs = ts::rt::nvrtc_archs();
  ASSERT_FALSE(archs.empty());
  EXPECT_NE(std::find(archs.begin(), archs.end(), 90), archs.end());
  // An old GPU's (sm_35) is one too.
  for (int old : {35, 61}) {
    TargetArch t(std::to_string(old).c_str());
    try {
      (void)ts::rt::target_arch();
      ADD_FAILURE() << old << " was accepted";
    } catch (const ts::UserError& e) {
      EXPECT_NE(std::string(e.what()).find(
                    fmt::format("TESSEL_TARGET_ARCH is '{}', which NVRTC {} does not compile for",
                                old, ts::rt::nvrtc_version())),
                std::string::npos)
          << e.what();
    }
  }
  int missing = 70;
  while (std::find(archs.begin(), archs.end(), missing) != archs.end()) ++missing;
  TargetArch t(std::to_string(missing).c_str());
  try {
    (void)ts::rt::target_arch();
    ADD_FAILURE() << missing << " was accepted";
  } catch (const ts::UserError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(fmt::format("TESSEL_TARGET_ARCH is '{}', which NVRTC {} does not compile "
                                 "for",
                                 missing, ts::rt::nvrtc_version())),
              std::string::npos)
        << m;
    EXPECT_NE(m.find(fmt::format("one of {}, ", archs.front())), std::string::npos) << m;
  }
}

// kernel.cuda(true) lowers for TESSEL_TARGET_ARCH and compiles for it: every example on sm_80
// (no wgmma, TMA or fp8 mma.sync in its code) and the fp8 ones on sm_89 (mma.sync).
TEST(TargetArch, TheExamplesCompileForSm80AsLoweredForIt) {
  REQUIRE_NVRTC();
  TargetArch sm80("80");
  auto no_sm90 = [](const std::string& cu) {
    for (const char* op : {"tessel/wgmma.cuh", "tessel/tma.cuh", "wgmma.mma_async", "ts::tma_",
                           "mbarrier", "cp.async.bulk"})
      EXPECT_EQ(cu.find(op), std::string::npos) << op << "\n" << cu;
  };
  ts::Buffer v = ts::Buffer::zeros({64, 96}, ts::f32);
  ts::Buffer b8 = ts::Buffer::scalar(8, ts::i32), b24 = ts::Buffer::scalar(24, ts::i32);
  no_sm90(nvrtc_test::compile(examples::make_f1(), v, b8, b24));
  no_sm90(nvrtc_test::compile(examples::make_f2(), v, b8, b24));
  ts::Buffer rows = ts::Buffer::zeros({37, 1000}, ts::bf16);
  ts::Buffer wn = ts::Buffer::ones({1000}, ts::bf16);
  no_sm90(nvrtc_test::compile(examples::make_softmax(), rows));
  no_sm90(nvrtc_test::compile(examples::make_rms_norm(), rows, wn, 1e-6));
  no_sm90(nvrtc_test::compile(
      examples::make_add_2d(ts::Settings{.config = tensor_descriptor_test::tma_config({32, 64})}),
      ts::Buffer::zeros({100, 200}, ts::f32), ts::Buffer::zeros({100, 200}, ts::f32)));
  // Dots: bf16 on mma.sync m16n8k16 at the tile the default config of sm_90 puts on wgmma.
  ts::Buffer x = ts::Buffer::zeros({256, 256}, ts::bf16),
             y = ts::Buffer::zeros({256, 256}, ts::bf16);
  ts::Config c = blocks(128, 128, 64, 4);
  c.num_stages = 3;
  const std::string mm =
      nvrtc_test::compile(examples::make_dot_matmul(ts::Settings{.config = c}), x, y);
  no_sm90(mm);
  EXPECT_NE(mm.find("m16n8k16"), std::string::npos) << mm;
  ts::Buffer bias = ts::Buffer::zeros({256}, ts::bf16);
  no_sm90(
      nvrtc_test::compile(examples::make_matmul_bias_gelu(ts::Settings{.config = c}), x, y, bias));
  ts::Buffer xb = ts::Buffer::zeros({2, 64, 64}, ts::bf16),
             yb = ts::Buffer::zeros({2, 64, 64}, ts::bf16);
  no_sm90(nvrtc_test::compile(examples::make_bmm(), xb, yb));
  moe_test::Routed r = moe_test::route({40, 100, 7}, 128, 128, 256, ts::bf16);
  const std::string grouped = nvrtc_test::compile(
      examples::make_grouped_matmul(ts::Settings{
          .config = ts::Config{.block_sizes = std::vector<int64_t>{128, 64}, .num_warps = 4}}),
      r.x, r.w, r.n_rows, r.block_expert);
  no_sm90(grouped);
  EXPECT_NE(grouped.find("m16n8k16"), std::string::npos) << grouped;
  // 8-bit: i8 on mma.sync m16n8k32; fp8 on the CUDA cores at sm_80, on mma.sync at sm_89.
  ts::Buffer xi = ts::Buffer::zeros({256, 256}, ts::i8), wi = ts::Buffer::zeros({256, 256}, ts::i8);
  const ts::Config c8 = blocks(64, 64, 64, 4);
  const std::string i8 = nvrtc_test::compile(examples::make_int8_matmul(ts::Settings{.config = c8}),
                                             xi, wi.transpose(0, 1));
  no_sm90(i8);
  EXPECT_NE(i8.find("mma_16832_s8"), std::string::npos) << i8;
  ts::Buffer xf = ts::Buffer::zeros({256, 256}, ts::f8e4m3),
             wf = ts::Buffer::zeros({256, 256}, ts::f8e4m3);
  ts::Buffer s1 = ts::Buffer::ones({1}, ts::f32);
  auto fp8 = examples::make_fp8_matmul(ts::Settings{.config = c8});
  const std::string f80 = nvrtc_test::compile(fp8, xf, wf.transpose(0, 1), s1, s1);
  no_sm90(f80);
  EXPECT_EQ(f80.find("mma_16832"), std::string::npos) << f80;
  TargetArch sm89("89");
  auto fp8_89 = examples::make_fp8_matmul(ts::Settings{.config = c8});  // traced anew
  const std::string f89 = nvrtc_test::compile(fp8_89, xf, wf.transpose(0, 1), s1, s1);
  no_sm90(f89);
  EXPECT_NE(f89.find("mma_16832_e4m3"), std::string::npos) << f89;
}
