// Timing for benchmarks: CUDA events around back-to-back calls.
#pragma once

#include <algorithm>
#include <functional>
#include <vector>

#include "runtime/cuda_api.hpp"

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

}  // namespace bench
