// DType names, sizes and PyTorch's type promotion.
#include "tessel/dtype.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common/dtype_check.hpp"
#include "tessel/error.hpp"

namespace tessel {

bool is_known_dtype(DType t) {
  switch (t) {
    case DType::boolean:
    case DType::i8:
    case DType::i32:
    case DType::i64:
    case DType::u64:
    case DType::f8e4m3:
    case DType::f8e5m2:
    case DType::f16:
    case DType::bf16:
    case DType::f32:
    case DType::f64:
      return true;
  }
  return false;
}

std::string unknown_dtype_what(DType t) {
  return fmt::format("{} is not a ts::DType (an integer cast to DType?)", static_cast<int>(t));
}

const char* unknown_dtype_hint() {
  return "use one of ts::boolean, ts::i8, ts::i32, ts::i64, ts::u64, ts::f8e4m3, ts::f8e5m2, "
         "ts::f16, ts::bf16, ts::f32, ts::f64";
}

void detail::unknown_dtype(DType t) {
  throw UserError("", {}, unknown_dtype_what(t), unknown_dtype_hint());
}

std::string dtype_name(DType t) {
  switch (t) {
    case DType::boolean:
      return "bool";
    case DType::i32:
      return "i32";
    case DType::i64:
      return "i64";
    case DType::u64:
      return "u64";
    case DType::f16:
      return "f16";
    case DType::bf16:
      return "bf16";
    case DType::f32:
      return "f32";
    case DType::f64:
      return "f64";
    case DType::f8e4m3:
      return "f8e4m3";
    case DType::f8e5m2:
      return "f8e5m2";
    case DType::i8:
      return "i8";
  }
  detail::unknown_dtype(t);
}

std::string dtype_cuda_storage(DType t) {
  switch (t) {
    case DType::boolean:
      return "bool";
    case DType::i32:
      return "int";
    case DType::i64:
      return "long long";
    case DType::u64:
      return "unsigned long long";
    case DType::f16:
      return "__half";
    case DType::bf16:
      return "__nv_bfloat16";
    case DType::f32:
      return "float";
    case DType::f64:
      return "double";
    case DType::f8e4m3:
      return "__nv_fp8_e4m3";
    case DType::f8e5m2:
      return "__nv_fp8_e5m2";
    case DType::i8:
      return "signed char";
  }
  detail::unknown_dtype(t);
}

DType dtype_from_name(const std::string& name) {
  static const std::pair<const char*, DType> names[] = {
      {"bool", DType::boolean},
      {"boolean", DType::boolean},
      {"i32", DType::i32},
      {"int32", DType::i32},
      {"i64", DType::i64},
      {"int64", DType::i64},
      {"u64", DType::u64},
      {"uint64", DType::u64},
      {"f16", DType::f16},
      {"float16", DType::f16},
      {"half", DType::f16},
      {"bf16", DType::bf16},
      {"bfloat16", DType::bf16},
      {"f32", DType::f32},
      {"float32", DType::f32},
      {"float", DType::f32},
      {"f64", DType::f64},
      {"float64", DType::f64},
      {"double", DType::f64},
      {"f8e4m3", DType::f8e4m3},
      {"float8_e4m3fn", DType::f8e4m3},
      {"f8e5m2", DType::f8e5m2},
      {"float8_e5m2", DType::f8e5m2},
      {"i8", DType::i8},
      {"int8", DType::i8},
  };
  for (const auto& [n, t] : names)
    if (name == n) return t;
  throw UserError("", SourceLoc{}, "unknown dtype name '" + name + "'",
                  "Use one of bool, i8, i32, i64, u64, f16, bf16, f32, f64, f8e4m3, f8e5m2");
}

bool is_float(DType t) { return t == DType::f32 || t == DType::f64 || is_narrow_float(t); }

bool is_narrow_float(DType t) { return t == DType::f16 || t == DType::bf16 || is_f8(t); }

bool is_f8(DType t) { return t == DType::f8e4m3 || t == DType::f8e5m2; }

bool is_integer(DType t) {
  return t == DType::i8 || t == DType::i32 || t == DType::i64 || t == DType::u64;
}

// 0 = bool, 1 = integer, 2 = float.
static int category(DType t) { return t == DType::boolean ? 0 : is_integer(t) ? 1 : 2; }

DType promote(DType a, DType b) {
  if (a == b) return a;
  int ca = category(a), cb = category(b);
  if (ca != cb) return ca > cb ? a : b;
  if (ca == 1) {
    // Unsigned 64-bit mixed with a signed type: tessel chooses i64 (PyTorch has no
    // general rule for uint64; i64 keeps signed arithmetic, values >= 2^63 wrap).
    if (a == DType::u64 || b == DType::u64) return DType::i64;
    if (a == DType::i8 || b == DType::i8) return a == DType::i8 ? b : a;  // the wider one
    return DType::i64;                                                    // i32 with i64
  }
  // Floats. f16 with bf16 has no common 16-bit type: f32, as in PyTorch; nor have the two
  // 8-bit floats (tessel's rule: PyTorch refuses them).
  auto rank = [](DType t) {
    return t == DType::f64 ? 3 : t == DType::f32 ? 2 : is_f8(t) ? 0 : 1;  // f16, bf16 -> 1
  };
  if (rank(a) == rank(b) && rank(a) < 2) return DType::f32;
  return rank(a) >= rank(b) ? a : b;
}

DType promote_weak(DType tensor, DType literal) {
  int ct = category(tensor), cl = category(literal);
  if (cl <= ct) return tensor;
  // The literal is of a higher category: PyTorch's default dtype of that category.
  return cl == 1 ? DType::i64 : DType::f32;
}

}  // namespace tessel
