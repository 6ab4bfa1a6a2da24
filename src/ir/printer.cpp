// Text form of the IR, one node per line, loop bodies indented.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ir/ir.hpp"

namespace tessel::ir {

std::string sym_name(const Sym* s) {
  if (!s) return "1";
  return fmt::format("{}{}",
                     s->kind == Sym::tile      ? "t"
                     : s->kind == Sym::block_k ? "b"
                                               : "r",
                     s->id);
}

std::string shape_str(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + sym_name(s[i]);
  return out + "]";
}

std::string describe_tensor(const Node* t) {
  if (t->op == Op::Arg)
    return t->name.empty() || t->name == fmt::format("arg{}", t->ival)
               ? fmt::format("tensor argument {}", t->ival)
               : fmt::format("tensor argument {} ('{}')", t->ival, t->name);
  if (t->op == Op::Alloc)
    return t->name.empty()
               ? fmt::format("the tensor allocated at line {}", t->loc.line)
               : fmt::format("the tensor '{}' allocated at line {}", t->name, t->loc.line);
  if (t->op == Op::Multicast)
    return fmt::format("the multicast tensor of line {} (buffers shaped like {})", t->loc.line,
                       describe_tensor(t->args.at(0)));
  return t->name.empty() ? "the tensor" : "tensor '" + t->name + "'";
}

static std::string ref(const Node* n) { return fmt::format("%{}", n->id); }

static std::string index_kind_name(IndexKind k) {
  switch (k) {
    case IndexKind::scalar:
      return "";
    case IndexKind::tile:
      return "tile ";
    case IndexKind::all:
      return "all ";
    case IndexKind::gather:
      return "gather ";
    case IndexKind::newaxis:
      return "newaxis";
  }
  return "";
}

static std::string indices(const Node* n, size_t first) {
  std::string out;
  size_t a = first;
  for (size_t i = 0; i < n->access.size(); ++i) {
    if (i) out += ", ";
    const IndexInfo& info = n->access[i];
    out += index_kind_name(info.kind);
    if (info.kind == IndexKind::newaxis) continue;
    out += ref(n->args[a++]);
    if (info.sym) out += " as " + sym_name(info.sym);
  }
  return out;
}

static std::string type_str(const Node* n) {
  if (n->is_tensor()) return fmt::format("{} tensor rank {}", dtype_name(n->dtype), n->rank);
  if (n->op == Op::Store || n->op == Op::Wait || n->op == Op::Loop || n->op == Op::Return ||
      n->op == Op::Yield || n->op == Op::ShapeCheck)
    return "";
  return dtype_name(n->dtype) + (n->shape.empty() ? "" : shape_str(n->shape));
}

static void print_block(const Block& b, int indent, bool names, std::string& out) {
  std::string pad(indent * 2, ' ');
  for (const Node* n : b) {
    std::string line = pad;
    if (n->op != Op::Store && n->op != Op::Wait && n->op != Op::Return && n->op != Op::Yield &&
        n->op != Op::ShapeCheck)
      line += ref(n) + " = ";
    line += op_name(n->op);
    switch (n->op) {
      case Op::Const:
        line += is_float(n->dtype) ? fmt::format(" {}", n->fval) : fmt::format(" {}", n->ival);
        break;
      case Op::Arg:
        line += fmt::format(" {}", n->ival);
        break;
      case Op::Unary:
        line += fmt::format(" {} {}", unary_name(n->ufn()), ref(n->args[0]));
        break;
      case Op::Binary:
        line += fmt::format(" {} {}, {}", binary_name(n->bfn()), ref(n->args[0]), ref(n->args[1]));
        break;
      case Op::Reduce:
        line += fmt::format(" {} {} dim {}{}", reduce_name(n->rfn()), ref(n->args[0]), n->ival,
                            n->keepdim ? " keepdim" : "");
        break;
      case Op::Load:
        line += fmt::format(" {}[{}]", ref(n->args[0]), indices(n, 1));
        break;
      case Op::Store:
        line += fmt::format(" {}[{}] = {}", ref(n->args[0]), indices(n, 2), ref(n->args[1]));
        break;
      case Op::Atomic:
      case Op::Signal:
      case Op::Wait: {
        line += n->op == Op::Atomic ? fmt::format(" {}", atomic_name(n->afn())) : "";
        line += fmt::format(" {}[{}]", ref(n->args[0]), indices(n, first_index(n)));
        for (size_t i = 1; i < first_index(n); ++i) line += fmt::format(", {}", ref(n->args[i]));
        line += fmt::format(" {} {}", sem_name(n->sem), scope_name(n->scope));
        break;
      }
      case Op::Size:
      case Op::Stride:
        line += fmt::format(" {} dim {}", ref(n->args[0]), n->ival);
        break;
      case Op::Permute:
        line += fmt::format(" {} dims [{}]", ref(n->args[0]), fmt::join(permutation(n), ", "));
        break;
      case Op::LoopIndex:
      case Op::TileIndex:
      case Op::TileBegin:
      case Op::TileEnd:
      case Op::TileBlock:
      case Op::TileId:
      case Op::LoopResult:
        line += fmt::format(" {} dim {}", ref(n->args[0]), n->ival);
        break;
      case Op::Loop: {
        line += n->persistent ? " persistent" : "";
        for (const LoopDim& d : n->dims) {
          line += d.is_tile ? fmt::format(" tile({}..{}) as {}", ref(d.begin), ref(d.end),
                                          sym_name(d.sym))
                            : fmt::format(" grid({}..{})", ref(d.begin), ref(d.end));
        }
        for (size_t i = 0; i < n->carried.size(); ++i)
          line += fmt::format(" carry {} = {}", ref(n->carried[i]), ref(n->inits[i]));
        break;
      }
      default:
        for (size_t i = 0; i < n->args.size(); ++i) line += (i ? ", " : " ") + ref(n->args[i]);
        if (n->op == Op::Alloc && n->ival == fill_value) line += fmt::format(" fill {}", n->fval);
        if (n->op == Op::Alloc && n->like)
          line += fmt::format(" like {}{}", ref(n->like), n->fn == alloc_strided ? " strided" : "");
        break;
    }
    std::string t = type_str(n);
    if (!t.empty()) line += " : " + t;
    if (names && !n->name.empty() && n->op != Op::ShapeCheck &&
        !(n->op == Op::Arg && n->name == fmt::format("arg{}", n->ival)))
      line += "  // " + n->name;
    out += line + "\n";
    if (n->op == Op::Loop) {
      print_block(n->body, indent + 1, names, out);
      out += pad + "}\n";
    }
  }
}

std::string print(const Graph& g, bool names) {
  std::string out = "kernel " + g.kernel_name + "\n";
  print_block(g.host, 1, names, out);
  return out;
}

}  // namespace tessel::ir
