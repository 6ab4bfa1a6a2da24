// Test-only kernels for i8 (tests/i8_test.cpp and its GPU twin).
#pragma once

#include <tessel/tessel.hpp>
#include <tuple>

namespace i8_test {

namespace ts = tessel;

/// Row-wise max, min, argmax and argmin of x [M, N] (i8): [M] i8, i8, i64, i64.
inline auto make_row_extremes() {
  return ts::kernel("i8_extremes", [](ts::Tensor x) {
    ts::Tensor mx = ts::empty({x.size(0)}, ts::i8), mn = ts::empty({x.size(0)}, ts::i8);
    ts::Tensor amx = ts::empty({x.size(0)}, ts::i64), amn = ts::empty({x.size(0)}, ts::i64);
    for (auto t : ts::tile(x.size(0))) {
      mx(t) = ts::max(x(t, ts::all), 1);
      mn(t) = ts::min(x(t, ts::all), 1);
      amx(t) = ts::argmax(x(t, ts::all), 1);
      amn(t) = ts::argmin(x(t, ts::all), 1);
    }
    return std::tuple{mx, mn, amx, amn};
  });
}

}  // namespace i8_test
