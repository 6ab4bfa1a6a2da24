// Kernels whose results depend on host values a call brings that the specialization key
// does not hold: padded extents computed from sizes, float scalar arguments, the layout
// of an argument an allocation copies. Shared by the CPU tests (extent_guards_test,
// weak_scalars_test, alloc_layout_test) and tests/gpu/per_call_gpu_test.cpp.
#pragma once

#include <tessel/tessel.hpp>

namespace per_call_kernels {

namespace ts = tessel;

/// out[i] = 2 * i for i < 3 * x.size(0): an arange of an extent computed from a size,
/// stored through the ts::all extent of an allocation sized the same way.
inline auto make_arange_times_three() {
  return ts::kernel("arange_times_three", [](ts::Tensor x) {
    ts::Tensor out = ts::empty({x.size(0) * 3}, ts::i32);
    for (auto g : ts::grid(1)) {
      (void)g;
      out(ts::all) = ts::arange(x.size(0) * 3) * 2;
    }
    return out;
  });
}

/// out[0] = sum of a host allocation of 3 * x.size(0) elements filled with 2, read
/// whole with ts::all (the only extent is the allocation's).
inline auto make_sum_of_allocation() {
  return ts::kernel("sum_of_allocation", [](ts::Tensor x) {
    ts::Tensor twos = x.new_full({x.size(0) * 3}, 2.0);
    ts::Tensor out = x.new_zeros({1});
    for (auto g : ts::grid(1)) {
      (void)g;
      out(0) = ts::sum(twos(ts::all), 0);
    }
    return out;
  });
}

/// out[i] = x[i] * eps, in x's dtype; `dtype_seen` records the product's dtype at trace.
inline auto make_scale(ts::DType* dtype_seen = nullptr) {
  return ts::kernel("scale_by_eps", [dtype_seen](ts::Tensor x, ts::Value eps) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) {
      ts::Value v = x(t) * eps;
      if (dtype_seen) *dtype_seen = v.dtype();
      out(t) = v;
    }
    return out;
  });
}

/// (x * s, x * 65536.0, x * 100000): a float argument, a float literal and an integer
/// literal, which an f16 or bf16 x multiplies in f32 (torch's opmath).
inline auto make_loss_scale() {
  return ts::kernel("loss_scale", [](ts::Tensor x, ts::Value s) {
    ts::Tensor by_arg = ts::empty_like(x), by_literal = ts::empty_like(x),
               by_int = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) {
      by_arg(t) = x(t) * s;
      by_literal(t) = x(t) * 65536.0;
      by_int(t) = x(t) * 100000;
    }
    return std::make_tuple(by_arg, by_literal, by_int);
  });
}

/// (x / x.size(0), x * n, x == n): host integer scalars, which an f16 or bf16 x meets in
/// f32 (torch's opmath for CPU scalars).
inline auto make_by_size_and_n() {
  return ts::kernel("by_size_and_n", [](ts::Tensor x, ts::Value n) {
    ts::Tensor by_size = ts::empty_like(x), by_n = ts::empty_like(x);
    ts::Tensor equal = ts::empty({x.size(0)}, ts::boolean);
    for (auto t : ts::tile(x.size(0))) {
      by_size(t) = x(t) / x.size(0);
      by_n(t) = x(t) * n;
      equal(t) = x(t) == n;
    }
    return std::make_tuple(by_size, by_n, equal);
  });
}

/// out = x * (s / 10.0): host arithmetic of a float argument (one Python float).
inline auto make_tenth() {
  return ts::kernel("times_a_tenth", [](ts::Tensor x, ts::Value s) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) * (s / 10.0);
    return out;
  });
}

/// out = x * 2 (empty_like), over 2-D tiles.
inline auto make_double() {
  return ts::kernel("double_like", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) out(tm, tn) = x(tm, tn) * 2;
    return out;
  });
}

}  // namespace per_call_kernels
