// Evaluates host scalar expressions (sizes, strides, scalar arguments, integer math on
// them) for concrete arguments. Used while tracing and by the runtime on every call.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "ir/ir.hpp"
#include "tessel/error.hpp"

namespace tessel::ir {

/// Concrete value of one kernel argument.
struct ArgValue {
  const std::vector<int64_t>* shape = nullptr;    // tensors
  const std::vector<int64_t>* strides = nullptr;  // tensors
  int64_t ivalue = 0;                             // int scalars
  double fvalue = 0;                              // float scalars
};

struct HostScalar {
  bool is_float = false;
  int64_t i = 0;
  double f = 0;
  double as_double() const { return is_float ? f : static_cast<double>(i); }
};

/// True when `n` can be computed on the host from the arguments alone: constants, scalar
/// arguments, sizes and strides, and elementwise math on them (no device memory read).
bool host_computable(const Node* n);
/// host_computable of what `n` stands for, each node first passed through `resolve` (the
/// frontend's loop placeholders resolve to the value they stand for).
bool host_computable(const Node* n, const std::function<const Node*(const Node*)>& resolve);

/// Integer arithmetic on the host past 64 bits (sizes and integer arguments are whole
/// numbers, as Python's ints are in Helion: `x.size(0) * n` that does not fit is an error,
/// not a wrapped value). The kernel's entry points raise it as a UserError naming the
/// kernel (runtime/kernel_entry.cpp).
class HostOverflow : public Error {
 public:
  HostOverflow(const Node* node, const std::string& what) : Error(what), node(node) {}
  const Node* node;  // the Binary node
};

/// Value of a host-computable scalar node. Throws InternalError for other nodes and
/// HostOverflow for an integer add, sub or mul whose result does not fit int64.
HostScalar eval_host(const Node* n, std::span<const ArgValue> args);
inline int64_t eval_host_int(const Node* n, std::span<const ArgValue> args) {
  HostScalar v = eval_host(n, args);
  return v.is_float ? static_cast<int64_t>(v.f) : v.i;
}

/// Strides (elements) of the tensor of Alloc `alloc` on the call of `args`: row-major,
/// or, for an allocation like an argument (Node::like), that argument's stride order
/// (preserve_format_strides, common/preserve_format.hpp: torch's empty_like).
std::vector<int64_t> alloc_strides(const Node* alloc, std::span<const ArgValue> args);

/// A ShapeCheck node's test on one call, given its two sizes a and b: ival 0 needs a == b
/// (dimensions indexed with ts::all that the kernel combines), ival 1 needs a >= b (a
/// tensor's size covers the bound of the tile loop that indexes it; n->name holds
/// "<size description>\n<bound description>"). Throws UserError naming the kernel and
/// the source line otherwise.
void check_shape(const Graph& g, const Node* n, int64_t a, int64_t b);

/// Integer semantics shared by the interpreter, host evaluation and generated code:
/// floor division and the remainder with the sign of the divisor (Python / torch).
inline int64_t floordiv_int(int64_t a, int64_t b) {
  if (b == 0) return 0;
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
inline int64_t mod_int(int64_t a, int64_t b) {
  if (b == 0) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

}  // namespace tessel::ir
