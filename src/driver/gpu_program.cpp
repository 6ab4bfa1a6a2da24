#include "driver/gpu_program.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>

#include "codegen/embedded.hpp"
#include "common/env_bool.hpp"
#include "driver/code_override.hpp"
#include "driver/compile_log.hpp"

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
      dump_(graph_, spec_key, config_) {
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
    slot->abi = make_launch_abi(slot->kernel);
    dump_.cuda(slot->kernel);
  }
  return slot->kernel;
}

bool print_code_requested(const Settings& s) {
  const char* v = std::getenv("TESSEL_PRINT_CODE");
  // A value that is no boolean was refused at the kernel's trace (KernelImpl).
  return s.print_output_code.value_or(false) || parse_env_bool(v).value_or(true);
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
  const std::string hint = compile_log_hint(e.log);
  throw UserError(
      kernel, {},
      fmt::format("NVRTC could not compile the generated CUDA{}: {}{}",
                  where.empty() ? "" : " for the code at " + where, compile_log_errors(e.log),
                  line > 0 ? fmt::format("\n  generated line {}: {}", line, generated) : ""),
      !hint.empty() ? hint
                    : "this is a tessel code generation bug or an unsupported construct; print "
                      "the code with TESSEL_PRINT_CODE=1 and report it");
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

GpuProgram::Loaded GpuProgram::compiled(const ir::Node* loop, int device) {
  const uint64_t context = current_context_id(device);
  // A thread's recent loads, without the lock: a loaded function's Compiled lives as long
  // as its program, whose serial no later program takes.
  struct Recent {
    uint64_t program = 0, context = 0;
    const ir::Node* loop = nullptr;
    Loaded l{};
  };
  thread_local std::array<Recent, 4> t_recent;
  thread_local unsigned t_next = 0;
  for (const Recent& r : t_recent)
    if (r.program == serial_ && r.loop == loop && r.context == context) return r.l;
  const Loaded l = load(loop, device, context);
  t_recent[t_next++ % t_recent.size()] = {serial_, context, loop, l};
  return l;
}

GpuProgram::Loaded GpuProgram::load(const ir::Node* loop, int device, uint64_t context) {
  {  // A cached call: one lock, one lookup.
    std::lock_guard<std::mutex> lock(mu_);
    auto it = loops_.find(loop);
    if (it != loops_.end()) {
      const Compiled& c = *it->second;
      for (size_t i = 0; i < c.fns.size(); ++i)
        if (c.fns[i].context == context) return {it->second.get(), c.fns[i], c.persistent[i]};
    }
  }
  kernel(loop);
  std::lock_guard<std::mutex> lock(mu_);
  Compiled& c = *loops_[loop];
  for (size_t i = 0; i < c.fns.size(); ++i)
    if (c.fns[i].context == context) return {&c, c.fns[i], c.persistent[i]};
  int arch = compute_capability(device);
  if (c.cubin.empty() || c.arch != arch) {
    if (print_code_requested(settings_)) std::cerr << c.kernel.source << std::flush;
    // TESSEL_DUMP_DIR: compiled past the cubin cache, for the PTX on the way.
    bool dumping = !dump_dir().empty();
    KernelImage image;
    try {
      image = compile_kernel(graph_.kernel_name, loop->loc, c.kernel, dump_.tag(), arch, dumping);
    } catch (const CompileError& e) {
      report_compile_error(graph_.kernel_name, e, c.kernel.source);
    }
    if (dumping) dump_.binary(c.kernel, arch, image.ptx, image.ptx_override ? "" : image.image);
    c.cubin = std::move(image.image);
    c.ptx_override = image.ptx_override ? image.override : "";
    c.arch = arch;
  }
  Function fn;
  try {
    fn = load_function(c.cubin, c.kernel.name, device);
  } catch (const RuntimeError& e) {
    if (c.ptx_override.empty()) throw;
    fail_ptx_override(graph_.kernel_name, loop->loc, c.ptx_override, e.what());
  }
  // The occupancy a persistent grid is sized by, asked of the driver once per context.
  int programs = c.kernel.grid.persistent ? persistent_programs(c, fn, device) : 0;
  c.fns.push_back(fn);
  c.persistent.push_back(programs);
  return {&c, fn, programs};
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
  Loaded l{};
  if (dry) {
    kernel(loop);
    std::lock_guard<std::mutex> lock(mu_);
    l.c = loops_[loop].get();
    if (l.c->kernel.grid.persistent)
      l.persistent = persistent_grid(settings_, config_, 132, graph_.kernel_name);
  } else {
    l = compiled(loop, env.device.index);
  }
  const Compiled& c = *l.c;
  LaunchPlan plan;
  plan_launch(graph_, loop, c.kernel, c.abi, env, l.persistent, plan);
  if (plan.empty) return;
  void* ptrs[64];
  std::vector<void*> more;
  void** params = ptrs;
  const size_t n = c.abi.slots.size();
  if (n > 64) {
    more.resize(n);
    params = more.data();
  }
  unsigned char* block = plan.block();
  for (size_t i = 0; i < n; ++i) params[i] = block + c.abi.slots[i].offset;
  // Split-K: the call's workspace, allocated and its counters zeroed on the launch's
  // stream, freed there after the launch (stream-ordered: a CUDA graph captures all three).
  Buffer split;
  if (plan.split_tiles > 0 && !dry) {
    const SplitWorkspace w = split_workspace(plan, c.kernel);
    split = Buffer::empty_on_stream({(w.bytes + 7) / 8}, DType::i64, env.device, env.stream);
    void* base = split.data_ptr();
    rt::memset_d8(static_cast<unsigned char*>(base) + w.counters_at, 0, w.bytes - w.counters_at,
                  env.stream);
    set_split_workspace(c.abi, base, plan);
  }
  if (!dry)
    rt::launch(l.fn, plan.grid[0], plan.grid[1], plan.grid[2], plan.threads, plan.shared_bytes,
               env.stream, params);
  if (observer) {
    ++observer->launches;
    if (observer->record) {
      LaunchRecord r{l.fn,
                     {plan.grid[0], plan.grid[1], plan.grid[2]},
                     plan.threads,
                     plan.shared_bytes,
                     std::vector<unsigned char>(block, block + c.abi.bytes),
                     {}};
      for (const AbiSlot& s : c.abi.slots) r.offsets.push_back(s.offset);
      observer->record->push_back(std::move(r));
    }
  }
}

}  // namespace tessel::rt
