#include "ir/host_eval.hpp"

#include <fmt/format.h>

#include <cmath>

#include "common/element.hpp"
#include "common/preserve_format.hpp"
#include "tessel/buffer.hpp"
#include "tessel/error.hpp"

namespace tessel::ir {

bool host_computable(const Node* n) {
  return host_computable(n, [](const Node* x) { return x; });
}

bool host_computable(const Node* n, const std::function<const Node*(const Node*)>& resolve) {
  n = resolve(n);
  switch (n->op) {
    case Op::Const:
    case Op::Arg:
    case Op::Size:
    case Op::Stride:
      return true;
    case Op::Unary:
      if (n->ufn() != UnaryFn::neg && n->ufn() != UnaryFn::abs)
        return false;  // math: on the device
      [[fallthrough]];
    case Op::Binary:
    case Op::Cast:
    case Op::Where:
      for (const Node* a : n->args)
        if (!host_computable(a, resolve)) return false;
      return true;
    // Tensors, statements and device values.
    case Op::Alloc:
    case Op::DeviceScalar:
    case Op::ShapeCheck:
    case Op::Return:
    case Op::Full:
    case Op::Arange:
    case Op::Permute:
    case Op::View:
    case Op::Reduce:
    case Op::Load:
    case Op::Store:
    case Op::Atomic:
    case Op::Signal:
    case Op::Wait:
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
      break;
  }
  return false;
}

static const Node* tensor_root(const Node* t) { return t; }

// Argument i of a call (InternalError past the call's arguments).
static const ArgValue& arg_at(std::span<const ArgValue> args, int64_t i) {
  if (i < 0 || static_cast<size_t>(i) >= args.size())
    throw InternalError("host evaluation of argument " + std::to_string(i) + " of a call of " +
                        std::to_string(args.size()));
  return args[static_cast<size_t>(i)];
}

static HostScalar make_int(int64_t v) { return {false, v, 0}; }
static HostScalar make_float(double v) { return {true, 0, v}; }

static std::vector<int64_t> alloc_shape(const Node* alloc, std::span<const ArgValue> args) {
  std::vector<int64_t> shape;
  for (const Node* e : alloc->args) shape.push_back(eval_host_int(e, args));
  return shape;
}

std::vector<int64_t> alloc_strides(const Node* alloc, std::span<const ArgValue> args) {
  std::vector<int64_t> shape = alloc_shape(alloc, args);
  if (!alloc->like) return contiguous_strides(shape);
  const ArgValue& a = arg_at(args, alloc->like->ival);
  return preserve_format_strides(*a.shape, *a.strides);
}

HostScalar eval_host(const Node* n, std::span<const ArgValue> args) {
  switch (n->op) {
    case Op::Const:
      return is_float(n->dtype) ? make_float(n->fval) : make_int(n->ival);
    case Op::Arg: {
      const ArgValue& a = arg_at(args, n->ival);
      return n->arg_kind == ArgKind::float_scalar ? make_float(a.fvalue) : make_int(a.ivalue);
    }
    case Op::Size:
    case Op::Stride: {
      const Node* t = tensor_root(n->args[0]);
      int d = static_cast<int>(n->ival);
      if (t->op == Op::Arg) {
        const ArgValue& a = arg_at(args, t->ival);
        return make_int(n->op == Op::Size ? a.shape->at(d) : a.strides->at(d));
      }
      if (n->op == Op::Size) return make_int(alloc_shape(t, args).at(d));
      return make_int(alloc_strides(t, args).at(d));
    }
    case Op::Cast: {
      HostScalar v = eval_host(n->args[0], args);
      if (is_float(n->dtype)) return make_float(round_to(n->dtype, v.as_double()));
      return make_int(v.is_float ? static_cast<int64_t>(v.f) : v.i);
    }
    case Op::Unary: {
      HostScalar v = eval_host(n->args[0], args);
      switch (n->ufn()) {
        case UnaryFn::neg:
          return v.is_float ? make_float(-v.f) : make_int(-v.i);
        case UnaryFn::abs:
          return v.is_float ? make_float(std::fabs(v.f)) : make_int(v.i < 0 ? -v.i : v.i);
        case UnaryFn::logical_not:
        case UnaryFn::bit_not:
        case UnaryFn::exp:
        case UnaryFn::log:
        case UnaryFn::sqrt:
        case UnaryFn::rsqrt:
        case UnaryFn::sin:
        case UnaryFn::cos:
        case UnaryFn::tanh:
        case UnaryFn::sigmoid:
        case UnaryFn::exp2:
        case UnaryFn::log2:
        case UnaryFn::floor:
        case UnaryFn::ceil:
        case UnaryFn::erf:
        case UnaryFn::tf32:
          break;
      }
      break;
    }
    case Op::Binary: {
      HostScalar a = eval_host(n->args[0], args), b = eval_host(n->args[1], args);
      bool fl = is_float(n->dtype) || a.is_float || b.is_float;
      if (binary_kind(n->bfn()) == 'c') {
        double x = a.as_double(), y = b.as_double();
        bool r = false;
        switch (n->bfn()) {
          case BinaryFn::lt:
            r = x < y;
            break;
          case BinaryFn::le:
            r = x <= y;
            break;
          case BinaryFn::gt:
            r = x > y;
            break;
          case BinaryFn::ge:
            r = x >= y;
            break;
          case BinaryFn::eq:
            r = x == y;
            break;
          case BinaryFn::ne:
            r = x != y;
            break;
          // Not comparisons (binary_kind 'c' above).
          case BinaryFn::add:
          case BinaryFn::sub:
          case BinaryFn::mul:
          case BinaryFn::div:
          case BinaryFn::floordiv:
          case BinaryFn::mod:
          case BinaryFn::pow:
          case BinaryFn::maximum:
          case BinaryFn::minimum:
          case BinaryFn::logical_and:
          case BinaryFn::logical_or:
          case BinaryFn::bit_and:
          case BinaryFn::bit_or:
          case BinaryFn::bit_xor:
          case BinaryFn::shl:
          case BinaryFn::shr:
            break;
        }
        return make_int(r);
      }
      if (fl) {
        double x = a.as_double(), y = b.as_double();
        switch (n->bfn()) {
          case BinaryFn::add:
            return make_float(x + y);
          case BinaryFn::sub:
            return make_float(x - y);
          case BinaryFn::mul:
            return make_float(x * y);
          case BinaryFn::div:
            return make_float(x / y);
          case BinaryFn::floordiv:
            return make_float(std::floor(x / y));
          case BinaryFn::mod:
            return make_float(x - std::floor(x / y) * y);
          case BinaryFn::maximum:
            return make_float(std::fmax(x, y));
          case BinaryFn::minimum:
            return make_float(std::fmin(x, y));
          case BinaryFn::pow:
            return make_float(std::pow(x, y));
          case BinaryFn::lt:
          case BinaryFn::le:
          case BinaryFn::gt:
          case BinaryFn::ge:
          case BinaryFn::eq:
          case BinaryFn::ne:
          case BinaryFn::logical_and:
          case BinaryFn::logical_or:
          case BinaryFn::bit_and:
          case BinaryFn::bit_or:
          case BinaryFn::bit_xor:
          case BinaryFn::shl:
          case BinaryFn::shr:
            break;
        }
      } else {
        int64_t x = a.i, y = b.i, r = 0;
        auto overflow = [&](const char* op) {
          throw HostOverflow(
              n, fmt::format("host integer arithmetic overflows 64 bits: {} {} {}", x, op, y));
        };
        switch (n->bfn()) {
          case BinaryFn::add:
            if (__builtin_add_overflow(x, y, &r)) overflow("+");
            return make_int(r);
          case BinaryFn::sub:
            if (__builtin_sub_overflow(x, y, &r)) overflow("-");
            return make_int(r);
          case BinaryFn::mul:
            if (__builtin_mul_overflow(x, y, &r)) overflow("*");
            return make_int(r);
          case BinaryFn::floordiv:
            return make_int(floordiv_int(x, y));
          case BinaryFn::mod:
            return make_int(mod_int(x, y));
          case BinaryFn::maximum:
            return make_int(x > y ? x : y);
          case BinaryFn::minimum:
            return make_int(x < y ? x : y);
          case BinaryFn::bit_and:
          case BinaryFn::logical_and:
            return make_int(x & y);
          case BinaryFn::bit_or:
          case BinaryFn::logical_or:
            return make_int(x | y);
          case BinaryFn::bit_xor:
            return make_int(x ^ y);
          case BinaryFn::shl:
            return make_int(x << y);
          case BinaryFn::shr:
            return make_int(x >> y);
          case BinaryFn::pow: {
            int64_t r = 1;
            for (int64_t k = 0; k < y; ++k) r *= x;
            return make_int(r);
          }
          case BinaryFn::div:
          case BinaryFn::lt:
          case BinaryFn::le:
          case BinaryFn::gt:
          case BinaryFn::ge:
          case BinaryFn::eq:
          case BinaryFn::ne:
            break;
        }
      }
      break;
    }
    case Op::Where: {
      HostScalar c = eval_host(n->args[0], args);
      return (c.is_float ? c.f != 0 : c.i != 0) ? eval_host(n->args[1], args)
                                                : eval_host(n->args[2], args);
    }
    // Not host scalars.
    case Op::Alloc:
    case Op::DeviceScalar:
    case Op::ShapeCheck:
    case Op::Return:
    case Op::Full:
    case Op::Arange:
    case Op::Permute:
    case Op::View:
    case Op::Reduce:
    case Op::Load:
    case Op::Store:
    case Op::Atomic:
    case Op::Signal:
    case Op::Wait:
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
      break;
  }
  throw InternalError(std::string("eval_host: not a host scalar: ") + op_name(n->op));
}

}  // namespace tessel::ir

namespace tessel::ir {

void check_shape(const Graph& g, const Node* n, int64_t a, int64_t b) {
  if (n->ival == 0 && !n->name.empty() && a != b) {  // named: what, the two sizes, a hint
    std::vector<std::string> part;
    for (size_t at = 0; at != std::string::npos && part.size() < 4;) {
      const size_t end = n->name.find('\n', at);
      part.push_back(n->name.substr(at, end == std::string::npos ? end : end - at));
      at = end == std::string::npos ? end : end + 1;
    }
    part.resize(4);
    throw UserError(g.kernel_name, n->loc,
                    fmt::format("{}: {} is {}, {} is {}", part[0], part[1], a, part[2], b),
                    part[3]);
  }
  if (n->ival == 0) {
    if (a != b)
      throw UserError(
          g.kernel_name, n->loc,
          fmt::format("sizes that this kernel combines differ on this call: {} vs {}", a, b),
          "the dimensions indexed with ts::all must have equal sizes");
    return;
  }
  if (a >= b) return;
  std::string size = n->name.substr(0, n->name.find('\n'));
  std::string bound = n->name.substr(n->name.find('\n') + 1);
  throw UserError(
      g.kernel_name, n->loc,
      fmt::format("{} is {}, less than the bound {} = {} of the loop indexing it: its indices "
                  "would reach past the tensor's end",
                  size, a, bound, b),
      "pass tensors whose sizes match, or loop over this tensor's own size");
}

}  // namespace tessel::ir
