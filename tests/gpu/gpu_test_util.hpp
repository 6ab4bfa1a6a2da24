// Test-only helpers for GPU tests.
#pragma once

#include <gtest/gtest.h>

#include "runtime/cuda_api.hpp"

/// Skips the current test (cleanly, with the reason) when no CUDA driver or GPU exists.
#define TESSEL_REQUIRE_GPU()                  \
  if (!::tessel::rt::cuda_available())        \
  GTEST_SKIP() << "no CUDA GPU: " << ::tessel::rt::cuda_unavailable_reason()
