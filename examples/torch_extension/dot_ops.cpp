// tessel's dot examples (examples/kernels/matmul.hpp, moe.hpp) registered as PyTorch
// operators, beside rms_norm (rms_norm_op.cpp), with a CPU kernel (the tessel interpreter), a
// CUDA kernel (the generated CUDA, on torch's current stream) and a Meta kernel:
//
//   torch.ops.tessel_examples.matmul_bias_gelu(x, y, bias, config="")
//     x [M, K] and y [K, N] of bfloat16 or float16 (one dtype), bias [N] of any float dtype:
//     gelu(x @ y + bias) with gelu's tanh form (torch.nn.functional.gelu(...,
//     approximate="tanh")), products summed in f32 on tensor cores and the epilogue in the
//     same kernel, rounded once to x's dtype. Returns [M, N] of x's dtype.
//   torch.ops.tessel_examples.grouped_matmul(x, w, block_expert, n_rows, block_m, config="")
//     The grouped GEMM of a mixture of experts: out[t] = x[t] @ w[e(t)] for rows t <
//     n_rows, where e(t) = block_expert[t / block_m]. x [T, K] and w [E, K, N] of bfloat16 or
//     float16, block_expert [T / block_m] and n_rows [] (or [1]) int32 on x's device; block_m
//     64 or 128 (each group's rows padded to it). Returns [T, N] of x's dtype, zero from row
//     n_rows on. n_rows is read on the GPU: nothing synchronizes the host.
//
// `config` is a tessel Config as JSON (Config::to_json; "" lets tessel choose), so a
// benchmark can pin the tile shape it compares. The result comes from tessel's allocator (the
// kernels allocate it, as their C++ callers see them), so these ops are not for torch.cuda.graph
// capture; rms_norm_op.cpp shows the form that is (the output from torch, passed in). Errors:
// RuntimeError (TORCH_CHECK) for shapes, dtypes or devices other than the above; tessel's UserError
// for a bad config.
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <map>
#include <mutex>
#include <string>
#include <tessel/torch.hpp>
#include <vector>

namespace ts = tessel;
#include "../kernels/matmul.hpp"
#include "../kernels/moe.hpp"

namespace {

// One kernel per (config, block_m) for the process: traced once per specialization,
// compiled once per GPU, never destroyed (no module is unloaded after the CUDA driver shuts
// down at exit).
template <class Make>
const auto& kernel_for(const std::string& config, int64_t block_m, Make make) {
  using Kernel = decltype(make(ts::Settings{}, block_m));
  static std::mutex mu;
  static auto* kernels = new std::map<std::pair<std::string, int64_t>, const Kernel*>;
  std::lock_guard<std::mutex> lock(mu);
  const Kernel*& k = (*kernels)[{config, block_m}];
  if (!k) {
    ts::Settings settings;
    if (!config.empty()) settings.config = ts::Config::from_json(config);
    k = new Kernel(make(settings, block_m));
  }
  return *k;
}

void check_operand(const char* op, const char* name, const at::Tensor& t, int64_t dims,
                   const at::Tensor& x) {
  TORCH_CHECK(t.dim() == dims, "tessel_examples::", op, ": ", name, " must have ", dims,
              " dimensions, got ", t.sizes());
  TORCH_CHECK(t.scalar_type() == x.scalar_type(), "tessel_examples::", op, ": ", name, " is ",
              t.scalar_type(), ", x is ", x.scalar_type(), ": give both one dtype");
  TORCH_CHECK(t.device() == x.device(), "tessel_examples::", op, ": ", name, " is on ", t.device(),
              ", x on ", x.device(), ": put both on one device");
}

void check_half(const char* op, const at::Tensor& x) {
  TORCH_CHECK(x.scalar_type() == at::kBFloat16 || x.scalar_type() == at::kHalf,
              "tessel_examples::", op, ": x must be bfloat16 or float16, got ", x.scalar_type());
}

// The checked shape of matmul_bias_gelu's result.
std::vector<int64_t> matmul_bias_gelu_shape(const at::Tensor& x, const at::Tensor& y,
                                            const at::Tensor& bias) {
  check_half("matmul_bias_gelu", x);
  check_operand("matmul_bias_gelu", "x", x, 2, x);
  check_operand("matmul_bias_gelu", "y", y, 2, x);
  TORCH_CHECK(y.size(0) == x.size(1), "tessel_examples::matmul_bias_gelu: y has ", y.size(0),
              " rows, x has ", x.size(1), " columns: they must match");
  TORCH_CHECK(bias.dim() == 1 && bias.size(0) == y.size(1),
              "tessel_examples::matmul_bias_gelu: bias must have shape [", y.size(1),
              "] (y's columns), got ", bias.sizes());
  TORCH_CHECK(bias.is_floating_point() && bias.device() == x.device(),
              "tessel_examples::matmul_bias_gelu: bias must be a float tensor on x's device");
  return {x.size(0), y.size(1)};
}

/// Shapes and dtypes only (meta tensors, torch.compile's fake tensors): no kernel runs.
at::Tensor matmul_bias_gelu_meta(const at::Tensor& x, const at::Tensor& y, const at::Tensor& bias,
                                 c10::string_view /*config*/) {
  return at::empty(matmul_bias_gelu_shape(x, y, bias), x.options());
}

at::Tensor matmul_bias_gelu(const at::Tensor& x, const at::Tensor& y, const at::Tensor& bias,
                            c10::string_view config) {
  const std::vector<int64_t> shape = matmul_bias_gelu_shape(x, y, bias);
  if (shape[0] * shape[1] == 0) return at::empty(shape, x.options());
  c10::DeviceGuard guard(x.device());  // tessel switches the CUDA context; this restores it
  const auto& k = kernel_for(std::string(config), 0, [](ts::Settings s, int64_t) {
    return examples::make_matmul_bias_gelu(s);
  });
  return ts::to_torch(
      k(ts::torch_stream(x), ts::from_torch(x), ts::from_torch(y), ts::from_torch(bias)));
}

// The checked shape of grouped_matmul's result.
std::vector<int64_t> grouped_matmul_shape(const at::Tensor& x, const at::Tensor& w,
                                          const at::Tensor& block_expert, const at::Tensor& n_rows,
                                          int64_t block_m) {
  check_half("grouped_matmul", x);
  check_operand("grouped_matmul", "x", x, 2, x);
  check_operand("grouped_matmul", "w", w, 3, x);
  TORCH_CHECK(w.size(1) == x.size(1), "tessel_examples::grouped_matmul: w is ", w.sizes(),
              ", x has ", x.size(1), " columns: w must be [experts, ", x.size(1), ", N]");
  TORCH_CHECK(block_m == 64 || block_m == 128,
              "tessel_examples::grouped_matmul: block_m must be 64 or 128, got ", block_m);
  TORCH_CHECK(block_expert.scalar_type() == at::kInt && block_expert.dim() == 1 &&
                  block_expert.size(0) * block_m >= x.size(0),
              "tessel_examples::grouped_matmul: block_expert must be int32 of shape [", x.size(0),
              " / block_m], got ", block_expert.scalar_type(), " ", block_expert.sizes());
  TORCH_CHECK(n_rows.scalar_type() == at::kInt && n_rows.numel() == 1,
              "tessel_examples::grouped_matmul: n_rows must be one int32, got ",
              n_rows.scalar_type(), " ", n_rows.sizes());
  TORCH_CHECK(block_expert.device() == x.device() && n_rows.device() == x.device(),
              "tessel_examples::grouped_matmul: block_expert and n_rows must be on x's device");
  return {x.size(0), w.size(2)};
}

at::Tensor grouped_matmul_meta(const at::Tensor& x, const at::Tensor& w,
                               const at::Tensor& block_expert, const at::Tensor& n_rows,
                               int64_t block_m, c10::string_view /*config*/) {
  return at::empty(grouped_matmul_shape(x, w, block_expert, n_rows, block_m), x.options());
}

at::Tensor grouped_matmul(const at::Tensor& x, const at::Tensor& w, const at::Tensor& block_expert,
                          const at::Tensor& n_rows, int64_t block_m, c10::string_view config) {
  const std::vector<int64_t> shape = grouped_matmul_shape(x, w, block_expert, n_rows, block_m);
  if (shape[0] * shape[1] == 0) return at::zeros(shape, x.options());
  c10::DeviceGuard guard(x.device());
  const auto& k = kernel_for(std::string(config), block_m, [](ts::Settings s, int64_t bm) {
    return examples::make_grouped_matmul(s, bm);
  });
  return ts::to_torch(k(ts::torch_stream(x), ts::from_torch(x), ts::from_torch(w),
                        ts::from_torch(n_rows.reshape({})), ts::from_torch(block_expert)));
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(tessel_examples, m) {
  m.def("matmul_bias_gelu(Tensor x, Tensor y, Tensor bias, str config=\"\") -> Tensor");
  m.def(
      "grouped_matmul(Tensor x, Tensor w, Tensor block_expert, Tensor n_rows, int block_m, "
      "str config=\"\") -> Tensor");
}

// One function for both devices: from_torch gives CPU Buffers (the interpreter) or CUDA
// ones (the GPU, on the stream torch_stream returns).
TORCH_LIBRARY_IMPL(tessel_examples, CPU, m) {
  m.impl("matmul_bias_gelu", &matmul_bias_gelu);
  m.impl("grouped_matmul", &grouped_matmul);
}

TORCH_LIBRARY_IMPL(tessel_examples, CUDA, m) {
  m.impl("matmul_bias_gelu", &matmul_bias_gelu);
  m.impl("grouped_matmul", &grouped_matmul);
}

TORCH_LIBRARY_IMPL(tessel_examples, Meta, m) {
  m.impl("matmul_bias_gelu", &matmul_bias_gelu_meta);
  m.impl("grouped_matmul", &grouped_matmul_meta);
}
