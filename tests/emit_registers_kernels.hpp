// A kernel for tests/emit_registers_test.cpp (CPU) and tests/gpu/kernels_gpu_test.cpp:
// a cast to bf16 both stored and used by arithmetic.
#pragma once

#include <tessel/tessel.hpp>
#include <tuple>

namespace emit_registers {

namespace ts = tessel;

/// x: [M, N] f32; returns (y, z), both [M, N] bf16: y = bf16(x), z = y * 2 (the doubled
/// value is the rounded one: 2 * bf16(x), exact in bf16).
inline auto make_cast_stored_and_used(ts::Settings s = {}) {
  return ts::kernel(
      "cast_stored_and_used",
      [](ts::Tensor x) {
        ts::Tensor y = x.new_empty({x.size(0), x.size(1)}, ts::bf16);
        ts::Tensor z = x.new_empty({x.size(0), x.size(1)}, ts::bf16);
        for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) {
          ts::Value b = x(tm, tn).to(ts::bf16);
          y(tm, tn) = b;
          z(tm, tn) = b * 2.0;
        }
        return std::make_tuple(y, z);
      },
      s);
}

}  // namespace emit_registers
