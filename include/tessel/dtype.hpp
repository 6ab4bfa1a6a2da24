// Element types of tensors and tile values, and PyTorch's type promotion.
#pragma once

#include <cstdint>
#include <string>

namespace tessel {

/// Element type. Names follow PyTorch (`torch.float32` is `f32`, ...). The 8-bit floats
/// (OCP FP8, as torch.float8_e4m3fn and torch.float8_e5m2): f8e4m3 has 4 exponent bits, 3
/// mantissa bits, no infinities and a largest finite value of 448; f8e5m2 has 5 and 2, IEEE
/// infinities, and 57344. A conversion to either rounds to nearest even and saturates:
/// values past the largest finite one (infinities too) become it, NaN stays NaN (CUDA's
/// __NV_SATFINITE and Triton's fp8 casts; PyTorch's own casts give NaN or infinity there).
/// i8 is torch.int8: arithmetic wraps modulo 2^8 as in PyTorch; a float converts to it by
/// truncation toward zero, saturating at [-128, 127] (NaN: 0), as to i32.
enum class DType : uint8_t { boolean, i32, i64, u64, f16, bf16, f32, f64, f8e4m3, f8e5m2, i8 };

inline constexpr DType boolean = DType::boolean;
inline constexpr DType i32 = DType::i32;
inline constexpr DType i64 = DType::i64;
inline constexpr DType u64 = DType::u64;
inline constexpr DType f16 = DType::f16;
inline constexpr DType bf16 = DType::bf16;
inline constexpr DType f32 = DType::f32;
inline constexpr DType f64 = DType::f64;
inline constexpr DType f8e4m3 = DType::f8e4m3;
inline constexpr DType f8e5m2 = DType::f8e5m2;
inline constexpr DType i8 = DType::i8;

namespace detail {
[[noreturn]] void unknown_dtype(DType t);
}

/// Size of one element in bytes (bool is one byte, as in PyTorch). Inline: a kernel call
/// asks it of every argument. Here and in dtype_name: a value that is no DType (an
/// integer cast to DType) throws UserError.
inline int dtype_size(DType t) {
  switch (t) {
    case DType::boolean:
    case DType::i8:
    case DType::f8e4m3:
    case DType::f8e5m2:
      return 1;
    case DType::f16:
    case DType::bf16:
      return 2;
    case DType::i32:
    case DType::f32:
      return 4;
    case DType::i64:
    case DType::u64:
    case DType::f64:
      return 8;
  }
  detail::unknown_dtype(t);
}
/// "f32", "bf16", ... (the spelling used in errors and in printed IR).
std::string dtype_name(DType t);
/// The C++ type the generated CUDA stores this dtype as in memory ("float", "__nv_bfloat16", ...).
std::string dtype_cuda_storage(DType t);
/// Parses a name printed by dtype_name; throws UserError on an unknown name.
DType dtype_from_name(const std::string& name);

bool is_float(DType t);
bool is_integer(DType t);  // i8, i32, i64, u64 (not bool)
/// Floats narrower than f32 (f16, bf16, f8e4m3, f8e5m2): computed in f32 and rounded to
/// their dtype where a value of that dtype is made (PyTorch's semantics for such ops).
bool is_narrow_float(DType t);
/// f8e4m3 or f8e5m2.
bool is_f8(DType t);

/// PyTorch's result type of a binary op between two tensors (torch.result_type):
/// categories bool < integer < float; within a category the wider type wins (i8 < i32 <
/// i64);
/// f16 with bf16 gives f32. An 8-bit float with another float gives the other one (both
/// 8-bit floats: f32); PyTorch refuses to promote its float8 types.
DType promote(DType a, DType b);

/// Promotion with a weakly typed C++ literal (PyTorch's "wrapped number" rule):
/// a literal changes the dtype only when it is of a higher category
/// (`x_f16 + 1.0` stays f16, `x_i32 + 1.5` becomes f32, the default float dtype).
DType promote_weak(DType tensor, DType literal);

}  // namespace tessel
