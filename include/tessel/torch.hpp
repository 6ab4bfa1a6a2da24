// PyTorch interop, header-only: ts::Buffer to and from at::Tensor without copying, and
// torch's current CUDA stream as a ts::Stream. Only code that includes this header needs
// torch's headers and libraries (libtessel does not depend on torch):
//   #include <tessel/torch.hpp>
//   ts::Buffer x = ts::from_torch(tensor);            // shares tensor's memory
//   my_kernel(ts::torch_stream(tensor), x, out);      // on torch's current stream
//   at::Tensor y = ts::to_torch(buffer);              // shares buffer's memory
// Both directions go through DLPack (at::toDLPack / at::fromDLPack, Buffer::from_dlpack /
// to_dlpack): shape, strides and the element offset are kept, and each side's memory
// stays alive until the other side's last handle goes away (the DLPack deleter).
//
// dtypes (torch -> tessel): bool -> boolean, int32 -> i32, int64 -> i64, uint64 -> u64,
// float16 -> f16, bfloat16 -> bf16, float32 -> f32, float64 -> f64; and back. Other torch
// dtypes (uint8, int8, int16, uint16, uint32, float8, complex) have no tessel dtype.
//
// Streams: memory is shared, not synchronized. Call tessel kernels on torch's current
// stream (torch_stream) so they are ordered with torch's work on the same tensors and so
// torch's caching allocator reuses a freed tensor's memory only after them. A Buffer that
// tessel allocated and to_torch exported is freed, when its last handle goes away, on the
// stream tessel allocated it on.
//
// CUDA: torch_stream needs a CUDA build of torch (c10/cuda headers and libc10_cuda) and
// the CUDA toolkit's headers. TESSEL_TORCH_CUDA selects it: define it to 1 or 0 before
// including this header, or leave it undefined to detect it (1 when <c10/cuda/CUDAStream.h>
// and <cuda_runtime_api.h> are found). With 0, torch_stream of a CUDA tensor throws.
#pragma once

#include <ATen/ATen.h>
#include <ATen/DLConvertor.h>

#include <source_location>
#include <sstream>
#include <string>

#include "tessel/buffer.hpp"
#include "tessel/error.hpp"
#include "tessel/stream.hpp"

#ifndef TESSEL_TORCH_CUDA
#if __has_include(<c10/cuda/CUDAStream.h>) && __has_include(<cuda_runtime_api.h>)
#define TESSEL_TORCH_CUDA 1
#else
#define TESSEL_TORCH_CUDA 0
#endif
#endif
#if TESSEL_TORCH_CUDA
#include <c10/cuda/CUDAStream.h>
#endif

namespace tessel {

namespace detail {

inline UserError torch_error(std::source_location loc, const std::string& what,
                             const std::string& hint) {
  return UserError("", SourceLoc::from(loc), what, hint);
}

/// The tessel dtype of a torch dtype; UserError (at `loc`) for one tessel lacks.
inline DType dtype_from_torch(at::ScalarType t, std::source_location loc) {
  switch (t) {
    case at::kBool:
      return DType::boolean;
    case at::kChar:
      return DType::i8;
    case at::kInt:
      return DType::i32;
    case at::kLong:
      return DType::i64;
    case at::kUInt64:
      return DType::u64;
    case at::kHalf:
      return DType::f16;
    case at::kBFloat16:
      return DType::bf16;
    case at::kFloat:
      return DType::f32;
    case at::kDouble:
      return DType::f64;
    default:
      throw torch_error(
          loc, std::string("from_torch: torch dtype ") + c10::toString(t) + " has no tessel dtype",
          "tessel takes bool, int8, int32, int64, uint64, float16, bfloat16, float32 and "
          "float64 tensors (convert with tensor.to(...))");
  }
}

}  // namespace detail

/// A Buffer sharing `t`'s memory (no copy): same shape, strides (elements), element offset
/// and device (CPU, or CUDA with its index); dtypes as in this header's comment. The
/// Buffer keeps `t`'s storage alive (through the DLPack deleter) as long as any handle on
/// it exists. Errors: UserError (pointing at the caller's line) for an undefined tensor, a
/// layout other than strided (sparse, mkldnn), a device other than CPU and CUDA, or a
/// dtype tessel lacks.
inline Buffer from_torch(const at::Tensor& t,
                         std::source_location loc = std::source_location::current()) {
  if (!t.defined())
    throw detail::torch_error(loc, "from_torch of an undefined tensor", "pass a defined tensor");
  if (t.layout() != at::kStrided) {
    std::ostringstream layout;
    layout << t.layout();
    throw detail::torch_error(
        loc, "from_torch: a tensor of layout " + layout.str() + " is not supported",
        "tessel takes strided (dense) tensors: call .to_dense() first");
  }
  if (!t.device().is_cpu() && !t.device().is_cuda())
    throw detail::torch_error(loc,
                              "from_torch: a tensor on " + t.device().str() + " is not supported",
                              "tessel takes CPU and CUDA tensors");
  DType dtype = detail::dtype_from_torch(t.scalar_type(), loc);
  // Bool goes through DLPack as 8-bit unsigned, which Buffer::from_dlpack reads as bool
  // with any DLPack header (kDLBool is newer than some distributions' dlpack.h).
  at::Tensor shared = dtype == DType::boolean ? t.view(at::kByte) : t;
  Buffer b = Buffer::from_dlpack(at::toDLPack(shared));
  if (b.dtype() != dtype)
    throw InternalError("from_torch: DLPack gave " + b.str() + " for torch " +
                        c10::toString(t.scalar_type()));
  return b;
}

/// A torch tensor sharing `b`'s memory (no copy): same shape, strides, element offset and
/// device; dtypes as in this header's comment. The tensor keeps `b`'s storage alive
/// (through the DLPack deleter). Errors: UserError for an undefined Buffer.
inline at::Tensor to_torch(const Buffer& b,
                           std::source_location loc = std::source_location::current()) {
  if (!b.defined())
    throw detail::torch_error(loc, "to_torch of an undefined Buffer", "pass a defined Buffer");
  at::Tensor t = at::fromDLPack(b.to_dlpack());
  // A tessel built with an older dlpack.h exports bool as 8-bit unsigned.
  if (b.dtype() == DType::boolean && t.scalar_type() != at::kBool) t = t.view(at::kBool);
  return t;
}

/// torch's current stream on `device` as a ts::Stream (at::cuda::getCurrentCUDAStream:
/// the stream torch.cuda.stream(...) and torch.cuda.graph capture set), for a CUDA device;
/// ts::Stream{} for the CPU (tessel ignores streams there). Errors: UserError for a CUDA
/// device when this header was compiled with TESSEL_TORCH_CUDA=0; torch's own error
/// (c10::Error) when torch has no CUDA.
inline Stream torch_stream(c10::Device device, [[maybe_unused]] std::source_location loc =
                                                   std::source_location::current()) {
  if (!device.is_cuda()) return Stream{};
#if TESSEL_TORCH_CUDA
  return Stream{static_cast<void*>(c10::cuda::getCurrentCUDAStream(device.index()).stream())};
#else
  throw detail::torch_error(loc, "torch_stream(" + device.str() + "): built without CUDA",
                            "compile with a CUDA build of torch and the CUDA toolkit's headers "
                            "(TESSEL_TORCH_CUDA=1)");
#endif
}

/// torch's current stream on `t`'s device (see torch_stream(c10::Device)).
inline Stream torch_stream(const at::Tensor& t,
                           std::source_location loc = std::source_location::current()) {
  return torch_stream(t.device(), loc);
}

}  // namespace tessel
