// Kernels for the tests of loads by tensor descriptor (Config::indexing
// "tensor_descriptor"; CPU: tests/tensor_descriptor_test.cpp, GPU:
// tests/gpu/tensor_descriptor_gpu_test.cpp). With the examples' add_2d, transpose,
// add_transposed and add_bias they cover a box per program, a box per device-loop
// iteration, a scalar index and a gather (which keeps pointers).
#pragma once

#include <tessel/tessel.hpp>

namespace tensor_descriptor_test {

namespace ts = tessel;

/// out[m] = sum over n of x[m, n]: x's [tm, tk] tile loaded on every iteration of a device
/// loop over column tiles (one box per iteration, its shared stage reused). x: [M, N].
inline auto make_row_sum(ts::Settings s = {}) {
  return ts::kernel(
      "row_sum",
      [](ts::Tensor x) {
        ts::Tensor out = x.new_empty({x.size(0)}).named("out");
        for (auto tm : ts::tile(x.size(0))) {
          ts::Value acc = ts::zeros({tm}, ts::f32);
          for (auto tk : ts::tile(x.size(1))) acc = acc + ts::sum(x(tm, tk).to(ts::f32), 1);
          out(tm) = acc;
        }
        return out;
      },
      s);
}

/// out[n] = 2 x[r, n] + x[0, n] for row r (an integer argument): boxes of one row at a
/// scalar index. x: [R, N].
inline auto make_scaled_row(ts::Settings s = {}) {
  return ts::kernel(
      "scaled_row",
      [](ts::Tensor x, ts::Value r) {
        ts::Tensor out = x.new_empty({x.size(1)}).named("out");
        for (auto tn : ts::tile(x.size(1))) out(tn) = x(r, tn) * 2.0 + x(0, tn);
        return out;
      },
      s);
}

/// out[m, n] = x[idx[m], n]: the gather keeps pointers; idx's load may take a box.
/// x: [R, N], idx: [M] i64 in [0, R).
inline auto make_gather_rows(ts::Settings s = {}) {
  return ts::kernel(
      "gather_rows",
      [](ts::Tensor x, ts::Tensor idx) {
        ts::Tensor out = x.new_empty({idx.size(0), x.size(1)}).named("out");
        for (auto [tm, tn] : ts::tile(idx.size(0), x.size(1))) out(tm, tn) = x(idx(tm), tn);
        return out;
      },
      s);
}

/// Config::indexing asking for tensor descriptors everywhere, with block sizes `blocks`.
inline ts::Config tma_config(std::vector<int64_t> blocks) {
  return ts::Config{.block_sizes = std::move(blocks),
                    .indexing = std::vector<std::string>{"tensor_descriptor"}};
}

}  // namespace tensor_descriptor_test
