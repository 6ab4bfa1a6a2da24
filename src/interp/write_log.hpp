// The interpreter's race check (TESSEL_CHECK_RACES, interp/interpreter.hpp): which
// program of a launch wrote each element.
//
// On a GPU the programs of a launch run in no fixed order; two of them writing one
// element with different values leave whichever wrote last. The interpreter runs the
// programs in a shuffled order with this log and refuses such writes: a UserError naming
// the kernel, the second store's line, the tensor and the element's index. Several
// programs writing the same value (bit for bit) to one element are allowed, as the
// trace-time check (passes/race_check.hpp) allows a store of the same value from every
// program. One store writing an element twice with different values (a scatter with
// duplicate indices: two threads of one program on a GPU) is refused the same way. A
// read-modify-write store (its value reads the memory it stores to, `out(idx(t)) += 1`)
// that reaches an element twice in one execution, or from two programs, is refused even
// with equal values: each read the element before the other's write, so an update is lost.
// Elements are identified by address, so tensors that share memory (views, two Buffers
// over one allocation) are one memory here too.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ir/ir.hpp"
#include "tessel/buffer.hpp"

namespace tessel::interp {

/// How messages name element `offset` (elements from t's data pointer): its index tuple
/// "(i, j)", or "at element offset k" when it is none of t's elements.
std::string element_str(const Buffer& t, int64_t offset);

class WriteLog {
 public:
  explicit WriteLog(const ir::Graph& g) : g_(g) {}

  /// The program (flat tile index of the launch) whose stores follow.
  void start_program(int64_t program) { program_ = static_cast<uint32_t>(program); }
  /// Starts store `n` (of the running program) to tensor `t`: call before its write()s.
  void begin_store(const ir::Node* n, const Buffer& t);
  /// Starts multicast store `n` (of the running program), whose buffers are shaped like
  /// `like`: then, before the write()s to each buffer, target() it. A buffer written twice
  /// by one execution (dev_ptrs holding one address twice) is one store writing an
  /// element twice.
  void begin_multicast_store(const ir::Node* n, const Buffer& like);
  /// The buffer of the current multicast store at address `base` (inside live host memory
  /// [range.first, range.second)), element `stack_index` of its dev_ptrs (row-major).
  void target(uintptr_t base, std::pair<uintptr_t, uintptr_t> range, int64_t stack_index);
  /// Records that the current store writes element `offset` (elements from t's data
  /// pointer) with `value` (its bytes in t's dtype), before it is written.
  /// Errors: UserError when another program of the launch, or this store already, wrote a
  /// different value there.
  void write(int64_t offset, const void* value) {
    if (!region_) return;  // an empty tensor
    const uintptr_t addr = base_ + static_cast<uintptr_t>(offset * elem_bytes_);
    uint64_t& cell =
        region_->cells[(addr - region_->lo) / static_cast<uintptr_t>(region_->granule)];
    if (elem_bytes_ == region_->granule &&
        (cell == 0 || (cell >> 32 == mine_ >> 32 && cell != mine_)))
      cell = mine_;  // the common case: a first write, or an earlier store of the same program's
    else
      write_cells(addr, offset, value);
  }

 private:
  /// The writers of bytes [lo, hi), one cell per `granule` bytes.
  struct Region {
    uintptr_t lo = 0, hi = 0;
    int64_t granule = 1;
    std::vector<uint64_t> cells;  // (program + 1) << 32 | store execution; 0 = unwritten
  };
  Region& region_for(uintptr_t lo, uintptr_t hi, int64_t granule);
  void begin_execution(const ir::Node* n, const Buffer& t);
  void write_cells(uintptr_t addr, int64_t offset, const void* value);
  [[noreturn]] void conflict(int64_t offset, uint64_t earlier, const void* value) const;
  [[noreturn]] void lost_update(int64_t offset, uint64_t earlier) const;
  /// The index tuple of element `offset` of the current store's tensor, for messages.
  std::string element_str(int64_t offset) const;

  const ir::Graph& g_;
  std::vector<Region> regions_;
  uint32_t program_ = 0;
  const ir::Node* store_ = nullptr;  // the current store, its tensor and region
  const Buffer* tensor_ = nullptr;
  int64_t stack_index_ = -1;  // multicast stores: the buffer written (row-major in dev_ptrs)
  Region* region_ = nullptr;
  uintptr_t base_ = 0;
  int64_t elem_bytes_ = 1;
  uint64_t mine_ = 0;  // the cell of the current store: (program + 1) << 32 | execution
  bool rmw_ = false;   // the current store is a read-modify-write (passes::is_read_modify_write)
  std::vector<int8_t> rmw_of_node_;           // by node id: -1 unknown, else is_read_modify_write
  std::vector<uint32_t> store_of_execution_;  // node id of each store execution
};

}  // namespace tessel::interp
