// Byte sizes of dense tensors, checked against 64-bit overflow, and how messages state them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessel/dtype.hpp"

namespace tessel {

/// The bytes a dense tensor of `shape` (sizes >= 0) and `dtype` holds, or std::nullopt
/// when its element count or byte count exceeds 2^63 - 1 (does not fit int64).
std::optional<int64_t> dense_bytes(const std::vector<int64_t>& shape, DType dtype);

/// "[2, 3]": a shape (or strides) as messages print it.
std::string shape_str(const std::vector<int64_t>& shape);

/// For messages: "a f32 tensor of shape [2, 3] (24 bytes)", with "(N bytes, X GiB)" from
/// 1 GiB, or "(more than 2^63 - 1 bytes: its byte count overflows 64 bits)".
std::string describe_dense(const std::vector<int64_t>& shape, DType dtype);

}  // namespace tessel
