#include "codegen/cuda_kernel.hpp"

namespace tessel::codegen {
CudaKernel generate_cuda(const ir::Graph& g, const ir::Node* loop, const Config& config,
                         DType index_dtype) {
  throw InternalError("codegen not implemented yet");
}
}  // namespace tessel::codegen
