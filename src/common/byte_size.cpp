#include "common/byte_size.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tessel {

std::optional<int64_t> dense_bytes(const std::vector<int64_t>& shape, DType dtype) {
  int64_t n = dtype_size(dtype);
  for (int64_t s : shape)
    if (s == 0) return 0;
  for (int64_t s : shape)
    if (__builtin_mul_overflow(n, s, &n)) return std::nullopt;
  return n;
}

std::string shape_str(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

std::string describe_dense(const std::vector<int64_t>& shape, DType dtype) {
  std::optional<int64_t> bytes = dense_bytes(shape, dtype);
  std::string size;
  if (!bytes)
    size = "more than 2^63 - 1 bytes: its byte count overflows 64 bits";
  else if (*bytes >= (int64_t{1} << 30))
    size = fmt::format("{} bytes, {:.1f} GiB", *bytes, static_cast<double>(*bytes) / (1 << 30));
  else
    size = fmt::format("{} bytes", *bytes);
  return fmt::format("a {} tensor of shape {} ({})", dtype_name(dtype), shape_str(shape), size);
}

}  // namespace tessel
