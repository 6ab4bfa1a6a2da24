// SM partitions (green contexts) on the GPU: tessel kernels on a partition's stream match
// the interpreter, stay on the partition's SMs (read from %smid), size persistent grids by
// the partition, alternate with whole-GPU calls, and capture into CUDA graphs.
#include <gtest/gtest.h>

#include <set>
#include <tessel/tessel.hpp>
#include <tessel/testing.hpp>

#include "examples/kernels/seed002.hpp"
#include "gpu_test_util.hpp"
#include "persistent_test_kernels.hpp"

namespace ts = tessel;
namespace rt = tessel::rt;

/// Skips the current test without a GPU, or where the driver lacks green contexts.
#define TESSEL_REQUIRE_GREEN_CONTEXTS() \
  TESSEL_REQUIRE_GPU();                 \
  if (!ts::SmPartition::supported())    \
  GTEST_SKIP() << "no green contexts: " << ts::SmPartition::unsupported_reason()

namespace {

constexpr int kPartitionSms = 16;

// Waits for the work that made the inputs (fills on the legacy default stream): a
// partition's stream is non-blocking, so it does not wait for that stream by itself.
void settle() { rt::device_synchronize(0); }

using persistent_test::make_who_ran;
using persistent_test::row_sums;

// padded_sum (output allocated and zeroed on the call's stream) against the interpreter.
void expect_padded_sum_matches_interpreter(ts::Stream s, const ts::Buffer& x, int n) {
  auto k = examples::make_padded_sum();
  ts::Buffer size = ts::Buffer::scalar(n, ts::i32, ts::cuda(0));
  settle();
  ts::Buffer got = k(s, x, size);
  s.synchronize();
  ts::Buffer want = k(x.to(ts::cpu()), size.to(ts::cpu()));
  EXPECT_EQ(ts::count_mismatches(got.to(ts::cpu()), want, 1e-3, 1e-4), 0) << "bound " << n;
}

TEST(GreenContextGpu, PartitionHoldsAtLeastTheRequestedSms) {
  TESSEL_REQUIRE_GREEN_CONTEXTS();
  int total = rt::sm_count(0);
  ts::SmPartition p = ts::SmPartition::create(kPartitionSms);
  EXPECT_EQ(p.requested_sms(), kPartitionSms);
  EXPECT_GE(p.sm_count(), kPartitionSms);
  EXPECT_LE(p.sm_count(), total);
  EXPECT_EQ(p.device(), 0);
  EXPECT_NE(p.stream().handle, nullptr);
  std::printf("partition of %d SMs asked: %d held (device %d SMs)\n", kPartitionSms, p.sm_count(),
              total);
  EXPECT_EQ(ts::SmPartition::create(total).sm_count(), total);
}

TEST(GreenContextGpu, MoreSmsThanTheDeviceIsAUserErrorNamingTheRange) {
  TESSEL_REQUIRE_GREEN_CONTEXTS();
  int total = rt::sm_count(0);
  try {
    ts::SmPartition::create(total + 1);
    FAIL() << "expected a UserError";
  } catch (const ts::UserError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("num_sms = " + std::to_string(total + 1) + " is out of range"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("1 to " + std::to_string(total)), std::string::npos) << msg;
  }
}

TEST(GreenContextGpu, PersistentKernelOnPartitionMatchesInterpreter) {
  TESSEL_REQUIRE_GREEN_CONTEXTS();
  ts::SmPartition p = ts::SmPartition::create(kPartitionSms);
  // x lives in the primary context; the partition's kernels read it.
  ts::Buffer x = ts::Buffer::randn({4096, 128}, ts::f32, ts::cuda(0), 51);
  for (int n : {0, 1000, 4096}) expect_padded_sum_matches_interpreter(p.stream(), x, n);
}

// A raw NVRTC kernel, loaded and launched through tessel's runtime in the stream's
// context: every program records the SM it ran on (%smid), after spinning long enough
// that the hardware spreads the programs over every SM it may use.
constexpr const char* kRecordSmid = R"(
extern "C" __global__ void record_smid(int* out, long long spin) {
  unsigned smid;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  long long t0 = clock64();
  while (clock64() - t0 < spin) {}
  if (threadIdx.x == 0) out[blockIdx.x] = static_cast<int>(smid);
}
)";

struct SmidKernel {
  ts::Buffer out;
  rt::Function fn;
  long long spin = 200000;  // cycles, about 0.1 ms per program
  int programs = 0;
  void* params[2] = {nullptr, nullptr};
  void* ptr = nullptr;

  // Loads record_smid in the context of `stream` (a partition's or the device's).
  explicit SmidKernel(ts::Stream stream) {
    programs = 8 * rt::sm_count(0);
    out = ts::Buffer::full({programs}, -1, ts::i32, ts::cuda(0));
    settle();
    rt::CompileOptions opts;
    opts.arch = rt::compute_capability(0);
    std::string cubin = rt::compile_cuda(kRecordSmid, "record_smid.cu", opts);
    rt::ContextScope scope(stream.handle);
    fn = rt::load_function(cubin, "record_smid", 0);
    ptr = out.data_ptr();
    params[0] = &ptr;
    params[1] = &spin;
  }
  void launch(ts::Stream stream) { rt::launch(fn, programs, 1, 1, 128, 0, stream.handle, params); }
  std::set<int> sms_used() const {
    std::set<int> used;
    for (double v : out.to_vector()) used.insert(static_cast<int>(v));
    return used;
  }
};

TEST(GreenContextGpu, ProgramsRunOnAtMostThePartitionsSms) {
  TESSEL_REQUIRE_GREEN_CONTEXTS();
  ts::SmPartition p = ts::SmPartition::create(kPartitionSms);
  SmidKernel on_part(p.stream());
  on_part.launch(p.stream());
  p.stream().synchronize();
  std::set<int> used = on_part.sms_used();
  EXPECT_EQ(used.count(-1), 0u) << "a program did not run";
  EXPECT_LE(static_cast<int>(used.size()), p.sm_count());
  EXPECT_GE(used.size(), 1u);
  // The same launch on an ordinary stream spreads wider: the check above can fail.
  ts::Stream s = ts::Stream::create();
  SmidKernel on_gpu(s);
  on_gpu.launch(s);
  s.synchronize();
  EXPECT_GT(static_cast<int>(on_gpu.sms_used().size()), p.sm_count());
  s.destroy();
}

size_t programs_used(ts::Stream stream, ts::Settings settings) {
  ts::Buffer n = ts::Buffer::scalar(32 * 4096, ts::i32, ts::cuda(0));
  ts::Buffer out = ts::Buffer::full({32 * 4096}, -1, ts::i32, ts::cuda(0));
  settle();
  make_who_ran(settings)(stream, n, out);
  stream.synchronize();
  std::set<int64_t> used;
  for (double v : out.to_vector()) used.insert(static_cast<int64_t>(v));
  return used.size();
}

TEST(GreenContextGpu, PersistentGridIsSizedByThePartition) {
  TESSEL_REQUIRE_GREEN_CONTEXTS();
  ts::SmPartition p = ts::SmPartition::create(kPartitionSms);
  ts::Config one_per_sm{.pid_type = ts::PidType::persistent_interleaved, .num_sm_multiplier = 1};
  EXPECT_EQ(programs_used(p.stream(), ts::Settings{.config = one_per_sm}),
            static_cast<size_t>(p.sm_count()));
  EXPECT_EQ(programs_used(p.stream(), ts::Settings{.max_sms = 8}), 8u);
  EXPECT_EQ(programs_used(p.stream(), ts::Settings{.reserved_sms = 8}),
            static_cast<size_t>(p.sm_count() - 8));
  EXPECT_THROW(programs_used(p.stream(), ts::Settings{.reserved_sms = p.sm_count()}),
               ts::UserError);
}

TEST(GreenContextGpu, WholeGpuAndPartitionBackToBack) {
  TESSEL_REQUIRE_GREEN_CONTEXTS();
  ts::SmPartition p = ts::SmPartition::create(kPartitionSms);
  ts::Stream s = ts::Stream::create();
  ts::Buffer x = ts::Buffer::randn({4096, 128}, ts::f32, ts::cuda(0), 52);
  auto k = examples::make_padded_sum();
  ts::Buffer size = ts::Buffer::scalar(3000, ts::i32, ts::cuda(0));
  ts::Buffer want = ts::Buffer::from_vector(row_sums(x, 3000, 0), {4096}, ts::f32);
  settle();
  for (int round = 0; round < 2; ++round) {
    ts::Buffer whole = k(s, x, size);
    ts::Buffer part = k(p.stream(), x, size);
    ts::Buffer deflt = k(x, size);  // the legacy default stream, primary context
    s.synchronize();
    p.stream().synchronize();
    EXPECT_EQ(ts::count_mismatches(whole.to(ts::cpu()), want, 1e-3, 1e-4), 0) << "round " << round;
    EXPECT_EQ(ts::count_mismatches(part.to(ts::cpu()), want, 1e-3, 1e-4), 0) << "round " << round;
    EXPECT_EQ(ts::count_mismatches(deflt.to(ts::cpu()), want, 1e-3, 1e-4), 0) << "round " << round;
  }
  s.destroy();
}

// Captured once on the partition's stream with the bound at 80, replayed after the bound
// changes; a captured raw launch stays on the partition's SMs when replayed.
TEST(GreenContextGpu, GraphCaptureOnPartitionStream) {
  TESSEL_REQUIRE_GREEN_CONTEXTS();
  ts::SmPartition p = ts::SmPartition::create(kPartitionSms);
  ts::Stream s = p.stream();
  auto k = examples::make_padded_sum_into();
  ts::Buffer x = ts::Buffer::randn({100, 100}, ts::f32, ts::cuda(0), 53);
  ts::Buffer size = ts::Buffer::scalar(80, ts::i32, ts::cuda(0));
  ts::Buffer out = ts::Buffer::zeros({100}, ts::f32, ts::cuda(0));
  settle();
  k(s, x, size, out);  // eager: traces, compiles, loads in the partition
  s.synchronize();
  ts::CudaGraph g = ts::CudaGraph::capture(s, [&] { k(s, x, size, out); });
  for (int n : {80, 37, 100}) {
    size.fill(n);
    out.fill(-1);
    rt::device_synchronize(0);
    g.replay(s);
    s.synchronize();
    ts::Buffer want = ts::Buffer::from_vector(row_sums(x, n, -1), {100}, ts::f32);
    EXPECT_EQ(ts::count_mismatches(out.to(ts::cpu()), want, 1e-4, 1e-5), 0) << "bound " << n;
  }
  SmidKernel smid(s);
  ts::CudaGraph gs = ts::CudaGraph::capture(s, [&] { smid.launch(s); });
  gs.replay(s);
  s.synchronize();
  EXPECT_LE(static_cast<int>(smid.sms_used().size()), p.sm_count());
  EXPECT_EQ(smid.sms_used().count(-1), 0u);
}

TEST(GreenContextGpu, OutputsOutliveTheirPartition) {
  TESSEL_REQUIRE_GREEN_CONTEXTS();
  ts::Buffer x = ts::Buffer::randn({1000, 64}, ts::f32, ts::cuda(0), 54);
  ts::Buffer size = ts::Buffer::scalar(700, ts::i32, ts::cuda(0));
  ts::Buffer out;
  settle();
  {
    ts::SmPartition p = ts::SmPartition::create(kPartitionSms);
    out = examples::make_padded_sum()(p.stream(), x, size);
  }  // waits for the stream, destroys it and the green context
  ts::Buffer want = ts::Buffer::from_vector(row_sums(x, 700, 0), {1000}, ts::f32);
  EXPECT_EQ(ts::count_mismatches(out.to(ts::cpu()), want, 1e-3, 1e-4), 0);
  out = ts::Buffer();  // freed on the legacy stream: its partition's stream is gone
  // The primary context still works, and a new partition loads the kernel again.
  expect_padded_sum_matches_interpreter(ts::Stream{}, x, 500);
  ts::SmPartition again = ts::SmPartition::create(kPartitionSms);
  expect_padded_sum_matches_interpreter(again.stream(), x, 300);
}

}  // namespace
