// One traced specialization of a kernel (a key of its arguments) and its compiled forms,
// shared by the call path (kernel_impl.cpp), its guards and a thread's memo of recent calls.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/compile_pipeline.hpp"
#include "driver/gpu_program.hpp"
#include "ir/host_eval.hpp"
#include "ir/ir.hpp"
#include "runtime/host_indices.hpp"
#include "tessel/kernel.hpp"

namespace tessel::detail {

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
inline std::string full_key(const Specialization& s, std::string_view k) {
  return std::string(k) + (s.guards.empty() ? "" : "#" + s.guard_values);
}

/// Sets s.guards for s.graph (traced, or replaced by tuning), s.guards_read_numbers,
/// s.host_indices, and s.guard_values: the values the specialization stands for, those of
/// the call of `args` (its index_32 guards fitting 32 bits).
void set_guards(Specialization& s, CallArgs args);

/// Writes to `out` the values of s.guards on the call of `vals`, as s.guard_values holds
/// them: each padded extent's next power of two, each alloc_layout's R or S, then I where
/// every index_32 guard fits 32-bit index arithmetic, else L with `wide` set to why the
/// first that does not fails and `where` to it.
void write_guard_values(const Specialization& s, std::span<const ir::ArgValue> vals,
                        std::string& out, std::string& wide, const ir::Node*& where);

}  // namespace tessel::detail
