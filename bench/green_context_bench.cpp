// What an SM partition (green context, ts::SmPartition) costs, against its peer in the
// same run: creating one (vs an ordinary stream), the first kernel call in a new partition
// (a module load there) vs a cached call, the host time of a cached call on a partition's
// stream vs an ordinary stream, and the GPU time of a bandwidth-bound persistent kernel
// (padded_sum, 512 MiB f32) on partitions of 16, 32, 66 and all SMs vs the whole GPU with
// Settings::max_sms at the partition's SM count (both one program per SM).
//   green_context_bench
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>
#include <vector>

#include "bench/gpu_timer.hpp"
#include "driver/cuda_api.hpp"
#include "examples/kernels/seed002.hpp"

namespace ts = tessel;
namespace rt = tessel::rt;

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Host time per call of `calls` back-to-back calls, without waiting for the GPU (few
/// enough calls that the launch queue never fills), median of 7 rounds, in us.
double host_us(const std::function<void()>& f, ts::Stream s, int calls) {
  for (int i = 0; i < 20; ++i) f();
  s.synchronize();
  std::vector<double> r;
  for (int k = 0; k < 7; ++k) {
    auto t0 = Clock::now();
    for (int i = 0; i < calls; ++i) f();
    r.push_back(ms_since(t0) * 1000 / calls);
    s.synchronize();
  }
  return median(r);
}

}  // namespace

int main() {
  if (!rt::cuda_available()) {
    std::printf("no GPU: %s\n", rt::cuda_unavailable_reason().c_str());
    return 0;
  }
  if (!ts::SmPartition::supported()) {
    std::printf("no green contexts: %s\n", ts::SmPartition::unsupported_reason().c_str());
    return 0;
  }
  const int sms = rt::sm_count(0);
  std::printf("device: %s, %d SMs, driver %d\n", rt::device_name(0).c_str(), sms,
              rt::driver_version());
  ts::Stream s = ts::Stream::create();

  // 1. Creation: green context + its stream, vs an ordinary stream.
  {
    std::vector<double> part_ms, destroy_ms, stream_ms;
    for (int i = 0; i < 5; ++i) {
      auto t0 = Clock::now();
      std::optional<ts::SmPartition> p = ts::SmPartition::create(16);
      part_ms.push_back(ms_since(t0));
      t0 = Clock::now();
      p.reset();
      destroy_ms.push_back(ms_since(t0));
      t0 = Clock::now();
      ts::Stream o = ts::Stream::create();
      stream_ms.push_back(ms_since(t0));
      o.destroy();
    }
    std::printf(
        "create green context + stream (16 SMs): %.3f ms; ordinary Stream::create: %.3f ms; ratio "
        "%.1f\n",
        median(part_ms), median(stream_ms), median(part_ms) / median(stream_ms));
    std::printf("destroy partition (sync + unload + destroy): %.3f ms\n", median(destroy_ms));
  }

  // 2 and 3. A small kernel: its first call in a new partition loads its module there.
  ts::Buffer xs = ts::Buffer::randn({100, 100}, ts::f32, ts::cuda(0), 2);
  ts::Buffer size_s = ts::Buffer::scalar(80, ts::i32, ts::cuda(0));
  ts::Buffer out_s = ts::Buffer::zeros({100}, ts::f32, ts::cuda(0));
  auto small = examples::make_padded_sum_into();
  small(s, xs, size_s, out_s);  // traces, compiles, loads in the primary context
  s.synchronize();
  {
    std::vector<double> first_ms;
    for (int i = 0; i < 5; ++i) {
      ts::SmPartition p = ts::SmPartition::create(16);
      auto t0 = Clock::now();
      small(p.stream(), xs, size_s, out_s);
      p.stream().synchronize();
      first_ms.push_back(ms_since(t0));
    }
    ts::SmPartition p = ts::SmPartition::create(16);
    small(p.stream(), xs, size_s, out_s);
    std::vector<double> cached_ms;
    for (int i = 0; i < 5; ++i) {
      auto t0 = Clock::now();
      small(p.stream(), xs, size_s, out_s);
      p.stream().synchronize();
      cached_ms.push_back(ms_since(t0));
    }
    std::printf(
        "first call in a new partition (module load): %.3f ms; cached call + sync: %.3f ms; ratio "
        "%.1f\n",
        median(first_ms), median(cached_ms), median(first_ms) / median(cached_ms));
    double on_part = host_us([&] { small(p.stream(), xs, size_s, out_s); }, p.stream(), 200);
    double on_stream = host_us([&] { small(s, xs, size_s, out_s); }, s, 200);
    std::printf(
        "host time per cached call: partition stream %.2f us; ordinary stream %.2f us; ratio "
        "%.2f\n",
        on_part, on_stream, on_part / on_stream);
  }

  // 4. Bandwidth-bound persistent kernel: partition vs max_sms at the same SM count.
  const int64_t rows = int64_t{1} << 20, cols = 128;
  ts::Buffer x = ts::Buffer::randn({rows, cols}, ts::f32, ts::cuda(0), 1);
  ts::Buffer out = ts::Buffer::zeros({rows}, ts::f32, ts::cuda(0));
  ts::Buffer size = ts::Buffer::scalar(static_cast<double>(rows), ts::i32, ts::cuda(0));
  rt::device_synchronize(0);
  const double gb = static_cast<double>(rows) * cols * 4 / 1e9;
  ts::Config one_per_sm{.block_sizes = std::vector<int64_t>{8},
                        .num_warps = 8,
                        .pid_type = ts::PidType::persistent_interleaved,
                        .num_sm_multiplier = 1};
  ts::Config occupancy{.block_sizes = std::vector<int64_t>{8},
                       .num_warps = 8,
                       .pid_type = ts::PidType::persistent_interleaved};
  auto on_part = examples::make_padded_sum_into(ts::Settings{.config = one_per_sm});
  auto on_part_occ = examples::make_padded_sum_into(ts::Settings{.config = occupancy});
  auto whole = examples::make_padded_sum_into(ts::Settings{.config = occupancy});
  double whole_ms = bench::gpu_time_ms([&] { whole(s, x, size, out); }, 20, s.handle);
  std::printf("whole GPU, occupancy grid: %.4f ms, %.0f GB/s\n", whole_ms, gb / whole_ms * 1e3);
  std::printf("%-9s %-6s %13s %13s %8s %13s %9s\n", "asked SMs", "held", "partition ms",
              "max_sms ms", "ratio", "part occ ms", "GB/s part");
  for (int n : {16, 32, 66, sms}) {
    if (n > sms) continue;
    ts::SmPartition p = ts::SmPartition::create(n);
    auto capped =
        examples::make_padded_sum_into(ts::Settings{.max_sms = p.sm_count(), .config = one_per_sm});
    double cap_ms = bench::gpu_time_ms([&] { capped(s, x, size, out); }, 20, s.handle);
    double part_ms = 0, occ_ms = 0;
    {
      // Events must belong to the partition's context to be recorded on its stream.
      rt::ContextScope scope(p.stream().handle);
      part_ms =
          bench::gpu_time_ms([&] { on_part(p.stream(), x, size, out); }, 20, p.stream().handle);
      occ_ms =
          bench::gpu_time_ms([&] { on_part_occ(p.stream(), x, size, out); }, 20, p.stream().handle);
    }
    std::printf("%-9d %-6d %13.4f %13.4f %8.3f %13.4f %9.0f\n", n, p.sm_count(), part_ms, cap_ms,
                cap_ms / part_ms, occ_ms, gb / part_ms * 1e3);
  }
  std::printf("(ratio = max_sms ms / partition ms: above 1, the partition is faster)\n");
  s.destroy();
  return 0;
}
