// ts::dot on tensor cores (examples::make_dot_matmul, src/passes/tensor_cores.hpp) against
// cuBLAS in the same run: bf16 operands, f32 accumulation, bf16 output, row-major; then f32
// operands under TF32 against cuBLAS SGEMM with TF32 tensor-op math (y row-major, and a
// Linear layer's x w^T).
//   compile   NVRTC time of one GEMM candidate (128 x 128 x 32, 8 warps; no GPU needed)
//   per shape M x N x K: cuBLAS (cublasGemmEx, CUBLAS_COMPUTE_32F, default algorithm) and
//             tessel over a few configs (block sizes, warps, num_stages); TFLOP/s, the
//             ratio of tessel's best to cuBLAS, and the config that gave it
//   grouped   examples::make_grouped_matmul (8 experts x 512 rows, device-resident row count
//             and block experts) against a loop of cuBLAS GEMMs, one per expert
//   bmm       examples::make_bmm (16 batches of 2048^3, a batched ts::dot whose batch tile
//             holds one element) against cublasGemmStridedBatchedEx
//   fp8       f8e4m3 x w^T with per-tensor scales against cuBLASLt's FP8 matmul
//   int8      i8 x w^T summed in i32 against cuBLASLt's int8 matmul
//   fused     matmul + bias + gelu (examples::make_matmul_bias_gelu) against cuBLAS plus
//             the same epilogue as a separate tessel kernel
//   tune      (--tune) wall time of quick autotuning of a 4096^3 GEMM, and its result
//   dot_bench [--iters N] [--compile-only] [--tune] [--shapes 4096x4096x4096,...]
//             [--sections bf16,tf32,fp8,int8,grouped,bmm,fused]  (the parts that run; bf16:
//             the --shapes; all by default)
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "bench/gpu_timer.hpp"
#include "driver/cuda_api.hpp"
#include "examples/kernels/matmul.hpp"
#include "examples/kernels/moe.hpp"

#ifdef TESSEL_BENCH_CUBLAS
#include <cublasLt.h>
#include <cublas_v2.h>
#endif

namespace ts = tessel;

namespace {

struct Shape {
  int64_t m, n, k;
};

struct Candidate {
  int64_t bm, bn, bk;
  int warps, stages;
  int group = 1;  // l2_groupings: programs of `group` rows of tiles take their columns in turn
  // persistent_interleaved or persistent_blocked: a wgmma ring runs on across the tiles
  ts::PidType pid = ts::PidType::flat;
  int split = 1;    // split_k: programs per output tile, each summing a share of K
  bool ws = false;  // warp_specialize: a producer warpgroup issues the ring's copies
  ts::Config config() const {
    ts::Config c{
        .block_sizes = std::vector<int64_t>{bm, bn, bk}, .num_warps = warps, .num_stages = stages};
    if (group > 1) c.l2_groupings = std::vector<int>{group};
    if (pid != ts::PidType::flat) c.pid_type = pid;
    if (split > 1) c.split_k = split;
    if (ws) c.warp_specialize = true;
    return c;
  }
  std::string str() const {
    return std::to_string(bm) + "x" + std::to_string(bn) + "x" + std::to_string(bk) + " w" +
           std::to_string(warps) + " s" + std::to_string(stages) +
           (group > 1 ? " g" + std::to_string(group) : "") +
           (pid == ts::PidType::persistent_interleaved ? " pi"
            : pid == ts::PidType::persistent_blocked   ? " pb"
                                                       : "") +
           (split > 1 ? " k" + std::to_string(split) : "") + (ws ? " ws" : "");
  }
};

constexpr ts::PidType kPi = ts::PidType::persistent_interleaved;
constexpr ts::PidType kPb = ts::PidType::persistent_blocked;
constexpr ts::PidType kFlat = ts::PidType::flat;

// mma.sync (K blocks of 32), then wgmma (K blocks of 64: TMA rings of num_stages buffers),
// then wgmma in persistent programs (pb: persistent_blocked, pi: persistent_interleaved),
// whose rings run on from one tile into the next (Contraction::Mma::across_programs).
const std::vector<Candidate> kCandidates{
    {128, 128, 32, 4, 2},
    {128, 64, 32, 4, 2},
    {128, 128, 64, 4, 4},
    {128, 128, 64, 8, 4},
    {128, 256, 64, 8, 3},
    {128, 256, 64, 8, 4},
    {256, 128, 64, 8, 3},
    {256, 128, 64, 8, 4},
    {128, 256, 64, 8, 4, 8},
    {256, 128, 64, 8, 3, 8},
    {256, 128, 64, 8, 4, 8},
    {128, 128, 64, 8, 4, 8},
    {128, 256, 64, 8, 4, 1, kPb},
    {128, 256, 64, 8, 4, 1, kPi},
    {128, 256, 64, 8, 4, 8, kPi},
    {256, 128, 64, 8, 4, 1, kPb},
    {128, 128, 64, 4, 3, 1, kPb},
    {128, 128, 64, 4, 3},
    {128, 128, 64, 4, 2},
    {128, 128, 64, 4, 3, 8},
    // ws: warp_specialize, a producer warpgroup issuing the ring's copies
    {128, 256, 64, 8, 4, 8, kFlat, 1, true},
    {128, 256, 64, 8, 4, 1, kPb, 1, true},
    {128, 256, 64, 8, 4, 8, kPi, 1, true},
    {256, 128, 64, 8, 3, 8, kFlat, 1, true}};
// M = 16: wgmma on the transposed product (16 rows of M its columns, 64 of N per
// instruction: Mma::swap_ab), mma.sync at 16 rows, or wgmma's 64 (48 of them zeros) with deep
// rings, and split into 2 to 8 shares of K (k2 .. k8: split_k).
const std::vector<Candidate> kSkinny{{16, 128, 64, 4, 12},
                                     {16, 128, 64, 4, 8, 1, kFlat, 2},
                                     {16, 128, 128, 4, 6, 1, kFlat, 2},
                                     {16, 64, 128, 4, 6},
                                     {16, 64, 64, 4, 8, 1, kFlat, 2},
                                     {16, 64, 128, 4, 4, 1, kFlat, 2},
                                     {16, 256, 64, 8, 8, 1, kFlat, 4},
                                     {32, 128, 64, 4, 8, 1, kFlat, 2},
                                     {16, 128, 64, 4, 10, 1, kFlat, 1, true},
                                     {16, 64, 128, 4, 8, 1, kFlat, 1, true},
                                     {16, 64, 64, 4, 2},
                                     {16, 32, 128, 2, 2},
                                     {64, 64, 64, 4, 4},
                                     {64, 64, 128, 4, 4},
                                     {64, 128, 64, 4, 4},
                                     {64, 128, 128, 4, 3},
                                     {64, 64, 64, 4, 8},
                                     {64, 64, 128, 4, 6},
                                     {64, 32, 128, 4, 8},
                                     {64, 128, 64, 4, 8},
                                     {64, 64, 128, 4, 6, 1, kFlat, 2},
                                     {64, 64, 128, 4, 6, 1, kFlat, 4},
                                     {64, 128, 64, 4, 8, 1, kFlat, 2},
                                     {64, 128, 64, 4, 6, 1, kFlat, 4},
                                     {64, 128, 128, 4, 3, 1, kFlat, 4},
                                     {64, 64, 64, 4, 8, 1, kFlat, 8},
                                     // two warpgroups along N
                                     {64, 256, 64, 8, 6, 1, kFlat, 2},
                                     {64, 128, 64, 8, 8, 1, kFlat, 2},
                                     {64, 256, 64, 8, 4, 1, kFlat, 4},
                                     // shallower rings, so that 2 or 3 programs share an SM
                                     // and 256 split programs run in one wave
                                     {64, 128, 64, 4, 4, 1, kFlat, 4},
                                     {64, 128, 64, 4, 3, 1, kFlat, 4},
                                     {64, 64, 128, 4, 3, 1, kFlat, 2},
                                     {64, 64, 64, 4, 4, 1, kFlat, 2},
                                     {64, 128, 64, 4, 4, 1, kFlat, 2},
                                     // one warpgroup along 256 columns: 512-byte rows of y
                                     {64, 256, 64, 4, 5, 1, kFlat, 4},
                                     // a producer warpgroup issuing the copies (not
                                     // with split_k)
                                     {64, 64, 128, 4, 6, 1, kFlat, 1, true},
                                     {64, 128, 64, 4, 8, 1, kFlat, 1, true}};

std::vector<Shape> parse_shapes(const std::string& text) {
  std::vector<Shape> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    Shape s{};
    if (std::sscanf(item.c_str(), "%ldx%ldx%ld", &s.m, &s.n, &s.k) == 3) out.push_back(s);
  }
  return out;
}

double tflops(const Shape& s, double ms) {
  return 2.0 * static_cast<double>(s.m) * s.n * s.k / ms / 1e9;
}

// The fastest of the 8-bit candidates (K blocks of 128: wgmma k32, 128-byte rows) by
// time_ms(candidate), each printed with `label`, in units of shape s's operations per
// second; and that candidate.
template <class TimeMs>
std::pair<double, std::string> best_8bit(const Shape& s, const char* label, const char* unit,
                                         TimeMs&& time_ms) {
  double best = 0;
  std::string best_cfg;
  for (const Candidate& c :
       {Candidate{128, 256, 128, 8, 4}, Candidate{128, 256, 128, 8, 3},
        Candidate{128, 128, 128, 8, 4}, Candidate{256, 128, 128, 8, 3},
        Candidate{128, 256, 128, 8, 4, 1, kPb}, Candidate{256, 128, 128, 8, 4, 1, kPb},
        Candidate{128, 256, 128, 8, 4, 8, kPi}, Candidate{128, 256, 128, 8, 4, 8},
        Candidate{128, 256, 128, 8, 4, 1, kPb, 1, true},
        Candidate{128, 128, 128, 8, 6, 1, kPb, 1, true},
        Candidate{256, 128, 128, 8, 4, 1, kPb, 1, true},
        Candidate{128, 256, 128, 8, 4, 8, ts::PidType::flat, 1, true},
        // one warpgroup and at most 113 KB of shared memory: two programs per SM, whose
        // tiles of K's additions into f32 (fp8) overlap the other's products
        Candidate{128, 128, 128, 4, 3}, Candidate{128, 128, 128, 4, 3, 1, kPb},
        Candidate{128, 128, 128, 4, 3, 8}, Candidate{64, 256, 128, 4, 2}}) {
    const double tf = tflops(s, time_ms(c));
    std::printf("  %s %-22s %8.1f %s\n", label, c.str().c_str(), tf, unit);
    if (tf > best) {
      best = tf;
      best_cfg = c.str();
    }
  }
  return {best, best_cfg};
}

#ifdef TESSEL_BENCH_CUBLAS
// The types of a cuBLASLt matmul, and its operands' scale pointers (8-bit floats: A's
// and B's per-tensor scales; none for other types).
struct LtMatmul {
  cudaDataType_t in, out, scale;
  cublasComputeType_t compute;
  const void* scale_a = nullptr;
  const void* scale_b = nullptr;
  // CUBLASLT_MATMUL_DESC_FAST_ACCUM (8-bit floats): 1 sums the products as the tensor cores'
  // accumulator does, as tessel's fp8 dot with Settings::fast_accum does (torch._scaled_mm's
  // use_fast_accum=True); 0, cuBLASLt's, torch's and tessel's default, adds partial sums into
  // f32 every few steps of K.
  int8_t fast_accum = 0;
};

// TFLOP/s of cuBLASLt's out = x w^T (x [M, K], w [N, K], out [M, N], row-major) in the types
// t: column-major out^T [N, M] = w x^T, A = w transposed, B = x (cuBLASLt's "TN", the layout
// its 8-bit kernels take); 0 when cuBLASLt offers no algorithm. alpha 1, beta 0.
double lt_tflops(const Shape& s, const ts::Buffer& x, const ts::Buffer& w, ts::Buffer& out,
                 const LtMatmul& t, int iters) {
  ts::Buffer workspace = ts::Buffer::empty({8 << 20}, ts::i32, ts::cuda(0));
  cublasLtHandle_t lt;
  cublasLtCreate(&lt);
  cublasLtMatmulDesc_t desc;
  cublasLtMatmulDescCreate(&desc, t.compute, t.scale);
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
  if (t.scale_a) {
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &t.scale_a,
                                   sizeof t.scale_a);
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &t.scale_b,
                                   sizeof t.scale_b);
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &t.fast_accum,
                                   sizeof t.fast_accum);
  }
  cublasLtMatrixLayout_t a, b, d;
  cublasLtMatrixLayoutCreate(&a, t.in, s.k, s.n, s.k);
  cublasLtMatrixLayoutCreate(&b, t.in, s.k, s.m, s.k);
  cublasLtMatrixLayoutCreate(&d, t.out, s.n, s.m, s.n);
  cublasLtMatmulPreference_t pref;
  cublasLtMatmulPreferenceCreate(&pref);
  const size_t ws = static_cast<size_t>(workspace.numel()) * 4;
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                       sizeof ws);
  cublasLtMatmulHeuristicResult_t heur{};
  int found = 0;
  cublasLtMatmulAlgoGetHeuristic(lt, desc, a, b, d, d, pref, 1, &heur, &found);
  double tf = 0;
  if (found > 0) {
    // alpha and beta in the scale type: f32, or i32 for integer matmuls.
    const float onef = 1, zerof = 0;
    const int32_t onei = 1, zeroi = 0;
    const bool integer = t.scale == CUDA_R_32I;
    const void* one = integer ? static_cast<const void*>(&onei) : &onef;
    const void* zero = integer ? static_cast<const void*>(&zeroi) : &zerof;
    tf = tflops(s, bench::gpu_time_ms(
                       [&] {
                         cublasLtMatmul(lt, desc, one, w.data_ptr(), a, x.data_ptr(), b, zero,
                                        out.data_ptr(), d, out.data_ptr(), d, &heur.algo,
                                        workspace.data_ptr(), ws, nullptr);
                       },
                       iters));
  }
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(a);
  cublasLtMatrixLayoutDestroy(b);
  cublasLtMatrixLayoutDestroy(d);
  cublasLtMatmulDescDestroy(desc);
  cublasLtDestroy(lt);
  return tf;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tessel ts::dot (tensor cores) against cuBLAS, bf16"};
  int iters = 10;
  bool compile_only = false;
  std::string shapes_text =
      "1024x1024x1024,2048x2048x2048,4096x4096x4096,8192x8192x8192,8192x8192x512,16x8192x8192";
  app.add_option("--iters", iters, "calls per timed round");
  app.add_flag("--compile-only", compile_only, "only the NVRTC compile time");
  app.add_option("--shapes", shapes_text, "MxNxK,...");
  std::string sections_text = "bf16,tf32,fp8,int8,grouped,bmm,fused";
  app.add_option("--sections", sections_text,
                 "which parts run: bf16 (the --shapes), tf32, fp8, int8, grouped, bmm, fused");
  std::string only;
  app.add_option("--only", only,
                 "time only this candidate of the bf16 shapes, as the table prints it (e.g. "
                 "\"64x128x64 w4 s8 k2\"): to profile one kernel beside cuBLAS's");
  bool tune = false;
  app.add_flag("--tune", tune,
               "time quick autotuning of a 4096^3 GEMM (set TESSEL_CACHE_DIR "
               "to an empty directory for a cold cache)");
  CLI11_PARSE(app, argc, argv);
  const std::string sections = "," + sections_text + ",";
  auto section = [&](const char* name) {
    return sections.find(std::string(",") + name + ",") != std::string::npos;
  };
  for (size_t at = 0; at < sections_text.size();) {  // each name one of the parts
    const size_t end = std::min(sections_text.find(',', at), sections_text.size());
    const std::string name = sections_text.substr(at, end - at);
    const std::string known = ",bf16,tf32,fp8,int8,grouped,bmm,fused,";
    if (known.find("," + name + ",") == std::string::npos) {
      std::fprintf(stderr, "--sections: no part '%s' (the parts: %s)\n", name.c_str(),
                   known.substr(1, known.size() - 2).c_str());
      return 2;
    }
    at = end + 1;
  }

  // NVRTC compile time of one candidate (the first compile also loads NVRTC and the
  // headers' precompiled header: a warm-up compile of another kernel is not timed).
  for (const Candidate& c : {Candidate{128, 128, 32, 8, 2}, Candidate{128, 128, 32, 4, 2},
                             Candidate{256, 128, 64, 8, 3}}) {
    ts::Buffer x = ts::Buffer::zeros({1024, 1024}, ts::bf16),
               y = ts::Buffer::zeros({1024, 1024}, ts::bf16);
    auto k = examples::make_dot_matmul(ts::Settings{.config = c.config()});
    auto t0 = std::chrono::steady_clock::now();
    k.cuda(true, x, y);  // generates and compiles with NVRTC
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("compile  dot_matmul %s: %.2f s (NVRTC, one candidate)\n", c.str().c_str(), s);
  }
  if (compile_only) return 0;
  if (!ts::rt::cuda_available()) {
    std::printf("no GPU: %s\n", ts::rt::cuda_unavailable_reason().c_str());
    return 0;
  }
  std::printf("device: %s, bf16 operands, f32 accumulation, bf16 output\n",
              ts::rt::device_name(0).c_str());
#ifdef TESSEL_BENCH_CUBLAS
  cublasHandle_t h;
  cublasCreate(&h);
#endif
  for (const Shape& s : section("bf16") ? parse_shapes(shapes_text) : std::vector<Shape>{}) {
    ts::Buffer x = ts::Buffer::randn({s.m, s.k}, ts::bf16, ts::cuda(0), 1);
    ts::Buffer y = ts::Buffer::randn({s.k, s.n}, ts::bf16, ts::cuda(0), 2);
    double peer = 0;
#ifdef TESSEL_BENCH_CUBLAS
    {
      ts::Buffer c = ts::Buffer::empty({s.m, s.n}, ts::bf16, ts::cuda(0));
      const float one = 1, zero = 0;
      // Row-major out = x @ y is column-major out^T = y^T @ x^T.
      double ms = bench::gpu_time_ms(
          [&] {
            cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(s.n), static_cast<int>(s.m),
                         static_cast<int>(s.k), &one, y.data_ptr(), CUDA_R_16BF,
                         static_cast<int>(s.n), x.data_ptr(), CUDA_R_16BF, static_cast<int>(s.k),
                         &zero, c.data_ptr(), CUDA_R_16BF, static_cast<int>(s.n),
                         CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
          },
          iters);
      peer = tflops(s, ms);
    }
#endif
    double best = 0;
    std::string best_cfg;
    for (const Candidate& c : s.m <= 64 ? kSkinny : kCandidates) {
      if (!only.empty() && c.str() != only) continue;
      auto k = examples::make_dot_matmul(ts::Settings{.config = c.config()});
      double ms = 0;
      try {
        ms = bench::gpu_time_ms([&] { k(x, y); }, iters);
      } catch (const std::exception& e) {
        std::printf("  %-22s failed: %.120s\n", c.str().c_str(), e.what());
        continue;
      }
      double tf = tflops(s, ms);
      std::printf("  %ldx%ldx%ld %-22s %8.1f TFLOP/s\n", s.m, s.n, s.k, c.str().c_str(), tf);
      if (tf > best) {
        best = tf;
        best_cfg = c.str();
      }
    }
    std::printf("%ldx%ldx%ld: cuBLAS %.1f TFLOP/s, tessel %.1f TFLOP/s (%s)", s.m, s.n, s.k, peer,
                best, best_cfg.c_str());
    if (peer > 0) std::printf(" = %.3f of cuBLAS", best / peer);
    std::printf("\n");
  }
  // f32 operands under TF32 (ts::dot's default precision) against cuBLAS SGEMM with TF32
  // tensor-op math, in two layouts: y row-major [K, N] (N-major: wgmma reads TF32 K-major
  // only, so the consumers copy each tile of y K-major, with or without a producer
  // warpgroup (ws) issuing the TMA copies; mma.sync at K blocks of 16) and y = w^T
  // of a [N, K] tensor (a Linear layer's weight: both K-major, wgmma m64nNk8).
  for (bool linear : {false, true}) {
    if (!section("tf32")) break;
    const Shape s{4096, 4096, 4096};
    const int n = static_cast<int>(s.n);
    ts::Buffer x = ts::Buffer::randn({s.m, s.k}, ts::f32, ts::cuda(0), 6);
    ts::Buffer w = ts::Buffer::randn({s.k, s.n}, ts::f32, ts::cuda(0), 7);  // y, or [N, K]
    const ts::Buffer y = linear ? w.transpose(0, 1) : w;
    const char* name = linear ? "tf32 x w^T" : "tf32";
    double peer = 0;
#ifdef TESSEL_BENCH_CUBLAS
    {
      ts::Buffer c = ts::Buffer::empty({s.m, s.n}, ts::f32, ts::cuda(0));
      cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH);
      const float one = 1, zero = 0;
      // Column-major: out^T = y^T x^T, y^T is w ([N, K] row-major: transposed) or y.
      double ms = bench::gpu_time_ms(
          [&] {
            cublasSgemm(h, linear ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one,
                        static_cast<const float*>(w.data_ptr()), n,
                        static_cast<const float*>(x.data_ptr()), n, &zero,
                        static_cast<float*>(c.data_ptr()), n);
          },
          iters);
      cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
      peer = tflops(s, ms);
    }
#endif
    double best = 0;
    std::string best_cfg;
    const std::vector<Candidate> copied{{128, 128, 16, 8, 2},  // mma.sync
                                        {128, 256, 32, 8, 3},
                                        {128, 256, 32, 8, 3, 1, ts::PidType::persistent_blocked},
                                        {128, 128, 32, 8, 4},
                                        {128, 128, 32, 8, 4, 1, ts::PidType::persistent_blocked},
                                        {128, 128, 64, 8, 3},
                                        {256, 128, 32, 8, 3},
                                        {256, 128, 32, 8, 4},
                                        {256, 128, 32, 8, 4, 1, ts::PidType::persistent_blocked},
                                        {256, 128, 32, 8, 4, 8},
                                        // ws: a producer warpgroup issues the TMA copies
                                        {256, 128, 32, 8, 4, 8, ts::PidType::flat, 1, true},
                                        {256, 128, 32, 8, 4, 1, kPb, 1, true},
                                        {256, 128, 32, 8, 4, 8, kPi, 1, true},
                                        {128, 256, 32, 8, 3, 8, ts::PidType::flat, 1, true},
                                        {128, 128, 32, 8, 4, 8, ts::PidType::flat, 1, true}};
    const std::vector<Candidate> wgmma{{128, 256, 32, 8, 4},
                                       {128, 256, 32, 8, 3},
                                       {128, 128, 32, 8, 4},
                                       {128, 128, 64, 8, 3},
                                       {128, 256, 32, 8, 4, 1, ts::PidType::persistent_blocked},
                                       {128, 256, 32, 8, 4, 8},
                                       {128, 256, 32, 8, 4, 1, kPb, 1, true}};
    for (const Candidate& c : linear ? wgmma : copied) {
      auto k = examples::make_dot_matmul(ts::Settings{.config = c.config()});
      double tf = tflops(s, bench::gpu_time_ms([&] { k(x, y); }, iters));
      std::printf("  %s 4096^3 %-22s %8.1f TFLOP/s\n", name, c.str().c_str(), tf);
      if (tf > best) {
        best = tf;
        best_cfg = c.str();
      }
    }
    std::printf("%s 4096x4096x4096: cuBLAS (TF32) %.1f TFLOP/s, tessel %.1f TFLOP/s (%s)", name,
                peer, best, best_cfg.c_str());
    if (peer > 0) std::printf(" = %.3f of cuBLAS", best / peer);
    std::printf("\n");
  }
  // f8e4m3 operands with per-tensor scales into bf16 (examples::make_fp8_matmul, x w^T:
  // both K-major, wgmma m64nNk32) against cuBLASLt's FP8 matmul (what torch._scaled_mm
  // calls) with the same scales; the row-wise scaled kernel measured beside it.
  if (section("fp8")) {
    const Shape s{4096, 4096, 4096};
    ts::Buffer x = ts::Buffer::randn({s.m, s.k}, ts::f8e4m3, ts::cuda(0), 12);
    ts::Buffer w = ts::Buffer::randn({s.n, s.k}, ts::f8e4m3, ts::cuda(0), 13);
    ts::Buffer sx = ts::Buffer::full({1}, 0.5, ts::f32, ts::cuda(0));
    ts::Buffer sy = ts::Buffer::full({1}, 2.0, ts::f32, ts::cuda(0));
    ts::Buffer rx = ts::Buffer::rand({s.m}, ts::f32, ts::cuda(0), 14);
    ts::Buffer ry = ts::Buffer::rand({s.n}, ts::f32, ts::cuda(0), 15);
    double peer = 0, peer_fast = 0;  // cuBLASLt's default, and with fast accumulation
#ifdef TESSEL_BENCH_CUBLAS
    {
      ts::Buffer c = ts::Buffer::empty({s.m, s.n}, ts::bf16, ts::cuda(0));
      LtMatmul t{CUDA_R_8F_E4M3,     CUDA_R_16BF,   CUDA_R_32F,
                 CUBLAS_COMPUTE_32F, sy.data_ptr(), sx.data_ptr()};
      peer = lt_tflops(s, x, w, c, t, iters);
      t.fast_accum = 1;
      peer_fast = lt_tflops(s, x, w, c, t, iters);
      if (peer == 0) std::printf("  cuBLASLt offers no FP8 algorithm here\n");
    }
#endif
    const ts::Buffer y = w.transpose(0, 1);
    // Each tile of K's sums added into f32 (the default), then fast accumulation; each
    // against cuBLASLt summing the same way.
    for (bool fast : {false, true}) {
      const auto [best, best_cfg] =
          best_8bit(s, fast ? "fp8 4096^3 fast" : "fp8 4096^3", "TFLOP/s", [&](const Candidate& c) {
            auto k =
                examples::make_fp8_matmul(ts::Settings{.config = c.config(), .fast_accum = fast});
            return bench::gpu_time_ms([&] { k(x, y, sx, sy); }, iters);
          });
      const double p = fast ? peer_fast : peer;
      std::printf(
          "fp8 e4m3 4096x4096x4096 (per-tensor scales, bf16 out%s): cuBLASLt%s %.1f TFLOP/s, "
          "tessel %.1f TFLOP/s (%s)",
          fast ? ", fast accumulation" : "", fast ? " with fast accumulation" : "", p, best,
          best_cfg.c_str());
      if (p > 0) std::printf(" = %.3f of cuBLASLt", best / p);
      std::printf("\n");
    }
    Candidate rc{128, 256, 128, 8, 4};
    auto rows = examples::make_fp8_matmul_rowwise(ts::Settings{.config = rc.config()});
    std::printf("fp8 e4m3 4096x4096x4096 row-wise scales: tessel %.1f TFLOP/s (%s)\n",
                tflops(s, bench::gpu_time_ms([&] { rows(x, y, rx, ry); }, iters)),
                rc.str().c_str());
  }
  // i8 operands summed in i32 (examples::make_int8_matmul, x w^T: both K-major, wgmma
  // m64nNk32 s8) against cuBLASLt's int8 matmul with i32 output (what torch._int_mm calls).
  if (section("int8")) {
    const Shape s{4096, 4096, 4096};
    ts::Buffer x = ts::Buffer::empty({s.m, s.k}, ts::i8, ts::cuda(0));
    ts::Buffer w = ts::Buffer::empty({s.n, s.k}, ts::i8, ts::cuda(0));
    x.copy_from(ts::Buffer::randn({s.m, s.k}, ts::f32, ts::cuda(0), 16));  // -4 .. 4
    w.copy_from(ts::Buffer::randn({s.n, s.k}, ts::f32, ts::cuda(0), 17));
    double peer = 0;
#ifdef TESSEL_BENCH_CUBLAS
    {
      ts::Buffer c = ts::Buffer::empty({s.m, s.n}, ts::i32, ts::cuda(0));
      peer = lt_tflops(s, x, w, c, {CUDA_R_8I, CUDA_R_32I, CUDA_R_32I, CUBLAS_COMPUTE_32I}, iters);
      if (peer == 0) std::printf("  cuBLASLt offers no int8 algorithm here\n");
    }
#endif
    const ts::Buffer y = w.transpose(0, 1);
    const auto [best, best_cfg] = best_8bit(s, "int8 4096^3", "TOP/s", [&](const Candidate& c) {
      auto k = examples::make_int8_matmul(ts::Settings{.config = c.config()});
      return bench::gpu_time_ms([&] { k(x, y); }, iters);
    });
    std::printf("int8 4096x4096x4096 (i32 out): cuBLASLt %.1f TOP/s, tessel %.1f TOP/s (%s)", peer,
                best, best_cfg.c_str());
    if (peer > 0) std::printf(" = %.3f of cuBLASLt", best / peer);
    std::printf("\n");
  }
  // Quick autotuning of a 4096^3 bf16 GEMM (a fresh tuning cache: TESSEL_CACHE_DIR, below):
  // wall time of the first call's tuning and the tuned config's speed.
  if (tune) {
    const Shape s{4096, 4096, 4096};
    ts::Buffer x = ts::Buffer::randn({s.m, s.k}, ts::bf16, ts::cuda(0), 10);
    ts::Buffer y = ts::Buffer::randn({s.k, s.n}, ts::bf16, ts::cuda(0), 11);
    auto k = examples::make_dot_matmul(ts::Settings{.autotune_effort = ts::AutotuneEffort::quick});
    auto t0 = std::chrono::steady_clock::now();
    ts::Config c = k.autotune(x, y);
    double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double tf = tflops(s, bench::gpu_time_ms([&] { k(x, y); }, iters));
    std::printf("quick autotune 4096^3 bf16: %.1f s, %s: %.1f TFLOP/s\n", sec, c.to_json().c_str(),
                tf);
  }
  // Grouped GEMM (examples::make_grouped_matmul): 8 experts of 512 rows each, K = N = 4096,
  // the row count and each 64- or 128-row block's expert in device memory, against a loop of
  // one cuBLAS GEMM per expert.
  if (section("grouped")) {
    const int64_t experts = 8, rows = 512, kk = 4096, nn = 4096, t = experts * rows;
    ts::Buffer x = ts::Buffer::randn({t, kk}, ts::bf16, ts::cuda(0), 8);
    ts::Buffer w = ts::Buffer::randn({experts, kk, nn}, ts::bf16, ts::cuda(0), 9);
    // Each block's expert, for groups padded to 64 and to 128 rows (block_m).
    auto block_expert_of = [&](int64_t block_m) {
      std::vector<double> blocks(static_cast<size_t>(t / block_m));
      for (size_t b = 0; b < blocks.size(); ++b)
        blocks[b] = static_cast<double>(static_cast<int64_t>(b) * block_m / rows);
      return ts::Buffer::from_vector(blocks, {t / block_m}, ts::i32).to(ts::cuda(0));
    };
    const ts::Buffer block_expert64 = block_expert_of(64), block_expert128 = block_expert_of(128);
    ts::Buffer n_rows = ts::Buffer::scalar(t, ts::i32, ts::cuda(0));
    const Shape s{t, nn, kk};
    double peer = 0;
#ifdef TESSEL_BENCH_CUBLAS
    {
      ts::Buffer c = ts::Buffer::empty({t, nn}, ts::bf16, ts::cuda(0));
      const float one = 1, zero = 0;
      double ms = bench::gpu_time_ms(
          [&] {
            for (int64_t e = 0; e < experts; ++e)
              cublasGemmEx(
                  h, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(nn), static_cast<int>(rows),
                  static_cast<int>(kk), &one, static_cast<char*>(w.data_ptr()) + e * kk * nn * 2,
                  CUDA_R_16BF, static_cast<int>(nn),
                  static_cast<char*>(x.data_ptr()) + e * rows * kk * 2, CUDA_R_16BF,
                  static_cast<int>(kk), &zero, static_cast<char*>(c.data_ptr()) + e * rows * nn * 2,
                  CUDA_R_16BF, static_cast<int>(nn), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
          },
          iters);
      peer = tflops(s, ms);
    }
#endif
    double best = 0;
    std::string best_cfg;
    // block_m (the routing's padding: 64, or 128 for two warpgroups along M), N and K blocks,
    // warps, stages.
    for (auto [bm, bn, bk, warps, stages] : {std::tuple{64, 128, 32, 4, 2},
                                             {64, 128, 64, 4, 4},
                                             {64, 256, 64, 4, 3},
                                             {64, 256, 64, 4, 4},
                                             {64, 256, 64, 4, 2},
                                             {64, 256, 64, 8, 3},
                                             {64, 256, 64, 8, 4},
                                             {64, 128, 64, 8, 4},
                                             {64, 128, 128, 4, 3},
                                             {128, 256, 64, 8, 3},
                                             {128, 256, 64, 8, 4},
                                             {128, 128, 64, 8, 4},
                                             {128, 128, 64, 4, 4}}) {
      auto k = examples::make_grouped_matmul(
          ts::Settings{.config = ts::Config{.block_sizes = std::vector<int64_t>{bn, bk},
                                            .num_warps = warps,
                                            .num_stages = stages}},
          bm);
      const ts::Buffer& block_expert = bm == 64 ? block_expert64 : block_expert128;
      double tf = tflops(s, bench::gpu_time_ms([&] { k(x, w, n_rows, block_expert); }, iters));
      std::string cfg = std::to_string(bm) + "x" + std::to_string(bn) + "x" + std::to_string(bk) +
                        " w" + std::to_string(warps) + " s" + std::to_string(stages);
      std::printf("  grouped %-22s %8.1f TFLOP/s\n", cfg.c_str(), tf);
      if (tf > best) {
        best = tf;
        best_cfg = cfg;
      }
    }
    std::printf("grouped 8 x 512x4096x4096: cuBLAS loop %.1f TFLOP/s, tessel %.1f TFLOP/s (%s)",
                peer, best, best_cfg.c_str());
    if (peer > 0) std::printf(" = %.3f of cuBLAS", best / peer);
    std::printf("\n");
  }
  // Batched: 16 products of 2048^3 (examples::make_bmm), against cuBLAS's strided batched
  // GEMM.
  if (section("bmm")) {
    const int64_t batches = 16, n = 2048;
    const Shape s{batches * n, n, n};  // the FLOP count of all the batches
    ts::Buffer x = ts::Buffer::randn({batches, n, n}, ts::bf16, ts::cuda(0), 12);
    ts::Buffer y = ts::Buffer::randn({batches, n, n}, ts::bf16, ts::cuda(0), 13);
    double peer = 0;
#ifdef TESSEL_BENCH_CUBLAS
    {
      ts::Buffer c = ts::Buffer::empty({batches, n, n}, ts::bf16, ts::cuda(0));
      const float one = 1, zero = 0;
      const int d = static_cast<int>(n);
      peer = tflops(s, bench::gpu_time_ms(
                           [&] {
                             cublasGemmStridedBatchedEx(
                                 h, CUBLAS_OP_N, CUBLAS_OP_N, d, d, d, &one, y.data_ptr(),
                                 CUDA_R_16BF, d, n * n, x.data_ptr(), CUDA_R_16BF, d, n * n, &zero,
                                 c.data_ptr(), CUDA_R_16BF, d, n * n, static_cast<int>(batches),
                                 CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
                           },
                           iters));
    }
#endif
    double best = 0;
    std::string best_cfg;
    for (const Candidate& c :
         {Candidate{128, 256, 64, 8, 4}, Candidate{128, 256, 64, 8, 4, 8},
          Candidate{128, 256, 64, 8, 4, 1, kPi}, Candidate{128, 256, 64, 8, 4, 1, kFlat, 1, true},
          Candidate{128, 256, 64, 8, 4, 1, kPb, 1, true}, Candidate{256, 128, 64, 8, 4},
          Candidate{128, 128, 64, 4, 4}}) {
      auto k = examples::make_bmm(ts::Settings{.config = c.config()});
      const double tf = tflops(s, bench::gpu_time_ms([&] { k(x, y); }, iters));
      std::printf("  bmm %-22s %8.1f TFLOP/s\n", c.str().c_str(), tf);
      if (tf > best) {
        best = tf;
        best_cfg = c.str();
      }
    }
    std::printf(
        "bmm 16 x 2048x2048x2048: cuBLAS strided batched %.1f TFLOP/s, tessel %.1f TFLOP/s (%s)",
        peer, best, best_cfg.c_str());
    if (peer > 0) std::printf(" = %.3f of cuBLAS", best / peer);
    std::printf("\n");
  }
  // Fused epilogue: matmul + bias + gelu in one kernel, against cuBLAS then the epilogue.
  if (section("fused")) {
    const Shape s{4096, 4096, 4096};
    ts::Buffer x = ts::Buffer::randn({s.m, s.k}, ts::bf16, ts::cuda(0), 3);
    ts::Buffer y = ts::Buffer::randn({s.k, s.n}, ts::bf16, ts::cuda(0), 4);
    ts::Buffer bias = ts::Buffer::randn({s.n}, ts::bf16, ts::cuda(0), 5);
    double fused_ms = 0;
    std::string fused_cfg;
    for (const Candidate& c :
         {Candidate{128, 128, 32, 4, 2}, Candidate{256, 128, 64, 8, 3},
          Candidate{128, 256, 64, 8, 4}, Candidate{256, 128, 64, 8, 3, 8},
          Candidate{128, 256, 64, 8, 4, 1, kPb}, Candidate{128, 256, 64, 8, 4, 8, kPi},
          Candidate{128, 128, 64, 4, 3}, Candidate{128, 128, 64, 4, 2},
          Candidate{128, 256, 64, 8, 4, 8}, Candidate{128, 256, 64, 8, 4, 8, kFlat, 1, true},
          Candidate{128, 256, 64, 8, 4, 1, kPb, 1, true}}) {
      auto fused = examples::make_matmul_bias_gelu(ts::Settings{.config = c.config()});
      const double ms = bench::gpu_time_ms([&] { fused(x, y, bias); }, iters);
      std::printf("  fused %-22s %8.3f ms\n", c.str().c_str(), ms);
      if (fused_ms == 0 || ms < fused_ms) {
        fused_ms = ms;
        fused_cfg = c.str();
      }
    }
    // What the epilogue costs: the same tile without it, and with gelu's tanh form written
    // as x sigmoid(2u) (the same function: 0.5 (1 + tanh u) = sigmoid(2u)), whose exp is
    // one ex2.approx where tanhf is a libdevice routine.
    {
      const Candidate c{128, 256, 64, 8, 4};
      auto plain = examples::make_dot_matmul(ts::Settings{.config = c.config()});
      auto sigmoid_form = ts::kernel(
          "matmul_bias_gelu_sigmoid",
          [](ts::Tensor x, ts::Tensor y, ts::Tensor bias) {
            ts::Tensor out = x.new_empty({x.size(0), y.size(1)});
            for (auto [tm, tn] : ts::tile(x.size(0), y.size(1))) {
              ts::Value acc = ts::zeros({tm, tn});
              for (auto tk : ts::tile(x.size(1))) acc = ts::dot(x(tm, tk), y(tk, tn), acc);
              ts::Value h = acc + bias(ts::newaxis, tn).to(ts::f32);
              out(tm, tn) = h * ts::sigmoid(1.5957691216057308 * (h + 0.044715 * h * h * h));
            }
            return out;
          },
          ts::Settings{.config = c.config()});
      std::printf("  %s: matmul alone %.3f ms, fused with gelu as x sigmoid(2u) %.3f ms\n",
                  c.str().c_str(), bench::gpu_time_ms([&] { plain(x, y); }, iters),
                  bench::gpu_time_ms([&] { sigmoid_form(x, y, bias); }, iters));
    }
    double peer_ms = 0;
#ifdef TESSEL_BENCH_CUBLAS
    auto epilogue = ts::kernel("bias_gelu", [](ts::Tensor c, ts::Tensor bias) {
      for (auto [tm, tn] : ts::tile(c.size(0), c.size(1))) {
        ts::Value h = c(tm, tn).to(ts::f32) + bias(ts::newaxis, tn).to(ts::f32);
        c(tm, tn) = 0.5 * h * (1.0 + ts::tanh(0.7978845608028654 * (h + 0.044715 * h * h * h)));
      }
      return c;
    });
    ts::Buffer c = ts::Buffer::empty({s.m, s.n}, ts::bf16, ts::cuda(0));
    const float one = 1, zero = 0;
    peer_ms = bench::gpu_time_ms(
        [&] {
          cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(s.n), static_cast<int>(s.m),
                       static_cast<int>(s.k), &one, y.data_ptr(), CUDA_R_16BF,
                       static_cast<int>(s.n), x.data_ptr(), CUDA_R_16BF, static_cast<int>(s.k),
                       &zero, c.data_ptr(), CUDA_R_16BF, static_cast<int>(s.n), CUBLAS_COMPUTE_32F,
                       CUBLAS_GEMM_DEFAULT);
          epilogue(c, bias);
        },
        iters);
#endif
    std::printf(
        "fused matmul+bias+gelu 4096^3: tessel %.3f ms (%s), cuBLAS + epilogue kernel %.3f ms",
        fused_ms, fused_cfg.c_str(), peer_ms);
    if (peer_ms > 0) std::printf(" = %.3fx", peer_ms / fused_ms);
    std::printf("\n");
  }
#ifdef TESSEL_BENCH_CUBLAS
  cublasDestroy(h);
#endif
  return 0;
}
