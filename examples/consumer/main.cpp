// A kernel in a program of its own (examples/consumer/CMakeLists.txt): runs on the GPU
// when one is present, else on the CPU interpreter, and checks its values against a
// plain loop. Exits 1 on a mismatch.
#include <cmath>
#include <cstdio>
#include <tessel/tessel.hpp>
#include <tessel/testing.hpp>
#include <vector>

namespace ts = tessel;

int main() {
  // out[m, n] = 2 * x[m, n] + bias[n]; rows[m] = sum over n of out[m, n].
  auto scale_add = ts::kernel("scale_add", [](ts::Tensor x, ts::Tensor bias) {
    ts::Tensor out = ts::empty_like(x);
    ts::Tensor rows = x.new_empty({x.size(0)});
    for (auto tm : ts::tile(x.size(0))) {
      ts::Value v = x(tm, ts::all) * 2 + bias(ts::newaxis, ts::all);
      out(tm, ts::all) = v;
      rows(tm) = ts::sum(v, 1);
    }
    return std::tuple{out, rows};
  });

  ts::Device dev = ts::gpu_available() ? ts::cuda(0) : ts::cpu();
  const int64_t M = 37, N = 50;
  ts::Buffer x = ts::Buffer::randn({M, N}, ts::f32, dev, 1);
  ts::Buffer bias = ts::Buffer::randn({N}, ts::f32, dev, 2);
  auto [out, rows] = scale_add(x, bias);

  std::vector<double> xv = x.to_vector(), bv = bias.to_vector(), ov(M * N), rv(M, 0.0);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      ov[m * N + n] = 2 * xv[m * N + n] + bv[n];
      rv[m] += ov[m * N + n];
    }
  int64_t bad = ts::count_mismatches(out.to(ts::cpu()),
                                     ts::Buffer::from_vector(ov, {M, N}, ts::f32), 1e-5, 1e-5) +
                ts::count_mismatches(rows.to(ts::cpu()), ts::Buffer::from_vector(rv, {M}, ts::f32),
                                     1e-4, 1e-4);
  std::printf("tessel_consumer on %s: %s\n", dev.is_cuda() ? "the GPU" : "the CPU interpreter",
              bad ? "MISMATCH" : "ok");
  return bad ? 1 : 0;
}
