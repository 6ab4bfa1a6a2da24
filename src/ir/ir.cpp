#include "ir/ir.hpp"

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

Node* Graph::new_node(Op op, SourceLoc loc) {
  nodes_.push_back(std::make_unique<Node>());
  Node* n = nodes_.back().get();
  n->op = op;
  n->loc = loc;
  n->id = static_cast<int>(nodes_.size()) - 1;
  return n;
}

Sym* Graph::new_sym(Sym::Kind kind) {
  syms_.push_back(std::make_unique<Sym>());
  Sym* s = syms_.back().get();
  s->kind = kind;
  s->id = static_cast<int>(syms_.size()) - 1;
  return s;
}

}  // namespace tessel::ir
