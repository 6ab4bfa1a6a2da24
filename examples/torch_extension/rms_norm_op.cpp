// torch.ops.tessel_examples.rms_norm(x, weight, eps): tessel's rms_norm kernel
// (examples/kernels/norms.hpp) registered as a PyTorch operator, with a CPU kernel (the
// tessel interpreter) and a CUDA kernel (the generated CUDA, on torch's current stream).
//
//   torch.ops.load_library("libtessel_torch_examples.so")
//   y = torch.ops.tessel_examples.rms_norm(x, w, 1e-6)
//
// x: [..., N] float32/float16/bfloat16, any strides; weight: [N], any float dtype, on x's
// device; eps: a float. Returns y, x's shape and dtype (contiguous):
//   y[..., n] = x[..., n] * rsqrt(mean(x[..., :]^2) + eps) * weight[n]
// computed in f32, as torch.nn.functional.rms_norm(x, (N,), weight, eps). A Meta kernel
// gives shapes and dtypes for meta tensors (torch.compile traces with them).
// The output comes from torch's allocator (at::empty_like) and is passed to the kernel,
// which allocates nothing: a call on a CUDA stream never synchronizes the host, so it can
// be captured in torch.cuda.graph (after one call outside the capture, which traces and
// compiles the kernel).
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <tessel/torch.hpp>

#include "../kernels/norms.hpp"

namespace {
namespace ts = tessel;

// One kernel for the process: traced once per specialization, compiled once per GPU. Never
// destroyed, so no module is unloaded after the CUDA driver shuts down at exit.
const auto& rms_norm_kernel() {
  static const auto* k = new auto(examples::make_rms_norm_out());
  return *k;
}

/// Checks the arguments (TORCH_CHECK: a RuntimeError in Python) and allocates the output.
at::Tensor checked_output(const at::Tensor& x, const at::Tensor& weight) {
  TORCH_CHECK(x.dim() >= 1, "tessel_examples::rms_norm: x must have at least one dimension");
  const int64_t n = x.size(-1);
  TORCH_CHECK(x.scalar_type() == at::kFloat || x.scalar_type() == at::kHalf ||
                  x.scalar_type() == at::kBFloat16,
              "tessel_examples::rms_norm: x must be float32, float16 or bfloat16, got ",
              x.scalar_type());
  TORCH_CHECK(weight.dim() == 1 && weight.size(0) == n,
              "tessel_examples::rms_norm: weight must have shape [", n,
              "] (x's last dimension), got ", weight.sizes());
  TORCH_CHECK(weight.is_floating_point(),
              "tessel_examples::rms_norm: weight must be a float tensor, got ",
              weight.scalar_type());
  TORCH_CHECK(weight.device() == x.device(), "tessel_examples::rms_norm: weight is on ",
              weight.device(), ", x on ", x.device(), ": put both on one device");
  return at::empty_like(x, at::MemoryFormat::Contiguous);
}

at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps) {
  at::Tensor out = checked_output(x, weight);
  if (out.numel() == 0) return out;
  c10::DeviceGuard guard(x.device());  // tessel switches the CUDA context; this restores it
  // Rows of x as [M, N]: a view where x's strides allow one, else a copy.
  const int64_t n = x.size(-1);
  at::Tensor rows = x.reshape({-1, n});
  rms_norm_kernel()(ts::torch_stream(x), ts::from_torch(rows), ts::from_torch(weight), eps,
                    ts::from_torch(out.view({-1, n})));
  return out;
}

/// Shapes and dtypes only (meta tensors, torch.compile's fake tensors): no kernel runs.
at::Tensor rms_norm_meta(const at::Tensor& x, const at::Tensor& weight, double /*eps*/) {
  return checked_output(x, weight);
}

}  // namespace

TORCH_LIBRARY(tessel_examples, m) {
  m.def("rms_norm(Tensor x, Tensor weight, float eps) -> Tensor");
}

TORCH_LIBRARY_IMPL(tessel_examples, CPU, m) { m.impl("rms_norm", &rms_norm); }

// The same function: from_torch gives CUDA Buffers, which tessel runs on the GPU on the
// stream torch_stream returns.
TORCH_LIBRARY_IMPL(tessel_examples, CUDA, m) { m.impl("rms_norm", &rms_norm); }

TORCH_LIBRARY_IMPL(tessel_examples, Meta, m) { m.impl("rms_norm", &rms_norm_meta); }
