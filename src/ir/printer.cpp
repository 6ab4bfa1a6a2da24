// Text form of the IR, one node per line, loop bodies indented; ir/parser.hpp reads it
// back (its file comment gives the grammar).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <cstring>
#include <map>

#include "ir/ir_text.hpp"

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

namespace {

std::string ref(const Node* n) { return fmt::format("%{}", n->id); }

std::string const_primary_text(const Node* n) {
  return is_float(n->dtype) ? fmt::format("{}", n->fval) : fmt::format("{}", n->ival);
}

const char* file_of(const Node* n) { return n->loc.file ? n->loc.file : ""; }

std::string index_kind_name(IndexKind k) {
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

std::string indices(const Node* n, size_t first) {
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

std::string type_str(const Node* n) {
  if (n->is_tensor()) return fmt::format("{} tensor rank {}", dtype_name(n->dtype), n->rank);
  if (n->op == Op::Store || n->op == Op::Loop || n->op == Op::Return || n->op == Op::Yield ||
      n->op == Op::ShapeCheck)
    return "";
  return dtype_name(n->dtype) + (n->shape.empty() ? "" : shape_str(n->shape));
}

std::string operand_list(const Node* n) {
  std::string out;
  for (size_t i = 0; i < n->args.size(); ++i) out += (i ? ", " : " ") + ref(n->args[i]);
  return out;
}

class Printer {
 public:
  Printer(const Graph& g, bool names) : g_(g), names_(names) {
    if (!names) return;
    auto add_file = [&](const Node* n) {
      if (has_loc(n) && !files_.count(file_of(n))) {
        int id = static_cast<int>(files_.size());
        files_[file_of(n)] = id;
        file_order_.push_back(file_of(n));
      }
    };
    walk(g.host, [&](const Node* n) {
      add_file(n);
      for (const Node* c : n->carried) add_file(c);
    });
  }

  std::string run() {
    std::string out = "kernel " + kernel_name_text(g_.kernel_name) + "\n";
    header(out);
    block(g_.host, 1, out);
    return out;
  }

 private:
  static bool has_loc(const Node* n) {
    return (n->loc.file && *n->loc.file) || n->loc.line || n->loc.column;
  }
  static std::string kernel_name_text(const std::string& name) {
    bool plain = !name.empty();
    for (char c : name) plain &= std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    return plain ? name : quote_ir_string(name);
  }

  void header(std::string& out) const {
    out += fmt::format("  index_dtype {}{}\n", dtype_name(g_.index_dtype),
                       g_.index_dtype_forced ? " forced" : "");
    if (g_.check_bounds) out += "  check_bounds\n";
    if (g_.fast_accum) out += "  fast_accum\n";
    if (g_.num_loads) out += fmt::format("  loads {}\n", g_.num_loads);
    for (int i = 0; i < g_.num_block_sizes; ++i) {
      size_t u = static_cast<size_t>(i);
      out += fmt::format("  block_size {}", i);
      if (u < g_.block_size_hint.size() && g_.block_size_hint[u])
        out += fmt::format(" hint {}", g_.block_size_hint[u]);
      if (u < g_.block_size_range.size() && g_.block_size_range[u] != std::pair<int64_t, int64_t>{})
        out += fmt::format(" range {}..{}", g_.block_size_range[u].first,
                           g_.block_size_range[u].second);
      out += "\n";
    }
    for (const auto& [name, choices] : g_.tunables)
      out += fmt::format("  tunable {} {}\n", quote_ir_string(name), choices);
    for (size_t i = 0; i < g_.arg_facts.size(); ++i) {
      const ArgFacts& f = g_.arg_facts[i];
      out += fmt::format("  arg_facts {}", i);
      if (f.contiguous) out += " contiguous";
      if (f.unit_stride_dim >= 0) out += fmt::format(" unit_stride_dim {}", f.unit_stride_dim);
      if (f.base_aligned) out += " base_aligned";
      auto bits = [](const std::vector<bool>& v) {
        std::vector<int> b(v.begin(), v.end());
        return fmt::format("{}", b);
      };
      if (!f.stride_aligned.empty()) out += " stride_aligned " + bits(f.stride_aligned);
      if (!f.size_div16.empty()) out += " size_div16 " + bits(f.size_div16);
      if (!f.known_sizes.empty()) out += fmt::format(" known_sizes {}", f.known_sizes);
      if (f.alias_group != -1) out += fmt::format(" alias {}", f.alias_group);
      out += "\n";
    }
    for (size_t i = 0; i < file_order_.size(); ++i)
      out += fmt::format("  file f{} {}\n", i, quote_ir_string(file_order_[i]));
    for (const auto& s : g_.syms()) {
      out += "  sym " + sym_name(s.get());
      if (s->loop) out += fmt::format(" loop {} dim {}", ref(s->loop), s->loop_dim);
      if (s->block_id != -1) out += fmt::format(" block {}", s->block_id);
      if (s->extent) out += " extent " + ref(s->extent);
      if (s->extent_pow2) out += fmt::format(" pow2 {}", s->extent_pow2);
      if (s->extent_at_trace) out += fmt::format(" trace {}", s->extent_at_trace);
      if (names_ && !s->name.empty()) out += "  // " + comment_text(s->name);
      out += "\n";
    }
    if (!g_.reduction_syms.empty()) {
      out += "  reduction_dims";
      for (size_t i = 0; i < g_.reduction_syms.size(); ++i)
        out += (i ? ", " : " ") + sym_name(g_.reduction_syms[i]);
      out += "\n";
    }
  }

  static std::string comment_text(const std::string& s) {
    std::string out;
    for (char c : s) {
      if (c == '\\')
        out += "\\\\";
      else if (c == '\n')
        out += "\\n";
      else
        out += c;
    }
    return out;
  }

  /// The text after the op name: operands and attributes.
  std::string operands(const Node* n) const {
    switch (n->op) {
      case Op::Arg:
        return fmt::format(" {}", n->ival);
      case Op::Const: {
        std::string s = " " + const_primary_text(n);
        ConstValue derived = const_secondary(n->dtype, {n->ival, n->fval});
        if (is_float(n->dtype) && derived.ival != n->ival) s += fmt::format(" ival {}", n->ival);
        if (!is_float(n->dtype) && std::memcmp(&derived.fval, &n->fval, sizeof(double)) != 0)
          s += fmt::format(" fval {}", n->fval);
        return s;
      }
      case Op::Size:
      case Op::Stride:
      case Op::LoopIndex:
      case Op::TileIndex:
      case Op::TileBegin:
      case Op::TileEnd:
      case Op::TileBlock:
      case Op::TileId:
        return fmt::format(" {} dim {}", ref(n->args[0]), n->ival);
      case Op::LoopResult:
        return fmt::format(" {} carry {}", ref(n->args[0]), n->ival);
      case Op::Carried:
        return " " + ref(n->args[0]);
      case Op::Alloc: {
        std::string s = operand_list(n);
        if (n->ival == fill_value) s += fmt::format(" fill {}", n->fval);
        if (n->like) s += fmt::format(" like {}", ref(n->like));
        if (n->fn == alloc_strided) s += " strided";
        return s;
      }
      case Op::ShapeCheck:
        return fmt::format("{} {}{}", operand_list(n), n->ival == 0 ? "eq" : "ge",
                           !names_ || n->name.empty() ? "" : " " + quote_ir_string(n->name));
      case Op::Unary:
        return fmt::format(" {} {}", unary_name(n->ufn()), ref(n->args[0]));
      case Op::Binary:
        return fmt::format(" {} {}, {}", binary_name(n->bfn()), ref(n->args[0]), ref(n->args[1]));
      case Op::Reduce:
        return fmt::format(" {} {} dim {}{}", reduce_name(n->rfn()), ref(n->args[0]), n->ival,
                           n->keepdim ? " keepdim" : "");
      case Op::Permute:
        return fmt::format(" {} dims [{}]", ref(n->args[0]), fmt::join(permutation(n), ", "));
      case Op::Load:
        return fmt::format(" {}[{}]{}", ref(n->args[0]), indices(n, 1),
                           n->load_id >= 0 ? fmt::format(" #{}", n->load_id) : "");
      case Op::Store:
        return fmt::format(" {}[{}] = {}", ref(n->args[0]), indices(n, 2), ref(n->args[1]));
      case Op::Atomic:
      case Op::Signal:
      case Op::Wait: {
        std::string s = n->op == Op::Atomic ? fmt::format(" {}", atomic_name(n->afn())) : "";
        s += fmt::format(" {}[{}]", ref(n->args[0]), indices(n, first_index(n)));
        for (size_t i = 1; i < first_index(n); ++i) s += fmt::format(", {}", ref(n->args[i]));
        return s + fmt::format(" {} {}", sem_name(n->sem), scope_name(n->scope));
      }
      case Op::Loop: {
        std::string s = n->persistent ? " persistent" : "";
        for (const LoopDim& d : n->dims) {
          s += fmt::format(" {}({}..{})", d.is_tile ? "tile" : "grid", ref(d.begin), ref(d.end));
          if (d.sym) s += " as " + sym_name(d.sym);
          if (d.block_id != -1) s += fmt::format(" block {}", d.block_id);
          if (d.fixed_block) s += fmt::format(" fixed {}", d.fixed_block);
        }
        for (size_t i = 0; i < n->carried.size(); ++i)
          s += fmt::format(" carry {} = {}", ref(n->carried[i]), ref(n->inits[i]));
        return s + " {";
      }
      case Op::DeviceScalar:
      case Op::Return:
      case Op::Where:
      case Op::Cast:
      case Op::Full:
      case Op::Arange:
      case Op::View:
      case Op::Multicast:
      case Op::ProgramId:
      case Op::Yield:
        return operand_list(n);
    }
    return "";
  }

  void line(const Node* n, const std::string& pad, std::string& out) const {
    std::string text = pad;
    text += ref(n) + (has_result(n->op) ? " = " : ": ");
    text += op_name(n->op) + operands(n);
    std::string t = type_str(n);
    if (!t.empty()) text += " : " + t;
    if (names_ && has_loc(n))
      text += fmt::format("  @f{}:{}:{}", files_.at(file_of(n)), n->loc.line, n->loc.column);
    bool default_arg_name = n->op == Op::Arg && n->arg_kind == ArgKind::tensor &&
                            n->name == fmt::format("arg{}", n->ival);
    if (names_ && !n->name.empty() && n->op != Op::ShapeCheck && !default_arg_name)
      text += "  // " + comment_text(n->name);
    out += text + "\n";
  }

  void block(const Block& b, int indent, std::string& out) const {
    std::string pad(indent * 2, ' ');
    for (const Node* n : b) {
      line(n, pad, out);
      if (n->op != Op::Loop) continue;
      for (const Node* c : n->carried) line(c, pad + "  ", out);
      block(n->body, indent + 1, out);
      out += pad + "}\n";
    }
  }

  const Graph& g_;
  bool names_;
  std::map<std::string, int> files_;
  std::vector<std::string> file_order_;
};

}  // namespace

std::string print(const Graph& g, bool names) { return Printer(g, names).run(); }

}  // namespace tessel::ir
