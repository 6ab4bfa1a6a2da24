// CUDA streams and graphs for tessel kernel calls.
//
// A kernel call on a stream enqueues its work (stream-ordered allocations of outputs,
// fills, launches) without synchronizing the host, so it can be captured in a CUDA graph.
// Recipe (tested in tests/gpu/graph_gpu_test.cpp):
//   ts::Stream s = ts::Stream::create();
//   k(s, x, bound, out);                     // one eager call first: traces and compiles
//   ts::CudaGraph g = ts::CudaGraph::capture(s, [&] { k(s, x, bound, out); });
//   g.replay(s);                             // reads `bound` from device memory each replay
// Outputs that the kernel allocates inside a captured call are graph-owned: they are
// freed and reallocated on the next replay, so pass preallocated outputs as arguments
// when results must outlive a replay.
#pragma once

#include <functional>
#include <memory>

namespace tessel {

/// A CUDA stream (CUstream / cudaStream_t); a null handle is the legacy default stream.
/// ts::SmPartition::stream() gives a stream whose kernels run on a subset of the SMs
/// (include/tessel/sm_partition.hpp).
struct Stream {
  void* handle = nullptr;
  /// A new non-blocking stream on the current device, destroyed with the process (or
  /// by destroy()). Errors: RuntimeError without a GPU.
  static Stream create();
  void destroy();
  /// Waits until the stream's work is done.
  void synchronize() const;
};

/// An instantiated CUDA graph captured from one stream.
class CudaGraph {
 public:
  /// Captures everything `fn` enqueues on `stream` (global capture mode: a hidden host
  /// synchronization inside fn makes the capture fail with a RuntimeError) and
  /// instantiates it. `stream` must not be the default stream.
  static CudaGraph capture(Stream stream, const std::function<void()>& fn);
  /// Launches the graph on `stream` (asynchronous).
  void replay(Stream stream) const;

 private:
  std::shared_ptr<void> exec_;
};

}  // namespace tessel
