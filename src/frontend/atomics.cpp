// ts::atomic_*, ts::signal and ts::wait: traced as Atomic, Signal and Wait nodes (Helion's
// hl.atomic_*, hl.signal, hl.wait; semantics in tessel/language.hpp).
#include <fmt/format.h>

#include "frontend/trace.hpp"

namespace tessel {

using frontend::TraceContext;
using ir::AtomicFn;
using ir::Node;
using ir::Op;

namespace {

bool integer_dtype(DType t) { return t == DType::i32 || t == DType::i64 || t == DType::u64; }

// The dtypes `fn` supports (tessel/language.hpp): integers, and the floats for add.
void check_dtype(AtomicFn fn, const Node* t, const char* what, SourceLoc loc) {
  DType d = t->dtype;
  if (integer_dtype(d) || (fn == AtomicFn::add && is_float(d) && !is_f8(d))) return;
  TraceContext::current(loc).fail(
      loc,
      fmt::format(
          "{} on {} of dtype {}: supported dtypes are {}", what, ir::describe_tensor(t),
          dtype_name(d),
          fn == AtomicFn::add ? "i32, i64, u64, f16, bf16, f32 and f64" : "i32, i64 and u64"),
      "use a tensor of a supported dtype (an i32 tensor for flags and counters)");
}

// The operands' nodes, each C++ integer among them checked to fit the tensor's dtype.
std::vector<Node*> operand_nodes(const std::vector<const Operand*>& operands, const Node* tensor,
                                 SourceLoc loc) {
  std::vector<Node*> nodes;
  for (const Operand* o : operands) {
    frontend::check_stored_constant(tensor->dtype, *o, ir::describe_tensor(tensor), loc);
    nodes.push_back(o->node());
  }
  return nodes;
}

Value atomic(AtomicFn fn, const char* what, const Target& target, const std::vector<Index>& index,
             const std::vector<const Operand*>& operands, Sem sem, Scope scope, Loc l) {
  SourceLoc loc = SourceLoc::from(l);
  Node* t = target.node_at(loc);
  check_dtype(fn, t, what, loc);
  Node* n =
      frontend::trace_memory_op(Op::Atomic, t, index, operand_nodes(operands, t, loc), what, loc);
  n->fn = static_cast<uint8_t>(fn);
  n->sem = sem;
  n->scope = scope;
  return Value::wrap(n);
}

// A signal pad: an integer tensor (Helion: int32 / uint32; tessel's integer dtypes).
void check_pad(const Node* pad, const char* what, SourceLoc loc) {
  if (integer_dtype(pad->dtype)) return;
  TraceContext::current(loc).fail(
      loc,
      fmt::format("{} on {} of dtype {}: a signal pad is an integer tensor (i32, i64 or u64)", what,
                  ir::describe_tensor(pad), dtype_name(pad->dtype)),
      "allocate the pad as an i32 tensor of zeros (x.new_zeros({n}, ts::i32))");
}

Node* pad_op(Op op, const char* what, const Target& pad, const std::vector<Index>& index,
             const Operand& value, const std::optional<Operand>& second, Scope scope, Loc l) {
  SourceLoc loc = SourceLoc::from(l);
  Node* p = pad.node_at(loc);
  check_pad(p, what, loc);
  std::vector<const Operand*> operands{&value};
  if (second) operands.push_back(&*second);
  Node* n = frontend::trace_memory_op(op, p, index, operand_nodes(operands, p, loc), what, loc);
  n->sem = op == Op::Signal ? Sem::release : Sem::acquire;
  n->scope = scope;
  return n;
}

}  // namespace

Node* Target::node_at(SourceLoc loc) const {
  return multicast_ ? multicast_->node_at(loc) : tensor_->node_at(loc);
}

// ts::atomic_add ... ts::atomic_xchg: one value operand.
#define TESSEL_ATOMIC(name, fn)                                                             \
  Value name(const Target& t, std::vector<Index> i, const Operand& v, Sem sem, Scope scope, \
             Loc l) {                                                                       \
    return atomic(AtomicFn::fn, "ts::" #name, t, i, {&v}, sem, scope, l);                   \
  }
TESSEL_ATOMIC(atomic_add, add)
TESSEL_ATOMIC(atomic_max, max)
TESSEL_ATOMIC(atomic_min, min)
TESSEL_ATOMIC(atomic_and, bit_and)
TESSEL_ATOMIC(atomic_or, bit_or)
TESSEL_ATOMIC(atomic_xor, bit_xor)
TESSEL_ATOMIC(atomic_xchg, xchg)
#undef TESSEL_ATOMIC

Value atomic_cas(const Target& t, std::vector<Index> i, const Operand& expected, const Operand& v,
                 Sem sem, Scope scope, Loc l) {
  return atomic(AtomicFn::cas, "ts::atomic_cas", t, i, {&expected, &v}, sem, scope, l);
}

Value signal(const Target& pad, std::vector<Index> index, const Operand& signal,
             std::optional<Operand> wait_for, Scope scope, Loc l) {
  Node* n = pad_op(Op::Signal, "ts::signal", pad, index, signal, wait_for, scope, l);
  n->fn = static_cast<uint8_t>(wait_for ? AtomicFn::cas : AtomicFn::xchg);
  return Value::wrap(n);
}

void wait(const Target& pad, std::vector<Index> index, const Operand& signal,
          std::optional<Operand> update, Scope scope, Loc l) {
  pad_op(Op::Wait, "ts::wait", pad, index, signal, update, scope, l);
}

}  // namespace tessel
