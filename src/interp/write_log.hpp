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
// It also records which program read each element of the memory the launch's stores can
// reach, and refuses a read of an element that another program of the launch writes, in
// either order (`dst(t) = src(t) * 2` over views shifted by one element, `x(t) =
// x(t.index() + 1)`): on a GPU the read sees the old value or the new one, whichever
// program runs first. A program reading what it wrote itself is program order, also where
// other programs wrote the same bits there (every program storing one value, then reloading it).
// Atomics, signals and waits are neither logged nor checked (their old values are ordered by the
// atomic), and a launch that waits runs without the log (interp/interpreter.cpp).
// Elements are identified by address, so tensors that share memory (views, two Buffers
// over one allocation) are one memory here too.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "driver/host_env.hpp"
#include "ir/ir.hpp"
#include "tessel/buffer.hpp"

namespace tessel::interp {

/// How messages name element `offset` (elements from t's data pointer): its index tuple
/// "(i, j)", or "at element offset k" when it is none of t's elements.
std::string element_str(const Buffer& t, int64_t offset);

class WriteLog {
 public:
  /// The log of launch `loop` (a top-level Loop of g) with the tensors of `env`.
  WriteLog(const ir::Graph& g, const ir::Node* loop, const rt::HostEnv& env);

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
  /// Starts load `n` (of the running program) of tensor `t`: call before its read()s.
  /// False (and its reads need not be logged) when no store of the launch reaches t's
  /// memory.
  bool begin_load(const ir::Node* n, const Buffer& t);
  /// Starts multicast load `n`, whose buffers are shaped like `like`: then target() each
  /// buffer before its read()s.
  void begin_multicast_load(const ir::Node* n, const Buffer& like);
  /// Records that the current load reads element `offset` (elements from t's data
  /// pointer). Errors: UserError when another program of the launch wrote it.
  void read(int64_t offset) {
    if (!region_) return;
    const uintptr_t addr = base_ + static_cast<uintptr_t>(offset * elem_bytes_);
    const size_t c = (addr - region_->lo) / static_cast<uintptr_t>(region_->granule);
    uint64_t& r = region_->readers[c];
    const uint64_t w = region_->cells[c];
    if (elem_bytes_ == region_->granule && (w == 0 || w >> 32 == mine_ >> 32) &&
        (r == 0 || r >> 32 == mine_ >> 32)) {
      // The common case: unread, or read by this program before. A read of what this program
      // wrote itself is not recorded: it sees that value, or the same bits from another
      // program (a different value there is a write conflict).
      if (r == 0 && w == 0) r = mine_;
    } else
      read_cells(addr, offset);
  }
  /// Records that the current store writes element `offset` (elements from t's data
  /// pointer) with `value` (its bytes in t's dtype), before it is written.
  /// Errors: UserError when another program of the launch, or this store already, wrote a
  /// different value there.
  void write(int64_t offset, const void* value) {
    if (!region_) return;  // an empty tensor
    const uintptr_t addr = base_ + static_cast<uintptr_t>(offset * elem_bytes_);
    const size_t c = (addr - region_->lo) / static_cast<uintptr_t>(region_->granule);
    uint64_t& cell = region_->cells[c];
    if (elem_bytes_ == region_->granule &&
        (cell == 0 || (cell >> 32 == mine_ >> 32 && cell != mine_)) &&
        (region_->readers.empty() || region_->readers[c] == 0 ||
         (region_->readers[c] >> 32 == mine_ >> 32 && !(region_->readers[c] & kSeveral))))
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
    // (program + 1) << 32 | load node id, kSeveral set once a second program read it;
    // 0 = unread. Empty until a load reads the region.
    std::vector<uint64_t> readers;
  };
  static constexpr uint64_t kSeveral = uint64_t{1} << 31;
  Region& region_for(uintptr_t lo, uintptr_t hi, int64_t granule);
  void begin_execution(const ir::Node* n, const Buffer& t);
  void begin_read(const ir::Node* n, const Buffer& t);
  void write_cells(uintptr_t addr, int64_t offset, const void* value);
  void read_cells(uintptr_t addr, int64_t offset);
  /// Whether a store of the launch may write bytes [lo, hi).
  bool may_be_written(uintptr_t lo, uintptr_t hi) const;
  [[noreturn]] void read_of_written(int64_t offset, uint64_t writer) const;
  [[noreturn]] void write_of_read(int64_t offset, uint64_t reader) const;
  [[noreturn]] void conflict(int64_t offset, uint64_t earlier, const void* value) const;
  [[noreturn]] void lost_update(int64_t offset, uint64_t earlier) const;
  /// The index tuple of element `offset` of the current store's tensor, for messages.
  std::string element_str(int64_t offset) const;

  const ir::Graph& g_;
  std::vector<Region> regions_;
  uint32_t program_ = 0;
  std::vector<std::pair<uintptr_t, uintptr_t>> written_;  // byte ranges the stores address
  bool multicast_store_ = false;     // some store addresses buffers through dev_ptrs
  const ir::Node* store_ = nullptr;  // the current store or load, its tensor and region
  const Buffer* tensor_ = nullptr;
  int64_t stack_index_ = -1;  // multicast stores: the buffer written (row-major in dev_ptrs)
  Region* region_ = nullptr;
  uintptr_t base_ = 0;
  int64_t elem_bytes_ = 1;
  uint64_t mine_ = 0;     // the cell of the current store: (program + 1) << 32 | execution;
                          // of a load: (program + 1) << 32 | its node id
  bool loading_ = false;  // the current access is a load
  bool rmw_ = false;      // the current store is a read-modify-write (passes::is_read_modify_write)
  std::vector<int8_t> rmw_of_node_;           // by node id: -1 unknown, else is_read_modify_write
  std::vector<uint32_t> store_of_execution_;  // node id of each store execution
};

}  // namespace tessel::interp
