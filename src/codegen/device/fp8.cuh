// The 8-bit floats f8e4m3 and f8e5m2 (tessel/dtype.hpp) in generated kernels: stored as
// cuda_fp8's __nv_fp8_e4m3 / __nv_fp8_e5m2, computed in f32 registers. Included after
// tessel/tessel.cuh by kernels that use them (<cuda_fp8.h> costs NVRTC time).
#pragma once

#include <cuda_fp8.h>

namespace ts {

/// To the 8-bit floats: to nearest even, saturating at the largest finite value (cuda_fp8's
/// __NV_SATFINITE conversions; the interpreter's float_to_f8_bits computes the same bits).
__device__ __forceinline__ float round_f8e4m3(float x) { return float(__nv_fp8_e4m3(x)); }
__device__ __forceinline__ float round_f8e5m2(float x) { return float(__nv_fp8_e5m2(x)); }

template <>
struct Mem<__nv_fp8_e4m3> {
  typedef float reg;
  static __device__ __forceinline__ float to_reg(__nv_fp8_e4m3 v) { return float(v); }
  static __device__ __forceinline__ __nv_fp8_e4m3 from_reg(float v) { return __nv_fp8_e4m3(v); }
};
template <>
struct Mem<__nv_fp8_e5m2> {
  typedef float reg;
  static __device__ __forceinline__ float to_reg(__nv_fp8_e5m2 v) { return float(v); }
  static __device__ __forceinline__ __nv_fp8_e5m2 from_reg(float v) { return __nv_fp8_e5m2(v); }
};

}  // namespace ts
