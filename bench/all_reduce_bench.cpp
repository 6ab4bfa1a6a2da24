// One-shot all-reduce (examples/kernels/all_reduce.hpp) with R ranks on one GPU (R
// persistent launches on R streams, SMs / R programs each) against a device copy
// (cuMemcpyDtoD) of the same bytes, measured in the same run. Bandwidth = R * bytes / time,
// where bytes = N elements of one rank's buffer: what each rank reads (every rank reads
// every buffer once; all R ranks run at once). The copy moves R * bytes from one buffer
// to another. Times: host wall time per iteration of back-to-back iterations (each
// iteration enqueues every rank; one synchronization at the end), median of 5 rounds.
//   all_reduce_bench [--json] [--iters N]
#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <vector>

#include "bench/gpu_timer.hpp"
#include "driver/cuda_api.hpp"
#include "examples/kernels/all_reduce.hpp"

namespace ts = tessel;

int main(int argc, char** argv) {
  CLI::App app{"one-shot all-reduce benchmark (R ranks on one GPU)"};
  bool json = false;
  int iters = 20;
  app.add_flag("--json", json, "one JSON object per line");
  app.add_option("--iters", iters, "iterations per round");
  CLI11_PARSE(app, argc, argv);
  if (!ts::rt::cuda_available()) {
    std::printf("no GPU: %s\n", ts::rt::cuda_unavailable_reason().c_str());
    return 0;
  }
  const int sms = ts::rt::sm_count(0);
  const int64_t block = 4096;
  if (!json)
    std::printf("%-5s %-5s %10s %12s %12s %12s %12s %8s\n", "R", "dtype", "N", "ar ms", "ar GB/s",
                "copy ms", "copy GB/s", "ar/copy");
  for (int world : {2, 4, 8})
    for (ts::DType t : {ts::bf16, ts::f32})
      for (int64_t n : {int64_t{4096}, int64_t{1} << 16, int64_t{1} << 20, int64_t{1} << 24}) {
        examples::OneGpuAllReduce ar(
            ts::SymmetricBuffer::on_device({n}, t, world, ts::cuda(0),
                                           examples::all_reduce_pad_elements(n, world, block)),
            sms, block);
        const int64_t bytes = world * n * static_cast<int64_t>(ts::dtype_size(t));
        ts::Buffer src = ts::Buffer::zeros({world * n}, t, ts::cuda(0));
        ts::Buffer dst = ts::Buffer::zeros({world * n}, t, ts::cuda(0));
        ts::Stream cs = ts::Stream::create();
        ts::rt::device_synchronize(0);
        const double ar_ms = bench::wall_time_ms(
            [&] {
              for (int r = 0; r < world; ++r) ar.enqueue(r);
            },
            [&] { ar.synchronize(); }, iters);
        const double copy_ms = bench::wall_time_ms(
            [&] { ts::rt::memcpy_dtod(dst.data_ptr(), src.data_ptr(), bytes, cs.handle); },
            [&] { cs.synchronize(); }, iters);
        const double ar_gbs = static_cast<double>(bytes) / ar_ms / 1e6;
        const double copy_gbs = static_cast<double>(bytes) / copy_ms / 1e6;
        if (json)
          std::printf(
              "{\"bench\":\"all_reduce\",\"ranks\":%d,\"dtype\":\"%s\",\"n\":%lld,"
              "\"all_reduce_ms\":%.5f,\"copy_ms\":%.5f,\"bytes\":%lld}\n",
              world, ts::dtype_name(t).c_str(), (long long)n, ar_ms, copy_ms, (long long)bytes);
        else
          std::printf("%-5d %-5s %10lld %12.4f %12.1f %12.4f %12.1f %8.3f\n", world,
                      ts::dtype_name(t).c_str(), (long long)n, ar_ms, ar_gbs, copy_ms, copy_gbs,
                      copy_ms / ar_ms);
        cs.destroy();
      }
  return 0;
}
