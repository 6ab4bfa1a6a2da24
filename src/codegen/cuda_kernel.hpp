// The CUDA C++ generated for one top-level loop nest, with what the launcher needs to
// call it: the parameters (in order) and how to size the grid.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.hpp"
#include "passes/kernel_ir.hpp"
#include "passes/kernel_plan.hpp"
#include "passes/layout.hpp"
#include "tessel/config.hpp"

namespace tessel::codegen {

/// One kernel parameter, in the order of the generated signature.
struct Param {
  enum Kind : uint8_t {
    tensor_ptr,       // node: tensor (Arg/Alloc): its data pointer
    host_int,         // node: host-computable integer scalar: evaluated on the host (i64 or i32)
    host_float,       // node: host-computable float scalar (passed as float; f64 as double)
    device_ptr,       // node: DeviceScalar: pointer to its element (read in the kernel)
    tensor_size,      // node: tensor, dim: its size (index dtype)
    tensor_stride,    // node: tensor, dim: its stride in elements (index dtype)
    check_record,     // Settings::check_bounds: the call's rt::BoundsRecord (long long*)
    tensor_map,       // node: a load by tensor descriptor: its tensor's CUtensorMap (128 bytes)
    split_workspace,  // Config::split_k: the call's workspace (CudaKernel::split_bytes)
  };
  Kind kind;
  const ir::Node* node;
  DType dtype =
      DType::i64;  // host_int, host_float, tensor_size, tensor_stride: passed as this type
  int dim = 0;
  /// tensor_map: the load's box (passes::TmaBox: TMA dim j is tensor dim tma_dims[j]).
  std::vector<int> tma_dims = {};
  std::vector<int64_t> tma_box = {};
  int tma_swizzle = 0;  // bytes (0 or 128: the box written swizzled, passes::TmaBox)
};

/// How many programs to launch.
struct GridSpec {
  bool persistent = false;  // grid = SMs * num_sm_multiplier (capped by the tile count if known)
  /// Non-persistent: the number of tiles of each loop dimension, computed on the host as
  /// ceil((end - begin) / block) from these nodes (grid dims have block 1).
  std::vector<const ir::Node*> begins, ends;
  std::vector<int64_t> blocks;
  bool xyz = false;  // one grid dimension per loop dimension
  /// xyz: grid axis k (x, y, z) covers loop dimension order[k] (Config::loop_orders).
  std::vector<int> order;
  /// Config::flatten_loops: ceil(prod(end - begin) / prod(blocks)) programs along x.
  bool flattened = false;
};

struct CudaKernel {
  std::string name;    // the __global__ function's name
  int arch = 90;       // the compute capability it is lowered for (KernelPlan::arch)
  std::string source;  // complete CUDA C++ (includes tessel's device headers)
  std::vector<Param> params;
  GridSpec grid;
  int threads = 128;  // per program
  int shared_bytes = 0;
  /// Config::split_k: programs per output tile (the grid holds tiles * split_k programs),
  /// and the workspace bytes per tile: split_k partial sums of the f32 accumulators (laid
  /// out by thread), then after every tile's, a 32-bit counter per tile that must be zero
  /// at launch (the last program of a tile resets it).
  int split_k = 1;
  int64_t split_bytes = 0;
  /// NVRTC options the source needs: "-pch" (automatic precompiled headers, reused by
  /// later compiles in the process) where it includes <cuda/atomic> (docs/DECISIONS.md).
  std::vector<std::string> nvrtc_options;
};

/// Kernel name `s` as a C identifier: alphanumerics kept, others '_', "k_" before a
/// leading digit; one past 96 characters is cut to 80 and 8 hex digits of its hash (the
/// generated function's and the dump files' names stay within file-name limits).
std::string kernel_identifier(const std::string& s);

/// Generates CUDA C++ for top-level loop `plan.loop` of `g` under its plan (the config
/// applied: passes::plan_kernel) from its kernel IR (passes::lower_nest): the emit stage of
/// codegen::compile_pipeline, which every caller runs. Address arithmetic uses
/// g.index_dtype. Errors: UserError for IR the backend cannot lower yet (naming the
/// user's line).
CudaKernel generate_cuda(const ir::Graph& g, const passes::KernelPlan& plan,
                         const passes::NestIr& nir);
/// The same for the nest in `layout` (passes::compute_layout): its kernel IR, then its CUDA.
CudaKernel generate_cuda(const ir::Graph& g, const passes::KernelPlan& plan,
                         const passes::Layout& layout);

}  // namespace tessel::codegen
