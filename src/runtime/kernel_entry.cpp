// The functions tessel/kernel.hpp and runtime/kernel_tuning.hpp declare over KernelImpl:
// calls, tuning, the traced IR and the generated CUDA of a specialization, each raising
// host integer overflow as the kernel's error.
#include <fmt/format.h>

#include <iostream>

#include "codegen/compile_pipeline.hpp"
#include "driver/code_dump.hpp"
#include "driver/code_override.hpp"
#include "driver/compile_log.hpp"
#include "driver/cuda_api.hpp"
#include "ir/host_eval.hpp"
#include "runtime/kernel_impl.hpp"
#include "runtime/kernel_tuning.hpp"

namespace tessel::detail {

std::shared_ptr<KernelImpl> make_kernel(std::string name, std::vector<std::string> param_names,
                                        std::vector<ParamKind> params,
                                        std::vector<ParamRange> param_ranges, TraceFn fn,
                                        Settings settings, SourceLoc defined_at,
                                        bool has_captures) {
  return std::make_shared<KernelImpl>(std::move(name), std::move(param_names), std::move(params),
                                      std::move(param_ranges), std::move(fn), std::move(settings),
                                      defined_at, has_captures);
}

/// Runs `f` (an entry point of kernel `k`), raising host integer arithmetic past 64 bits
/// (ir::HostOverflow) as the kernel's UserError at the user's expression.
template <class F>
static auto overflow_as_user_error(const KernelImpl& k, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const ir::HostOverflow& e) {
    throw UserError(k.name(), e.node->loc, e.what(),
                    "the sizes and integer arguments this expression combines are too large: "
                    "check them (a size of the wrong dimension, a typo), or split the work");
  }
}

std::vector<Buffer> call_kernel(KernelImpl& k, CallArgs args, void* stream, SourceLoc called_at) {
  return overflow_as_user_error(k, [&] { return k.call(args, stream, called_at); });
}

Config autotune_kernel(KernelImpl& k, CallArgs args, SourceLoc called_at) {
  autotune::TuneOptions options;
  options.effort = k.settings().autotune_effort.value_or(AutotuneEffort::quick);
  if (options.effort == AutotuneEffort::none) options.effort = AutotuneEffort::quick;
  autotune::TuneResult r =
      overflow_as_user_error(k, [&] { return k.tune(args, options, /*apply=*/true, called_at); });
  if (!r.best)
    throw UserError(k.name(), {},
                    "autotuning found no working config" + (r.note.empty() ? "" : ": " + r.note),
                    "run with TESSEL_AUTOTUNE_LOG=<file> to see why each config failed");
  return *r.best;
}

std::string kernel_ir(KernelImpl& k, CallArgs args, SourceLoc called_at) {
  return overflow_as_user_error(
      k, [&] { return ir::print(k.specialize(args, false, called_at).program()); });
}

std::vector<std::string> kernel_cuda(KernelImpl& k, CallArgs args, bool compile,
                                     SourceLoc called_at) {
  Specialization& s = overflow_as_user_error(
      k, [&]() -> Specialization& { return k.specialize(args, true, called_at); });
  // The call's size checks, as a call makes them: code is shown for arguments a call takes.
  std::vector<ir::ArgValue> values(args.size());
  rt::arg_values(args, values);
  for (const ir::Node* n : s.graph.host)
    if (n->op == ir::Op::ShapeCheck)
      ir::check_shape(s.graph, n, ir::eval_host_int(n->args[0], values),
                      ir::eval_host_int(n->args[1], values));
  const int arch = rt::target_arch(k.name(), called_at);
  // TESSEL_DUMP_DIR gets what a GPU call of these arguments would write; TESSEL_OVERRIDE_DIR
  // is compiled in place of the generated code, as for a call.
  const std::string key = k.gpu_key(s, args);
  codegen::CompiledStages stages = codegen::compile_pipeline(
      s.graph, s.config(), rt::dumped_pipeline(codegen::PipelineOptions::Emit::all, key));
  rt::CodeDump dump(stages.program(), key, stages.config);
  dump.ir(stages.program());
  dump.stages(stages);
  std::vector<std::string> out;
  for (const codegen::LoopStages& l : stages.loops) {
    const codegen::CudaKernel& ck = l.kernel;
    dump.cuda(ck);
    out.push_back(ck.source);
    if (compile) {
      if (rt::print_code_requested(k.settings())) std::cerr << ck.source << std::flush;
      try {
        const bool dumping = !rt::dump_dir().empty();
        rt::KernelImage image =
            rt::compile_kernel(k.name(), l.loop->loc, ck, dump.tag(), arch, dumping);
        if (dumping) dump.binary(ck, arch, image.ptx, image.ptx_override ? "" : image.image);
        if (!image.override.empty()) out.back() = image.override_text;  // what was compiled
      } catch (const rt::CompileError& e) {
        throw UserError(s.graph.kernel_name, l.loop->loc,
                        "NVRTC could not compile the generated CUDA:\n" +
                            rt::compile_log_errors(e.log) + "\n" + ck.source,
                        rt::compile_log_hint(e.log));
      }
    }
  }
  return out;
}

}  // namespace tessel::detail

namespace tessel::rt {

autotune::TuneResult tune_kernel(detail::KernelImpl& k, detail::CallArgs args,
                                 const autotune::TuneOptions& options, bool apply) {
  return detail::overflow_as_user_error(k, [&] { return k.tune(args, options, apply); });
}

const ir::Graph& traced_graph(detail::KernelImpl& k, detail::CallArgs args) {
  return detail::overflow_as_user_error(
      k, [&]() -> const ir::Graph& { return k.specialize(args, false, {}).graph; });
}

Config specialization_config(detail::KernelImpl& k, detail::CallArgs args) {
  return detail::overflow_as_user_error(k, [&] { return k.specialize(args, false, {}).config(); });
}

}  // namespace tessel::rt
