#include "ir/ir.hpp"

#include <cmath>

namespace tessel::ir {

const char* op_name(Op op) {
  switch (op) {
#define TESSEL_X(name, str) \
  case Op::name:            \
    return str;
    TESSEL_IR_OPS(TESSEL_X)
#undef TESSEL_X
  }
  return "?";
}

const char* unary_name(UnaryFn f) {
  switch (f) {
#define TESSEL_X(name, str, fl) \
  case UnaryFn::name:           \
    return str;
    TESSEL_UNARY_FNS(TESSEL_X)
#undef TESSEL_X
  }
  return "?";
}

bool unary_float_only(UnaryFn f) {
  switch (f) {
#define TESSEL_X(name, str, fl) \
  case UnaryFn::name:           \
    return fl;
    TESSEL_UNARY_FNS(TESSEL_X)
#undef TESSEL_X
  }
  return false;
}

const char* binary_name(BinaryFn f) {
  switch (f) {
#define TESSEL_X(name, str, k) \
  case BinaryFn::name:         \
    return str;
    TESSEL_BINARY_FNS(TESSEL_X)
#undef TESSEL_X
  }
  return "?";
}

char binary_kind(BinaryFn f) {
  switch (f) {
#define TESSEL_X(name, str, k) \
  case BinaryFn::name:         \
    return k;
    TESSEL_BINARY_FNS(TESSEL_X)
#undef TESSEL_X
  }
  return 'a';
}

ConstValue reduce_identity(ReduceFn f, DType t) {
  bool mx = false;
  switch (f) {
    case ReduceFn::sum:
    case ReduceFn::any:
      return {0, 0.0};
    case ReduceFn::prod:
    case ReduceFn::all:
      return {1, 1.0};
    case ReduceFn::max:
    case ReduceFn::argmax:
      mx = true;
      break;
    case ReduceFn::min:
    case ReduceFn::argmin:
      break;
  }
  if (is_float(t)) return {0, mx ? -INFINITY : INFINITY};
  int64_t lo = 0, hi = 1;  // boolean
  if (t == DType::i8) lo = INT8_MIN, hi = INT8_MAX;
  if (t == DType::i32) lo = INT32_MIN, hi = INT32_MAX;
  if (t == DType::i64) lo = INT64_MIN, hi = INT64_MAX;
  if (t == DType::u64) lo = 0, hi = -1;  // all bits set: 2^64 - 1
  int64_t v = mx ? lo : hi;
  return {v,
          t == DType::u64 ? static_cast<double>(static_cast<uint64_t>(v)) : static_cast<double>(v)};
}

const char* reduce_name(ReduceFn f) {
  switch (f) {
#define TESSEL_X(name, str) \
  case ReduceFn::name:      \
    return str;
    TESSEL_REDUCE_FNS(TESSEL_X)
#undef TESSEL_X
  }
  return "?";
}

const char* atomic_name(AtomicFn f) {
  switch (f) {
#define TESSEL_X(name, str) \
  case AtomicFn::name:      \
    return str;
    TESSEL_ATOMIC_FNS(TESSEL_X)
#undef TESSEL_X
  }
  return "?";
}

}  // namespace tessel::ir

namespace tessel {

const char* sem_name(Sem s) {
  static const char* const names[] = {"relaxed", "acquire", "release", "acq_rel"};
  return names[static_cast<int>(s)];
}

const char* scope_name(Scope s) {
  static const char* const names[] = {"cta", "gpu", "sys"};
  return names[static_cast<int>(s)];
}

}  // namespace tessel

namespace tessel::ir {

Node* Graph::new_node(Op op, SourceLoc loc) {
  nodes_.push_back(std::make_unique<Node>());
  Node* n = nodes_.back().get();
  n->op = op;
  n->loc = loc;
  n->id = static_cast<int>(nodes_.size()) - 1;
  return n;
}

bool may_alias(const Graph& g, const Node* a, const Node* b) {
  if (a == b) return true;
  // A multicast tensor's addresses were made before the call: never its allocations'.
  if (a->op == Op::Multicast || b->op == Op::Multicast)
    return a->op != Op::Alloc && b->op != Op::Alloc;
  if (a->op != Op::Arg || b->op != Op::Arg) return false;
  auto group = [&](const Node* t) {
    size_t i = static_cast<size_t>(t->ival);
    return i < g.arg_facts.size() ? g.arg_facts[i].alias_group : -1;
  };
  return group(a) >= 0 && group(a) == group(b);
}

std::vector<int> permutation(const Node* n) {
  std::vector<int> perm(n->shape.size());
  for (size_t i = 0; i < perm.size(); ++i)
    perm[i] = static_cast<int>((n->ival >> (4 * i)) & 15) - 1;  // -1: no entry
  return perm;
}

int64_t encode_permutation(const std::vector<int>& perm) {
  int64_t v = 0;
  for (size_t i = 0; i < perm.size(); ++i) v |= int64_t{perm[i] + 1} << (4 * i);
  return v;
}

bool innermost_contiguous(const Graph& g, const Node* t) {
  if (t->op == Op::Alloc) return t->fn == alloc_row_major;
  if (t->op != Op::Arg) return false;
  size_t i = static_cast<size_t>(t->ival);
  return i < g.arg_facts.size() && g.arg_facts[i].contiguous;
}

int unit_stride_dim(const Graph& g, const Node* t) {
  if (innermost_contiguous(g, t)) return t->rank - 1;
  if (t->op != Op::Arg) return -1;
  size_t i = static_cast<size_t>(t->ival);
  return i < g.arg_facts.size() ? g.arg_facts[i].unit_stride_dim : -1;
}

Sym* Graph::new_sym(Sym::Kind kind) {
  syms_.push_back(std::make_unique<Sym>());
  Sym* s = syms_.back().get();
  s->kind = kind;
  s->id = static_cast<int>(syms_.size()) - 1;
  return s;
}

}  // namespace tessel::ir
