#include "driver/gpu_program.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>

#include "codegen/embedded.hpp"
#include "driver/code_override.hpp"

namespace tessel::rt {

namespace {
thread_local LaunchObserver* t_observer = nullptr;
}  // namespace

LaunchObserver* observe_launches(LaunchObserver* observer) {
  LaunchObserver* previous = t_observer;
  t_observer = observer;
  return previous;
}

LaunchObserver* launch_observer() { return t_observer; }

GpuProgram::GpuProgram(const codegen::CompiledStages& stages, const Settings& settings,
                       const std::string& spec_key)
    : stages_(stages),
      graph_(stages.program()),
      config_(stages.config),
      settings_(settings),
      dump_(graph_.kernel_name, spec_key, config_) {
  dump_.ir(graph_);
  dump_.stages(stages);
}

const codegen::CudaKernel& GpuProgram::kernel(const ir::Node* loop) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = loops_[loop];
  if (!slot) {
    auto l = std::find_if(stages_.loops.begin(), stages_.loops.end(),
                          [&](const codegen::LoopStages& s) { return s.loop == loop; });
    if (l == stages_.loops.end() || l->kernel.name.empty())
      throw InternalError("GpuProgram: a loop without generated CUDA");
    slot = std::make_unique<Compiled>();
    slot->kernel = l->kernel;
    dump_.cuda(slot->kernel);
  }
  return slot->kernel;
}

bool print_code_requested(const Settings& s) {
  const char* v = std::getenv("TESSEL_PRINT_CODE");
  return s.print_output_code.value_or(false) || (v && *v && std::string(v) != "0");
}

// Turns an NVRTC failure into a UserError at the user's line: generated statements end
// with a `// file:line` comment naming the user's source line they come from.
[[noreturn]] static void report_compile_error(const std::string& kernel, const CompileError& e,
                                              const std::string& source) {
  // NVRTC reports "<name>(<line>): error: ...".
  int line = 0;
  size_t err = e.log.find("): error");
  if (err != std::string::npos) {
    size_t open = e.log.rfind('(', err);
    if (open != std::string::npos) line = std::atoi(e.log.c_str() + open + 1);
  }
  std::vector<std::string> lines;
  std::istringstream in(source);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::string generated = line > 0 && line <= static_cast<int>(lines.size()) ? lines[line - 1] : "";
  std::string where;
  for (int l = std::min<int>(line, static_cast<int>(lines.size())); l > 0 && where.empty(); --l) {
    size_t c = lines[l - 1].rfind("  // ");
    if (c != std::string::npos && lines[l - 1].find(':', c) != std::string::npos)
      where = lines[l - 1].substr(c + 5);
  }
  throw UserError(
      kernel, {},
      fmt::format("NVRTC could not compile the generated CUDA{}: {}\n  generated line {}: {}",
                  where.empty() ? "" : " for the code at " + where, e.log, line, generated),
      "this is a tessel code generation bug or an unsupported construct; print the "
      "code with TESSEL_PRINT_CODE=1 and report it");
}

/// For tests: the UserError text report_compile_error gives for `e` and `source`.
std::string compile_error_message(const std::string& kernel, const CompileError& e,
                                  const std::string& source) {
  try {
    report_compile_error(kernel, e, source);
  } catch (const UserError& u) {
    return u.what();
  }
  return "";
}

std::pair<GpuProgram::Compiled*, Function> GpuProgram::compiled(const ir::Node* loop, int device) {
  kernel(loop);
  uint64_t context = current_context_id(device);
  std::lock_guard<std::mutex> lock(mu_);
  Compiled& c = *loops_[loop];
  for (const Function& f : c.fns)
    if (f.context == context) return {&c, f};
  int arch = compute_capability(device);
  if (c.cubin.empty() || c.arch != arch) {
    if (print_code_requested(settings_)) std::cerr << c.kernel.source << std::flush;
    // TESSEL_DUMP_DIR: compiled past the cubin cache, for the PTX on the way.
    bool dumping = !dump_dir().empty();
    KernelImage image;
    try {
      image = compile_kernel(graph_.kernel_name, c.kernel, dump_.tag(), arch, dumping);
    } catch (const CompileError& e) {
      report_compile_error(graph_.kernel_name, e, c.kernel.source);
    }
    if (dumping) dump_.binary(c.kernel, arch, image.ptx, image.ptx_override ? "" : image.image);
    c.cubin = std::move(image.image);
    c.ptx_override = image.ptx_override ? image.override : "";
    c.arch = arch;
  }
  try {
    c.fns.push_back(load_function(c.cubin, c.kernel.name, device));
  } catch (const RuntimeError& e) {
    if (c.ptx_override.empty()) throw;
    fail_ptx_override(graph_.kernel_name, c.ptx_override, e.what());
  }
  return {&c, c.fns.back()};
}

LaunchPlan plan_launch(const ir::Graph& g, const ir::Node* loop, const codegen::CudaKernel& k,
                       const Config& config, const HostEnv& env, int persistent_programs) {
  LaunchPlan plan;
  plan.threads = static_cast<unsigned>(k.threads);
  plan.shared_bytes = k.shared_bytes;
  plan.params.resize(k.params.size());
  for (size_t i = 0; i < k.params.size(); ++i) {
    const codegen::Param& p = k.params[i];
    void* slot = &plan.params[i];
    switch (p.kind) {
      case codegen::Param::tensor_ptr: {
        void* ptr = env.tensor(p.node).data_ptr();
        std::memcpy(slot, &ptr, sizeof(ptr));
        break;
      }
      case codegen::Param::device_ptr: {
        const Buffer& t = env.tensor(p.node->args[0]);
        int64_t off = 0;
        for (size_t d = 1; d < p.node->args.size(); ++d) {
          int64_t i = env.eval_int(p.node->args[d]);
          if (i < 0 || i >= t.size(static_cast<int>(d - 1)))
            throw UserError(
                g.kernel_name, p.node->loc,
                fmt::format("device scalar index {} is out of range for a dimension of size {}", i,
                            t.size(static_cast<int>(d - 1))),
                "index within the tensor's shape");
          off += i * t.stride(static_cast<int>(d - 1));
        }
        void* ptr = static_cast<char*>(t.data_ptr()) + off * dtype_size(t.dtype());
        std::memcpy(slot, &ptr, sizeof(ptr));
        break;
      }
      case codegen::Param::tensor_size:
      case codegen::Param::tensor_stride:
      case codegen::Param::host_int: {
        int64_t v = p.kind == codegen::Param::host_int      ? env.eval_int(p.node)
                    : p.kind == codegen::Param::tensor_size ? env.tensor(p.node).size(p.dim)
                                                            : env.tensor(p.node).stride(p.dim);
        // A size-1 dim is only ever indexed at 0: its stride can be anything.
        if (p.kind == codegen::Param::tensor_stride && env.tensor(p.node).size(p.dim) == 1) v = 0;
        if (p.dtype == DType::i32) {
          // The key makes index arithmetic 64-bit for tensors spanning 2^31 elements and
          // for integer arguments beyond 32 bits; a value computed on the host can still
          // exceed it.
          if (v < INT32_MIN || v > INT32_MAX)
            throw UserError(
                g.kernel_name, p.node->loc,
                fmt::format("the value {} does not fit this kernel's 32-bit index arithmetic", v),
                "set Settings::index_dtype = ts::i64");
          int32_t v32 = static_cast<int32_t>(v);
          std::memcpy(slot, &v32, 4);
        } else {
          std::memcpy(slot, &v, 8);
        }
        break;
      }
      case codegen::Param::check_record:
        if (!env.check_record)
          throw InternalError("a bounds-checking kernel launched without its record");
        std::memcpy(slot, &env.check_record, sizeof(void*));
        break;
      case codegen::Param::host_float: {
        double d = env.eval(p.node).as_double();
        float f = static_cast<float>(d);
        if (p.dtype == DType::f64)
          std::memcpy(slot, &d, 8);
        else
          std::memcpy(slot, &f, 4);
        break;
      }
    }
  }
  if (k.grid.persistent) {
    plan.grid[0] = static_cast<unsigned>(persistent_programs);
    return plan;
  }
  std::vector<int64_t> tiles;
  int64_t numel = 1, flat_block = 1;
  for (size_t d = 0; d < k.grid.ends.size(); ++d) {
    int64_t begin = env.eval_int(k.grid.begins[d]), end = env.eval_int(k.grid.ends[d]);
    // Tile indices are computed in the index dtype (loop control is 64-bit).
    if (g.index_dtype == DType::i32 && (end > INT32_MAX || begin < INT32_MIN))
      throw UserError(
          g.kernel_name, loop->loc,
          fmt::format("the loop's range [{}, {}) goes beyond 32-bit index arithmetic", begin, end),
          "set Settings::index_dtype = ts::i64 (or bound the loop by a tensor's size)");
    int64_t extent = end - begin;
    tiles.push_back(extent <= 0 ? 0 : (extent + k.grid.blocks[d] - 1) / k.grid.blocks[d]);
    numel *= std::max<int64_t>(extent, 0);
    flat_block *= k.grid.blocks[d];
  }
  int64_t total = 1;
  for (int64_t t : tiles) total *= t;
  if (k.grid.flattened)
    total = (numel + flat_block - 1) / flat_block;  // tiles of the flattened space
  if (total == 0) {
    plan.empty = true;  // an empty loop launches nothing
    return plan;
  }
  if (k.grid.xyz) {
    // Axis a covers dim order[a] (Config::loop_orders).
    for (size_t a = 0; a < 3; ++a) {
      int64_t n = a < tiles.size() ? tiles[k.grid.order.at(a)] : 1;
      int64_t limit = a == 0 ? INT32_MAX : 65535;  // CUDA's grid limits (x, then y and z)
      if (n > limit)
        throw UserError(
            g.kernel_name, loop->loc,
            fmt::format("pid_type xyz needs {} programs along grid axis {}, more than its limit {}",
                        n, "xyz"[a], limit),
            "use pid_type flat or a persistent pid_type, larger block sizes, or another "
            "loop_orders");
      plan.grid[a] = static_cast<unsigned>(n);
    }
  } else {
    if (total >= (int64_t{1} << 31))
      throw UserError(g.kernel_name, loop->loc,
                      fmt::format("the launch needs {} programs, more than a grid can hold", total),
                      "use larger block sizes, or a persistent pid_type");
    plan.grid[0] = static_cast<unsigned>(total);
  }
  return plan;
}

int persistent_grid(const Settings& settings, const Config& config, int sms,
                    const std::string& kernel, int programs_per_sm) {
  bool capped = settings.max_sms || settings.reserved_sms;
  if (!capped) return sms * config.num_sm_multiplier.value_or(programs_per_sm);
  int allowed = sms - settings.reserved_sms.value_or(0);
  if (settings.max_sms) allowed = std::min(allowed, *settings.max_sms);
  if (allowed < 1)
    throw UserError(
        kernel, {},
        fmt::format("max_sms = {} and reserved_sms = {} leave no SM of the {} on this GPU",
                    settings.max_sms.value_or(sms), settings.reserved_sms.value_or(0), sms),
        "allow at least one SM");
  return allowed;
}

int GpuProgram::persistent_programs(int device) const {
  return persistent_grid(settings_, config_, current_sm_count(device), graph_.kernel_name);
}

int GpuProgram::persistent_programs(const Compiled& c, const Function& fn, int device) const {
  int per_sm = config_.num_sm_multiplier
                   ? 1
                   : max_active_programs(fn, c.kernel.threads, c.kernel.shared_bytes);
  return persistent_grid(settings_, config_, current_sm_count(device), graph_.kernel_name, per_sm);
}

void GpuProgram::launch(const ir::Node* loop, HostEnv& env) {
  LaunchObserver* observer = t_observer;
  bool dry = observer && observer->dry;
  Compiled* cp = nullptr;
  Function fn;
  if (dry) {
    kernel(loop);
    std::lock_guard<std::mutex> lock(mu_);
    cp = loops_[loop].get();
  } else {
    std::tie(cp, fn) = compiled(loop, env.device.index);
  }
  const Compiled& c = *cp;
  int programs = !c.kernel.grid.persistent ? 0
                 : dry ? persistent_grid(settings_, config_, 132, graph_.kernel_name)
                       : persistent_programs(c, fn, env.device.index);
  LaunchPlan plan = plan_launch(graph_, loop, c.kernel, config_, env, programs);
  if (plan.empty) return;
  void* ptrs[64];
  std::vector<void*> more;
  void** params = ptrs;
  if (plan.params.size() > 64) {
    more.resize(plan.params.size());
    params = more.data();
  }
  for (size_t i = 0; i < plan.params.size(); ++i) params[i] = &plan.params[i];
  if (!dry)
    rt::launch(fn, plan.grid[0], plan.grid[1], plan.grid[2], plan.threads, plan.shared_bytes,
               env.stream, params);
  if (observer) {
    ++observer->launches;
    if (observer->record)
      observer->record->push_back(LaunchRecord{fn,
                                               {plan.grid[0], plan.grid[1], plan.grid[2]},
                                               plan.threads,
                                               plan.shared_bytes,
                                               plan.params});
  }
}

}  // namespace tessel::rt
