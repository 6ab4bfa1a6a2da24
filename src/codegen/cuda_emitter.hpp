// Emits the CUDA C++ of one top-level loop nest (see cuda_kernel.hpp). Internal.
//
// Before (IR):                              After (CUDA, abridged):
//   %9 = loop tile(%6..%5) as t0              for (pid ...) { tb9 = ...; te9 = ...;
//     %12 = load %0[tile %9 as t0] : f32[t0]    float v12[8]; ts::ld_vec<float, 4>(...);
//     %14 = binary add %12, %13               float v14[8]; v14[r] = v12[r] + 1.0f;
//     store %3[tile %9 as t0] = %14             ts::st_vec<float, 4>(...); }
#pragma once

#include "codegen/cuda_kernel.hpp"
#include "passes/kernel_ir.hpp"
#include "passes/kernel_plan.hpp"

namespace tessel::codegen {

/// Fills `out` (source, params, grid, threads, shared memory) for `loop`.
void emit_kernel(const ir::Graph& g, const passes::KernelPlan& plan, const passes::NestIr& nir,
                 CudaKernel& out);

}  // namespace tessel::codegen
