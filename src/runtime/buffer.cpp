// ts::Buffer: allocation, views, copies between devices and dtypes, fills, random values.
// GPU work (fills, conversions, random values) runs on the GPU (runtime/device_utils);
// DLPack lives in runtime/dlpack.cpp.
#include "tessel/buffer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "common/byte_size.hpp"
#include "common/element.hpp"
#include "driver/cuda_api.hpp"
#include "driver/host_memory.hpp"
#include "runtime/device_utils.hpp"
#include "tessel/error.hpp"

namespace tessel {
namespace {

constexpr size_t kHostAlignment = 64;

// The user's call of the Buffer function running on this thread (the outermost: Buffer
// functions call each other), where its errors point; none inside tessel's own calls,
// which pass an empty std::source_location.
thread_local SourceLoc t_user_call{};

class UserCall {
 public:
  explicit UserCall(const std::source_location& at) : set_(!t_user_call.line && at.line() > 0) {
    if (set_) t_user_call = SourceLoc::from(at);
  }
  ~UserCall() {
    if (set_) t_user_call = {};
  }
  UserCall(const UserCall&) = delete;
  UserCall& operator=(const UserCall&) = delete;

 private:
  bool set_;
};

UserError buffer_error(const std::string& what, const std::string& hint = "") {
  return UserError("", t_user_call, what, hint);
}

// Why a Buffer is undefined, and what to do, for the errors of operations on one.
constexpr const char* kUndefinedWhy = " (default-constructed or moved from)";
constexpr const char* kUndefinedHint =
    "make it with Buffer::empty, zeros, from_vector or a kernel's result first";

int64_t checked_numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      throw buffer_error("negative size in shape " + shape_str(shape), "Sizes must be >= 0");
    if (d != 0 && n > INT64_MAX / d)
      throw buffer_error("shape " + shape_str(shape) + " has 2^63 or more elements",
                         "use a smaller shape (check its sizes for a typo or a computation "
                         "that overflowed)");
    n *= d;
  }
  return n;
}

// acc += a * b (a, b >= 0); false when that overflows int64 (acc is then unspecified).
bool add_product(int64_t& acc, int64_t a, int64_t b) {
  int64_t p;
  return !__builtin_mul_overflow(a, b, &p) && !__builtin_add_overflow(acc, p, &acc);
}

// A host value for an integer dtype must be one it holds (holds_integer_value, torch's
// "value cannot be converted to type ... without overflow").
void check_integer_value(double v, DType dt) {
  if (!holds_integer_value(dt, v))
    throw buffer_error(
        fmt::format("value {} cannot be converted to {} without overflow", v, dtype_name(dt)),
        "use a value in the dtype's range, or a wider dtype");
}

// Bool and the integer dtypes convert among themselves without a double round trip.
bool int_like(DType t) { return t == DType::boolean || is_integer(t); }

void convert_element(void* dst, DType dt, const void* src, DType st) {
  if (dt == st) {
    std::memcpy(dst, src, dtype_size(dt));
  } else if (int_like(dt) && int_like(st)) {
    write_element_int(dst, dt, read_element_int(src, st));
  } else if (dt == DType::u64) {
    // A float to u64 as a kernel's cast: truncated, saturating at 0 and 2^64 - 1, NaN -> 0
    // (write_element wraps a negative integral value, torch's rule for scalars).
    const double v = read_element(src, st);
    const uint64_t u = !(v > 0)                      ? 0
                       : v >= 18446744073709551615.0 ? UINT64_MAX
                                                     : static_cast<uint64_t>(v);
    std::memcpy(dst, &u, sizeof u);
  } else {
    write_element(dst, dt, read_element(src, st));
  }
}

// Copies host `src` into host `dst` (same shape), converting dtypes.
void cpu_copy(const Buffer& dst, const Buffer& src) {
  int64_t ds = dtype_size(dst.dtype()), ss = dtype_size(src.dtype());
  auto* d = static_cast<char*>(dst.data_ptr());
  auto* s = static_cast<const char*>(src.data_ptr());
  if (dst.dtype() == src.dtype() && dst.is_contiguous() && src.is_contiguous()) {
    std::memcpy(d, s, static_cast<size_t>(dst.numel() * ds));
    return;
  }
  for (rt::StridedWalker w(dst.shape(), dst.strides(), src.strides()); !w.done(); w.next())
    convert_element(d + w.offset(0) * ds, dst.dtype(), s + w.offset(1) * ss, src.dtype());
}

template <class T>
void fill_typed(const Buffer& b, const void* value) {
  T v;
  std::memcpy(&v, value, sizeof(T));
  T* p = static_cast<T*>(b.data_ptr());
  if (b.is_contiguous()) {
    std::fill_n(p, b.numel(), v);
    return;
  }
  for (rt::StridedWalker w(b.shape(), b.strides()); !w.done(); w.next()) p[w.offset(0)] = v;
}

// Normalizes a possibly negative dimension index of a rank-`rank` tensor.
// Dim d of b's `rank` dims, counted from the end when negative; a UserError at `at` (the
// caller's line, where it has one) outside them.
int normalize_dim(int d, int rank, const Buffer& b, std::source_location at = {}) {
  int n = d < 0 ? d + rank : d;
  if (n < 0 || n >= rank) {
    UserCall call(at);
    throw buffer_error("dimension " + std::to_string(d) + " is out of range for " + b.str(),
                       rank == 0 ? std::string("a 0-dimensional Buffer has no dimensions")
                                 : "Use a dimension in [" + std::to_string(-rank) + ", " +
                                       std::to_string(rank - 1) + "]");
  }
  return n;
}

void sync(Device d) {
  if (!d.is_cuda()) return;
  rt::set_device(d.index);
  rt::stream_synchronize();
}

}  // namespace

Storage::~Storage() {
  if (!owned && !device.is_cuda()) rt::unregister_host_memory(ptr, nbytes);
  if (!owned || !ptr) return;
  if (device.is_cuda()) {
    try {
      rt::device_free(ptr, device.index, stream, nbytes);
    } catch (...) {
      // The driver may already be shut down at process exit; nothing to do then.
    }
  } else {
    rt::unregister_host_memory(ptr, nbytes);
    std::free(ptr);
  }
}

std::string Device::str() const { return is_cuda() ? "cuda:" + std::to_string(index) : "cpu"; }

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t s = 1;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    strides[d] = s;
    s *= std::max<int64_t>(shape[d], 1);
  }
  return strides;
}

// ---- creation ----

Buffer Buffer::empty(std::vector<int64_t> shape, DType dtype, Device device,
                     std::source_location at) {
  UserCall call(at);
  return empty_on_stream(std::move(shape), dtype, device, nullptr);
}

Buffer Buffer::empty_on_stream(std::vector<int64_t> shape, DType dtype, Device device,
                               void* stream) {
  checked_numel(shape);
  std::optional<int64_t> nbytes = dense_bytes(shape, dtype);
  if (!nbytes)
    throw buffer_error("cannot allocate " + describe_dense(shape, dtype),
                       "allocate a smaller shape (check its sizes for a typo or a computation "
                       "that overflowed)");
  auto storage = std::make_shared<Storage>();
  storage->device = device;
  storage->nbytes = *nbytes;
  if (device.is_cuda()) {
    rt::set_device(device.index);  // RuntimeError without a driver or for a bad index
    storage->ptr = rt::device_alloc(storage->nbytes, device.index, stream);
    storage->stream = stream;
  } else {
    // Rounded up to the alignment: at most 2^63 - 1 + 63 bytes, which size_t holds.
    size_t bytes = static_cast<size_t>(std::max<int64_t>(storage->nbytes, 1));
    bytes = (bytes + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
    storage->ptr = std::aligned_alloc(kHostAlignment, bytes);
    if (!storage->ptr)
      throw RuntimeError("cannot allocate " + describe_dense(shape, dtype) +
                         " in host memory: out of memory (free other Buffers first, or allocate "
                         "less)");
    rt::register_host_memory(storage->ptr, storage->nbytes);
  }
  Buffer b;
  b.storage_ = std::move(storage);
  b.strides_ = contiguous_strides(shape);
  b.shape_ = std::move(shape);
  b.dtype_ = dtype;
  return b;
}

Buffer Buffer::zeros(std::vector<int64_t> shape, DType dtype, Device device,
                     std::source_location at) {
  UserCall call(at);
  Buffer b = empty(std::move(shape), dtype, device);
  if (device.is_cuda()) {
    rt::set_device(device.index);
    rt::memset_d8(b.data_ptr(), 0, b.storage_->nbytes);  // all-zero bits are 0 in every dtype
  } else {
    std::memset(b.data_ptr(), 0, static_cast<size_t>(b.storage_->nbytes));
  }
  return b;
}

Buffer Buffer::ones(std::vector<int64_t> shape, DType dtype, Device device,
                    std::source_location at) {
  UserCall call(at);
  return full(std::move(shape), 1.0, dtype, device);
}

Buffer Buffer::full(std::vector<int64_t> shape, double value, DType dtype, Device device,
                    std::source_location at) {
  UserCall call(at);
  Buffer b = empty(std::move(shape), dtype, device);
  b.fill(value);
  return b;
}

static Buffer random_buffer(std::vector<int64_t> shape, DType dtype, Device device, uint64_t seed,
                            bool normal) {
  if (!is_float(dtype))
    throw buffer_error(
        std::string(normal ? "randn" : "rand") + " needs a float dtype, got " + dtype_name(dtype),
        "Use f16, bf16, f32 or f64");
  Buffer b = Buffer::empty(std::move(shape), dtype, device);
  if (device.is_cuda()) {
    rt::set_device(device.index);
    rt::gpu_random(b, seed, normal);
    return b;
  }
  auto* p = static_cast<char*>(b.data_ptr());
  int64_t size = dtype_size(dtype), n = b.numel();
  for (int64_t i = 0; i < n; ++i) {
    double v = normal ? rt::random_normal(seed, static_cast<uint64_t>(i))
                      : rt::random_uniform(seed, static_cast<uint64_t>(i), dtype);
    write_element(p + i * size, dtype, v);
  }
  return b;
}

Buffer Buffer::randn(std::vector<int64_t> shape, DType dtype, Device device, uint64_t seed,
                     std::source_location at) {
  UserCall call(at);
  return random_buffer(std::move(shape), dtype, device, seed, true);
}

Buffer Buffer::rand(std::vector<int64_t> shape, DType dtype, Device device, uint64_t seed,
                    std::source_location at) {
  UserCall call(at);
  return random_buffer(std::move(shape), dtype, device, seed, false);
}

Buffer Buffer::arange(int64_t n, DType dtype, Device device, std::source_location at) {
  UserCall call(at);
  if (n < 0) throw buffer_error("arange of a negative length " + std::to_string(n));
  // Its largest value must fit an integer dtype (arange(300) of i8 is refused, not wrapped).
  if (is_integer(dtype) && n > 0) check_integer_value(static_cast<double>(n - 1), dtype);
  Buffer b = empty({n}, dtype, device);
  if (device.is_cuda()) {
    rt::set_device(device.index);
    rt::gpu_arange(b);
    return b;
  }
  auto* p = static_cast<char*>(b.data_ptr());
  int64_t size = dtype_size(dtype);
  for (int64_t i = 0; i < n; ++i) {
    if (int_like(dtype))
      write_element_int(p + i * size, dtype, i);
    else
      write_element(p + i * size, dtype, static_cast<double>(i));
  }
  return b;
}

Buffer Buffer::scalar(double value, DType dtype, Device device, std::source_location at) {
  UserCall call(at);
  return full({1}, value, dtype, device);
}

Buffer Buffer::from_vector(const std::vector<double>& values, std::vector<int64_t> shape,
                           DType dtype, Device device, std::source_location at) {
  UserCall call(at);
  int64_t n = checked_numel(shape);
  if (n != static_cast<int64_t>(values.size()))
    throw buffer_error("from_vector got " + std::to_string(values.size()) + " values for shape " +
                       shape_str(shape) + " (" + std::to_string(n) + " elements)");
  Buffer host = empty(std::move(shape), dtype, cpu());
  auto* p = static_cast<char*>(host.data_ptr());
  int64_t size = dtype_size(dtype);
  for (int64_t i = 0; i < n; ++i) {
    check_integer_value(values[i], dtype);
    write_element(p + i * size, dtype, values[i]);
  }
  return device.is_cuda() ? host.to(device) : host;
}

Buffer Buffer::from_blob(void* ptr, std::vector<int64_t> shape, std::vector<int64_t> strides,
                         DType dtype, Device device, std::source_location at) {
  UserCall call(at);
  int64_t n = checked_numel(shape);
  if (!ptr && n > 0)
    throw buffer_error("from_blob of a null pointer with " + std::to_string(n) + " elements",
                       "pass the address of the memory the Buffer views (a null pointer is "
                       "allowed only for an empty shape)");
  if (strides.empty()) strides = contiguous_strides(shape);
  if (strides.size() != shape.size())
    throw buffer_error("from_blob got " + std::to_string(strides.size()) + " strides for shape " +
                       shape_str(shape));
  int64_t extent = 0;  // the last element's offset, then the bytes up to its end
  bool overflow = false;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (strides[d] < 0)
      throw buffer_error("from_blob with a negative stride",
                         "give non-negative strides (tessel views never run backwards; flip "
                         "the data instead)");
    overflow |= !add_product(extent, shape[d] - 1, strides[d]);
  }
  overflow |= __builtin_add_overflow(extent, 1, &extent) ||
              __builtin_mul_overflow(extent, int64_t{dtype_size(dtype)}, &extent);
  if (n > 0 && overflow)
    throw buffer_error("from_blob of shape " + shape_str(shape) + " and strides " +
                           shape_str(strides) + " spans more than 2^63 - 1 bytes",
                       "pass the shape and strides (in elements) of memory that exists");
  auto storage = std::make_shared<Storage>();
  storage->ptr = ptr;
  storage->nbytes = n == 0 ? 0 : extent;
  storage->device = device;
  storage->owned = false;
  if (!device.is_cuda()) rt::register_host_memory(ptr, storage->nbytes);
  Buffer b;
  b.storage_ = std::move(storage);
  b.shape_ = std::move(shape);
  b.strides_ = std::move(strides);
  b.dtype_ = dtype;
  return b;
}

// ---- properties and views ----

void* Buffer::data_ptr() const {
  if (!storage_ || !storage_->ptr) return nullptr;
  return static_cast<char*>(storage_->ptr) + offset_ * dtype_size(dtype_);
}

int64_t Buffer::size(int d, std::source_location at) const {
  return shape_[normalize_dim(d, dim(), *this, at)];
}
int64_t Buffer::stride(int d, std::source_location at) const {
  return strides_[normalize_dim(d, dim(), *this, at)];
}

int64_t Buffer::numel() const {
  if (!defined()) return 0;  // an undefined Buffer holds no element (not a 0-dim one)
  int64_t n = 1;
  for (int64_t s : shape_) n *= s;
  return n;
}

int64_t Buffer::span() const {
  int64_t last = 0;
  for (size_t d = 0; d < shape_.size(); ++d) {
    if (shape_[d] == 0) return 0;
    last += (shape_[d] - 1) * (strides_[d] < 0 ? -strides_[d] : strides_[d]);
  }
  return last + 1;
}

Device Buffer::device() const { return storage_ ? storage_->device : cpu(); }

bool Buffer::is_contiguous() const {
  int64_t expected = 1;
  for (int d = dim() - 1; d >= 0; --d) {
    if (shape_[d] == 0) return true;
    if (shape_[d] != 1 && strides_[d] != expected) return false;
    expected *= shape_[d];
  }
  return true;
}

Buffer Buffer::transpose(int d0, int d1, std::source_location at) const {
  UserCall call(at);
  int a = normalize_dim(d0, dim(), *this), b = normalize_dim(d1, dim(), *this);
  Buffer v = *this;
  std::swap(v.shape_[a], v.shape_[b]);
  std::swap(v.strides_[a], v.strides_[b]);
  return v;
}

Buffer Buffer::narrow(int d, int64_t start, int64_t length, std::source_location at) const {
  UserCall call(at);
  int n = normalize_dim(d, dim(), *this);
  if (start < 0) start += shape_[n];
  if (start < 0 || length < 0 || start + length > shape_[n])
    throw buffer_error("narrow(" + std::to_string(d) + ", " + std::to_string(start) + ", " +
                           std::to_string(length) + ") is out of range for " + str(),
                       "Need 0 <= start and start + length <= " + std::to_string(shape_[n]));
  Buffer v = *this;
  v.shape_[n] = length;
  v.offset_ += start * strides_[n];
  return v;
}

Buffer Buffer::view_as_strided(std::vector<int64_t> shape, std::vector<int64_t> strides,
                               int64_t offset, std::source_location at) const {
  UserCall call(at);
  if (!defined())
    throw buffer_error(std::string("view_as_strided of an undefined Buffer") + kUndefinedWhy,
                       kUndefinedHint);
  if (shape.size() != strides.size())
    throw buffer_error("view_as_strided got " + std::to_string(strides.size()) +
                       " strides for shape " + shape_str(shape));
  int64_t n = checked_numel(shape);
  int64_t last = offset;
  bool overflow = false;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (strides[d] < 0)
      throw buffer_error("view_as_strided with a negative stride",
                         "give non-negative strides (tessel views never run backwards; flip "
                         "the data instead)");
    if (shape[d] > 0) overflow |= !add_product(last, shape[d] - 1, strides[d]);
  }
  int64_t capacity = storage_->nbytes / dtype_size(dtype_);
  if (offset < 0 || (n > 0 && (overflow || last >= capacity)))
    throw buffer_error("view_as_strided(" + shape_str(shape) + ", " + shape_str(strides) + ", " +
                       std::to_string(offset) + ") reaches element " +
                       (overflow ? std::string("2^63 or further") : std::to_string(last)) +
                       " of a storage of " + std::to_string(capacity) + " elements");
  Buffer v = *this;
  v.shape_ = std::move(shape);
  v.strides_ = std::move(strides);
  v.offset_ = offset;
  return v;
}

// ---- copies ----

Buffer Buffer::to(Device device, std::source_location at) const {
  UserCall call(at);
  if (!defined())
    throw buffer_error("to(" + device.str() + ") of an undefined Buffer" + kUndefinedWhy,
                       kUndefinedHint);
  Buffer out = empty(shape_, dtype_, device);
  out.copy_from(*this);
  sync(device);
  sync(this->device());
  return out;
}

Buffer Buffer::contiguous() const {
  if (is_contiguous()) return *this;
  Buffer out = empty(shape_, dtype_, device());
  out.copy_from(*this);
  return out;
}

void Buffer::copy_from(const Buffer& src, std::source_location at) {
  UserCall call(at);
  if (!defined())
    throw buffer_error(std::string("copy_from into an undefined Buffer") + kUndefinedWhy,
                       kUndefinedHint);
  if (!src.defined())
    throw buffer_error(std::string("copy_from of an undefined Buffer") + kUndefinedWhy,
                       kUndefinedHint);
  if (shape_ != src.shape_)
    throw buffer_error("copy_from: cannot copy " + src.str() + " into " + str(),
                       "The shapes must be equal");
  if (numel() == 0) return;
  Device dd = device(), sd = src.device();
  int64_t nbytes = numel() * dtype_size(dtype_);
  if (!dd.is_cuda() && !sd.is_cuda()) {
    cpu_copy(*this, src);
  } else if (dd == sd) {
    rt::set_device(dd.index);
    rt::gpu_copy(*this, src);
  } else if (dd.is_cuda() && sd.is_cuda()) {
    // Convert on the source device, copy between devices, lay out on this device.
    Buffer packed = src;
    if (!src.is_contiguous() || src.dtype_ != dtype_) {
      packed = empty(shape_, dtype_, sd);
      rt::set_device(sd.index);
      rt::gpu_copy(packed, src);
    }
    sync(sd);
    Buffer landing = is_contiguous() ? *this : empty(shape_, dtype_, dd);
    rt::memcpy_peer(landing.data_ptr(), dd.index, packed.data_ptr(), sd.index, nbytes);
    if (!is_contiguous()) rt::gpu_copy(*this, landing);
    sync(dd);  // `packed` is freed on return
  } else if (dd.is_cuda()) {
    // Host to device: send the source dtype, convert and lay out on the GPU.
    Buffer host = src.contiguous();
    rt::set_device(dd.index);
    if (is_contiguous() && dtype_ == src.dtype_) {
      rt::memcpy_htod(data_ptr(), host.data_ptr(), nbytes);
    } else {
      Buffer staging = empty(shape_, src.dtype_, dd);
      rt::memcpy_htod(staging.data_ptr(), host.data_ptr(), src.numel() * dtype_size(src.dtype_));
      rt::gpu_copy(*this, staging);
    }
    rt::stream_synchronize();  // the host memory may go away on return
  } else {
    // Device to host: convert and pack on the GPU, then one transfer.
    rt::set_device(sd.index);
    Buffer packed = src;
    if (!src.is_contiguous() || src.dtype_ != dtype_) {
      packed = empty(shape_, dtype_, sd);
      rt::gpu_copy(packed, src);
    }
    Buffer landing = is_contiguous() ? *this : empty(shape_, dtype_, cpu());
    rt::memcpy_dtoh(landing.data_ptr(), packed.data_ptr(), nbytes);
    rt::stream_synchronize();
    if (!is_contiguous()) cpu_copy(*this, landing);
  }
}

void Buffer::fill(double value, std::source_location at) {
  UserCall call(at);
  fill_on_stream(value, nullptr);
}

void Buffer::fill_on_stream(double value, void* stream) {
  if (!defined())
    throw buffer_error(std::string("fill of an undefined Buffer") + kUndefinedWhy, kUndefinedHint);
  if (!holds_value(dtype_, value))  // torch's fill_ and full refuse it too
    throw buffer_error(fmt::format("value {} cannot be converted to {} without overflow", value,
                                   dtype_name(dtype_)),
                       "use a value in the dtype's range, or a wider dtype");
  if (numel() == 0) return;
  if (device().is_cuda()) {
    rt::set_device(device().index);
    rt::gpu_fill(*this, value, stream);
    return;
  }
  uint64_t bits = 0;
  write_element(&bits, dtype_, value);
  switch (dtype_size(dtype_)) {
    case 1:
      fill_typed<uint8_t>(*this, &bits);
      break;
    case 2:
      fill_typed<uint16_t>(*this, &bits);
      break;
    case 4:
      fill_typed<uint32_t>(*this, &bits);
      break;
    default:
      fill_typed<uint64_t>(*this, &bits);
      break;
  }
}

std::vector<double> Buffer::to_vector(std::source_location at) const {
  UserCall call(at);
  if (!defined())
    throw buffer_error(std::string("to_vector of an undefined Buffer") + kUndefinedWhy,
                       kUndefinedHint);
  Buffer host = device().is_cuda() ? to(cpu()) : contiguous();
  std::vector<double> out(static_cast<size_t>(host.numel()));
  auto* p = static_cast<const char*>(host.data_ptr());
  int64_t size = dtype_size(dtype_);
  for (size_t i = 0; i < out.size(); ++i) out[i] = read_element(p + i * size, dtype_);
  return out;
}

double Buffer::item(std::source_location at) const {
  UserCall call(at);
  if (!defined() || numel() != 1)
    throw buffer_error("item() of " + (defined() ? str() : std::string("an undefined Buffer")),
                       "item() reads a Buffer of exactly one element (this one has " +
                           std::to_string(defined() ? numel() : 0) +
                           "); read one element with narrow() or all with to_vector()");
  if (!device().is_cuda()) return read_element(data_ptr(), dtype_);
  uint64_t bits = 0;
  rt::set_device(device().index);
  rt::memcpy_dtoh(&bits, data_ptr(), dtype_size(dtype_));
  rt::stream_synchronize();
  return read_element(&bits, dtype_);
}

std::string Buffer::str() const {
  if (!defined()) return "undefined";
  return dtype_name(dtype_) + shape_str(shape_) + " " + device().str();
}

}  // namespace tessel
