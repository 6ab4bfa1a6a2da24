// Atomics, signals and waits (Atomic, Signal, Wait nodes): each element's owner thread
// (Emitter::owner_test, the rule stores follow) updates it through ts::atomic /
// ts::wait_for (device/atomics.cuh, libcu++ cuda::atomic_ref), addressed as loads and
// stores are (Emitter::element_at). The old values reach the element's copies in other
// threads through shared memory, when something uses them.
#include <fmt/format.h>

#include "codegen/emitter_state.hpp"
#include "codegen/fold.hpp"

namespace tessel::codegen {

using ir::AtomicFn;
using ir::Node;
using ir::Op;

namespace {

// The ts::AtomicOp of device/atomics.cuh: ts::A_add, ts::A_and, ...
std::string op_arg(AtomicFn f) { return fmt::format("ts::A_{}", ir::atomic_name(f)); }

std::string order_args(const Node* n) {
  return fmt::format("ts::{}, ts::{}", sem_name(n->sem), scope_name(n->scope));
}

}  // namespace

void Emitter::broadcast_from_owners(const Node* n, const std::string& nm) {
  const bool one = writes_one_element(n);
  const int64_t bits = copy_bits(n);
  if (!one && bits == 0) return;  // every register holds its own element
  const std::string rt = reg_type(n->dtype);
  const SharedUse& use = shared_use(n);  // the kernel IR's stage (passes/shared_plan.hpp)
  const std::string bar = L_->threads <= 32 ? "__syncwarp();" : "__syncthreads();";
  const std::string sm = fmt::format("sm{}", n->id);
  line(fmt::format("{}{}* {} = reinterpret_cast<{}*>({});  // old values to the copies",
                   use.barrier ? bar + " " : "", rt, sm, rt,
                   fold::add("ts_smem", std::to_string(use.offset))));
  if (one) {
    line(fmt::format("if (tid == 0) {}[0] = {};", sm, nm));
    line(fmt::format("{} {} = {}[0];", bar, nm, sm));
  } else {
    line(fmt::format("TS_FOR(r) if ({}{}) {}[TS_FLAT(r)] = {}[r];", active("r"), owner_test(n), sm,
                     nm));
    line(fmt::format("{} TS_FOR(r) {}[r] = {}[TS_FLAT(r) & ~{}];", bar, nm, sm, bits));
  }
}

void Emitter::emit_atomic(const Node* n) {
  uses_atomics_ = true;
  const bool one = writes_one_element(n);
  const std::string r = one ? "0" : "r";
  const std::string bar = L_->threads <= 32 ? "__syncwarp();" : "__syncthreads();";
  if (n->op == Op::Signal)
    line(bar + "  // the program's earlier memory accesses happen before the signal (release)", n);
  Element el = element_at(n);
  std::string call;
  switch (n->op) {
    case Op::Atomic:
      call = n->afn() == AtomicFn::cas
                 ? fmt::format("ts::atomic<ts::A_cas, {}>({}, {}, {}, {})", order_args(n), el.ptr,
                               el.valid, at(n->args[2], r), at(n->args[1], r))
                 : fmt::format("ts::atomic<{}, {}>({}, {}, {})", op_arg(n->afn()), order_args(n),
                               el.ptr, el.valid, at(n->args[1], r));
      break;
    case Op::Signal:  // args: signal, [wait_for]
      call = n->ival == 2 ? fmt::format("ts::wait_for<true, {}>({}, {}, {}, {})", order_args(n),
                                        el.ptr, el.valid, at(n->args[2], r), at(n->args[1], r))
                          : fmt::format("ts::atomic<ts::A_xchg, {}>({}, {}, {})", order_args(n),
                                        el.ptr, el.valid, at(n->args[1], r));
      break;
    case Op::Wait:  // args: signal, [update]
      call = n->ival == 2 ? fmt::format("ts::wait_for<true, {}>({}, {}, {}, {})", order_args(n),
                                        el.ptr, el.valid, at(n->args[1], r), at(n->args[2], r))
                          : fmt::format("ts::wait_for<false, {}>({}, {}, {})", order_args(n),
                                        el.ptr, el.valid, at(n->args[1], r));
      break;
    // Not atomics: emit_node calls emit_atomic for the three ops above only.
    case Op::Arg:
    case Op::Size:
    case Op::Stride:
    case Op::Alloc:
    case Op::DeviceScalar:
    case Op::ShapeCheck:
    case Op::Return:
    case Op::Const:
    case Op::Unary:
    case Op::Binary:
    case Op::Where:
    case Op::Cast:
    case Op::Full:
    case Op::Arange:
    case Op::Permute:
    case Op::View:
    case Op::Reduce:
    case Op::Load:
    case Op::Store:
    case Op::Multicast:
    case Op::Loop:
    case Op::LoopIndex:
    case Op::TileIndex:
    case Op::TileBegin:
    case Op::TileEnd:
    case Op::TileBlock:
    case Op::TileId:
    case Op::ProgramId:
    case Op::Carried:
    case Op::Yield:
    case Op::LoopResult:
      throw InternalError(std::string("emit_atomic: not an atomic: ") + ir::op_name(n->op));
  }
  const bool waits = n->op == Op::Wait || (n->op == Op::Signal && n->ival == 2);
  if (g_.check_bounds && waits) {
    // A wait that gives up after ts::kWaitPolls polls, reported after the call.
    call.pop_back();
    if (n->op == Op::Wait && n->ival == 1) call += ", 0";
    call += fmt::format(", {}, {}, (long long)({}))", check_record_param(), n->id + 1, el.offset);
  }
  const std::string nm = fmt::format("v{}", n->id);
  names_[n] = nm;
  const std::string rt = reg_type(n->dtype);
  if (n->op == Op::Wait) {
    line(fmt::format("{}{};", one ? "" : "TS_FOR(r) ", call), n);
    line(bar + "  // every thread of the program continues after the wait (acquire)");
    return;
  }
  if (one)
    line(fmt::format("{} {} = {};", rt, nm, call), n);
  else
    line(fmt::format("{} {}[TS_N]; TS_FOR(r) {}[r] = {};", rt, nm, nm, call), n);
  if (value_used(n)) broadcast_from_owners(n, nm);
}

}  // namespace tessel::codegen
