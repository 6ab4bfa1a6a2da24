#include "autotune/cpu_backend.hpp"

#include <algorithm>
#include <chrono>

#include "autotune/accuracy.hpp"
#include "codegen/compile_pipeline.hpp"
#include "interp/host_program.hpp"

namespace tessel::autotune {

CpuBackend::CpuBackend(const ir::Graph& g, detail::CallArgs args, Config reference_config,
                       std::string kernel, CpuBackendOptions options)
    : graph_(g),
      args_(args.begin(), args.end()),
      reference_config_(std::move(reference_config)),
      kernel_(std::move(kernel)),
      options_(std::move(options)) {}

std::vector<Buffer> CpuBackend::run(const Config& config) {
  codegen::CompiledStages stages =
      codegen::compile_pipeline(options_.graph_for ? options_.graph_for(config) : graph_, config,
                                {.emit = codegen::PipelineOptions::Emit::none});
  const ir::Graph& g = stages.program();
  const Config& complete = stages.config;
  rt::HostEnv env;
  env.graph = &g;
  env.device = cpu();
  env.args.resize(args_.size());
  env.arg_buffers.resize(args_.size());
  std::vector<Buffer> inputs(args_.size());  // fresh inputs every run
  std::vector<detail::CallArg> fresh = args_;
  for (size_t i = 0; i < args_.size(); ++i) {
    if (const Buffer* b = detail::buffer_arg(args_[i])) {
      inputs[i] = Buffer::empty(b->shape(), b->dtype(), cpu(), {});
      inputs[i].copy_from(*b, {});
      env.arg_buffers[i] = &inputs[i];
      fresh[i] = &inputs[i];
    }
  }
  rt::arg_values(fresh, env.args);
  std::vector<Buffer> outs = rt::run_host_program(g, complete, env, nullptr);
  // Then written arguments that are not returned.
  std::vector<const ir::Node*> written;
  ir::walk(g.host, [&](const ir::Node* n) {
    if (ir::writes_memory(n) && n->args[0]->op == ir::Op::Arg &&
        std::find(written.begin(), written.end(), n->args[0]) == written.end() &&
        std::find(g.outputs.begin(), g.outputs.end(), n->args[0]) == g.outputs.end())
      written.push_back(n->args[0]);
  });
  for (const ir::Node* w : written) outs.push_back(inputs.at(w->ival));
  return outs;
}

std::vector<Measurement> CpuBackend::measure(const std::vector<Config>& configs, const Done& done) {
  if (!have_reference_) {
    try {
      reference_ = run(reference_config_);
    } catch (const Error& e) {
      throw RuntimeError(
          std::string("autotune: the default config failed, so candidates cannot be checked: ") +
          e.what());
    }
    for (size_t i = 0; i < options_.reference.size() && i < reference_.size(); ++i)
      reference_[i] = options_.reference[i];
    have_reference_ = true;
  }
  std::vector<Measurement> out;
  for (size_t i = 0; i < configs.size(); ++i) {
    Measurement m;
    try {
      auto start = std::chrono::steady_clock::now();
      std::vector<Buffer> outs = run(configs[i]);
      double us =
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
              .count();
      if (options_.corrupt) options_.corrupt(configs[i], outs);
      std::string mismatch = compare_outputs(outs, reference_);
      if (!mismatch.empty())
        m = Measurement::rejection(mismatch);
      else
        m = Measurement::success(options_.cost ? options_.cost(configs[i]) : us);
    } catch (const Error& e) {
      m = Measurement::failure(e.what());
    }
    out.push_back(m);
    done(i, m);
  }
  return out;
}

}  // namespace tessel::autotune
