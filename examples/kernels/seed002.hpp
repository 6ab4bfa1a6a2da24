// Seed 002: a data-dependent row count that lives on the GPU (padded_sum). The bound makes
// the kernel persistent, so it can be captured in a CUDA graph and replayed after the
// bound changes. out[i] = sum(x[i, :]) for i < size[0]; the other rows stay 0.
#pragma once

#include <tessel/tessel.hpp>

namespace examples {
namespace ts = tessel;

/// `tile(size)`: the one-element tensor itself is the bound.
inline auto make_padded_sum() {
  return ts::kernel("padded_sum", [](ts::Tensor x, ts::Tensor size) {
    ts::Tensor out = x.new_zeros({x.size(0)});
    for (auto tn : ts::tile(size)) out(tn) = ts::sum(x(tn, ts::all), 1);
    return out;
  });
}

/// `tile(size(0))`: element 0, read in host code as a device scalar.
inline auto make_padded_sum_index() {
  return ts::kernel("padded_sum_index", [](ts::Tensor x, ts::Tensor size) {
    ts::Tensor out = x.new_zeros({x.size(0)});
    for (auto tn : ts::tile(size(0))) out(tn) = ts::sum(x(tn, ts::all), 1);
    return out;
  });
}

/// `tile(size.item())`: the user's first attempt in the report.
inline auto make_padded_sum_item() {
  return ts::kernel("padded_sum_item", [](ts::Tensor x, ts::Tensor size) {
    ts::Tensor out = x.new_zeros({x.size(0)});
    for (auto tn : ts::tile(size.item())) out(tn) = ts::sum(x(tn, ts::all), 1);
    return out;
  });
}

/// The manual persistent form: 5 programs, each taking every 5th row.
inline auto make_padded_sum_manual() {
  return ts::kernel("padded_sum_manual", [](ts::Tensor x, ts::Tensor size) {
    ts::Tensor out = x.new_zeros({x.size(0)});
    for (auto pid : ts::grid(5))
      for (auto tn : ts::tile(ts::floordiv(size(0), 5))) {
        ts::Value rows = tn.index() * 5 + pid;
        out(rows) = ts::sum(x(rows, ts::all), 1);
      }
    return out;
  });
}

}  // namespace examples

namespace examples {

/// padded_sum writing into a caller-provided output (for CUDA graph capture: the output
/// outlives replays). out[i] = sum(x[i, :]) for i < size[0]; other rows untouched.
inline auto make_padded_sum_into(ts::Settings settings = {}) {
  return ts::kernel(
      "padded_sum_into",
      [](ts::Tensor x, ts::Tensor size, ts::Tensor out) {
        for (auto tn : ts::tile(size)) out(tn) = ts::sum(x(tn, ts::all), 1);
      },
      settings);
}

/// padded_sum with a host-known row count n (an int argument; flat pid, not persistent),
/// writing into the caller's out [M]: the peer of the persistent form in benchmarks.
/// (norms.hpp's make_padded_sum_host allocates its zero-filled output instead.)
inline auto make_padded_sum_host_into(ts::Settings settings = {}) {
  return ts::kernel(
      "padded_sum_host_into",
      [](ts::Tensor x, ts::Value n, ts::Tensor out) {
        for (auto tn : ts::tile(n)) out(tn) = ts::sum(x(tn, ts::all), 1);
      },
      settings);
}

}  // namespace examples
