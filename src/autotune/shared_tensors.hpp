// The tensors of the call being tuned, copied into GPU memory that the timing worker
// maps through CUDA IPC. Candidates run on these copies: the user's Buffers are never
// touched by a candidate, and after a worker dies the copies are reset from them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "driver/host_env.hpp"
#include "ir/ir.hpp"
#include "tessel/kernel.hpp"

namespace tessel::autotune {

class SharedTensors {
 public:
  /// One shared allocation: a tensor argument (its span of memory) or an allocation of
  /// the host program (Alloc nodes, in host order).
  struct Entry {
    void* ptr = nullptr;  // in this process
    int64_t bytes = 0;
    std::string handle;    // CUDA IPC handle
    bool restore = false;  // the worker restores it before every run: written arguments
                           // and filled allocations
  };

  /// Copies the tensor arguments of `args` and allocates the host program's allocations
  /// of `g` on `device`. Errors: UserError (naming the kernel) when a shape check of the
  /// host program fails for these arguments; RuntimeError when memory or IPC handles
  /// cannot be had.
  SharedTensors(const ir::Graph& g, detail::CallArgs args, int device);
  ~SharedTensors();
  SharedTensors(const SharedTensors&) = delete;
  SharedTensors& operator=(const SharedTensors&) = delete;

  /// Copies the user's arguments into the shared copies again, refills filled
  /// allocations (others are zeroed) and waits for the copies.
  void reset();
  /// The environment of a call of `g` (the traced graph, or the same kernel traced with
  /// other tunables) on the shared copies. Nullopt when `g`'s allocations differ from
  /// the traced graph's.
  std::optional<rt::HostEnv> env(const ir::Graph& g) const;
  /// The entry containing device address `p`, and the byte offset in it.
  std::optional<std::pair<int, int64_t>> locate(uint64_t p) const;
  /// The tensors to check against the reference: returned tensors, then written
  /// arguments that are not returned (views on the shared copies).
  std::vector<Buffer> checked(const ir::Graph& g) const;
  const std::vector<Entry>& entries() const { return entries_; }
  int device() const { return device_; }

 private:
  std::vector<detail::CallArg> args_;
  int device_;
  std::vector<Entry> entries_;
  std::vector<Buffer> arg_views_;                    // per argument (undefined for scalars)
  std::vector<int> arg_entry_;                       // per argument: entry index or -1
  std::vector<Buffer> alloc_views_;                  // per Alloc node, in host order
  std::vector<std::pair<bool, double>> alloc_fill_;  // per Alloc: filled?, value
  std::vector<ir::ArgValue> arg_values_;
};

}  // namespace tessel::autotune
