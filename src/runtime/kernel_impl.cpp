// ts::Kernel's implementation: argument checks, specialization keys, tracing once per
// key, and running the host program on the GPU or the interpreter.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <string_view>
#include <unordered_map>

#include "autotune/autotuner.hpp"
#include "autotune/cache_key.hpp"
#include "codegen/compile_pipeline.hpp"
#include "codegen/embedded.hpp"
#include "common/count_text.hpp"
#include "common/env_bool.hpp"
#include "common/internal_overlap.hpp"
#include "common/pow2.hpp"
#include "common/preserve_format.hpp"
#include "common/stack_span.hpp"
#include "driver/alias_groups.hpp"
#include "driver/code_dump.hpp"
#include "driver/code_override.hpp"
#include "driver/compile_log.hpp"
#include "driver/cuda_api.hpp"
#include "driver/gpu_program.hpp"
#include "driver/host_env.hpp"
#include "frontend/trace.hpp"
#include "interp/host_program.hpp"
#include "ir/host_eval.hpp"
#include "passes/race_check.hpp"
#include "passes/roll_reductions.hpp"
#include "runtime/call_key.hpp"
#include "runtime/host_indices.hpp"
#include "runtime/kernel_tuning.hpp"
#include "tessel/kernel.hpp"

namespace tessel::detail {

namespace {

// The line of the call being run on this thread (Kernel's call operator), where errors
// about its arguments found while tracing point.
thread_local SourceLoc t_call_site;

// The variables a call reads every time (documented to take effect on the next call),
// found in one pass over the environment: getenv would scan it once for each.
struct CallEnv {
  const char* interpret = nullptr;     // TESSEL_INTERPRET's value, or unset
  const char* check_bounds = nullptr;  // TESSEL_CHECK_BOUNDS's
  bool read = false;
};
thread_local CallEnv t_call_env;  // the call's, read when it began (CallSite)

CallEnv read_call_env() {
  CallEnv e;
  e.read = true;
  for (char** p = environ; p && *p; ++p) {
    const char* v = *p;
    if (v[0] != 'T' || std::strncmp(v, "TESSEL_", 7) != 0) continue;
    if (!e.interpret && std::strncmp(v + 7, "INTERPRET=", 10) == 0) e.interpret = v + 17;
    if (!e.check_bounds && std::strncmp(v + 7, "CHECK_BOUNDS=", 13) == 0) e.check_bounds = v + 20;
  }
  return e;
}

/// Sets t_call_site and t_call_env for a scope.
class CallSite {
 public:
  explicit CallSite(SourceLoc at) : saved_(t_call_site), saved_env_(t_call_env) {
    t_call_site = at;
    t_call_env = read_call_env();
  }
  ~CallSite() {
    t_call_site = saved_;
    t_call_env = saved_env_;
  }
  CallSite(const CallSite&) = delete;
  CallSite& operator=(const CallSite&) = delete;

 private:
  SourceLoc saved_;
  CallEnv saved_env_;
};

// A boolean environment variable (parse_env_bool) `name` of value `v` (null: unset), read by a
// call of kernel `kernel`: a value that is no boolean is a UserError at the call.
bool env_flag_value(const char* name, const char* v, const std::string& kernel) {
  if (std::optional<bool> b = parse_env_bool(v)) return *b;
  throw UserError(kernel, t_call_site, fmt::format("{}={} is not a boolean", name, v),
                  fmt::format("set {}=1 to turn it on, or 0 (or unset it) to turn it off", name));
}

bool env_flag(const char* name, const std::string& kernel) {
  return env_flag_value(name, std::getenv(name), kernel);
}

// TESSEL_INTERPRET or TESSEL_CHECK_BOUNDS (`field` of CallEnv), as the call running on this
// thread read it when it began (or now, outside a call).
bool call_flag(const char* CallEnv::*field, const char* name, const std::string& kernel) {
  const CallEnv e = t_call_env.read ? t_call_env : read_call_env();
  return env_flag_value(name, e.*field, kernel);
}

}  // namespace

struct Specialization;

namespace {

// Whether host expression `n` reads the value of a number argument, not only tensors'
// sizes and strides (which a call's exact signature holds).
bool reads_number_argument(const ir::Node* n) {
  std::vector<const ir::Node*> todo{n};
  std::set<const ir::Node*> seen;
  while (!todo.empty()) {
    const ir::Node* m = todo.back();
    todo.pop_back();
    if (!seen.insert(m).second || m->op == ir::Op::Size || m->op == ir::Op::Stride) continue;
    if (m->op == ir::Op::Arg) return true;
    todo.insert(todo.end(), m->args.begin(), m->args.end());
  }
  return false;
}

// A thread's memo of the specializations of its recent calls by their arguments' exact
// signature (write_exact_signature): a call whose signature matches one of them skips the
// key, its lookup (a lock, a hash) and the argument checks that the signature decides.
// Entries name their kernel by its serial (never reused): a memoized Specialization is owned
// by its kernel's map, which keeps every traced one while the kernel lives.
struct CallMemo {
  struct Entry {
    uint64_t kernel = 0;
    std::vector<int64_t> signature;
    Specialization* spec = nullptr;
    Specialization* base = nullptr;  // the key's own, whose guards chose `spec`
  };
  std::array<Entry, 8> entries;
  unsigned next = 0;  // the entry replaced next (round robin)
  std::vector<int64_t> scratch;
};
thread_local CallMemo t_memo;

}  // namespace

/// One traced specialization and its compiled forms.
struct Specialization {
  std::mutex mu;
  /// Set under `mu` once what they announce is done, read without it by cached calls:
  /// the graph is traced; the GPU program is made; the interpreter's code is shown.
  std::atomic<bool> traced{false};
  ir::Graph graph;
  /// The compile pipeline's result for `graph` and the specialization's config (its CUDA
  /// emitted once the specialization runs on a GPU: KernelImpl::make_gpu_program).
  codegen::CompiledStages stages;
  /// Host values the key does not hold, evaluated on each call (lookup()): a call whose
  /// guard values differ from guard_values (the specialization's own) selects, and
  /// traces on first use, the specialization of key + "#" + its values.
  struct Guard {
    enum Kind : uint8_t {
      /// A padded extent computed from sizes (e.g. arange(x.size(0) * 3)): the key holds
      /// only the arguments' own padded sizes. Value: its next power of two.
      padded_extent,
      /// A 32-bit specialization's tensor allocated in host code (its sizes, its element
      /// count), or a loop bound or extent computed on the host: it must fit 32-bit index
      /// arithmetic (index_guard_failure); one value for all of them: I fits, L does not
      /// (traced with 64-bit indices; an error under Settings::index_dtype = ts::i32).
      index_32,
      /// A tensor allocated like an argument (empty_like): the argument's layout gives it
      /// row-major strides (R) or others (S), as Node::fn (ir::AllocLayout) records.
      alloc_layout,
    };
    const ir::Node* node;
    Kind kind;
  };
  std::vector<Guard> guards;
  std::string guard_values;
  /// Some guard reads a number argument's value, which a call's exact signature does not
  /// hold (a thread's memo, CallMemo, does not keep the specialization).
  std::atomic<bool> guards_read_numbers{false};
  const ir::Graph& program() const { return stages.program(); }
  const Config& config() const { return stages.config; }
  std::unique_ptr<rt::GpuProgram> gpu;  // compiled on the first GPU call (refers to stages)
  std::atomic<bool> gpu_made{false};
  std::atomic<bool> code_shown{false};  // TESSEL_PRINT_CODE, TESSEL_DUMP_DIR: once
  std::vector<int> written_args;        // positions of the tensor arguments the kernel stores to
  std::vector<int> alias_groups;        // per argument, its ir::ArgFacts::alias_group (-1: none)
  std::vector<rt::HostIndex> host_indices;  // of s.graph, checked per call (set_guards)
};

/// The key of specialization `s` found under argument key `k`: k, and its guard values.
static std::string full_key(const Specialization& s, std::string_view k) {
  return std::string(k) + (s.guards.empty() ? "" : "#" + s.guard_values);
}

/// Positions of the tensor arguments stored to anywhere in `b` (nested loops included).
static void collect_written_args(const ir::Block& b, std::vector<int>& out) {
  for (const ir::Node* n : b) {
    if (ir::writes_memory(n) && n->args[0]->op == ir::Op::Arg &&
        std::find(out.begin(), out.end(), static_cast<int>(n->args[0]->ival)) == out.end())
      out.push_back(static_cast<int>(n->args[0]->ival));
    if (n->op == ir::Op::Loop) collect_written_args(n->body, out);
  }
}

class KernelImpl {
 public:
  KernelImpl(std::string name, std::vector<std::string> param_names, std::vector<ParamKind> params,
             std::vector<IntRange> int_ranges, TraceFn fn, Settings settings, SourceLoc defined_at,
             bool has_captures)
      : name_(std::move(name)),
        param_names_(std::move(param_names)),
        params_(std::move(params)),
        int_ranges_(std::move(int_ranges)),
        trace_fn_(std::move(fn)),
        settings_(std::move(settings)),
        defined_at_(defined_at),
        trace_every_call_(has_captures && !settings_.static_captures.value_or(false)) {
    if (name_.empty())
      fail("a kernel needs a name",
           "pass a name as ts::kernel's first argument; errors and generated code use it");
    if (!param_names_.empty() && param_names_.size() != params_.size())
      fail(fmt::format("{} parameter names are given for a lambda of {} parameters",
                       param_names_.size(), params_.size()),
           "give one name per parameter, in order (\"\" leaves one unnamed), or no list");
    if (settings_.index_dtype && *settings_.index_dtype != DType::i32 &&
        *settings_.index_dtype != DType::i64)
      fail(fmt::format("Settings::index_dtype = {} is not an index dtype",
                       dtype_name(*settings_.index_dtype)),
           "use ts::i32 or ts::i64, or leave it unset (i64 when a tensor spans 2^31 elements or "
           "more)");
    if (settings_.max_sms && *settings_.max_sms < 1)
      fail(
          fmt::format("Settings::max_sms = {} is not a positive number of SMs", *settings_.max_sms),
          "use at least 1, or leave max_sms unset");
    if (settings_.reserved_sms && *settings_.reserved_sms < 0)
      fail(fmt::format("Settings::reserved_sms = {} is negative", *settings_.reserved_sms),
           "use 0 or more SMs to leave free, or leave reserved_sms unset");
  }

  /// `at`: the caller's line (errors of the call point there).
  std::vector<Buffer> call(CallArgs args, void* stream, SourceLoc at);
  /// Traces (if needed) for these arguments, as a call would, without running.
  Specialization& specialize(CallArgs args, bool on_gpu, SourceLoc at);
  /// Tunes the GPU specialization of `args` with `options`; with `apply`, later calls
  /// use the result (its GPU program is rebuilt). Not to be called while another thread
  /// calls the kernel with arguments of the same specialization.
  autotune::TuneResult tune(CallArgs args, const autotune::TuneOptions& options, bool apply,
                            SourceLoc at = {});
  const std::string& name() const { return name_; }
  const Settings& settings() const { return settings_; }
  /// The key a GPU call with `args` files specialization `s` under: its dump file names,
  /// whether made by a GPU call, kernel.cuda() or the interpreter (TESSEL_OVERRIDE_DIR then
  /// finds an edit of any of them). With the traced program's content hash: two kernels of
  /// one name file apart, so neither takes the other's override. Leaves key()'s buffer as
  /// it is.
  std::string gpu_key(const Specialization& s, CallArgs args) {
    std::string buf;
    return full_key(s, write_key(args, true, buf)) + "|" + autotune::kernel_content_hash(s.graph);
  }

 private:
  /// An error of the kernel's definition (its settings): at the ts::kernel line.
  [[noreturn]] void fail(const std::string& what, const std::string& hint = "") const {
    fail_at(defined_at_, what, hint);
  }
  /// An error of a call: at the caller's line (`at`), else the definition's.
  [[noreturn]] void fail_at(SourceLoc at, const std::string& what,
                            const std::string& hint = "") const {
    throw UserError(name_, at.line ? at : defined_at_, what, hint);
  }
  void check_args(CallArgs args, bool& on_gpu, SourceLoc at) const;
  /// "argument 1", or "argument 1 ('n')" where the kernel names its parameters.
  std::string arg_name(size_t i) const {
    return i < param_names_.size() && !param_names_[i].empty()
               ? fmt::format("argument {} ('{}')", i, param_names_[i])
               : fmt::format("argument {}", i);
  }
  /// Refuses a call whose written tensors overlap themselves (a stride 0) or another tensor
  /// argument in part, as torch does (at::assert_no_internal_overlap and
  /// assert_no_partial_overlap): programs would race on the shared elements. Full overlap
  /// (one tensor passed twice: in-place work) is allowed.
  void check_written_overlaps(CallArgs args, const Specialization& spec, SourceLoc at) const;
  /// The specialization key of a call: write_argument_key, and for a lambda traced on every
  /// call (captures, ts::kernel) a hash of this call's trace. It is held by this thread
  /// until its next key() call: a caller that keeps it past a trace or a tuning run copies it.
  std::string_view key(CallArgs args, bool on_gpu);
  /// key()'s text, in `buf`.
  std::string_view write_key(CallArgs args, bool on_gpu, std::string& buf);
  /// Traces `s` for `args`; `wide`: with 64-bit indices (an index_32 guard failed).
  void trace(Specialization& s, CallArgs args, bool wide);
  /// Sets s.guards (padded extents; index_32 ones for a 32-bit graph) for s.graph (traced,
  /// or replaced by tuning) and s.guard_values for `args`.
  void set_guards(Specialization& s, CallArgs args);
  /// The specialization for key `k` (tracing it on first use), refined by its guards.
  /// `base`, when given: the specialization of `k` itself, whose guards chose the result.
  std::shared_ptr<Specialization> lookup(std::string_view k, CallArgs args,
                                         Specialization** base = nullptr);
  /// A call's first use of `spec` in its mode (on_gpu): tunes and makes its GPU program, or
  /// shows the interpreter's code (TESSEL_PRINT_CODE); `k` is its key.
  void prepare(Specialization& spec, CallArgs args, bool on_gpu, std::string_view k, SourceLoc at);
  /// A call's memoized specialization (CallMemo), ready for its mode; sets `on_gpu`. Null
  /// where the call must take the key's path.
  Specialization* memoized(CallArgs args, bool& on_gpu);
  /// Remembers `spec` (ready, found by the key's path for `args` through the key's own
  /// `base`) for this thread's later calls of the same signature, where nothing but the
  /// signature decides it: no guard of either reads a number argument.
  void remember(CallArgs args, bool on_gpu, Specialization* base, Specialization* spec);
  /// The mode bits of a call's exact signature: on the GPU, bounds checked.
  int64_t signature_flags(bool on_gpu) const {
    return int64_t{on_gpu} | int64_t{check_bounds()} << 1;
  }
  /// Traces the lambda into `g` for `args` with `settings` (whose config's tunables give
  /// the values of ts::register_tunable).
  void trace_into(ir::Graph& g, CallArgs args, const Settings& settings);
  /// Runs the compile pipeline on s.graph for `c` up to its checks (s.stages); drops
  /// s.gpu, which referred to the stages replaced. TESSEL_DUMP_DIR names a failing config's
  /// dump by `spec_key` (full_key: the guards are set first).
  void set_config(Specialization& s, const Config& c, const std::string& spec_key);
  /// Runs the compile pipeline again with its CUDA emitted and makes s.gpu from it.
  void make_gpu_program(Specialization& s, const std::string& key);
  /// Tunes `s` (traced; its lock held) and, with `apply`, sets its config to the result.
  autotune::TuneResult tune_locked(Specialization& s, CallArgs args, const std::string& key,
                                   const autotune::TuneOptions& options, bool apply);
  bool wants_tuning() const {
    return settings_.autotune_effort.value_or(AutotuneEffort::none) != AutotuneEffort::none &&
           !settings_.config && !check_bounds();
  }
  /// Settings::check_bounds or TESSEL_CHECK_BOUNDS (read per call: part of the key).
  bool check_bounds() const {
    // The variable is read (and a bad value refused) whatever the Settings say.
    const bool env = call_flag(&CallEnv::check_bounds, "TESSEL_CHECK_BOUNDS", name_);
    return settings_.check_bounds.value_or(false) || env;
  }

  std::string name_;
  std::vector<std::string> param_names_;  // empty, or one per parameter ("": unnamed)
  std::vector<ParamKind> params_;
  std::vector<IntRange> int_ranges_;  // per parameter: a C++ integer parameter's values
  TraceFn trace_fn_;
  Settings settings_;
  SourceLoc defined_at_;   // where ts::kernel(...) was called
  bool trace_every_call_;  // the lambda captures variables (not static_captures)
  /// This kernel's number, never reused: a thread's memo (CallMemo) names kernels by it.
  const uint64_t serial_ = next_serial_.fetch_add(1, std::memory_order_relaxed);
  static inline std::atomic<uint64_t> next_serial_{1};
  std::mutex mu_;
  /// Found by std::string_view keys (KeyHash: no copy of the key per call).
  std::unordered_map<std::string, std::shared_ptr<Specialization>, KeyHash, std::equal_to<>> specs_;
};

void KernelImpl::check_args(CallArgs args, bool& on_gpu, SourceLoc at) const {
  auto fail = [&](const std::string& what, const std::string& hint = "") {
    fail_at(at, what, hint);
  };
  // A kernel's lambda runs once per specialization, to trace: a kernel called from it
  // would run once instead of on every call (or, called recursively, wait on itself).
  if (frontend::TraceContext* ctx = frontend::TraceContext::current_or_null())
    fail(fmt::format("called while kernel '{}' is being traced", ctx->graph().kernel_name),
         "call kernels from host code outside any ts::kernel lambda (a lambda traces device code "
         "once "
         "per specialization)");
  if (args.size() != params_.size())
    fail(fmt::format("called with {}, the kernel takes {}",
                     count_of(static_cast<int64_t>(args.size()), "argument"),
                     static_cast<int64_t>(params_.size())));
  std::optional<Device> device;
  int first_tensor = -1;
  auto arg = [&](size_t i) { return arg_name(i); };
  for (size_t i = 0; i < args.size(); ++i) {
    bool is_buffer = std::holds_alternative<const Buffer*>(args[i]);
    if ((params_[i] == ParamKind::tensor) != is_buffer)
      fail(fmt::format(
          "{} is {}, the kernel's parameter takes {}", arg(i), is_buffer ? "a Buffer" : "a number",
          params_[i] == ParamKind::tensor ? "a ts::Tensor (pass a ts::Buffer)" : "a number"));
    if (params_[i] == ParamKind::specialized_int && !is_buffer) {
      const double* d = std::get_if<double>(&args[i]);
      if (d && *d != std::trunc(*d))
        fail(fmt::format("{} is {}, but the kernel's parameter is an integer", arg(i), *d),
             "pass an integer (or declare the parameter as a floating-point type)");
      const IntRange& r = int_ranges_.at(i);
      // In doubles INT64_MAX rounds up to 2^63, which no int64_t holds.
      bool fits = d ? *d >= static_cast<double>(r.lo) &&
                          (r.hi == INT64_MAX ? *d < 0x1p63 : *d <= static_cast<double>(r.hi))
                    : std::get<int64_t>(args[i]) >= r.lo && std::get<int64_t>(args[i]) <= r.hi;
      if (!fits)
        fail(fmt::format("{} is {}, outside the range [{}, {}] of the kernel's integer parameter",
                         arg(i),
                         d ? fmt::format("{}", *d) : std::to_string(std::get<int64_t>(args[i])),
                         r.lo, r.hi),
             r.hi == INT64_MAX
                 ? "pass a value that fits (a kernel's integer parameters hold at most 2^63 - 1)"
                 : "pass a value that fits, or declare the parameter as int64_t");
    }
    if (!is_buffer) continue;
    const Buffer& b = *std::get<const Buffer*>(args[i]);
    if (!b.defined())
      fail(fmt::format("{} is an undefined Buffer (default-constructed or moved from)", arg(i)),
           "pass a Buffer that holds a tensor (ts::Buffer::empty, zeros, from_vector, ...)");
    if (!device) {
      device = b.device();
      first_tensor = static_cast<int>(i);
    } else if (!(b.device() == *device)) {
      fail(fmt::format("{} is on {} but {} is on {}", arg(i), b.device().str(),
                       arg(static_cast<size_t>(first_tensor)), device->str()),
           "a kernel's tensors must all be on one device: a CPU buffer cannot be passed with a "
           "GPU buffer; move them with Buffer::to()");
    }
  }
  // Checked wherever the call runs.
  const bool interpret = call_flag(&CallEnv::interpret, "TESSEL_INTERPRET", name_);
  on_gpu = device && device->is_cuda() && !interpret;
  if (rt::LaunchObserver* o = rt::launch_observer(); o && o->dry) on_gpu = true;
}

// Appends the decimal digits of v (no allocation; this runs on every call).
static void append_int(std::string& k, int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  k.append(buf, r.ptr);
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

// The index_32 guards of a 32-bit graph `g`: its allocations, and the integers its loops
// and extents use that the key does not fix (sizes of arguments it holds; constants
// within 32 bits).
static void collect_index_guards(const ir::Graph& g, std::vector<Specialization::Guard>& out) {
  auto add = [&](const ir::Node* n) {
    if (!n || (n->op != ir::Op::Alloc && (!is_integer(n->dtype) || !ir::host_computable(n))))
      return;
    if ((n->op == ir::Op::Size || n->op == ir::Op::Stride) && n->args.at(0)->op == ir::Op::Arg)
      return;
    if (n->op == ir::Op::Const && n->ival >= INT32_MIN && n->ival <= INT32_MAX) return;
    for (const Specialization::Guard& gd : out)
      if (gd.node == n) return;
    out.push_back({n, Specialization::Guard::index_32});
  };
  for (const ir::Node* n : g.host)
    if (n->op == ir::Op::Alloc) add(n);
  ir::walk(g.host, [&](const ir::Node* n) {
    if (n->op != ir::Op::Loop) return;
    for (const ir::LoopDim& d : n->dims) {
      add(d.begin);
      add(d.end);
    }
  });
  for (const auto& sym : g.syms())
    if (sym->kind == ir::Sym::extent_k) add(sym->extent);
}

// The padded_extent guards of `g`: extents of ts::all, arange and the tile constructors
// computed on the host from what the key does not fix (products of sizes, integer
// arguments, allocation sizes so computed). The key holds each argument size's next power
// of two, and constants are fixed; any other extent's power of two is checked per call.
static void collect_extent_guards(const ir::Graph& g, std::vector<Specialization::Guard>& out) {
  for (const auto& sym : g.syms()) {
    const ir::Node* n = sym->kind == ir::Sym::extent_k ? sym->extent : nullptr;
    if (!n || n->op == ir::Op::Const) continue;
    if (n->op == ir::Op::Size && n->args.at(0)->op == ir::Op::Arg) continue;
    bool seen = false;
    for (const Specialization::Guard& gd : out) seen |= gd.node == n;
    if (!seen) out.push_back({n, Specialization::Guard::padded_extent});
  }
}

// The alloc_layout guards of `g`: its allocations like an argument.
static void collect_layout_guards(const ir::Graph& g, std::vector<Specialization::Guard>& out) {
  for (const ir::Node* n : g.host)
    if (n->op == ir::Op::Alloc && n->like) out.push_back({n, Specialization::Guard::alloc_layout});
}

// An alloc_layout guard's value on the call of `vals`.
static char alloc_layout_value(const ir::Node* alloc, std::span<const ir::ArgValue> vals) {
  const ir::ArgValue& a = vals[static_cast<size_t>(alloc->like->ival)];
  // A row-major argument gives its own strides (no allocation on the common call).
  bool row_major = row_major_strides(*a.shape, *a.strides) ||
                   row_major_strides(*a.shape, preserve_format_strides(*a.shape, *a.strides));
  return row_major ? 'R' : 'S';
}

// Why index_32 guard node `n` does not fit 32-bit index arithmetic on the call of `vals`
// ("" when it fits): an allocation of 2^31 elements or more (or with such a size), or a
// host integer outside int32.
static std::string index_guard_failure(const ir::Node* n, std::span<const ir::ArgValue> vals) {
  constexpr int64_t kLimit = int64_t{1} << 31;
  if (n->op == ir::Op::Alloc) {
    int64_t numel = 1;
    bool big = false;
    for (const ir::Node* e : n->args) {  // runs on every call: no allocation
      int64_t v = ir::eval_host_int(e, vals);
      big |= v >= kLimit;
      if (numel > 0 && __builtin_mul_overflow(numel, std::max<int64_t>(v, 0), &numel))
        numel = INT64_MAX;
    }
    if (!big && numel < kLimit) return "";
    std::vector<int64_t> shape;
    for (const ir::Node* e : n->args) shape.push_back(ir::eval_host_int(e, vals));
    return fmt::format("{} has shape [{}] ({} elements)", frontend::describe_tensor(n),
                       fmt::join(shape, ", "),
                       numel == INT64_MAX ? std::string("2^63 or more") : std::to_string(numel));
  }
  int64_t v = ir::eval_host_int(n, vals);
  if (v >= INT32_MIN && v <= INT32_MAX) return "";
  return fmt::format("a loop bound or extent computed in host code is {}", v);
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

void KernelImpl::set_guards(Specialization& s, CallArgs args) {
  s.guards.clear();
  s.host_indices = rt::collect_host_indices(s.graph);
  collect_extent_guards(s.graph, s.guards);
  collect_layout_guards(s.graph, s.guards);
  if (s.graph.index_dtype == DType::i32) collect_index_guards(s.graph, s.guards);
  s.guards_read_numbers = false;
  for (const Specialization::Guard& g : s.guards)
    if (g.kind != Specialization::Guard::alloc_layout && reads_number_argument(g.node))
      s.guards_read_numbers = true;
  // The values this specialization stands for (a 32-bit one: I).
  s.guard_values.clear();
  std::vector<ir::ArgValue> vals(args.size());
  rt::arg_values(args, vals);
  for (const Specialization::Guard& g : s.guards)
    if (g.kind == Specialization::Guard::padded_extent) {
      append_int(s.guard_values, next_pow2(ir::eval_host_int(g.node, vals)));
      s.guard_values += ',';
    } else if (g.kind == Specialization::Guard::alloc_layout) {
      s.guard_values += alloc_layout_value(g.node, vals);
    }
  if (std::any_of(s.guards.begin(), s.guards.end(), [](const Specialization::Guard& g) {
        return g.kind == Specialization::Guard::index_32;
      }))
    s.guard_values += 'I';
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
  frontend::TraceContext ctx(graph, settings, targs, t_call_site);
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
        (void)rt::target_arch_override(name_, t_call_site);  // a bad value: an error here
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
  bool index_guards = false;
  for (const Specialization::Guard& gd : spec->guards) {
    if (gd.kind == Specialization::Guard::padded_extent) {
      append_int(g, next_pow2(ir::eval_host_int(gd.node, vals)));
      g += ',';
    } else if (gd.kind == Specialization::Guard::alloc_layout) {
      g += alloc_layout_value(gd.node, vals);
    } else if (wide.empty()) {
      index_guards = true;
      wide = index_guard_failure(gd.node, vals);
      where = gd.node;
    }
  }
  if (index_guards) g += wide.empty() ? 'I' : 'L';
  if (g == spec->guard_values) return spec;
  if (!wide.empty() && settings_.index_dtype)
    throw UserError(name_, where->loc,
                    wide + ", beyond 32-bit index arithmetic (Settings::index_dtype i32)",
                    "leave Settings::index_dtype unset or set it to ts::i64");
  return get(std::string(k) + "#" + g, !wide.empty());
}

void KernelImpl::check_written_overlaps(CallArgs args, const Specialization& spec,
                                        SourceLoc at) const {
  // Several elements of a written tensor at one address would race on a GPU; the key does
  // not hold zero strides. A tensor without elements overlaps nothing.
  for (int i : spec.written_args) {
    const Buffer& b = *std::get<const Buffer*>(args[i]);
    const std::vector<int64_t>& shape = b.shape();
    const std::vector<int64_t>& strides = b.strides();
    if (std::find(shape.begin(), shape.end(), 0) != shape.end()) continue;
    for (size_t d = 0; d < shape.size(); ++d)
      if (strides[d] == 0 && shape[d] > 1)
        fail_at(
            at,
            fmt::format(
                "tensor argument {} is written by the kernel but its dim {} has stride 0 (its {} "
                "elements share one memory location)",
                i, d, b.size(d)),
            "pass a tensor whose elements do not overlap (e.g. .contiguous())");
    if (non_overlapping_and_dense(shape, strides)) continue;
    bool decided = true;
    const auto both = overlapping_elements(shape, strides, &decided);
    auto coords = [&](int64_t flat) {  // row-major index -> "(i, j)"
      std::vector<int64_t> c(shape.size());
      for (size_t d = shape.size(); d-- > 0;) {
        c[d] = flat % shape[d];
        flat /= shape[d];
      }
      return fmt::format("({})", fmt::join(c, ", "));
    };
    if (both)
      fail_at(at,
              fmt::format("tensor {} is written by the kernel but its elements {} and {} share one "
                          "memory location (shape [{}], strides [{}]): programs would race on them",
                          arg_name(i), coords(both->first), coords(both->second),
                          fmt::join(shape, ", "), fmt::join(strides, ", ")),
              "pass a tensor whose elements do not overlap (e.g. .contiguous())");
    if (!decided)
      fail_at(at,
              fmt::format("tensor {} is written by the kernel and its strides [{}] interleave its "
                          "dims over {} elements: too many to tell whether two share one memory "
                          "location",
                          arg_name(i), fmt::join(strides, ", "), b.numel()),
              "pass a tensor whose dims do not interleave (e.g. .contiguous(), then copy back)");
  }
  // Another argument over some of a written tensor's bytes (only arguments in one alias
  // group can be; the key holds the groups): torch's overlap status, FULL where both are
  // the same view, PARTIAL where two dense views' byte ranges meet otherwise, too hard to
  // tell (allowed) where either is not dense, e.g. two column slices of one matrix.
  const std::vector<int>& groups = spec.alias_groups;
  auto group = [&](size_t i) { return i < groups.size() ? groups[i] : -1; };
  for (int w : spec.written_args) {
    if (group(w) < 0) continue;
    const Buffer& a = *std::get<const Buffer*>(args[w]);
    for (size_t j = 0; j < args.size(); ++j) {
      if (static_cast<int>(j) == w || group(j) != group(w)) continue;
      const Buffer& b = *std::get<const Buffer*>(args[j]);
      if (a.numel() == 0 || b.numel() == 0 || !non_overlapping_and_dense(a.shape(), a.strides()) ||
          !non_overlapping_and_dense(b.shape(), b.strides()))
        continue;
      const auto [a0, a1] = rt::byte_range(a);
      const auto [b0, b1] = rt::byte_range(b);
      const bool same = a0 == b0 && a1 == b1 && a.strides() == b.strides() &&
                        a.shape() == b.shape() && a.dtype() == b.dtype();
      if (same || a1 <= b0 || b1 <= a0) continue;
      fail_at(at,
              fmt::format("tensor {} is written by the kernel and overlaps tensor {} in part "
                          "({} and {}: their memory meets but they are not one view): programs "
                          "would race on the elements they share",
                          arg_name(w), arg_name(j), a.str(), b.str()),
              "pass tensors that do not overlap, or one tensor twice for in-place work "
              "(torch refuses a partial overlap too)");
    }
  }
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
  const bool interpret = call_flag(&CallEnv::interpret, "TESSEL_INTERPRET", name_);
  on_gpu = first && first->defined() && first->device().is_cuda() && !interpret;
  if (rt::LaunchObserver* o = rt::launch_observer(); o && o->dry) on_gpu = true;
  CallMemo& m = t_memo;
  if (!write_exact_signature(args, params_, signature_flags(on_gpu), m.scratch)) return nullptr;
  for (const CallMemo::Entry& e : m.entries)
    if (e.kernel == serial_ && e.signature == m.scratch && !e.base->guards_read_numbers &&
        !e.spec->guards_read_numbers &&
        (on_gpu ? e.spec->gpu_made : e.spec->code_shown).load(std::memory_order_acquire))
      return e.spec;
  return nullptr;
}

void KernelImpl::remember(CallArgs args, bool on_gpu, Specialization* base, Specialization* spec) {
  if (trace_every_call_ || base->guards_read_numbers || spec->guards_read_numbers) return;
  CallMemo& m = t_memo;
  CallMemo::Entry& e = m.entries[m.next++ % m.entries.size()];
  if (!write_exact_signature(args, params_, signature_flags(on_gpu), e.signature)) {
    e.kernel = 0;
    return;
  }
  e.kernel = serial_;
  e.spec = spec;
  e.base = base;
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

std::shared_ptr<KernelImpl> make_kernel(std::string name, std::vector<std::string> param_names,
                                        std::vector<ParamKind> params,
                                        std::vector<IntRange> int_ranges, TraceFn fn,
                                        Settings settings, SourceLoc defined_at,
                                        bool has_captures) {
  return std::make_shared<KernelImpl>(std::move(name), std::move(param_names), std::move(params),
                                      std::move(int_ranges), std::move(fn), std::move(settings),
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
