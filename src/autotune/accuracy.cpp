#include "autotune/accuracy.hpp"

#include <fmt/format.h>

#include "tessel/testing.hpp"

namespace tessel::autotune {

Tolerance tolerance_for(DType t) {
  switch (t) {
    case DType::f32:
      return {1e-4, 1e-4};
    case DType::f64:
      return {1e-8, 1e-8};
    case DType::f16:
    case DType::bf16:
      return {1e-2, 1e-2};
    case DType::f8e4m3:  // 3 mantissa bits: an ulp is 2^-3 of the binade
    case DType::f8e5m2:
      return {1.3e-1, 1.3e-1};
    case DType::boolean:
    case DType::i8:
    case DType::i32:
    case DType::i64:
    case DType::u64:
      break;
  }
  return {0, 0};  // integers and booleans: exact
}

std::string compare_outputs(const std::vector<Buffer>& actual,
                            const std::vector<Buffer>& expected) {
  if (actual.size() != expected.size())
    return fmt::format("{} outputs, the reference has {}", actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    if (actual[i].shape() != expected[i].shape())
      return fmt::format("output {} is {}, the reference is {}", i, actual[i].str(),
                         expected[i].str());
    Tolerance tol = tolerance_for(expected[i].dtype());
    int64_t bad = count_mismatches(actual[i], expected[i], tol.atol, tol.rtol);
    if (bad > 0)
      return fmt::format(
          "output {} ({}): {} of {} elements differ by more than atol {:g} + rtol {:g} * "
          "|expected|",
          i, actual[i].str(), bad, actual[i].numel(), tol.atol, tol.rtol);
  }
  return "";
}

}  // namespace tessel::autotune
