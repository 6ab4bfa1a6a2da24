// ts::Kernel's implementation: argument checks, specialization keys, tracing once per
// key, and running the host program on the GPU or the interpreter.
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "frontend/trace.hpp"
#include "ir/host_eval.hpp"
#include "codegen/embedded.hpp"
#include "passes/default_config.hpp"
#include "passes/roll_reductions.hpp"
#include "runtime/cuda_api.hpp"
#include "runtime/gpu_program.hpp"
#include "runtime/host_program.hpp"
#include "tessel/kernel.hpp"

namespace tessel::detail {

namespace {

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string(v) != "0";
}

int64_t next_pow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

}  // namespace

/// One traced specialization and its compiled forms.
struct Specialization {
  std::mutex mu;
  bool traced = false;
  ir::Graph graph;
  Config config;
  std::unique_ptr<ir::Graph> lowered;  // graph after config-dependent passes (null: graph)
  const ir::Graph& program() const { return lowered ? *lowered : graph; }
  std::unique_ptr<rt::GpuProgram> gpu;  // compiled on the first GPU call
};

class KernelImpl {
 public:
  KernelImpl(std::string name, std::vector<ParamKind> params, TraceFn fn, Settings settings)
      : name_(std::move(name)), params_(std::move(params)), trace_fn_(std::move(fn)),
        settings_(std::move(settings)) {}

  std::vector<Buffer> call(std::vector<CallArg>& args, void* stream);
  /// Traces (if needed) for these arguments, as a call would, without running.
  Specialization& specialize(std::vector<CallArg>& args, bool on_gpu);

 private:
  [[noreturn]] void fail(const std::string& what, const std::string& hint = "") const {
    throw UserError(name_, {}, what, hint);
  }
  void check_args(const std::vector<CallArg>& args, bool& on_gpu) const;
  std::string key(const std::vector<CallArg>& args, bool on_gpu) const;
  void trace(Specialization& s, const std::vector<CallArg>& args);

  std::string name_;
  std::vector<ParamKind> params_;
  TraceFn trace_fn_;
  Settings settings_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Specialization>> specs_;
};

void KernelImpl::check_args(const std::vector<CallArg>& args, bool& on_gpu) const {
  if (args.size() != params_.size())
    fail(fmt::format("called with {} arguments, the kernel takes {}", args.size(), params_.size()));
  std::optional<Device> device;
  int first_tensor = -1;
  for (size_t i = 0; i < args.size(); ++i) {
    bool is_buffer = std::holds_alternative<Buffer>(args[i]);
    if ((params_[i] == ParamKind::tensor) != is_buffer)
      fail(fmt::format("argument {} is {}, the kernel's parameter {} takes {}", i,
                       is_buffer ? "a Buffer" : "a number", i,
                       params_[i] == ParamKind::tensor ? "a ts::Tensor (pass a ts::Buffer)" : "a number"));
    if (!is_buffer) continue;
    const Buffer& b = std::get<Buffer>(args[i]);
    if (!b.defined()) fail(fmt::format("argument {} is an undefined Buffer", i));
    if (!device) {
      device = b.device();
      first_tensor = static_cast<int>(i);
    } else if (!(b.device() == *device)) {
      fail(fmt::format("argument {} is on {} but argument {} is on {}", i, b.device().str(),
                       first_tensor, device->str()),
           "a kernel's tensors must all be on one device: a CPU buffer cannot be passed with a "
           "GPU buffer; move them with Buffer::to()");
    }
  }
  on_gpu = device && device->is_cuda() && !env_flag("TESSEL_INTERPRET");
}

std::string KernelImpl::key(const std::vector<CallArg>& args, bool on_gpu) const {
  bool exact = settings_.static_shapes.value_or(false);
  std::string k = on_gpu ? "gpu" : "cpu";
  bool big = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (const Buffer* b = std::get_if<Buffer>(&args[i])) {
      k += fmt::format("|{}:{}", dtype_name(b->dtype()), b->dim());
      int es = dtype_size(b->dtype());
      for (int d = 0; d < b->dim(); ++d) {
        int64_t s = b->size(d);
        k += fmt::format(",{}", exact ? s : (s == 1 ? -1 : next_pow2(s)));
        if (d + 1 < b->dim()) k += (b->stride(d) * es) % 16 == 0 ? "a" : "u";
      }
      if (b->dim() > 0) k += b->stride(-1) == 1 ? "c" : "s";
      k += (reinterpret_cast<uintptr_t>(b->data_ptr()) % 16 == 0) ? "A" : "U";
      big |= b->numel() >= (int64_t{1} << 31);
      if (on_gpu) k += fmt::format("@{}", b->device().index);
    } else if (params_[i] == ParamKind::specialized) {
      k += std::holds_alternative<int64_t>(args[i]) ? fmt::format("|={}", std::get<int64_t>(args[i]))
                                                     : fmt::format("|={}", std::get<double>(args[i]));
    } else {
      k += std::holds_alternative<int64_t>(args[i]) ? "|int" : "|float";
    }
  }
  k += big ? "|i64" : "|i32";
  return k;
}

void KernelImpl::trace(Specialization& s, const std::vector<CallArg>& args) {
  std::vector<frontend::TraceArg> targs(args.size());
  std::vector<ir::Node*> nodes(args.size());
  s.graph.kernel_name = name_;
  for (size_t i = 0; i < args.size(); ++i) {
    ir::Node* n = s.graph.new_node(ir::Op::Arg, {});
    n->ival = static_cast<int64_t>(i);
    if (const Buffer* b = std::get_if<Buffer>(&args[i])) {
      targs[i].kind = ir::ArgKind::tensor;
      targs[i].buffer = *b;
      n->arg_kind = ir::ArgKind::tensor;
      n->dtype = b->dtype();
      n->rank = b->dim();
      n->name = fmt::format("arg{}", i);
      s.graph.arg_contiguous.resize(args.size());
      s.graph.arg_contiguous[i] = b->dim() > 0 && b->stride(-1) == 1;
    } else if (std::holds_alternative<int64_t>(args[i])) {
      targs[i].kind = n->arg_kind = ir::ArgKind::int_scalar;
      targs[i].ivalue = std::get<int64_t>(args[i]);
      n->dtype = DType::i64;
    } else {
      targs[i].kind = n->arg_kind = ir::ArgKind::float_scalar;
      targs[i].fvalue = std::get<double>(args[i]);
      n->dtype = DType::f32;
    }
    targs[i].specialized = params_[i] == ParamKind::specialized;
    s.graph.host.push_back(n);
    s.graph.args.push_back(n);
    nodes[i] = n;
  }
  frontend::TraceContext ctx(s.graph, settings_, targs);
  std::vector<ir::Node*> outs = trace_fn_(nodes, args);
  ctx.raise_deferred();
  ctx.canonicalize();
  for (ir::Node* o : outs) {
    if (!o->is_tensor()) throw InternalError("a kernel returned a non-tensor");
  }
  ctx.add(ir::Op::Return, DType::boolean, {}, outs, {});
  s.graph.outputs = outs;
  if (env_flag("TESSEL_PRINT_IR")) std::cerr << ir::print(s.graph);
  s.graph.reduction_syms = passes::reduction_dims(s.graph);
  ir::verify(s.graph);
  s.config = passes::complete_config(s.graph, settings_.config.value_or(Config{}), name_);
  s.lowered = passes::roll_reductions(s.graph, s.config);
  if (s.lowered && env_flag("TESSEL_PRINT_IR")) std::cerr << "after roll_reductions:\n" << ir::print(*s.lowered);
  s.traced = true;
}

Specialization& KernelImpl::specialize(std::vector<CallArg>& args, bool on_gpu) {
  bool unused = false;
  check_args(args, unused);
  std::string k = key(args, on_gpu);
  std::shared_ptr<Specialization> spec;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto& slot = specs_[k];
    if (!slot) slot = std::make_shared<Specialization>();
    spec = slot;
  }
  std::lock_guard<std::mutex> lock(spec->mu);
  if (!spec->traced) trace(*spec, args);
  return *spec;
}

std::vector<Buffer> KernelImpl::call(std::vector<CallArg>& args, void* stream) {
  bool on_gpu = false;
  check_args(args, on_gpu);
  std::string k = key(args, on_gpu);
  std::shared_ptr<Specialization> spec;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto& slot = specs_[k];
    if (!slot) slot = std::make_shared<Specialization>();
    spec = slot;
  }
  {
    std::lock_guard<std::mutex> lock(spec->mu);
    if (!spec->traced) trace(*spec, args);
    if (on_gpu && !spec->gpu)
      spec->gpu = std::make_unique<rt::GpuProgram>(spec->program(), spec->config, settings_);
  }
  rt::HostEnv env;
  env.graph = &spec->program();
  env.stream = stream;
  env.args.resize(args.size());
  env.arg_buffers.resize(args.size());
  env.device = on_gpu ? cuda(0) : cpu();
  bool have_device = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (Buffer* b = std::get_if<Buffer>(&args[i])) {
      env.arg_buffers[i] = *b;
      env.args[i].shape = &b->shape();
      env.args[i].strides = &b->strides();
      if (!have_device) env.device = on_gpu ? b->device() : cpu();
      have_device = true;
    } else if (std::holds_alternative<int64_t>(args[i])) {
      env.args[i].ivalue = std::get<int64_t>(args[i]);
      env.args[i].fvalue = static_cast<double>(env.args[i].ivalue);
    } else {
      env.args[i].fvalue = std::get<double>(args[i]);
      env.args[i].ivalue = static_cast<int64_t>(env.args[i].fvalue);
    }
  }
  if (on_gpu) rt::set_device(env.device.index);
  return rt::run_host_program(spec->program(), spec->config, env, on_gpu ? spec->gpu.get() : nullptr);
}

std::shared_ptr<KernelImpl> make_kernel(std::string name, std::vector<ParamKind> params, TraceFn fn,
                                        Settings settings) {
  return std::make_shared<KernelImpl>(std::move(name), std::move(params), std::move(fn),
                                      std::move(settings));
}

std::vector<Buffer> call_kernel(KernelImpl& k, std::vector<CallArg> args, void* stream) {
  return k.call(args, stream);
}

std::string kernel_ir(KernelImpl& k, std::vector<CallArg> args) {
  return ir::print(k.specialize(args, false).program());
}

std::vector<std::string> kernel_cuda(KernelImpl& k, std::vector<CallArg> args, bool compile) {
  Specialization& s = k.specialize(args, true);
  std::vector<std::string> out;
  for (const ir::Node* n : s.program().host) {
    if (n->op != ir::Op::Loop) continue;
    codegen::CudaKernel ck = codegen::generate_cuda(s.program(), n, s.config, s.graph.index_dtype);
    if (compile) {
      rt::CompileOptions opts;
      opts.arch = 90;
      opts.headers = embedded_headers();
      try {
        rt::compile_cuda(ck.source, ck.name + ".cu", opts);
      } catch (const rt::CompileError& e) {
        throw UserError(s.graph.kernel_name, n->loc, "NVRTC could not compile the generated CUDA:\n" + e.log + "\n" + ck.source);
      }
    }
    out.push_back(ck.source);
  }
  return out;
}

}  // namespace tessel::detail
