// Helpers for tests of tessel kernels: tolerance comparison of Buffers that runs where
// the data is (on the GPU for cuda Buffers, so 32 GiB tensors are compared without a
// copy to the host).
#pragma once

#include <cstdint>
#include <string>

#include "tessel/buffer.hpp"

namespace tessel {

/// Number of elements where |actual - (expected + add)| > atol + rtol * |expected + add|
/// (expected + add rounded to expected's dtype, as a kernel computing it in that dtype would),
/// computed in double. NaN is a mismatch unless both sides are NaN; an infinity matches
/// only the same infinity. `actual` and `expected`: same shape, same device, any dtypes and
/// strides. Runs on the GPU (and synchronizes) for cuda Buffers. Throws UserError when the
/// shapes or devices differ.
int64_t count_mismatches(const Buffer& actual, const Buffer& expected, double atol, double rtol,
                         double add = 0.0);

/// True when a CUDA driver and at least one GPU are usable (rt::cuda_available()).
bool gpu_available();
/// Why gpu_available() is false ("libcuda.so.1 not found", "no CUDA device", ...); empty
/// when it is true.
std::string gpu_unavailable_reason();
/// The driver's name of GPU `device` (e.g. "NVIDIA H200"). Errors: RuntimeError without a
/// GPU or for a device index past the last GPU.
std::string gpu_name(int device = 0);

}  // namespace tessel
