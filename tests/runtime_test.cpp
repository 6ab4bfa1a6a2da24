// CPU tests of the runtime layer: error messages, NVRTC (works without a GPU), the
// behaviour without a CUDA driver, and the helpers behind the GPU utility kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <source_location>
#include <string>

#include "driver/cuda_api.hpp"
#include "runtime/device_utils.hpp"
#include "tessel/buffer.hpp"
#include "tessel/error.hpp"
#include "tessel/testing.hpp"

namespace ts = tessel;
namespace rt = tessel::rt;

namespace {

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(Errors, SourceLocStr) {
  EXPECT_EQ((ts::SourceLoc{"/a/b/kernel.cpp", 12, 3}.str()), "kernel.cpp:12");
  EXPECT_EQ((ts::SourceLoc{"kernel.cpp", 0, 0}.str()), "kernel.cpp");
  EXPECT_EQ(ts::SourceLoc{}.str(), "");
}

TEST(Errors, UserErrorQuotesTheSourceLineWithACaret) {
  auto loc = std::source_location::current();
  int column_marker = 0;  // the line quoted
  (void)column_marker;
  ts::SourceLoc l = ts::SourceLoc::from(loc);
  ts::UserError e("my_kernel", l, "tile sizes differ", "Use the same tile");
  std::string msg = e.what();
  std::string head = "tessel: kernel 'my_kernel', runtime_test.cpp:" + std::to_string(l.line) +
                     ": tile sizes differ. Use the same tile\n";
  ASSERT_GE(msg.size(), head.size()) << msg;
  EXPECT_EQ(msg.substr(0, head.size()), head) << msg;
  std::string rest = msg.substr(head.size());
  auto nl = rest.find('\n');
  ASSERT_NE(nl, std::string::npos) << msg;
  std::string src = rest.substr(0, nl), caret = rest.substr(nl + 1);
  EXPECT_EQ(src.substr(0, 4), "    ");
  EXPECT_TRUE(contains(src, "auto loc = std::source_location::current();")) << src;
  ASSERT_EQ(caret.size(), static_cast<size_t>(4 + l.column)) << msg;
  EXPECT_EQ(caret.back(), '^');
  EXPECT_EQ(caret.find_first_not_of(' '), caret.size() - 1);
  EXPECT_EQ(e.kernel(), "my_kernel");
  EXPECT_EQ(e.loc().line, l.line);
}

// A relative source path (what ccache with CCACHE_BASEDIR makes of __FILE__) that the
// working directory does not resolve is looked up from the program's directory and its
// parents: the quoted line and caret stay.
TEST(Errors, ARelativeSourcePathIsFoundFromTheProgramsDirectory) {
  namespace fs = std::filesystem;
  const fs::path exe_dir = fs::read_symlink("/proc/self/exe").parent_path();
  const fs::path here =
      fs::path(__FILE__).is_absolute() ? fs::path(__FILE__) : exe_dir.parent_path() / __FILE__;
  ASSERT_TRUE(fs::exists(here)) << here;
  const std::string rel = fs::relative(here, exe_dir.parent_path()).string();
  const fs::path cwd = fs::current_path();
  fs::current_path("/");      // not found from the working directory
  const int line = __LINE__;  // the line quoted
  std::string msg = ts::UserError("k", ts::SourceLoc{rel.c_str(), line, 3}, "bad", "").what();
  fs::current_path(cwd);
  EXPECT_TRUE(contains(msg, "const int line = __LINE__;  // the line quoted")) << rel << "\n"
                                                                               << msg;
  EXPECT_TRUE(contains(msg, "\n      ^")) << msg;
}

TEST(Errors, UserErrorWithoutLineOrHint) {
  ts::UserError a("k", ts::SourceLoc{"x.cpp", 0, 0}, "bad dims");
  EXPECT_EQ(std::string(a.what()), "tessel: kernel 'k': bad dims");
  ts::UserError b("k", ts::SourceLoc{"/nonexistent/x.cpp", 5, 2}, "bad dims", "Fix it");
  EXPECT_EQ(std::string(b.what()), "tessel: kernel 'k', x.cpp:5: bad dims. Fix it");
  ts::UserError c("", ts::SourceLoc{}, "negative size", "Sizes must be >= 0");
  EXPECT_EQ(std::string(c.what()), "tessel: negative size. Sizes must be >= 0");
}

TEST(Errors, InternalAndRuntimeErrors) {
  ts::InternalError i("broken invariant");
  EXPECT_EQ(std::string(i.what()), "tessel internal error: broken invariant (please report this)");
  ts::RuntimeError r("out of memory");
  EXPECT_EQ(std::string(r.what()), "tessel: out of memory");
  EXPECT_EQ(std::string(ts::RuntimeError("tessel: x").what()), "tessel: x");
  EXPECT_THROW(TESSEL_CHECK(1 + 1 == 3, "math"), ts::InternalError);
  const ts::Error& base = r;
  EXPECT_TRUE(contains(base.what(), "out of memory"));
}

const char* kTinyKernel = R"(
#include "tiny_header.cuh"
extern "C" __global__ void tiny(float* out, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = i * kScale + 1.0f;
}
)";

TEST(Nvrtc, CompilesForSm90WithoutAGpu) {
  if (!rt::nvrtc_available()) GTEST_SKIP() << "NVRTC not installed";
  EXPECT_FALSE(rt::nvrtc_version().empty());
  auto dirs = rt::cuda_include_dirs();
  ASSERT_FALSE(dirs.empty());
  EXPECT_TRUE(contains(dirs[0], "include"));
  int64_t before = rt::compile_count();
  rt::CompileOptions opts;
  opts.arch = 90;
  opts.headers = {{"tiny_header.cuh", "constexpr float kScale = 2.0f;\n"}};
  std::string cubin = rt::compile_cuda(kTinyKernel, "tiny.cu", opts);
  EXPECT_EQ(rt::compile_count(), before + 1);
  ASSERT_GT(cubin.size(), 4u);
  EXPECT_EQ(cubin.substr(0, 4),
            "\x7f"
            "ELF");  // a cubin is an ELF file

  opts.extra = {"-std=c++20"};
  EXPECT_FALSE(rt::compile_cuda(kTinyKernel, "tiny20.cu", opts).empty());
  EXPECT_EQ(rt::compile_count(), before + 2);
}

TEST(Nvrtc, FindsCudaHeaders) {
  if (!rt::nvrtc_available()) GTEST_SKIP() << "NVRTC not installed";
  const char* src = R"(
#include <cuda_fp16.h>
#include <cuda/std/atomic>
extern "C" __global__ void h(__half* p) { p[0] = __float2half(1.0f); }
)";
  EXPECT_FALSE(rt::compile_cuda(src, "headers.cu", rt::CompileOptions{}).empty());
}

TEST(Nvrtc, CompilesTheUtilityKernels) {
  if (!rt::nvrtc_available()) GTEST_SKIP() << "NVRTC not installed";
  rt::CompileOptions opts;
  opts.arch = 90;
  for (const char* name :
       {"tessel_copy_6_4", "tessel_copy_7_5", "tessel_copy_3_0", "tessel_fill_2", "tessel_copy_6_8",
        "tessel_copy_9_6", "tessel_copy_6_10", "tessel_copy_10_1", "tessel_random", "tessel_arange",
        "tessel_count_mismatches"})
    EXPECT_FALSE(rt::compile_cuda(rt::kernel_source(name), name, opts).empty()) << name;
  EXPECT_THROW(rt::kernel_source("tessel_copy_11_1"), ts::InternalError);
}

TEST(Nvrtc, CompileErrorCarriesTheLog) {
  if (!rt::nvrtc_available()) GTEST_SKIP() << "NVRTC not installed";
  const char* broken = "extern \"C\" __global__ void broken(float* p) { p[0] = undefined_name; }\n";
  int64_t before = rt::compile_count();
  try {
    rt::compile_cuda(broken, "broken.cu", rt::CompileOptions{});
    FAIL() << "expected a CompileError";
  } catch (const rt::CompileError& e) {
    EXPECT_TRUE(contains(e.log, "undefined_name")) << e.log;
    EXPECT_TRUE(contains(e.log, "broken.cu")) << e.log;
    EXPECT_EQ(e.source, broken);
    EXPECT_TRUE(contains(e.what(), "broken.cu")) << e.what();
    EXPECT_TRUE(contains(e.what(), "undefined_name")) << e.what();
    const ts::RuntimeError& base = e;  // a CompileError is a RuntimeError
    (void)base;
  }
  EXPECT_EQ(rt::compile_count(), before + 1);
}

TEST(NoDriver, CudaBuffersThrowAClearRuntimeError) {
  if (rt::cuda_available()) GTEST_SKIP() << "a CUDA GPU is present";
  EXPECT_FALSE(ts::gpu_available());
  EXPECT_EQ(rt::device_count(), 0);
  EXPECT_FALSE(rt::cuda_unavailable_reason().empty());
  try {
    ts::Buffer::zeros({4}, ts::f32, ts::cuda(0));
    FAIL() << "expected a RuntimeError";
  } catch (const ts::RuntimeError& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.rfind("tessel: no CUDA driver/GPU: ", 0), 0u) << msg;
    EXPECT_TRUE(contains(msg, rt::cuda_unavailable_reason())) << msg;
    EXPECT_TRUE(contains(msg, "Run on CPU Buffers")) << msg;
  }
  EXPECT_THROW(ts::Buffer::ones({4}, ts::f32).to(ts::cuda()), ts::RuntimeError);
  EXPECT_THROW(rt::require_cuda(), ts::RuntimeError);
  EXPECT_THROW(rt::device_alloc(16, 0), ts::RuntimeError);
  EXPECT_THROW(rt::set_device(0), ts::RuntimeError);
}

TEST(DeviceUtils, MergeDims) {
  // Contiguous: one dimension.
  auto m = rt::merge_dims({2, 3, 4}, {{12, 4, 1}});
  EXPECT_EQ(m.shape, std::vector<int64_t>{24});
  EXPECT_EQ(m.strides[0], std::vector<int64_t>{1});
  // A transposed source keeps two dimensions; size-1 dimensions drop out.
  m = rt::merge_dims({3, 1, 4}, {{4, 99, 1}, {1, 7, 3}});
  EXPECT_EQ(m.shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(m.strides[0], (std::vector<int64_t>{4, 1}));
  EXPECT_EQ(m.strides[1], (std::vector<int64_t>{1, 3}));
  // A narrowed inner dimension stops the merge.
  m = rt::merge_dims({4, 3}, {{6, 1}});
  EXPECT_EQ(m.shape, (std::vector<int64_t>{4, 3}));
  m = rt::merge_dims({1, 1}, {{5, 5}});
  EXPECT_EQ(m.shape, std::vector<int64_t>{1});
}

TEST(DeviceUtils, StridedWalker) {
  std::vector<std::pair<int64_t, int64_t>> seen;
  for (rt::StridedWalker w({2, 3}, {3, 1}, {1, 2}); !w.done(); w.next())
    seen.emplace_back(w.offset(0), w.offset(1));
  std::vector<std::pair<int64_t, int64_t>> want = {{0, 0}, {1, 2}, {2, 4}, {3, 1}, {4, 3}, {5, 5}};
  EXPECT_EQ(seen, want);
  EXPECT_TRUE(rt::StridedWalker({2, 0}, {0, 1}).done());
  int n = 0;
  for (rt::StridedWalker w({}, {}); !w.done(); w.next()) ++n;
  EXPECT_EQ(n, 1);  // a rank-0 tensor has one element
}

TEST(DeviceUtils, RandomGenerator) {
  EXPECT_EQ(rt::random_bits(1, 2), rt::random_bits(1, 2));
  EXPECT_NE(rt::random_bits(1, 2), rt::random_bits(1, 3));
  EXPECT_NE(rt::random_bits(1, 2), rt::random_bits(2, 2));
  for (uint64_t i = 0; i < 1000; ++i) {
    double f16 = rt::random_uniform(9, i, ts::f16);
    ASSERT_EQ(f16 * 2048, std::floor(f16 * 2048));  // 11 bits: exact in f16
    ASSERT_LT(f16, 1.0);
    ASSERT_TRUE(std::isfinite(rt::random_normal(9, i)));
  }
}

}  // namespace
