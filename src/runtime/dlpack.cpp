// Zero-copy DLPack import and export of Buffers.
//
// Bool: DLPack 0.8 added kDLBool. With an older header (Debian 12 ships 0.6) tessel
// exports bool as 8-bit kDLUInt, and it imports 8-bit kDLUInt as bool either way (tessel
// has no u8 dtype).
#include <dlpack/dlpack.h>

#include <memory>

#include "tessel/buffer.hpp"
#include "tessel/error.hpp"

#if defined(DLPACK_MAJOR_VERSION) || (defined(DLPACK_VERSION) && DLPACK_VERSION >= 80)
#define TESSEL_DLPACK_HAS_BOOL 1
#else
#define TESSEL_DLPACK_HAS_BOOL 0
#endif

namespace tessel {
namespace {

UserError dlpack_error(const std::string& what, const std::string& hint = "") {
  return UserError("", SourceLoc{}, what, hint);
}

DLDataType to_dl(DType t) {
  auto make = [](int code, int bits) {
    DLDataType d;
    d.code = static_cast<uint8_t>(code);
    d.bits = static_cast<uint8_t>(bits);
    d.lanes = 1;
    return d;
  };
  switch (t) {
#if TESSEL_DLPACK_HAS_BOOL
    case DType::boolean:
      return make(kDLBool, 8);
#else
    case DType::boolean:
      return make(kDLUInt, 8);
#endif
    case DType::i8:
      return make(kDLInt, 8);
    case DType::i32:
      return make(kDLInt, 32);
    case DType::i64:
      return make(kDLInt, 64);
    case DType::u64:
      return make(kDLUInt, 64);
    case DType::f16:
      return make(kDLFloat, 16);
    case DType::bf16:
      return make(kDLBfloat, 16);
    case DType::f32:
      return make(kDLFloat, 32);
    case DType::f64:
      return make(kDLFloat, 64);
    case DType::f8e4m3:
    case DType::f8e5m2:
      throw dlpack_error("a " + dtype_name(t) +
                             " tensor has no DLPack dtype here (the DLPack headers tessel was "
                             "built with have no 8-bit float codes)",
                         "share it as raw bytes (a u8 view on the other side) or convert it to "
                         "f16 or bf16 first");
  }
  throw InternalError("to_dl: unknown dtype");
}

DType from_dl(DLDataType d) {
  if (d.lanes != 1)
    throw dlpack_error("DLPack tensors with " + std::to_string(d.lanes) +
                       " lanes are not supported");
#if TESSEL_DLPACK_HAS_BOOL
  if (d.code == kDLBool && d.bits == 8) return DType::boolean;
#endif
  if (d.code == kDLUInt && d.bits == 8) return DType::boolean;
  if (d.code == kDLInt && d.bits == 8) return DType::i8;
  if (d.code == kDLInt && d.bits == 32) return DType::i32;
  if (d.code == kDLInt && d.bits == 64) return DType::i64;
  if (d.code == kDLUInt && d.bits == 64) return DType::u64;
  if (d.code == kDLFloat && d.bits == 16) return DType::f16;
  if (d.code == kDLBfloat && d.bits == 16) return DType::bf16;
  if (d.code == kDLFloat && d.bits == 32) return DType::f32;
  if (d.code == kDLFloat && d.bits == 64) return DType::f64;
  throw dlpack_error("DLPack dtype (code " + std::to_string(d.code) + ", " +
                         std::to_string(d.bits) + " bits) has no tessel dtype",
                     "tessel supports bool, i8, i32, i64, u64, f16, bf16, f32 and f64");
}

// What an exported DLManagedTensor owns: a handle on the Buffer and the arrays it points to.
struct ExportHolder {
  DLManagedTensor managed{};
  Buffer buffer;
  std::vector<int64_t> shape, strides;
};

}  // namespace

DLManagedTensor* Buffer::to_dlpack() const {
  if (!defined()) throw dlpack_error("to_dlpack of an undefined Buffer");
  auto holder = std::make_unique<ExportHolder>();
  holder->buffer = *this;
  holder->shape = shape_;
  holder->strides = strides_;
  DLTensor& t = holder->managed.dl_tensor;
  t.data = data_ptr();
  t.byte_offset = 0;
  t.device.device_type = device().is_cuda() ? kDLCUDA : kDLCPU;
  t.device.device_id = device().index;
  t.ndim = dim();
  t.dtype = to_dl(dtype_);
  t.shape = holder->shape.data();
  t.strides = holder->strides.data();
  holder->managed.manager_ctx = holder.get();
  holder->managed.deleter = [](DLManagedTensor* m) {
    delete static_cast<ExportHolder*>(m->manager_ctx);
  };
  return &holder.release()->managed;
}

Buffer Buffer::from_dlpack(DLManagedTensor* t) {
  if (!t) throw dlpack_error("from_dlpack of a null DLManagedTensor");
  // Owns `t` from here on: its deleter runs when the last Buffer goes away, or now if
  // the import fails.
  std::shared_ptr<void> keep(t, [](void* p) {
    auto* m = static_cast<DLManagedTensor*>(p);
    if (m->deleter) m->deleter(m);
  });
  const DLTensor& dl = t->dl_tensor;
  Device device;
  // As an int: DLDeviceType grows with DLPack's versions (no list of it is complete), and
  // tessel's switches over enums list every enumerator (-Werror=switch-enum).
  switch (static_cast<int>(dl.device.device_type)) {
    case kDLCPU:
    case kDLCUDAHost:
      device = cpu();
      break;
    case kDLCUDA:
    case kDLCUDAManaged:
      device = cuda(dl.device.device_id);
      break;
    default:
      throw dlpack_error(
          "DLPack device type " + std::to_string(dl.device.device_type) + " is not supported",
          "tessel takes CPU and CUDA tensors");
  }
  DType dtype = from_dl(dl.dtype);
  if (dl.ndim < 0) throw dlpack_error("DLPack tensor with negative ndim");
  std::vector<int64_t> shape(dl.shape, dl.shape + dl.ndim);
  std::vector<int64_t> strides = dl.strides ? std::vector<int64_t>(dl.strides, dl.strides + dl.ndim)
                                            : contiguous_strides(shape);
  void* data = static_cast<char*>(dl.data) + dl.byte_offset;
  Buffer b = from_blob(data, std::move(shape), std::move(strides), dtype, device);
  b.storage_->keep_alive = std::move(keep);
  return b;
}

}  // namespace tessel
