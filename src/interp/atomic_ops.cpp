#include "interp/atomic_ops.hpp"

#include <fmt/format.h>

#include <mutex>
#include <optional>

#include "common/element.hpp"
#include "frontend/trace.hpp"
#include "interp/memory_ops.hpp"
#include "interp/program_sync.hpp"
#include "interp/unwritten.hpp"
#include "interp/write_log.hpp"

namespace tessel::interp {

using ir::AtomicFn;
using ir::Node;

namespace {

// Operand k (args[1 + k]) of `n` broadcast to the indexed shape: element at `linear`.
struct Operands {
  TileValue v[2];
  Operands(Frame& f, const Node* n) {
    const Dims& out = f.dims(n);
    for (int64_t k = 0; k < n->ival; ++k) {
      const TileValue& in = f.value(n->args.at(1 + k));
      v[k].reset(in.dtype, out);
      for_each_broadcast<1>(out, {&in.dims}, [&](int64_t o, int64_t i) {
        if (in.is_float())
          v[k].f[o] = in.f[i];
        else
          v[k].i[o] = in.i[i];
      });
    }
  }
};

// The new value of an integer element holding `old` (u64 compares unsigned; sums wrap).
int64_t apply_int(AtomicFn fn, DType t, int64_t old, int64_t v, int64_t expected) {
  const bool u = t == DType::u64;
  auto less = [&](int64_t a, int64_t b) {
    return u ? static_cast<uint64_t>(a) < static_cast<uint64_t>(b) : a < b;
  };
  switch (fn) {
    case AtomicFn::add:
      return wrap_int(t,
                      static_cast<int64_t>(static_cast<uint64_t>(old) + static_cast<uint64_t>(v)));
    case AtomicFn::max:
      return less(old, v) ? v : old;
    case AtomicFn::min:
      return less(v, old) ? v : old;
    case AtomicFn::bit_and:
      return old & v;
    case AtomicFn::bit_or:
      return old | v;
    case AtomicFn::bit_xor:
      return old ^ v;
    case AtomicFn::xchg:
      return v;
    case AtomicFn::cas:
      return old == expected ? v : old;
  }
  return old;
}

// Where the launch runs its programs concurrently: its lock, held for the whole op.
std::optional<std::unique_lock<std::mutex>> lock(Frame& f) {
  if (!f.sync()) return std::nullopt;
  return f.sync()->lock();
}

void wrote(Frame& f) {
  if (f.sync()) f.sync()->wrote();
}

[[noreturn]] void unsatisfiable(Frame& f, const Node* n, const Buffer& t, int64_t linear,
                                int64_t offset, int64_t want, int64_t holds) {
  std::string elem = element_str(t, offset);
  if (n->is_multicast_access()) {  // which buffer: the stack coordinates of `linear`
    const Dims& d = f.dims(n);
    int64_t per = 1;
    for (size_t k = ir::stack_shape(n).size(); k < d.size(); ++k) per *= d[k];
    elem += fmt::format(" of the buffer at dev_ptrs element {} (row-major)", linear / per);
  }
  throw UserError(
      f.graph().kernel_name, n->loc,
      fmt::format("{} on {} element {} waits for the value {} but it holds {}, and no program "
                  "of the launch can change it any more (every program still running waits "
                  "too): the wait can never be satisfied",
                  n->op == ir::Op::Wait ? "ts::wait" : "ts::signal with wait_for",
                  frontend::describe_tensor(n->args[0]), elem, want, holds),
      "signal that element from another program of the same launch (ts::signal), and wait for "
      "the value it is set to; on a GPU this wait would hang");
}

// Spins (sleeping between writes of other programs) until integer element `elem` holds
// `want`; then, with `update`, writes it. Lock `lk` held (or none: one program runs).
void wait_element(Frame& f, const Node* n, const Buffer& t, int64_t linear, char* elem,
                  int64_t offset, int64_t want, const std::optional<int64_t>& update,
                  std::optional<std::unique_lock<std::mutex>>& lk) {
  const DType dt = t.dtype();
  while (true) {
    int64_t holds = read_element_int(elem, dt);
    if (holds == want) {
      if (update) {
        write_element_int(elem, dt, *update);
        wrote(f);
      }
      return;
    }
    if (!lk || !f.sync()->sleep_until_write(*lk))
      unsatisfiable(f, n, t, linear, offset, want, holds);
  }
}

}  // namespace

void exec_atomic(Frame& f, const Node* n, TileValue& out) {
  const Buffer& t = host_tensor(f, n);
  Operands ops(f, n);
  out.reset(n->dtype, f.dims(n));
  const DType dt = t.dtype();
  const AtomicFn fn = n->afn();
  const TileValue& val = ops.v[fn == AtomicFn::cas ? 1 : 0];
  const TileValue& expected = ops.v[0];
  auto lk = lock(f);
  UnwrittenMemory& u = *f.unwritten();
  const bool reads = fn != AtomicFn::xchg;  // an exchange's old value is only its result
  if (out.is_float()) {
    std::fill(out.f.begin(), out.f.end(), 0.0);
    for_each_element(f, n, t, [&](int64_t k, char* e, int64_t off) {
      u.access(n, t, off, reads, true);
      double old = read_element(e, dt);  // add: the only float atomic
      write_element(e, dt, old + val.f[k]);
      out.f[k] = old;
    });
  } else {
    std::fill(out.i.begin(), out.i.end(), 0);
    for_each_element(f, n, t, [&](int64_t k, char* e, int64_t off) {
      u.access(n, t, off, reads, true);
      int64_t old = read_element_int(e, dt);
      write_element_int(e, dt, apply_int(fn, dt, old, val.i[k], expected.i[k]));
      out.i[k] = old;
    });
  }
  wrote(f);
}

void exec_signal(Frame& f, const Node* n, TileValue& out) {
  const Buffer& t = host_tensor(f, n);
  Operands ops(f, n);
  out.reset(n->dtype, f.dims(n));
  std::fill(out.i.begin(), out.i.end(), 0);
  const DType dt = t.dtype();
  auto lk = lock(f);
  for_each_element(f, n, t, [&](int64_t k, char* e, int64_t off) {
    f.unwritten()->access(n, t, off, n->ival == 2, true);
    out.i[k] = read_element_int(e, dt);
    if (n->ival == 2)  // wait for wait_for, then swap the signal in
      wait_element(f, n, t, k, e, off, ops.v[1].i[k], ops.v[0].i[k], lk);
    else
      write_element_int(e, dt, ops.v[0].i[k]);
    if (n->ival == 2) out.i[k] = ops.v[1].i[k];
  });
  wrote(f);
}

void exec_wait(Frame& f, const Node* n) {
  const Buffer& t = host_tensor(f, n);
  Operands ops(f, n);
  auto lk = lock(f);
  for_each_element(f, n, t, [&](int64_t k, char* e, int64_t off) {
    std::optional<int64_t> update;
    if (n->ival == 2) update = ops.v[1].i[k];
    f.unwritten()->access(n, t, off, true, n->ival == 2);
    wait_element(f, n, t, k, e, off, ops.v[0].i[k], update, lk);
  });
}

}  // namespace tessel::interp
