// ts::Kernel's implementation (KernelImpl): argument checks, specialization keys, tracing
// once per key, and running the host program on the GPU or the interpreter. Its parts:
// kernel_impl.cpp (the call path), kernel_checks.cpp (a call's argument checks),
// kernel_entry.cpp (the functions tessel/kernel.hpp declares).
#pragma once

#include <fmt/format.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "autotune/autotuner.hpp"
#include "autotune/cache_key.hpp"
#include "runtime/call_env.hpp"
#include "runtime/call_key.hpp"
#include "runtime/specialization.hpp"
#include "tessel/kernel.hpp"

namespace tessel::detail {

class KernelImpl {
 public:
  KernelImpl(std::string name, std::vector<std::string> param_names, std::vector<ParamKind> params,
             std::vector<ParamRange> param_ranges, TraceFn fn, Settings settings,
             SourceLoc defined_at, bool has_captures)
      : name_(std::move(name)),
        param_names_(std::move(param_names)),
        params_(std::move(params)),
        param_ranges_(std::move(param_ranges)),
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
    const bool env = call_flag(CallVar::check_bounds, name_);
    return settings_.check_bounds.value_or(false) || env;
  }

  std::string name_;
  std::vector<std::string> param_names_;  // empty, or one per parameter ("": unnamed)
  std::vector<ParamKind> params_;
  std::vector<ParamRange> param_ranges_;  // per parameter: a C++ number parameter's values
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

}  // namespace tessel::detail
