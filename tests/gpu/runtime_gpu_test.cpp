// GPU tests of the runtime layer: driver calls, Buffers on the GPU, the utility kernels
// (fill, conversions, random numbers, mismatch counting) against the host, and launching
// an NVRTC-compiled kernel. Each test skips when no GPU is present.
#include <dlpack/dlpack.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "driver/cuda_api.hpp"
#include "gpu_test_util.hpp"
#include "tessel/buffer.hpp"
#include "tessel/error.hpp"
#include "tessel/tessel.hpp"
#include "tessel/testing.hpp"
#include "tests/buffer_cases.hpp"

namespace ts = tessel;
namespace rt = tessel::rt;

namespace {

namespace cases = buffer_cases;

// Exact comparison on the host (NaN equals NaN).
void expect_same(const ts::Buffer& gpu, const ts::Buffer& cpu, const std::string& what) {
  ASSERT_TRUE(gpu.device().is_cuda());
  ASSERT_FALSE(cpu.device().is_cuda());
  EXPECT_EQ(ts::count_mismatches(gpu.to(ts::cpu()), cpu, 0, 0), 0) << what;
}

TEST(GpuRuntime, DeviceProperties) {
  TESSEL_REQUIRE_GPU();
  EXPECT_GE(rt::device_count(), 1);
  EXPECT_GE(rt::driver_version(), 12000);
  EXPECT_GE(rt::compute_capability(0), 50);
  EXPECT_GT(rt::sm_count(0), 0);
  EXPECT_GE(rt::max_shared_memory_per_block(0), 48 * 1024);
  EXPECT_FALSE(rt::device_name(0).empty());
  EXPECT_THROW(rt::set_device(rt::device_count()), ts::RuntimeError);
  std::printf("device 0: %s, sm_%d, %d SMs, driver %d\n", rt::device_name(0).c_str(),
              rt::compute_capability(0), rt::sm_count(0), rt::driver_version());
}

// A Buffer freed on the legacy default stream leaves its block for the next allocation of
// its size class (driver/block_cache.hpp), which sees its own values, not the old ones;
// release_cached_blocks returns the blocks to the pool.
TEST(GpuRuntime, FreedBlocksServeTheNextAllocationOfTheirClass) {
  TESSEL_REQUIRE_GPU();
  ts::rt::release_cached_blocks(0);
  void* first = nullptr;
  {
    ts::Buffer a = ts::Buffer::full({1000}, 7.0, ts::f32, ts::cuda(0));
    first = a.data_ptr();
  }
  EXPECT_EQ(ts::rt::cached_block_bytes(0), 4096);  // 4000 bytes in the class of 4096
  ts::Buffer b = ts::Buffer::full({1024}, 3.0, ts::f32, ts::cuda(0));  // the same class
  EXPECT_EQ(b.data_ptr(), first);
  EXPECT_EQ(ts::rt::cached_block_bytes(0), 0);
  std::vector<double> v = b.to(ts::cpu()).to_vector();
  EXPECT_EQ(std::count(v.begin(), v.end(), 3.0), 1024);
  ts::Buffer c = ts::Buffer::zeros({2000}, ts::f32, ts::cuda(0));  // another class
  EXPECT_NE(c.data_ptr(), first);
  // Blocks past 8 MiB are not kept; releasing empties the cache.
  { ts::Buffer big = ts::Buffer::zeros({3 << 20}, ts::f32, ts::cuda(0)); }
  EXPECT_EQ(ts::rt::cached_block_bytes(0), 0);
  { ts::Buffer d = ts::Buffer::zeros({100}, ts::f32, ts::cuda(0)); }
  EXPECT_EQ(ts::rt::cached_block_bytes(0), 512);
  ts::rt::release_cached_blocks(0);
  EXPECT_EQ(ts::rt::cached_block_bytes(0), 0);
}

TEST(GpuRuntime, AllocCopyRoundTrip) {
  TESSEL_REQUIRE_GPU();
  std::vector<int32_t> host(1 << 20), back(1 << 20, 0);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<int32_t>(i * 7 + 1);
  int64_t bytes = static_cast<int64_t>(host.size() * sizeof(int32_t));
  void* a = rt::device_alloc(bytes, 0);
  void* b = rt::device_alloc(bytes, 0);
  rt::memcpy_htod(a, host.data(), bytes);
  rt::memcpy_dtod(b, a, bytes);
  rt::memcpy_dtoh(back.data(), b, bytes);
  rt::stream_synchronize();
  EXPECT_EQ(back, host);
  rt::memset_d8(b, 0, bytes);
  rt::memcpy_dtoh(back.data(), b, bytes);
  rt::device_synchronize(0);
  EXPECT_EQ(back, std::vector<int32_t>(host.size(), 0));
  rt::device_free(a, 0);
  rt::device_free(b, 0);
  EXPECT_EQ(rt::device_alloc(0, 0), nullptr);
}

TEST(GpuRuntime, BuffersRoundTripEveryDtype) {
  TESSEL_REQUIRE_GPU();
  for (ts::DType t : cases::all_dtypes()) {
    auto h = ts::Buffer::from_vector(cases::round_trip_values(), {2, 4}, t);
    auto d = h.to(ts::cuda(0));
    EXPECT_EQ(d.str(), ts::dtype_name(t) + "[2, 4] cuda:0");
    EXPECT_EQ(d.to_vector(), h.to_vector()) << ts::dtype_name(t);
    EXPECT_EQ(d.narrow(0, 1, 1).narrow(1, 3, 1).item(), h.to_vector()[7]);
    const int64_t n = t == ts::i8 ? 128 : 1000;  // i8's range ends at 127
    EXPECT_EQ(ts::Buffer::arange(n, t, ts::cuda()).to_vector(),
              ts::Buffer::arange(n, t).to_vector())
        << ts::dtype_name(t);
  }
  auto z = ts::Buffer::zeros({3, 5}, ts::bf16, ts::cuda());
  EXPECT_EQ(z.to_vector(), std::vector<double>(15, 0.0));
}

TEST(GpuRuntime, FillOnTheGpuIncludingStridedViews) {
  TESSEL_REQUIRE_GPU();
  for (ts::DType t : cases::all_dtypes()) {
    auto d = ts::Buffer::zeros({6, 10}, t, ts::cuda());
    auto h = ts::Buffer::zeros({6, 10}, t);
    cases::fill_pattern(d);
    cases::fill_pattern(h);
    expect_same(d, h, "fill " + ts::dtype_name(t));
  }
  auto nan = ts::Buffer::full({5}, std::nan(""), ts::f16, ts::cuda());
  for (double x : nan.to_vector()) EXPECT_TRUE(std::isnan(x));
}

TEST(GpuRuntime, RandMatchesTheHostExactly) {
  TESSEL_REQUIRE_GPU();
  for (ts::DType t : {ts::f16, ts::bf16, ts::f32, ts::f64, ts::f8e4m3, ts::f8e5m2}) {
    auto d = ts::Buffer::rand({1 << 20}, t, ts::cuda(), 1234);
    auto h = ts::Buffer::rand({1 << 20}, t, ts::cpu(), 1234);
    expect_same(d, h, "rand " + ts::dtype_name(t));
    auto dn = ts::Buffer::randn({1 << 20}, t, ts::cuda(), 99);
    auto hn = ts::Buffer::randn({1 << 20}, t, ts::cpu(), 99);
    // (An 8-bit float's ulp is an eighth of its binade: a last-bit difference of the double
    // normal value that flips a rounding is that far off.)
    double tol = t == ts::f64 || t == ts::f32 ? 1e-5 : ts::is_f8(t) ? 0.13 : 1e-2;
    EXPECT_EQ(ts::count_mismatches(dn.to(ts::cpu()), hn, tol, tol), 0) << ts::dtype_name(t);
    if (t == ts::f32) {
      // f32 values almost always round identically; allow a few last-bit differences.
      EXPECT_LE(ts::count_mismatches(dn.to(ts::cpu()), hn, 0, 0), 16);
    }
  }
}

TEST(GpuRuntime, CopyConvertsAcrossDtypesAndStrides) {
  TESSEL_REQUIRE_GPU();
  for (ts::DType st : cases::all_dtypes()) {
    for (ts::DType dt : cases::all_dtypes()) {
      std::string what = ts::dtype_name(st) + " -> " + ts::dtype_name(dt);
      auto src_h = cases::conversion_source(st);
      auto src_d = src_h.to(ts::cuda());
      // Contiguous to contiguous.
      auto dst_d = ts::Buffer::empty({4, 6}, dt, ts::cuda());
      auto dst_h = ts::Buffer::empty({4, 6}, dt);
      dst_d.copy_from(src_d);
      dst_h.copy_from(src_h);
      expect_same(dst_d, dst_h, what);
      // Transposed source into a narrowed destination.
      auto base_d = ts::Buffer::zeros({6, 9}, dt, ts::cuda());
      auto base_h = ts::Buffer::zeros({6, 9}, dt);
      base_d.narrow(1, 3, 4).copy_from(src_d.transpose(0, 1));
      base_h.narrow(1, 3, 4).copy_from(src_h.transpose(0, 1));
      expect_same(base_d, base_h, what + " strided");
    }
  }
}

TEST(GpuRuntime, CopiesBetweenHostAndGpuWithStrides) {
  TESSEL_REQUIRE_GPU();
  auto h = ts::Buffer::randn({8, 16}, ts::f32, ts::cpu(), 5);
  // Strided host source into a strided GPU destination, with a conversion.
  auto d = ts::Buffer::zeros({16, 10}, ts::f64, ts::cuda());
  d.narrow(1, 1, 8).copy_from(h.transpose(0, 1));
  auto expect = ts::Buffer::zeros({16, 10}, ts::f64);
  expect.narrow(1, 1, 8).copy_from(h.transpose(0, 1));
  expect_same(d, expect, "host -> strided gpu");
  // Strided GPU source into a strided host destination.
  auto back = ts::Buffer::zeros({8, 20}, ts::bf16);
  back.narrow(1, 2, 16).copy_from(d.narrow(1, 1, 8).transpose(0, 1));
  auto want = ts::Buffer::zeros({8, 20}, ts::bf16);
  want.narrow(1, 2, 16).copy_from(h);
  EXPECT_EQ(ts::count_mismatches(back, want, 0, 0), 0);
  // contiguous() on the GPU.
  auto t = d.transpose(0, 1).contiguous();
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.device(), ts::cuda());
  EXPECT_EQ(ts::count_mismatches(t, d.transpose(0, 1), 0, 0), 0);
}

TEST(GpuRuntime, CopiesBetweenTwoGpus) {
  TESSEL_REQUIRE_GPU();
  if (rt::device_count() < 2) GTEST_SKIP() << "needs two GPUs";
  auto h = ts::Buffer::randn({64, 48}, ts::f32, ts::cpu(), 11);
  auto a = h.to(ts::cuda(0));
  EXPECT_EQ(a.device(), ts::cuda(0));
  // Contiguous, same dtype: one peer copy.
  auto b = a.to(ts::cuda(1));
  EXPECT_EQ(b.device(), ts::cuda(1));
  expect_same(b, h, "cuda:0 -> cuda:1");
  // Strided source with a conversion into a strided destination.
  auto dst = ts::Buffer::zeros({48, 70}, ts::bf16, ts::cuda(1));
  dst.narrow(1, 3, 64).copy_from(a.transpose(0, 1));
  auto want = ts::Buffer::zeros({48, 70}, ts::bf16);
  want.narrow(1, 3, 64).copy_from(h.transpose(0, 1));
  expect_same(dst, want, "strided cuda:0 -> cuda:1");
  auto r = ts::Buffer::rand({1000}, ts::f16, ts::cuda(1), 4);
  expect_same(r, ts::Buffer::rand({1000}, ts::f16, ts::cpu(), 4), "rand on cuda:1");
  EXPECT_EQ(ts::count_mismatches(r.to(ts::cuda(0)), r.to(ts::cpu()).to(ts::cuda(0)), 0, 0), 0);
}

TEST(GpuRuntime, CountMismatchesOn2To28Elements) {
  TESSEL_REQUIRE_GPU();
  const int64_t n = int64_t{1} << 28;
  auto x = ts::Buffer::randn({n}, ts::f32, ts::cuda(), 3);
  auto y = ts::Buffer::empty({n}, ts::f32, ts::cuda());
  y.copy_from(x);
  EXPECT_EQ(ts::count_mismatches(y, x, 0, 0), 0);
  y.narrow(0, n - 1000, 1000).fill(100.0);
  y.narrow(0, 12345, 7).fill(std::nan(""));
  EXPECT_EQ(ts::count_mismatches(y, x, 1e-3, 1e-3), 1007);
  // `add`: x + 1 against x.
  auto ones = ts::Buffer::ones({n}, ts::f32, ts::cuda());
  auto zeros = ts::Buffer::zeros({n}, ts::bf16, ts::cuda());
  EXPECT_EQ(ts::count_mismatches(ones, zeros, 0, 0, 1.0), 0);
  EXPECT_EQ(ts::count_mismatches(ones, zeros, 0, 0), n);
  // Strided 2-D views.
  auto m = x.view_as_strided({1 << 14, 1 << 14}, {1 << 14, 1}, 0);
  auto mt = ts::Buffer::empty({1 << 14, 1 << 14}, ts::f32, ts::cuda());
  mt.copy_from(m.transpose(0, 1));
  EXPECT_EQ(ts::count_mismatches(mt.transpose(0, 1), m, 0, 0), 0);
}

TEST(GpuRuntime, SixtyFourBitIndexing) {
  TESSEL_REQUIRE_GPU();
  const int64_t n = (int64_t{1} << 31) + 64;  // 2 GiB of bool: indices past 2^31
  auto b = ts::Buffer::ones({n}, ts::boolean, ts::cuda());
  auto tail = b.narrow(0, n - 40, 40);
  tail.fill(0);
  EXPECT_EQ(b.narrow(0, n - 41, 1).item(), 1.0);
  EXPECT_EQ(tail.to_vector(), std::vector<double>(40, 0.0));
  auto ones = ts::Buffer::ones({n}, ts::boolean, ts::cuda());
  EXPECT_EQ(ts::count_mismatches(b, ones, 0, 0), 40);
}

// More GPU memory than exists: Buffer::empty states the bytes; an allocation in a kernel's
// host code is a UserError at its line, saying the GPU is out of memory.
TEST(GpuRuntime, AllocationsLargerThanGpuMemory) {
  TESSEL_REQUIRE_GPU();
  const int64_t n = int64_t{1} << 20;  // [n, n] f32: 4 TiB
  try {
    ts::Buffer::empty({n, n}, ts::f32, ts::cuda());
    ADD_FAILURE() << "no error";
  } catch (const ts::RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot allocate 4398046511104 bytes on cuda:0"),
              std::string::npos)
        << e.what();
  }
  static int line = 0;  // set while tracing
  auto k = ts::kernel("gpu_too_much_memory", [](ts::Tensor x, ts::Value m) {
    line = __LINE__ + 1;
    ts::Tensor out = x.new_empty({m, m});
    for (auto t : ts::tile(x.size(0))) out(t, 0) = x(t);
    return out;
  });
  std::string msg;
  try {
    k(ts::Buffer::zeros({4}, ts::f32, ts::cuda()), n);
  } catch (const ts::UserError& e) {
    msg = e.what();
  }
  EXPECT_NE(msg.find("kernel 'gpu_too_much_memory', runtime_gpu_test.cpp:" + std::to_string(line) +
                     ": cannot allocate a f32 tensor of shape [1048576, 1048576] (4398046511104 "
                     "bytes, 4096.0 GiB) on cuda:0: "),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("allocate less: check the sizes"), std::string::npos) << msg;
}

TEST(GpuRuntime, LaunchesACompiledKernel) {
  TESSEL_REQUIRE_GPU();
  const char* src = R"(
extern "C" __global__ void affine(float* out, long long n, float scale) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = i * scale + 1.0f;
}
extern "C" __global__ void big_shared(float* out) {
  extern __shared__ float tile[];
  const int n = 64 * 1024 / 4;
  for (int i = threadIdx.x; i < n; i += blockDim.x) tile[i] = (float)i;
  __syncthreads();
  if (threadIdx.x == 0) out[0] = tile[n - 1];
}
)";
  rt::CompileOptions opts;
  opts.arch = rt::compute_capability(0);
  int64_t before = rt::compile_count();
  std::string cubin = rt::compile_cuda(src, "launch_test.cu", opts);
  EXPECT_EQ(rt::compile_count(), before + 1);
  rt::Function f = rt::load_function(cubin, "affine", 0);
  rt::Function again = rt::load_function(cubin, "affine", 0);
  EXPECT_EQ(f.fn, again.fn);  // the module is cached
  EXPECT_THROW(rt::load_function(cubin, "no_such_kernel", 0), ts::RuntimeError);

  const int64_t n = 100000;
  auto out = ts::Buffer::zeros({n}, ts::f32, ts::cuda());
  void* ptr = out.data_ptr();
  long long count = n;
  float scale = 0.5f;
  void* params[] = {&ptr, &count, &scale};
  rt::launch(f, static_cast<unsigned>((n + 255) / 256), 1, 1, 256, 0, nullptr, params);
  auto v = out.to_vector();
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(v[i], static_cast<float>(i * 0.5f + 1.0f)) << i;

  rt::Function g = rt::load_function(cubin, "big_shared", 0);
  void* gparams[] = {&ptr};
  rt::launch(g, 1, 1, 1, 256, 64 * 1024, nullptr, gparams);
  EXPECT_EQ(out.narrow(0, 0, 1).item(), 16383.0);
}

TEST(GpuRuntime, DLPackExportsCudaTensors) {
  TESSEL_REQUIRE_GPU();
  auto d = ts::Buffer::arange(10, ts::i64, ts::cuda());
  DLManagedTensor* m = d.to_dlpack();
  EXPECT_EQ(m->dl_tensor.device.device_type, kDLCUDA);
  EXPECT_EQ(m->dl_tensor.data, d.data_ptr());
  auto back = ts::Buffer::from_dlpack(m);
  EXPECT_EQ(back.device(), ts::cuda(0));
  EXPECT_EQ(back.to_vector(), d.to_vector());
}

}  // namespace
