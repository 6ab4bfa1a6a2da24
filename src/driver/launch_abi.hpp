// The launch parameters of a generated kernel as a typed ABI: computed once per compiled
// kernel from its parameter list (codegen::Param), one slot per parameter with its C type,
// its byte offset in a packed parameter block (each at its natural alignment, as the CUDA
// ABI lays parameters out) and where a call finds its value; and the grid's bounds as
// planned host integers. A call fills the block (plan_launch) without allocating and
// without running the host evaluator where a value is a constant, an argument, or a size
// or stride of a tensor argument (the usual case). A load by tensor descriptor passes its
// tensor's CUtensorMap (128 bytes, 64-byte aligned), encoded on each call from the
// tensor's data pointer, sizes and strides (encode_tensor_map).
#pragma once

#include <cstdint>
#include <vector>

#include "codegen/cuda_kernel.hpp"
#include "driver/cuda_api.hpp"
#include "driver/host_env.hpp"
#include "ir/ir.hpp"

namespace tessel::rt {

/// An integer the host computes on each call, planned once from its node: a constant, an
/// integer argument, a size or stride of a tensor argument, else the host evaluator.
struct HostInt {
  enum Kind : uint8_t { constant, arg_int, arg_size, arg_stride, evaluated };
  Kind kind = constant;
  int arg = 0, dim = 0;
  int64_t value = 0;               // constant
  const ir::Node* node = nullptr;  // evaluated
  static HostInt plan(const ir::Node* n);
  int64_t eval(const HostEnv& env) const {
    switch (kind) {
      case constant:
        return value;
      case arg_int:
        return env.args[arg].ivalue;
      case arg_size:
        return (*env.args[arg].shape)[dim];
      case arg_stride:
        return (*env.args[arg].strides)[dim];
      case evaluated:
        break;
    }
    return env.eval_int(node);
  }
};

/// One kernel parameter.
struct AbiSlot {
  enum Type : uint8_t { pointer, i32, i64, f32, f64, tensor_map };
  Type type = pointer;
  codegen::Param::Kind source = codegen::Param::tensor_ptr;
  uint32_t offset = 0;             // bytes from the block's start
  uint32_t size = 8;               // bytes
  const ir::Node* node = nullptr;  // codegen::Param::node
  /// A tensor argument's position (tensor_ptr/size/stride; -1: an allocation), or a float
  /// argument's (host_float; -1: an expression).
  int arg = -1;
  int dim = 0;                // tensor_size, tensor_stride
  HostInt value;              // host_int
  std::vector<int> tma_dims;  // tensor_map: codegen::Param's
  std::vector<int64_t> tma_box;
  int tma_swizzle = 0;
};

/// The CUtensorMap fields of a load by tensor descriptor whose box (TMA dim j = tensor dim
/// `dims[j]`, `box[j]` elements) is of tensor `t` on this call: sizes and byte strides in
/// TMA order; a dim of size 1 (its stride never used) gets the stride of the dims inside
/// it, rounded up to 16 bytes. Errors: InternalError for a stride TMA cannot take (the
/// specialization key promised it could). `swizzle`: the box's (AbiSlot::tma_swizzle).
TensorMapSpec tensor_map_spec(const Buffer& t, const std::vector<int>& dims,
                              const std::vector<int64_t>& box, int swizzle = 0);

/// The ABI of one kernel (make_launch_abi).
struct LaunchAbi {
  std::vector<AbiSlot> slots;         // in the generated signature's order
  uint32_t bytes = 0;                 // of the packed block
  std::vector<HostInt> begins, ends;  // the grid's loop bounds (codegen::GridSpec)
};

/// The ABI of generated kernel `k`.
LaunchAbi make_launch_abi(const codegen::CudaKernel& k);

/// Everything cuLaunchKernel needs for one launch of a generated kernel, computed on the
/// host for one call.
struct LaunchPlan {
  bool empty = false;            // the loop has no tiles: nothing to launch
  unsigned grid[3] = {1, 1, 1};  // programs per grid dimension
  unsigned threads = 128;        // per program
  int shared_bytes = 0;          // dynamic shared memory
  /// Config::split_k: the output tiles (the grid has split_k programs per tile); the
  /// caller allocates the workspace (CudaKernel::split_bytes per tile, then a zeroed
  /// 32-bit counter per tile) and writes its address into the split_workspace slot.
  int64_t split_tiles = 0;
  /// The packed parameter block (LaunchAbi::bytes; inline up to 256 bytes).
  unsigned char* block() { return heap_.empty() ? inline_ : heap_.data(); }
  const unsigned char* block() const { return heap_.empty() ? inline_ : heap_.data(); }
  void resize(uint32_t bytes) {
    if (bytes > sizeof(inline_)) heap_.assign(bytes, 0);
  }
  /// Slot `s`'s bytes, zero-extended to 64 bits (the autotuner's worker protocol).
  uint64_t bits(const AbiSlot& s) const;

 private:
  alignas(64) unsigned char inline_[256] = {};
  std::vector<unsigned char> heap_;
};

/// Fills `plan` (its parameter block and grid) for kernel `k` of top-level loop `loop` of
/// `g`, with ABI `abi` (make_launch_abi(k)), for the call in `env`; a persistent kernel
/// gets `persistent_programs` programs. Errors: UserError for an out-of-range device scalar
/// index, a value beyond 32-bit index arithmetic, or a grid too large for its launch.
void plan_launch(const ir::Graph& g, const ir::Node* loop, const codegen::CudaKernel& k,
                 const LaunchAbi& abi, const HostEnv& env, int persistent_programs,
                 LaunchPlan& plan);

/// Config::split_k's workspace of `plan` for kernel `k`: the partial sums
/// (CudaKernel::split_bytes per output tile), then a 32-bit counter per tile, which must be
/// zero at the launch (the kernel leaves them zero).
struct SplitWorkspace {
  int64_t counters_at = 0;  // bytes of partial sums before the counters
  int64_t bytes = 0;        // in all
};
SplitWorkspace split_workspace(const LaunchPlan& plan, const codegen::CudaKernel& k);

/// Points plan's split_workspace slot (plan_launch leaves it null) at `base`.
void set_split_workspace(const LaunchAbi& abi, void* base, LaunchPlan& plan);

}  // namespace tessel::rt
