// Test-only helpers for GPU tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>

#include "driver/cuda_api.hpp"

/// Skips the current test (cleanly, with the reason) when no CUDA driver or GPU exists.
#define TESSEL_REQUIRE_GPU()           \
  if (!::tessel::rt::cuda_available()) \
  GTEST_SKIP() << "no CUDA GPU: " << ::tessel::rt::cuda_unavailable_reason()

/// The interpreter, the GPU tests' oracle, runs with its race check on (programs in a
/// shuffled order, conflicting writes refused: interp/interpreter.hpp), unless the
/// environment sets TESSEL_CHECK_RACES.
inline const bool tessel_gpu_tests_check_races = [] {
  return setenv("TESSEL_CHECK_RACES", "1", 0) == 0;
}();
