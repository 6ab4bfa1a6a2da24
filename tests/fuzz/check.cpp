#include "fuzz/check.hpp"

#include <random>

#include "fuzz/build.hpp"
#include "fuzz/compare.hpp"
#include "fuzz/naive.hpp"

namespace fuzz {

const char* kind_name(Outcome::Kind k) {
  switch (k) {
    case Outcome::ok:
      return "ok";
    case Outcome::naive_mismatch:
      return "interpreter vs naive mismatch";
    case Outcome::gpu_mismatch:
      return "GPU vs interpreter mismatch";
    case Outcome::compile_error:
      return "NVRTC compile error";
    default:
      return "error";
  }
}

namespace {

template <class F>
Outcome guarded(Outcome::Kind kind, F f) {
  try {
    return f();
  } catch (const std::exception& e) {
    return Outcome{kind, e.what()};
  }
}

}  // namespace

Outcome prepare(Program& p) {
  return guarded(Outcome::error, [&] {
    std::mt19937_64 rng(p.seed * 0xBF58476D1CE4E5B9ull + 7);
    p.config = draw_config(p, make_data(p), rng);
    return Outcome{};
  });
}

Outcome check_cpu(const Program& p, bool compile) {
  HostData data = make_data(p);
  FuzzKernel k = make_kernel(p, settings_of(p));
  Outcome o = guarded(Outcome::error, [&] {
    std::vector<std::vector<double>> got = run(k, make_call(p, data, ts::cpu()));
    std::string diff = compare_outputs(p, evaluate(p, data), got, false);
    return diff.empty() ? Outcome{} : Outcome{Outcome::naive_mismatch, diff};
  });
  if (o.failed() || !compile) return o;
  return guarded(Outcome::compile_error, [&] {
    compile_cuda(k, make_call(p, data, ts::cpu()));
    return Outcome{};
  });
}

Outcome check_gpu(const Program& p) {
  HostData data = make_data(p);
  FuzzKernel k = make_kernel(p, settings_of(p));
  return guarded(Outcome::error, [&] {
    std::vector<std::vector<double>> want = run(k, make_call(p, data, ts::cpu()));
    std::vector<std::vector<double>> got = run(k, make_call(p, data, ts::cuda()));
    std::string diff = compare_outputs(p, want, got, true);
    return diff.empty() ? Outcome{} : Outcome{Outcome::gpu_mismatch, diff};
  });
}

}  // namespace fuzz
