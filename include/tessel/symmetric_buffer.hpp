// ts::SymmetricBuffer: symmetric memory for multicast tensors (ts::multicast_like) and
// cross-rank signals. R equally shaped buffers (same shape, strides and dtype), one per
// rank, with the table of their addresses that kernels index, and one integer signal pad
// per rank. The model is torch.distributed's _symmetric_memory (symm_mem.empty +
// rendezvous: get_buffer, buffer_ptrs_dev, get_signal_pad, signal_pad_ptrs_dev); here all
// ranks live in one process. docs/SYMMETRIC_MEMORY.md explains how the same interface maps
// onto NCCL or NVSHMEM symmetric memory across processes and nodes.
//
// It never uses NVLink multicast (no driver multicast objects, no multicast memory
// instructions): a multicast tensor is a stack of ordinary pointers, each buffer read and
// written through its own.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "tessel/buffer.hpp"
#include "tessel/dtype.hpp"

namespace tessel {

class SymmetricBuffer {
 public:
  /// Rank r's buffer on devices[r]: a contiguous, zero-filled tensor of `shape` and
  /// `dtype`; rank r's signal pad: `signal_pad_elements` i32 zeros on the same device. The
  /// devices are all ts::cpu() (host memory: kernels run on the interpreter) or all GPUs,
  /// where several ranks may share one GPU (then they are several buffers on it) and every
  /// pair of distinct GPUs gets peer access (cuCtxEnablePeerAccess; the GPU memory is
  /// allocated with cuMemAlloc, as peer access requires). Errors: UserError for no
  /// devices, a mix of CPU and GPU devices, a negative size or pad length; RuntimeError
  /// when two GPUs cannot access each other's memory, or allocation fails.
  static SymmetricBuffer create(std::vector<int64_t> shape, DType dtype,
                                std::vector<Device> devices, int64_t signal_pad_elements = 64);
  /// `world_size` ranks on one device (host memory for ts::cpu()).
  static SymmetricBuffer on_device(std::vector<int64_t> shape, DType dtype, int world_size,
                                   Device device, int64_t signal_pad_elements = 64);

  /// Number of ranks R.
  int world_size() const;
  /// Rank r's buffer, a handle sharing its memory (torch: get_buffer). UserError for r
  /// outside [0, R).
  Buffer buffer(int rank) const;
  /// The addresses of the R buffers, u64 of shape [R], on rank r's device (torch:
  /// buffer_ptrs_dev): the dev_ptrs of ts::multicast_like in a kernel that rank r runs.
  Buffer dev_ptrs(int rank) const;
  /// The same addresses on the host (torch: buffer_ptrs).
  std::vector<uint64_t> buffer_ptrs() const;
  /// Rank r's signal pad: i32 of shape [signal_pad_elements], zero-filled (torch:
  /// get_signal_pad; signals and waits use it).
  Buffer signal_pad(int rank) const;
  /// The addresses of the R signal pads, u64 [R] on rank r's device (torch:
  /// signal_pad_ptrs_dev), for a multicast tensor of the pads.
  Buffer signal_pad_ptrs(int rank) const;

 private:
  SymmetricBuffer() = default;  // made by create / on_device only
  struct State;
  std::shared_ptr<State> s_;
};

}  // namespace tessel
