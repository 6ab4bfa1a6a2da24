#include "tessel/stream.hpp"

#include "driver/cuda_api.hpp"
#include "tessel/error.hpp"

namespace tessel {

Stream Stream::create() {
  rt::require_cuda();
  return Stream{rt::stream_create()};
}

void Stream::destroy() {
  rt::stream_destroy(handle);
  handle = nullptr;
}

void Stream::synchronize() const { rt::stream_synchronize(handle); }

CudaGraph CudaGraph::capture(Stream stream, const std::function<void()>& fn) {
  if (!stream.handle)
    throw UserError("", {}, "CUDA graphs cannot be captured on the default stream",
                    "capture on a stream from ts::Stream::create()");
  rt::graph_begin_capture(stream.handle);
  try {
    fn();
  } catch (...) {
    try {
      rt::graph_destroy(rt::graph_end_capture(stream.handle));
    } catch (...) {
    }
    throw;
  }
  CudaGraph g;
  g.exec_ = std::shared_ptr<void>(rt::graph_end_capture(stream.handle), [](void* e) {
    try {
      rt::graph_destroy(e);
    } catch (...) {
    }
  });
  return g;
}

void CudaGraph::replay(Stream stream) const { rt::graph_launch(exec_.get(), stream.handle); }

}  // namespace tessel
