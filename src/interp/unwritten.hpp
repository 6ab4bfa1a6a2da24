// Which elements of a kernel call's ts::empty allocations have been written: the
// interpreter's check of reads of uninitialised memory.
//
// The interpreter's allocations are zero-filled, a GPU's hold whatever the memory held
// before, so a kernel that reads a ts::empty (empty_like, new_empty) element before
// writing it passes on the CPU and computes garbage on a GPU. The interpreter refuses
// such a read: a UserError naming the kernel, the read's line, the tensor and the
// element. Tracked are the allocations of one call (run_host_program) made without a fill
// that some access of the kernel reads (a load, an atomic other than xchg, a wait, a
// signal with wait_for, a device scalar); elements are marked by the stores, atomics and
// signals of every launch of the call. Buffers the caller passes are not tracked: their
// contents are the caller's.
#pragma once

#include <cstdint>
#include <vector>

#include "driver/host_env.hpp"
#include "ir/ir.hpp"

namespace tessel::interp {

class UnwrittenMemory {
 public:
  explicit UnwrittenMemory(const ir::Graph& g);

  /// Before each launch of the call: starts tracking the allocations of `env` that are
  /// not tracked yet (every element unwritten).
  void track(const rt::HostEnv& env);
  /// The written flags (by element offset from the data pointer) of tensor node `t` (an
  /// access's args[0]), or nullptr where it is not tracked.
  std::vector<uint8_t>* of(const ir::Node* t) {
    const size_t id = static_cast<size_t>(t->id);
    return id < written_.size() && tracked_[id] ? &written_[id] : nullptr;
  }
  /// Checks that access `n` (a load, atomic, wait or signal of args[0], or a device
  /// scalar) reads element `offset` of `w` (of(n->args[0])) after it was written.
  /// Errors: UserError naming the kernel, n's line, the tensor and the element.
  void read(const ir::Node* n, const std::vector<uint8_t>& w, const Buffer& t,
            int64_t offset) const {
    if (!w[static_cast<size_t>(offset)]) unwritten(n, t, offset);
  }
  /// Element `offset` of access n's tensor (args[0]) is read (when `reads`: checked as
  /// read() does), then written (when `writes`). Nothing where it is not tracked.
  void access(const ir::Node* n, const Buffer& t, int64_t offset, bool reads, bool writes) {
    std::vector<uint8_t>* w = of(n->args[0]);
    if (!w) return;
    if (reads) read(n, *w, t, offset);
    if (writes) (*w)[static_cast<size_t>(offset)] = 1;
  }

 private:
  [[noreturn]] void unwritten(const ir::Node* n, const Buffer& t, int64_t offset) const;

  const ir::Graph& g_;
  std::vector<char> read_;                     // by node id: a fill-less Alloc some access reads
  std::vector<char> tracked_;                  // by node id: its allocation is tracked
  std::vector<std::vector<uint8_t>> written_;  // by node id: per element, written
};

}  // namespace tessel::interp
