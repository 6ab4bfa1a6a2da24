// Timing for benchmarks: CUDA events around back-to-back calls, or host wall time.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

#include "driver/cuda_api.hpp"

namespace bench {

/// Median over 5 rounds of the mean GPU time of `iters` back-to-back calls of `f` on
/// `stream` (after 3 warm-up calls), in milliseconds.
inline double gpu_time_ms(const std::function<void()>& f, int iters, void* stream = nullptr) {
  for (int i = 0; i < 3; ++i) f();
  void* a = tessel::rt::event_create();
  void* b = tessel::rt::event_create();
  std::vector<double> rounds;
  for (int r = 0; r < 5; ++r) {
    tessel::rt::event_record(a, stream);
    for (int i = 0; i < iters; ++i) f();
    tessel::rt::event_record(b, stream);
    rounds.push_back(tessel::rt::event_elapsed_ms(a, b) / iters);
  }
  tessel::rt::event_destroy(a);
  tessel::rt::event_destroy(b);
  std::sort(rounds.begin(), rounds.end());
  return rounds[2];
}

/// Median over 5 rounds of the host wall time per call of `iters` back-to-back calls of `f`
/// followed by `sync()` (after `warmup` calls and a sync), in milliseconds. For work spread
/// over several streams, where no one stream's events time it.
inline double wall_time_ms(const std::function<void()>& f, const std::function<void()>& sync,
                           int iters, int warmup = 3) {
  for (int i = 0; i < warmup; ++i) f();
  sync();
  std::vector<double> rounds;
  for (int r = 0; r < 5; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) f();
    sync();
    rounds.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
        iters);
  }
  std::sort(rounds.begin(), rounds.end());
  return rounds[2];
}

}  // namespace bench
