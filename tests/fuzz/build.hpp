// The builder: a tessel kernel traced from a program description through the public DSL
// (ts::kernel, ts::tile, x(i, t), ts::sum, ...), the Buffers of a call, and the runs.
#pragma once

#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <tessel/tessel.hpp>
#include <utility>
#include <vector>

#include "fuzz/naive.hpp"
#include "fuzz/program.hpp"

namespace fuzz {

/// The kernel's parameters: kInputs input tensors, kOutputs output tensors, the rows' and
/// the columns' device bounds (one-element i64 tensors), then two ts::Value scalars (the
/// symbolic bounds of rows and columns). Unused tensors are a one-element dummy.
inline constexpr int kInputs = kMaxInputs, kOutputs = kMaxOutputs;
inline constexpr int kRowBound = kInputs + kOutputs, kColBound = kRowBound + 1,
                     kTensors = kColBound + 1;

/// A traced value whose dtype or rank is not the one the description says (a frontend
/// bug or a generator bug: the message says which node).
struct CheckFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <size_t>
using TensorParam = ts::Tensor;
template <class Seq>
struct KernelOfParams;
template <size_t... I>
struct KernelOfParams<std::index_sequence<I...>> {
  using type = ts::Kernel<void, TensorParam<I>..., ts::Value, ts::Value>;
};
/// A fuzz kernel: kTensors tensor parameters, then the two symbolic bounds.
using FuzzKernel = KernelOfParams<std::make_index_sequence<kTensors>>::type;

/// The kernel of `p` with settings `s` (p.config is not applied: pass it in s).
FuzzKernel make_kernel(const Program& p, ts::Settings s);
/// p's index dtype and config.
ts::Settings settings_of(const Program& p);

/// The arguments of one call on `device` (fresh Buffers: outputs hold data.outputs), and
/// the Buffers the outputs are read from afterwards.
struct Call {
  std::vector<ts::Buffer> tensors;        // the tensor arguments
  std::vector<ts::detail::CallArg> args;  // pointing into `tensors` (moves keep them)
  std::vector<ts::Buffer> outputs;
  Call() = default;
  Call(Call&&) = default;
  Call(const Call&) = delete;
};
Call make_call(const Program& p, const HostData& data, ts::Device device);

/// The memory behind an input's Buffer: `values` (row-major over `shape`) viewed as the
/// input's logical [M, N] / [M] / [N] tensor: as is (contiguous), transposed (a [N, M]
/// buffer), or every other element along the last dimension (`strides`; the elements
/// between hold garbage).
struct BaseBuffer {
  std::vector<double> values;
  std::vector<int64_t> shape, strides;  // strides: only for View::strided
};
BaseBuffer base_buffer(const Input& in, const std::vector<double>& v, int64_t M, int64_t N);

/// A config drawn uniformly from the autotuner's space of p's kernel (traced on the CPU).
ts::Config draw_config(const Program& p, const HostData& data, std::mt19937_64& rng);

/// Runs the kernel on the call's device and reads back the outputs (row-major doubles).
std::vector<std::vector<double>> run(const FuzzKernel& k, const Call& call);

/// The generated CUDA for the call, compiled with NVRTC for sm_90 (throws on failure).
std::vector<std::string> compile_cuda(const FuzzKernel& k, const Call& call);

}  // namespace fuzz
