// The state of one interpreter launch (one top-level loop nest): the current value of
// every node, the position of every open loop, and the concrete extents of symbols.
// Host-level scalars (sizes, arguments, device scalars and math on them) are computed on
// first use and kept for the launch, as the generated code reads them once.
#pragma once

#include <vector>

#include "driver/host_env.hpp"
#include "interp/tile_value.hpp"
#include "ir/ir.hpp"
#include "tessel/config.hpp"

namespace tessel::interp {

class WriteLog;
class ProgramSync;
class UnwrittenMemory;

/// Position of one Loop node while its body runs (one entry per loop dimension).
struct LoopState {
  std::vector<int64_t> begin, end, block;  // the loop's bounds and block sizes
  std::vector<int64_t> tile_begin;         // first index of the current tile / grid index
  std::vector<int64_t> tile_end;           // min(tile_begin + block, end)
  std::vector<TileValue> next;             // carried values of the next iteration (Yield)
};

/// Values and loop positions of one launch. Slots are indexed by node id and reused on
/// every iteration, so a loop body allocates nothing once its first iteration ran.
class Frame {
 public:
  /// `config` must be complete (passes::complete_config).
  Frame(const ir::Graph& g, rt::HostEnv& env, const Config& config);

  const ir::Graph& graph() const { return g_; }
  rt::HostEnv& env() { return env_; }

  /// The value of `n`: the slot written when `n` last ran in a loop body, or, for a node
  /// of the host block, its value computed now (once per launch).
  const TileValue& value(const ir::Node* n);
  /// Element 0 of a scalar node as int64.
  int64_t scalar_int(const ir::Node* n) { return value(n).as_int(0); }
  /// The slot a body node writes its result into.
  TileValue& slot(const ir::Node* n) { return vals_.at(n->id); }
  /// Marks the nodes of `b` (recursively) as computed in loop bodies, not on demand.
  void mark_body(const ir::Block& b);

  /// Concrete extents of `n`'s shape (block sizes and padded extents; 1 for size-1 dims).
  const Dims& dims(const ir::Node* n);
  /// Elements a Sym spans in a tile value (passes::sym_block); 1 for nullptr.
  int64_t extent(const ir::Sym* s) const;
  /// How many leading coordinates along `s` are valid now: tile_end - tile_begin of a tile
  /// of an open loop, the runtime extent of a ts::all / arange extent; 1 for nullptr.
  /// Throws InternalError when an extent exceeds the padded size it was specialized for.
  int64_t valid(const ir::Sym* s);

  LoopState& loop(const ir::Node* loop) { return loops_.at(loop->id); }

  /// The race check of this launch (TESSEL_CHECK_RACES), or nullptr: stores report
  /// every element they write to it.
  WriteLog* write_log() const { return write_log_; }
  void set_write_log(WriteLog* log) { write_log_ = log; }
  /// The written elements of the call's ts::empty allocations (interp/unwritten.hpp), or
  /// nullptr: reads of them are checked, stores mark them.
  UnwrittenMemory* unwritten() const { return unwritten_; }
  void set_unwritten(UnwrittenMemory* u) { unwritten_ = u; }
  /// The launch's programs run concurrently (a kernel that waits): the lock and wake-ups
  /// every memory access takes part in (interp/program_sync.hpp), else nullptr.
  ProgramSync* sync() const { return sync_; }
  void set_sync(ProgramSync* s) { sync_ = s; }

  /// Computes a node without side effects and without loop context (Const, Arg, Size,
  /// Stride, DeviceScalar, Unary, Binary, Where, Cast, Full, Arange, View, Reduce) into
  /// `out`. Throws InternalError for other kinds.
  void compute(const ir::Node* n, TileValue& out);

 private:
  void compute_leaf(const ir::Node* n, TileValue& out);
  void read_device_scalar(const ir::Node* n, TileValue& out);

  const ir::Graph& g_;
  rt::HostEnv& env_;
  const Config& config_;
  std::vector<TileValue> vals_;   // by node id
  std::vector<char> host_ready_;  // host node computed this launch
  std::vector<char> in_body_;     // node runs inside a loop body
  std::vector<Dims> dims_;        // by node id
  std::vector<char> dims_ready_;
  std::vector<int64_t> extent_value_;  // by sym id; -1 = not evaluated yet
  std::vector<LoopState> loops_;       // by node id (Loop nodes only)
  WriteLog* write_log_ = nullptr;
  UnwrittenMemory* unwritten_ = nullptr;
  ProgramSync* sync_ = nullptr;
};

}  // namespace tessel::interp
