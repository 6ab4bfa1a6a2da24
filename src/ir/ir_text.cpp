// Spellings that the IR's printer and parser share (ir/ir_text.hpp).
#include "ir/ir_text.hpp"

#include "common/element.hpp"

namespace tessel::ir {

bool has_result(Op op) {
  return op != Op::Store && op != Op::Wait && op != Op::Return && op != Op::Yield &&
         op != Op::ShapeCheck;
}

std::string quote_ir_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

ConstValue const_secondary(DType t, ConstValue primary) {
  if (is_float(t))
    primary.ival = holds_integer_value(DType::i64, primary.fval)
                       ? static_cast<int64_t>(primary.fval)
                       : 0;  // constant_float's rule
  else
    primary.fval = static_cast<double>(primary.ival);
  return primary;
}

std::optional<Op> op_named(const std::string& s) {
#define TESSEL_X(name, str) \
  if (s == str) return Op::name;
  TESSEL_IR_OPS(TESSEL_X)
#undef TESSEL_X
  return std::nullopt;
}

std::optional<UnaryFn> unary_named(const std::string& s) {
#define TESSEL_X(name, str, f) \
  if (s == str) return UnaryFn::name;
  TESSEL_UNARY_FNS(TESSEL_X)
#undef TESSEL_X
  return std::nullopt;
}

std::optional<BinaryFn> binary_named(const std::string& s) {
#define TESSEL_X(name, str, k) \
  if (s == str) return BinaryFn::name;
  TESSEL_BINARY_FNS(TESSEL_X)
#undef TESSEL_X
  return std::nullopt;
}

std::optional<ReduceFn> reduce_named(const std::string& s) {
#define TESSEL_X(name, str) \
  if (s == str) return ReduceFn::name;
  TESSEL_REDUCE_FNS(TESSEL_X)
#undef TESSEL_X
  return std::nullopt;
}

std::optional<AtomicFn> atomic_named(const std::string& s) {
#define TESSEL_X(name, str) \
  if (s == str) return AtomicFn::name;
  TESSEL_ATOMIC_FNS(TESSEL_X)
#undef TESSEL_X
  return std::nullopt;
}

}  // namespace tessel::ir
