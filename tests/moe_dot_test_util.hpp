// Test-only routing for examples::make_grouped_matmul (tests/dot_test.cpp and its GPU twin):
// tokens grouped by expert, each group padded to a multiple of `block_m` rows (64 or 128).
#pragma once

#include <cstdint>
#include <tessel/tessel.hpp>
#include <vector>

namespace moe_test {

namespace ts = tessel;

struct Routed {
  ts::Buffer x, w, n_rows, block_expert;
  std::vector<double> want;  // out [T, N] in double (zero past n_rows and in padding rows)
  int64_t t, n;
};

/// `counts[e]` tokens for expert e, K and N sizes, T rows of capacity (at least the padded
/// total, a multiple of block_m), operands of dtype `dt` (random, seeded), on the CPU.
inline Routed route(const std::vector<int64_t>& counts, int64_t k, int64_t n, int64_t t,
                    ts::DType dt, int64_t block_m = 64) {
  const int64_t e_count = static_cast<int64_t>(counts.size());
  std::vector<double> xv(static_cast<size_t>(t * k), 0.0),
      blocks(static_cast<size_t>(t / block_m), 0);
  std::vector<int64_t> expert_of_row;
  ts::Buffer wb = ts::Buffer::randn({e_count, k, n}, dt, ts::cpu(), 41);
  ts::Buffer rand_rows = ts::Buffer::randn({t, k}, dt, ts::cpu(), 42);
  const std::vector<double> rv = rand_rows.to_vector(), wv = wb.to_vector();
  int64_t row = 0;
  for (int64_t e = 0; e < e_count; ++e) {
    const int64_t padded = (counts[e] + block_m - 1) / block_m * block_m;
    for (int64_t i = 0; i < padded; ++i, ++row) {
      if (i < counts[e])
        for (int64_t q = 0; q < k; ++q)
          xv[static_cast<size_t>(row * k + q)] = rv[static_cast<size_t>(row * k + q)];
      if (i % block_m == 0) blocks[static_cast<size_t>(row / block_m)] = static_cast<double>(e);
      expert_of_row.push_back(e);
    }
  }
  Routed r;
  r.t = t;
  r.n = n;
  r.x = ts::Buffer::from_vector(xv, {t, k}, dt);
  r.w = wb;
  r.n_rows = ts::Buffer::from_vector({static_cast<double>(row)}, {1}, ts::i32);
  r.block_expert = ts::Buffer::from_vector(blocks, {t / block_m}, ts::i32);
  r.want.assign(static_cast<size_t>(t * n), 0.0);
  for (int64_t i = 0; i < row; ++i)
    for (int64_t q = 0; q < k; ++q)
      for (int64_t j = 0; j < n; ++j)
        r.want[static_cast<size_t>(i * n + j)] +=
            xv[static_cast<size_t>(i * k + q)] *
            wv[static_cast<size_t>((expert_of_row[static_cast<size_t>(i)] * k + q) * n + j)];
  return r;
}

}  // namespace moe_test
