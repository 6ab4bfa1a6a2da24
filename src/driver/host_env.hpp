// The state of one kernel call while its host program runs: concrete arguments,
// allocated tensors, and evaluation of host scalar expressions.
#pragma once

#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ir/host_eval.hpp"
#include "ir/ir.hpp"
#include "tessel/buffer.hpp"
#include "tessel/config.hpp"
#include "tessel/error.hpp"
#include "tessel/kernel.hpp"

namespace tessel::rt {

struct HostEnv {
  const ir::Graph* graph = nullptr;
  std::vector<ir::ArgValue> args;  // for eval_host
  /// By argument position (null for scalars): the caller's Buffers, alive for the call.
  std::vector<const Buffer*> arg_buffers;
  /// The program's allocations so far (Alloc nodes, a few per program: a list, no hashing).
  std::vector<std::pair<const ir::Node*, Buffer>> allocs;
  Device device;                 // where allocations go
  void* stream = nullptr;        // CUstream of the call
  void* check_record = nullptr;  // Settings::check_bounds on the GPU: rt::BoundsRecord

  /// The Buffer of a tensor node (Arg or Alloc). Errors: InternalError for an Alloc not
  /// made yet.
  const Buffer& tensor(const ir::Node* n) const {
    if (n->op == ir::Op::Arg) return *arg_buffers.at(n->ival);
    for (const auto& [a, b] : allocs)
      if (a == n) return b;
    throw InternalError("the tensor of %" + std::to_string(n->id) + " is not allocated yet");
  }
  /// Allocation n's Buffer, moved out (the host program returning it: its last use).
  /// Errors: InternalError for an Alloc not made yet.
  Buffer take_alloc(const ir::Node* n) {
    for (auto& [a, b] : allocs)
      if (a == n) return std::move(b);
    throw InternalError("the tensor of %" + std::to_string(n->id) + " is not allocated yet");
  }
  /// Allocation n's Buffer is b (replacing an earlier one of n).
  void set_alloc(const ir::Node* n, Buffer b) {
    for (auto& [a, old] : allocs)
      if (a == n) {
        old = std::move(b);
        return;
      }
    allocs.emplace_back(n, std::move(b));
  }
  int64_t eval_int(const ir::Node* n) const { return ir::eval_host_int(n, args); }
  ir::HostScalar eval(const ir::Node* n) const { return ir::eval_host(n, args); }
};

/// The host evaluator's view of a call's arguments in `out` (one entry each): a tensor's
/// shape and strides, a number as both an integer and a double (truncated, or converted).
inline void arg_values(detail::CallArgs args, std::span<ir::ArgValue> out) {
  for (size_t i = 0; i < args.size(); ++i) {
    ir::ArgValue& v = out[i];
    v = {};
    if (const Buffer* b = detail::buffer_arg(args[i])) {
      v.shape = &b->shape();
      v.strides = &b->strides();
    } else if (const int64_t* n = std::get_if<int64_t>(&args[i])) {
      v.ivalue = *n;
      v.fvalue = static_cast<double>(*n);
    } else {
      v.fvalue = std::get<double>(args[i]);
      v.ivalue = static_cast<int64_t>(v.fvalue);
    }
  }
}

}  // namespace tessel::rt
