// ts::Kernel's call path (kernel_impl.hpp): a thread's memo of recent calls, else the
// argument checks, the key, its specialization (traced on first use) and the first use's
// tuning and compiling; then the host program, on the GPU or the interpreter.
#include "runtime/kernel_impl.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>

#include "codegen/compile_pipeline.hpp"
#include "common/stack_span.hpp"
#include "driver/alias_groups.hpp"
#include "driver/code_dump.hpp"
#include "driver/cuda_api.hpp"
#include "driver/gpu_program.hpp"
#include "driver/host_env.hpp"
#include "frontend/trace.hpp"
#include "interp/host_program.hpp"
#include "ir/host_eval.hpp"
#include "passes/race_check.hpp"
#include "passes/roll_reductions.hpp"
#include "runtime/call_memo.hpp"
#include "runtime/kernel_tuning.hpp"

namespace tessel::detail {

/// Positions of the tensor arguments stored to anywhere in `b` (nested loops included).
static void collect_written_args(const ir::Block& b, std::vector<int>& out) {
  for (const ir::Node* n : b) {
    if (ir::writes_memory(n) && n->args[0]->op == ir::Op::Arg &&
        std::find(out.begin(), out.end(), static_cast<int>(n->args[0]->ival)) == out.end())
      out.push_back(static_cast<int>(n->args[0]->ival));
    if (n->op == ir::Op::Loop) collect_written_args(n->body, out);
  }
}

std::string_view KernelImpl::key(CallArgs args, bool on_gpu) {
  thread_local std::string buf;
  return write_key(args, on_gpu, buf);
}

std::string_view KernelImpl::write_key(CallArgs args, bool on_gpu, std::string& buf) {
  KeyText k(buf);
  write_argument_key(args, params_, settings_.static_shapes.value_or(false), on_gpu, check_bounds(),
                     k);
  if (trace_every_call_) {
    ir::Graph g;
    trace_into(g, args, settings_);
    k.put("|T");
    k.put(autotune::kernel_content_hash(g));
  }
  return k.view();
}

void KernelImpl::trace(Specialization& s, CallArgs args, bool wide) {
  Settings st = settings_;
  if (wide) st.index_dtype = DType::i64;
  if (check_bounds()) st.check_bounds = true;
  trace_into(s.graph, args, st);
  // Read where the code is compiled, without the call's line: checked here.
  for (const char* flag : {"TESSEL_PRINT_CODE", "TESSEL_SKIP_CACHE"}) (void)env_flag(flag, name_);
  collect_written_args(s.graph.host, s.written_args);
  // Kept beside the graph, which a first call's tuning may trace again meanwhile.
  s.alias_groups.clear();
  for (const ir::ArgFacts& f : s.graph.arg_facts) s.alias_groups.push_back(f.alias_group);
  set_guards(s, args);
  set_config(s, settings_.config.value_or(Config{}),
             rt::dump_dir().empty() ? std::string() : gpu_key(s, args));
  s.traced = true;
}

void KernelImpl::set_config(Specialization& s, const Config& c, const std::string& spec_key) {
  s.gpu.reset();
  s.stages = codegen::compile_pipeline(
      s.graph, c, rt::dumped_pipeline(codegen::PipelineOptions::Emit::none, spec_key));
  if (s.stages.lowered && env_flag("TESSEL_PRINT_IR", name_))
    std::cerr << "after roll_reductions:\n" << ir::print(*s.stages.lowered);
}

void KernelImpl::make_gpu_program(Specialization& s, const std::string& key) {
  s.gpu.reset();
  s.stages = codegen::compile_pipeline(
      s.graph, s.config(),
      rt::dumped_pipeline(codegen::PipelineOptions::Emit::all, full_key(s, key)));
  s.gpu = std::make_unique<rt::GpuProgram>(s.stages, settings_, full_key(s, key));
  s.gpu_made = true;
}

void KernelImpl::trace_into(ir::Graph& graph, CallArgs args, const Settings& settings) {
  std::vector<frontend::TraceArg> targs(args.size());
  std::vector<ir::Node*> nodes(args.size());
  graph.kernel_name = name_;
  const std::vector<int> groups = rt::alias_groups(tensor_args(args));
  for (size_t i = 0; i < args.size(); ++i) {
    ir::Node* n = graph.new_node(ir::Op::Arg, {});
    n->ival = static_cast<int64_t>(i);
    if (const Buffer* b = buffer_arg(args[i])) {
      targs[i].kind = ir::ArgKind::tensor;
      targs[i].buffer = *b;
      n->arg_kind = ir::ArgKind::tensor;
      n->dtype = b->dtype();
      n->rank = b->dim();
      n->name = fmt::format("arg{}", i);  // unless the user named it (below)
      graph.arg_facts.resize(args.size());
      graph.arg_facts[i] = arg_facts(*b, settings.static_shapes.value_or(false));
      if (!groups.empty()) graph.arg_facts[i].alias_group = groups[i];
    } else if (std::holds_alternative<int64_t>(args[i])) {
      targs[i].kind = n->arg_kind = ir::ArgKind::int_scalar;
      targs[i].ivalue = std::get<int64_t>(args[i]);
      n->dtype = DType::i64;
    } else {
      targs[i].kind = n->arg_kind = ir::ArgKind::float_scalar;
      targs[i].fvalue = std::get<double>(args[i]);
      n->dtype = DType::f32;
    }
    if (i < param_names_.size() && !param_names_[i].empty()) n->name = param_names_[i];
    targs[i].specialized =
        params_[i] == ParamKind::specialized || params_[i] == ParamKind::specialized_int;
    graph.host.push_back(n);
    graph.args.push_back(n);
    nodes[i] = n;
  }
  frontend::TraceContext ctx(graph, settings, targs, call_site());
  graph.index_dtype_forced = settings_.index_dtype.has_value();  // not a guard's i64
  std::vector<ir::Node*> outs = trace_fn_(nodes, args);
  ctx.raise_deferred();
  ctx.canonicalize();
  ctx.number_loads();
  for (ir::Node* o : outs) {
    if (!o->is_tensor()) throw InternalError("a kernel returned a non-tensor");
  }
  ctx.add(ir::Op::Return, DType::boolean, {}, outs, {});
  graph.outputs = outs;
  if (env_flag("TESSEL_PRINT_IR", name_)) std::cerr << ir::print(graph);
  graph.reduction_syms = passes::reduction_dims(graph);
  ir::verify(graph);
  passes::check_races(graph);
}

autotune::TuneResult KernelImpl::tune_locked(Specialization& s, CallArgs args,
                                             const std::string& key,
                                             const autotune::TuneOptions& options, bool apply) {
  // Candidates run in a child process, where this process's buffer addresses mean nothing.
  for (const auto& n : s.graph.nodes())
    if (n->op == ir::Op::Multicast)
      throw UserError(name_, n->loc,
                      "a kernel with a multicast tensor (ts::multicast_like) is not autotuned: "
                      "tuning runs candidates in a child process, where the addresses in "
                      "dev_ptrs are not mapped",
                      "leave Settings::autotune_effort unset, or fix the config with "
                      "Settings::config");
  rt::TunableSpecialization t{name_,
                              settings_,
                              full_key(s, key),
                              &s.graph,
                              s.config().tunables.value_or(std::map<std::string, int64_t>{}),
                              [&](ir::Graph& g, const Settings& st) {
                                Settings same = st;  // the specialization's index dtype and checks
                                same.index_dtype = s.graph.index_dtype;
                                same.check_bounds = s.graph.check_bounds;
                                trace_into(g, args, same);
                              }};
  autotune::TuneResult r = rt::tune_specialization(t, args, options, apply);
  if (apply && r.best) {
    set_guards(s, args);  // tuning may have traced s.graph again (tunables)
    set_config(s, *r.best, full_key(s, key));
  }
  return r;
}

autotune::TuneResult KernelImpl::tune(CallArgs args, const autotune::TuneOptions& options,
                                      bool apply, SourceLoc at) {
  CallSite site(at);
  bool on_gpu = false;
  check_args(args, on_gpu, at);
  if (!on_gpu && !options.backend)
    fail_at(at, "autotuning needs GPU Buffers (and a GPU)",
            "pass cuda Buffers; unset TESSEL_INTERPRET");
  std::string k(key(args, on_gpu));
  std::shared_ptr<Specialization> spec = lookup(k, args);
  std::lock_guard<std::mutex> lock(spec->mu);
  autotune::TuneResult r = tune_locked(*spec, args, k, options, apply);
  if (apply && on_gpu) make_gpu_program(*spec, k);
  return r;
}

std::shared_ptr<Specialization> KernelImpl::lookup(std::string_view k, CallArgs args,
                                                   Specialization** base) {
  auto get = [&](std::string_view key, bool wide) {
    std::shared_ptr<Specialization> spec;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = specs_.find(key);
      if (it == specs_.end())
        it = specs_.emplace(std::string(key), std::make_shared<Specialization>()).first;
      spec = it->second;
    }
    if (spec->traced.load(std::memory_order_acquire)) return spec;
    std::lock_guard<std::mutex> lock(spec->mu);
    if (!spec->traced) {
      try {
        (void)rt::target_arch_override(name_, call_site());  // a bad value: an error here
        trace(*spec, args, wide);
      } catch (...) {
        // A failed trace leaves a partial graph: forget it, so the next call traces anew.
        std::lock_guard<std::mutex> map_lock(mu_);
        if (auto it = specs_.find(key); it != specs_.end()) specs_.erase(it);
        throw;
      }
    }
    return spec;
  };
  std::shared_ptr<Specialization> spec = get(k, false);
  if (base) *base = spec.get();
  if (spec->guards.empty()) return spec;
  StackSpan<ir::ArgValue, 16> scratch(args.size());  // a call's path: no allocation
  const std::span<ir::ArgValue> vals = scratch.span();
  rt::arg_values(args, vals);
  std::string g, wide;
  const ir::Node* where = nullptr;
  write_guard_values(*spec, vals, g, wide, where);
  if (g == spec->guard_values) return spec;
  if (!wide.empty() && settings_.index_dtype)
    throw UserError(name_, where->loc,
                    wide + ", beyond 32-bit index arithmetic (Settings::index_dtype i32)",
                    "leave Settings::index_dtype unset or set it to ts::i64");
  return get(std::string(k) + "#" + g, !wide.empty());
}

Specialization& KernelImpl::specialize(CallArgs args, bool on_gpu, SourceLoc at) {
  CallSite site(at);
  bool unused = false;
  check_args(args, unused, at);
  return *lookup(key(args, on_gpu), args);
}

void KernelImpl::prepare(Specialization& spec, CallArgs args, bool on_gpu, std::string_view k,
                         SourceLoc at) {
  if ((on_gpu ? spec.gpu_made : spec.code_shown).load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(spec.mu);
  (void)rt::target_arch_override(name_, at);  // TESSEL_TARGET_ARCH changed since the trace
  if (on_gpu && !spec.gpu) {
    // First GPU call of this specialization: tune, or find the tuned config on disk.
    std::string own_key(k);  // tuning may run other calls, which reuse key()'s buffer
    if (wants_tuning()) {
      autotune::TuneOptions options;
      options.effort = *settings_.autotune_effort;
      tune_locked(spec, args, own_key, options, /*apply=*/true);
    }
    make_gpu_program(spec, own_key);
  }
  if (!on_gpu && !spec.code_shown) {
    if (rt::print_code_requested(settings_) || !rt::dump_dir().empty())
      rt::show_interpreted_code(spec.graph, spec.config(), settings_, gpu_key(spec, args),
                                wants_tuning());
    spec.code_shown = true;
  }
}

Specialization* KernelImpl::memoized(CallArgs args, bool& on_gpu) {
  if (trace_every_call_ || frontend::TraceContext::current_or_null()) return nullptr;
  const Buffer* first = nullptr;
  for (const CallArg& a : args)
    if ((first = buffer_arg(a))) break;
  // Read (and checked) on CPU Buffers too, as check_args does.
  const bool interpret = call_flag(CallVar::interpret, name_);
  on_gpu = first && first->defined() && first->device().is_cuda() && !interpret;
  if (rt::LaunchObserver* o = rt::launch_observer(); o && o->dry) on_gpu = true;
  return CallMemo::of_thread().find(serial_, args, params_, signature_flags(on_gpu), on_gpu);
}

void KernelImpl::remember(CallArgs args, bool on_gpu, Specialization* base, Specialization* spec) {
  if (trace_every_call_) return;
  CallMemo::of_thread().remember(serial_, args, params_, signature_flags(on_gpu), base, spec);
}

std::vector<Buffer> KernelImpl::call(CallArgs args, void* stream, SourceLoc at) {
  CallSite site(at);
  bool on_gpu = false;
  Specialization* memo = memoized(args, on_gpu);
  std::shared_ptr<Specialization> held;  // from the key's path
  if (!memo) {
    check_args(args, on_gpu, at);
    std::string_view k = key(args, on_gpu);
    Specialization* base = nullptr;
    held = lookup(k, args, &base);
    check_written_overlaps(args, *held, at);
    prepare(*held, args, on_gpu, k, at);
    remember(args, on_gpu, base, held.get());
  }
  Specialization* const spec = memo ? memo : held.get();
  rt::HostEnv env;
  // The argument vectors of the thread's previous call, handed back after this one (no
  // allocation per call; a call made meanwhile on this thread allocates its own).
  thread_local std::vector<ir::ArgValue> t_args;
  thread_local std::vector<const Buffer*> t_arg_buffers;
  thread_local std::vector<std::pair<const ir::Node*, Buffer>> t_allocs;
  env.args.swap(t_args);
  env.arg_buffers.swap(t_arg_buffers);
  env.allocs.swap(t_allocs);
  struct GiveBack {
    rt::HostEnv& env;
    ~GiveBack() {
      env.allocs.clear();  // the call's temporaries released, the capacity kept
      env.args.swap(t_args);
      env.arg_buffers.swap(t_arg_buffers);
      env.allocs.swap(t_allocs);
    }
  } give_back{env};
  env.graph = &spec->program();
  env.stream = stream;
  env.args.resize(args.size());
  rt::arg_values(args, env.args);
  if (!spec->host_indices.empty())
    rt::check_host_indices(spec->graph, spec->host_indices, env.args);
  env.arg_buffers.resize(args.size());
  env.device = on_gpu ? cuda(0) : cpu();
  bool have_device = false;
  for (size_t i = 0; i < args.size(); ++i) {
    env.arg_buffers[i] = buffer_arg(args[i]);
    if (env.arg_buffers[i] && !have_device) {
      env.device = env.arg_buffers[i]->device();  // GPU Buffers under TESSEL_INTERPRET are staged
      have_device = true;
    }
  }
  if (!on_gpu) return rt::run_host_program(spec->program(), spec->config(), env, nullptr);
  // On an SM partition's stream, the whole call (allocations, fills, module loads,
  // launches) runs in the partition's green context.
  rt::ContextScope scope(stream);
  if (scope.device() >= 0 && scope.device() != env.device.index)
    fail_at(
        at,
        fmt::format("the stream belongs to an SM partition of cuda:{} but the arguments are on {}",
                    scope.device(), env.device.str()),
        "create the partition on the arguments' device: ts::SmPartition::create(num_sms, device)");
  if (env.device.is_cuda()) rt::set_device(env.device.index);  // CPU Buffers: a dry run
  return rt::run_host_program(spec->program(), spec->config(), env, spec->gpu.get());
}

}  // namespace tessel::detail
