// SM partitions: run tessel kernels strictly on a subset of a GPU's SMs, through the CUDA
// driver's green contexts (CUDA driver API, "Green Contexts", CUDA 12.4+; tessel needs
// the 12.5 entry point cuGreenCtxStreamCreate).
//
//   ts::SmPartition part = ts::SmPartition::create(16);   // >= 16 SMs of cuda:0
//   ts::Buffer out = k(part.stream(), x, bound);           // runs on those SMs only
//   part.stream().synchronize();
//
// The strict form of Settings::max_sms / reserved_sms. Those cap how many programs a
// persistent kernel launches (one per SM), which leaves SMs free for other work (NCCL)
// but lets the hardware place the programs on any SM and does nothing for non-persistent
// kernels. A partition's stream runs every kernel of the call (persistent or not, fills
// of outputs included) on the partition's SMs only, and a persistent kernel on it sizes
// its grid from the partition's SM count (num_sm_multiplier, occupancy, max_sms and
// reserved_sms all apply to the partition).
//
// What it costs (bench/green_context_bench.cpp measures each): creating the green
// context and its stream (milliseconds), loading every kernel again in the partition on
// its first call there (a module load per kernel, per partition), and per call two
// driver calls that make the partition's context current and restore the previous one.
// SM counts are rounded by the driver (see create).
#pragma once

#include <memory>
#include <string>

#include "tessel/stream.hpp"

namespace tessel {

/// A green context holding a fixed set of one GPU's SMs, with one non-blocking stream.
/// Kernel calls on stream() run in the partition. Copies share the partition; the last
/// copy's destruction waits for the stream, then destroys the stream and the green
/// context (Buffers allocated by calls on the stream stay valid). A partition's stream
/// must be used from one host thread at a time (the driver does not synchronize threads
/// sharing a green context). Buffers from Buffer::empty and the like (the device's primary
/// context) are usable on the partition: contexts of one device share its memory.
class SmPartition {
 public:
  /// A partition of at least `num_sms` SMs of cuda:`device`. The driver rounds the count
  /// up to its partition granularity (cuDevSmResourceSplitByCount: on sm_90 a multiple
  /// of 8 and at least 8, so 16 -> 16, 20 -> 24, 66 -> 72); when the rounded count
  /// exceeds the device, or num_sms is all of its SMs, the partition is the whole device.
  /// sm_count() tells the count held. Errors: UserError when num_sms < 1 or exceeds the
  /// device's SM count (naming the valid range); RuntimeError without a GPU or when the
  /// driver lacks green contexts (use Settings::max_sms there), or when the driver fails.
  static SmPartition create(int num_sms, int device = 0);

  /// Whether SmPartition::create can work here: a GPU exists and the driver offers green
  /// contexts. No errors.
  static bool supported();
  /// Why supported() is false ("" when it is true).
  static std::string unsupported_reason();

  /// The partition's stream: pass it to kernel calls (`k(part.stream(), args...)`),
  /// CudaGraph::capture and replay. Valid while the partition lives; do not destroy it.
  Stream stream() const;
  /// SMs the partition holds (after the driver's rounding).
  int sm_count() const;
  /// The num_sms asked for.
  int requested_sms() const;
  /// The CUDA device index.
  int device() const;

 private:
  SmPartition() = default;
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace tessel
