// The main job: runs the seed programs (000, 001, 002) and a short demo, on the GPU when one is
// present, otherwise on the CPU interpreter. Prints one line per check (with the wall time
// of its call, a first call's trace and compile included) and exits 1 if any fails.
//   tessel_demo [--interpret] [--seed-sizes]
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <tessel/testing.hpp>

#include "examples/kernels/basic.hpp"
#include "examples/kernels/seed000.hpp"
#include "examples/kernels/seed001.hpp"
#include "examples/kernels/seed002.hpp"

namespace ts = tessel;

static int failures = 0;

static void report(const char* what, int64_t mismatches, double ms) {
  std::printf("%-52s %s  (%.2f ms)\n", what, mismatches == 0 ? "ok" : "MISMATCH", ms);
  if (mismatches) {
    std::printf("    %lld elements differ\n", static_cast<long long>(mismatches));
    ++failures;
  }
}

template <class F>
static double timed(F&& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

int main(int argc, char** argv) {
  CLI::App app{"tessel demo: the seed programs and a short demo"};
  bool interpret = false, seed_sizes = false;
  app.add_flag("--interpret", interpret, "run on the CPU interpreter even if a GPU is present");
  app.add_flag("--seed-sizes", seed_sizes,
               "seed 000 at B=2^15, D=2^18 (needs ~70 GB of GPU memory)");
  CLI11_PARSE(app, argc, argv);

  bool gpu = !interpret && ts::gpu_available();
  ts::Device dev = gpu ? ts::cuda(0) : ts::cpu();
  std::printf("tessel demo on %s\n",
              gpu ? ts::gpu_name(0).c_str()
                  : ("the CPU interpreter (" + ts::gpu_unavailable_reason() + ")").c_str());

  // Seed 000: out[:B/2, :D/2] == x + 1 with both bounds in device memory.
  int64_t B = seed_sizes ? (1 << 15) : (gpu ? 2048 : 64),
          D = seed_sizes ? (1 << 18) : (gpu ? 8192 : 96);
  ts::Buffer x = ts::Buffer::randn({B, D}, ts::f32, dev, 1);
  ts::Buffer bb = ts::Buffer::scalar(static_cast<double>(B / 2), ts::i32, dev);
  ts::Buffer db = ts::Buffer::scalar(static_cast<double>(D / 2), ts::i32, dev);
  auto region = [&](const ts::Buffer& t) { return t.narrow(0, 0, B / 2).narrow(1, 0, D / 2); };
  char label[128];
  for (auto [name, k] : {std::pair{"f1", examples::make_f1()}, std::pair{"f2", examples::make_f2()},
                         std::pair{"f2_fixed", examples::make_f2_fixed()}}) {
    ts::Buffer out;
    double ms = timed([&] {
      out = k(x, bb, db);
      if (gpu) ts::Stream{}.synchronize();
    });
    std::snprintf(label, sizeof label, "seed 000 %s [%lld, %lld] bounds in device memory", name,
                  static_cast<long long>(B), static_cast<long long>(D));
    report(label, ts::count_mismatches(region(out), region(x), 0, 0, 1.0), ms);
  }

  // Seed 002: padded_sum with x = ones(100, 100), size = [80].
  ts::Buffer ones = ts::Buffer::ones({100, 100}, ts::f32, dev);
  ts::Buffer size = ts::Buffer::from_vector({80}, {1}, ts::i32, dev);
  std::vector<double> expect(100, 0.0);
  for (int i = 0; i < 80; ++i) expect[i] = 100;
  ts::Buffer want = ts::Buffer::from_vector(expect, {100}, ts::f32, dev);
  for (auto [name, k] :
       {std::pair{"tile(size)", examples::make_padded_sum()},
        std::pair{"tile(size(0))", examples::make_padded_sum_index()},
        std::pair{"tile(size.item())", examples::make_padded_sum_item()},
        std::pair{"manual persistent grid(5)", examples::make_padded_sum_manual()}}) {
    ts::Buffer out;
    double ms = timed([&] {
      out = k(ones, size);
      if (gpu) ts::Stream{}.synchronize();
    });
    std::snprintf(label, sizeof label, "seed 002 padded_sum %s", name);
    report(label, ts::count_mismatches(out, want, 0, 0), ms);
  }

  // Seed 001: a multicast tensor over R = 4 equally shaped buffers (a ts::SymmetricBuffer:
  // ordinary pointers, several buffers on one device).
  const int R = 4;
  ts::SymmetricBuffer sb = ts::SymmetricBuffer::on_device({8, 16}, ts::f32, R, dev);
  std::vector<double> stacked;
  for (int r = 0; r < R; ++r) {
    std::vector<double> v(8 * 16);
    for (size_t i = 0; i < v.size(); ++i) v[i] = r * 1000.0 + static_cast<double>(i);
    sb.buffer(r).copy_from(ts::Buffer::from_vector(v, {8, 16}, ts::f32));
    stacked.insert(stacked.end(), v.begin(), v.end());
  }
  ts::Buffer loaded;
  double ms = timed([&] {
    loaded = examples::make_multicast_load_2d_tensors()(sb.dev_ptrs(0), sb.buffer(0));
    if (gpu) ts::Stream{}.synchronize();
  });
  report("seed 001 load [R] dev_ptrs x [8, 16] example",
         ts::count_mismatches(loaded, ts::Buffer::from_vector(stacked, {R, 8, 16}, ts::f32, dev), 0,
                              0),
         ms);
  ts::SymmetricBuffer rows = ts::SymmetricBuffer::on_device({10}, ts::f32, R, dev);
  ts::Buffer x_row = ts::Buffer::arange(10, ts::f32, dev);
  ms = timed([&] {
    examples::make_multicast_store_broadcast()(x_row, rows.dev_ptrs(0), rows.buffer(0));
    if (gpu) ts::Stream{}.synchronize();
  });
  int64_t bad = 0;
  for (int r = 0; r < R; ++r) bad += ts::count_mismatches(rows.buffer(r), x_row, 0, 0);
  report("seed 001 store x_tile[newaxis, :] to every buffer", bad, ms);
  ms = timed([&] {
    examples::make_multicast_store_arange()(rows.dev_ptrs(0), rows.buffer(0));
    if (gpu) ts::Stream{}.synchronize();
  });
  bad = 0;
  for (int r = 0; r < R; ++r)
    bad += ts::count_mismatches(rows.buffer(r), ts::Buffer::full({10}, r, ts::f32, dev), 0, 0);
  report("seed 001 store arange(R): buffer m holds m", bad, ms);

  // Demo: a 2-D broadcast, out = x + bias[newaxis, :].
  int64_t M = gpu ? 4096 : 100, N = gpu ? 4096 : 130;
  ts::Buffer a = ts::Buffer::randn({M, N}, ts::f32, dev, 2);
  ts::Buffer bias = ts::Buffer::randn({N}, ts::f32, dev, 3);
  ts::Buffer out;
  ms = timed([&] {
    out = examples::make_add_bias()(a, bias);
    if (gpu) ts::Stream{}.synchronize();
  });
  ts::Buffer ref = a.to(ts::cpu());
  std::vector<double> av = ref.to_vector(), bv = bias.to_vector(), rv(av.size());
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) rv[i * N + j] = static_cast<float>(av[i * N + j] + bv[j]);
  report(
      "demo add_bias out = x + bias[newaxis, :]",
      ts::count_mismatches(out.to(ts::cpu()), ts::Buffer::from_vector(rv, {M, N}, ts::f32), 0, 0),
      ms);

  std::printf("%s\n", failures ? "FAILED" : "all checks passed");
  return failures ? 1 : 0;
}
