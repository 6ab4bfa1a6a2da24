// Device memory blocks freed on the legacy default stream, kept for the next allocation
// of the same size class on that device and stream (what PyTorch's CUDA caching allocator
// does for small blocks): a call that allocates its output, then frees it, costs no
// driver call. Reuse is ordered by the stream the block was freed on, as cuMemFreeAsync's
// is; only the legacy default stream's blocks are kept (it cannot be captured into a CUDA
// graph and is never destroyed). A pure host structure: driver/cuda_api.cpp allocates a
// class's bytes, gives freed blocks here and frees what this refuses or drains.
#pragma once

#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace tessel::rt {

class BlockCache {
 public:
  /// Blocks up to this size are kept (larger allocations cost more than their driver
  /// calls), at most kMaxCachedBytes per device in all.
  static constexpr int64_t kMaxBlockBytes = int64_t{8} << 20;
  static constexpr int64_t kMaxCachedBytes = int64_t{256} << 20;
  static constexpr int64_t kClassBytes = 512;

  /// The size class of an allocation of `nbytes` (> 0) on `stream`: nbytes rounded up to
  /// 512 bytes, or 0 when such a block is not kept (another stream, or too large).
  static int64_t size_class(int64_t nbytes, const void* stream);
  /// A kept block of class `bytes` on `device`, or nullptr.
  void* take(int device, int64_t bytes);
  /// Keeps block `ptr` of class `bytes`; false (the caller frees it) when the device's
  /// cache is full.
  bool give(int device, int64_t bytes, void* ptr);
  /// Removes and returns every block kept for `device` (to free them: out of memory).
  std::vector<void*> drain(int device);
  /// Bytes kept for `device`.
  int64_t cached_bytes(int device);

 private:
  std::mutex mu_;
  std::unordered_map<uint64_t, std::vector<void*>> blocks_;  // (device, class) -> blocks
  std::unordered_map<int, int64_t> bytes_;                   // per device
};

}  // namespace tessel::rt
