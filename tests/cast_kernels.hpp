// Casts of special floats to every integer dtype, shared by the CPU test (interpreter
// values, generated code) and the GPU test (tests/gpu/kernels_gpu_test.cpp).
#pragma once

#include <tessel/tessel.hpp>

namespace cast_kernels {

namespace ts = tessel;

/// out_i32, out_i64, out_u64 = x.to(i32), x.to(i64), x.to(u64) for an f32 x.
inline auto make_to_integers() {
  return ts::kernel("to_integers", [](ts::Tensor x) {
    ts::Tensor a = x.new_empty({x.size(0)}, ts::i32);
    ts::Tensor b = x.new_empty({x.size(0)}, ts::i64);
    ts::Tensor c = x.new_empty({x.size(0)}, ts::u64);
    for (auto t : ts::tile(x.size(0))) {
      ts::Value v = x(t);
      a(t) = v.to(ts::i32);
      b(t) = v.to(ts::i64);
      c(t) = v.to(ts::u64);
    }
    return std::make_tuple(a, b, c);
  });
}

/// NaN, infinities, values past each range, fractions of both signs.
inline ts::Buffer special_floats(ts::Device d = ts::cpu()) {
  return ts::Buffer::from_vector({NAN, INFINITY, -INFINITY, 1e30, -1e30, 3e9, -3e9, 2.75, -2.75, 0},
                                 {10}, ts::f32, d);
}

}  // namespace cast_kernels
