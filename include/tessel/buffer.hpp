// ts::Buffer: a concrete tensor (pointer, shape, strides, dtype, device) with shared
// ownership, like torch.Tensor. Kernels take Buffers as arguments and return Buffers.
#pragma once

#include <cstdint>
#include <memory>
#include <source_location>
#include <string>
#include <vector>

#include "tessel/dtype.hpp"

struct DLManagedTensor;

namespace tessel {

enum class DeviceType : uint8_t { cpu, cuda };

/// Where a Buffer's memory lives.
struct Device {
  DeviceType type = DeviceType::cpu;
  int index = 0;
  bool is_cuda() const { return type == DeviceType::cuda; }
  bool operator==(const Device&) const = default;
  std::string str() const;  // "cpu" or "cuda:0"
};
inline Device cpu() { return {DeviceType::cpu, 0}; }
inline Device cuda(int index = 0) { return {DeviceType::cuda, index}; }

/// Memory owned by one or more Buffers. Freed when the last Buffer goes away
/// (GPU memory is freed stream-ordered on the stream it was allocated on).
struct Storage {
  void* ptr = nullptr;
  int64_t nbytes = 0;
  Device device;
  void* stream = nullptr;            // CUstream the memory was allocated on (nullptr = default)
  bool owned = true;                 // false for memory borrowed through DLPack or from_blob
  std::shared_ptr<void> keep_alive;  // e.g. the DLManagedTensor we borrowed from
  ~Storage();
};

/// A concrete tensor. Shapes and strides are in elements. Copying a Buffer copies a
/// handle (both see the same memory). Errors: RuntimeError when host or GPU memory cannot
/// be allocated (stating the shape and bytes) or no CUDA driver is present for a cuda
/// Buffer; UserError for bad shapes: a negative size, an element or byte count past
/// 2^63 - 1 (said so, never wrapped), a view reaching past its storage or past 2^63 - 1.
/// A UserError names the caller's file and line (`at`: the call's, by default).
class Buffer {
 public:
  Buffer() = default;

  /// Uninitialized contiguous tensor.
  static Buffer empty(std::vector<int64_t> shape, DType dtype, Device device = cpu(),
                      std::source_location at = std::source_location::current());
  /// empty() allocated stream-ordered on `stream` (a CUstream; legal during CUDA graph
  /// capture) and freed on it when the last handle goes away.
  static Buffer empty_on_stream(std::vector<int64_t> shape, DType dtype, Device device,
                                void* stream);
  static Buffer zeros(std::vector<int64_t> shape, DType dtype, Device device = cpu(),
                      std::source_location at = std::source_location::current());
  static Buffer ones(std::vector<int64_t> shape, DType dtype, Device device = cpu(),
                     std::source_location at = std::source_location::current());
  static Buffer full(std::vector<int64_t> shape, double value, DType dtype, Device device = cpu(),
                     std::source_location at = std::source_location::current());
  /// Standard normal values from a counter-based generator (deterministic in `seed`;
  /// the same seed gives the same values on the CPU and on a GPU, up to a few ulps of the
  /// double-precision log/cos used by Box-Muller, which can show in f64 and, rarely, in
  /// the last bit of narrower dtypes). UserError for a non-float dtype.
  static Buffer randn(std::vector<int64_t> shape, DType dtype, Device device = cpu(),
                      uint64_t seed = 0, std::source_location at = std::source_location::current());
  /// Uniform values in [0, 1), same generator as randn; bit-identical on CPU and GPU.
  /// UserError for a non-float dtype.
  static Buffer rand(std::vector<int64_t> shape, DType dtype, Device device = cpu(),
                     uint64_t seed = 0, std::source_location at = std::source_location::current());
  /// 0, 1, ..., n-1. UserError where n - 1 is outside an integer dtype's range.
  static Buffer arange(int64_t n, DType dtype, Device device = cpu(),
                       std::source_location at = std::source_location::current());
  /// A one-element tensor of shape [1] holding `value` (e.g. a device-side loop bound).
  /// Integer dtypes (here and in full, fill, from_vector): fractions truncate toward 0; a
  /// NaN, an infinity or a value outside the dtype's range is a UserError, as in torch; an
  /// integral negative value for u64 wraps (2^64 - 1 for -1), as torch's integer scalars.
  static Buffer scalar(double value, DType dtype, Device device = cpu(),
                       std::source_location at = std::source_location::current());
  /// Copies host values (converted to `dtype`) into a new tensor of the given shape.
  static Buffer from_vector(const std::vector<double>& values, std::vector<int64_t> shape,
                            DType dtype, Device device = cpu(),
                            std::source_location at = std::source_location::current());
  /// Wraps memory the caller owns (not freed by tessel).
  static Buffer from_blob(void* ptr, std::vector<int64_t> shape, std::vector<int64_t> strides,
                          DType dtype, Device device,
                          std::source_location at = std::source_location::current());
  /// Zero-copy import of a DLPack tensor (takes ownership of `t`, calls its deleter).
  static Buffer from_dlpack(DLManagedTensor* t);
  /// Zero-copy export; the Buffer's memory stays alive until the consumer calls the deleter.
  DLManagedTensor* to_dlpack() const;

  bool defined() const { return storage_ != nullptr; }
  void* data_ptr() const;  // base pointer including the element offset
  const std::vector<int64_t>& shape() const { return shape_; }
  const std::vector<int64_t>& strides() const { return strides_; }
  /// Size and stride (elements) of dim d; negative d counts from the end. Errors:
  /// UserError (naming the caller's line `at`) for a dim outside [-dim(), dim()).
  int64_t size(int d, std::source_location at = std::source_location::current()) const;
  int64_t stride(int d, std::source_location at = std::source_location::current()) const;
  int dim() const { return static_cast<int>(shape_.size()); }
  int64_t numel() const;  // 1 for a 0-dim Buffer, 0 for an undefined one
  /// Elements of memory this view can address, from its first element to its furthest:
  /// 1 + sum over dims of (size - 1) * |stride| (0 when empty). Equals numel() when
  /// contiguous; larger for strided views (e.g. a column slice of a wide tensor). Index
  /// arithmetic in 32 bits is enough when this is below 2^31.
  int64_t span() const;
  DType dtype() const { return dtype_; }
  Device device() const;
  bool is_contiguous() const;
  int64_t offset() const { return offset_; }  // in elements, from the storage's start
  const std::shared_ptr<Storage>& storage() const { return storage_; }

  /// Views sharing memory (no copy).
  Buffer transpose(int d0, int d1, std::source_location at = std::source_location::current()) const;
  Buffer narrow(int dim, int64_t start, int64_t length,
                std::source_location at = std::source_location::current()) const;
  Buffer view_as_strided(std::vector<int64_t> shape, std::vector<int64_t> strides, int64_t offset,
                         std::source_location at = std::source_location::current()) const;

  /// A copy on `device` (contiguous). Synchronizes with the GPU.
  Buffer to(Device device, std::source_location at = std::source_location::current()) const;
  /// A contiguous tensor with the same values on the same device: *this itself (sharing
  /// memory) when already contiguous, like torch, else a copy.
  Buffer contiguous() const;
  /// Copies `src` (same shape; any dtype, converted as a kernel's cast converts: floats to
  /// integers truncated toward zero and saturating, NaN -> 0; any device) into this Buffer.
  void copy_from(const Buffer& src, std::source_location at = std::source_location::current());
  /// Sets every element to `value`. On a GPU this is enqueued on the legacy default stream
  /// and does not wait (like copy_from between two Buffers of one GPU).
  void fill(double value, std::source_location at = std::source_location::current());
  /// fill() queued on `stream` (a CUstream) without synchronizing.
  void fill_on_stream(double value, void* stream);
  /// All elements in row-major order, converted to double (copies from the GPU).
  std::vector<double> to_vector(std::source_location at = std::source_location::current()) const;
  /// The value of a one-element Buffer (any shape: [], [1], [1, 1]) converted to double
  /// (copies from the GPU). Errors: UserError for any other element count (torch's
  /// Tensor.item() likewise).
  double item(std::source_location at = std::source_location::current()) const;
  std::string str() const;  // shape, dtype and device, e.g. "f32[4, 8] cuda:0"

 private:
  std::shared_ptr<Storage> storage_;
  std::vector<int64_t> shape_, strides_;
  int64_t offset_ = 0;
  DType dtype_ = DType::f32;
  friend struct BufferAccess;
};

/// Row-major strides for a shape (elements).
std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape);

}  // namespace tessel
