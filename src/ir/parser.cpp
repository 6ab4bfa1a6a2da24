// The IR's text parser: one statement per line, read with a cursor (see parser.hpp).
#include "ir/parser.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>

#include "ir/ir_text.hpp"
#include "ir/text_cursor.hpp"

namespace tessel::ir {

ParseError::ParseError(int line, int column, const std::string& what, const std::string& text_line)
    : UserError("", {},
                fmt::format("IR text line {}, column {}: {}\n    {}\n    {}^", line, column, what,
                            text_line, std::string(column > 0 ? column - 1 : 0, ' '))),
      line_(line),
      column_(column) {}

namespace {

/// Parsed file names live as long as the process, as std::source_location's do.
const char* intern(const std::string& s) {
  static std::mutex mu;
  static std::set<std::string> names;
  std::lock_guard<std::mutex> lock(mu);
  return names.insert(s).first->c_str();
}

class Parser : TextCursor {
 public:
  explicit Parser(const std::string& text) : TextCursor(text), g_(std::make_unique<Graph>()) {
    // Every printed id gets its node now (ids are positions in Graph::nodes()); the
    // nodes without a result are made after them.
    int max_id = -1;
    for (size_t l = 0; l < lines_.size(); ++l)
      for (size_t i = 0; i + 1 < lines_[l].size(); ++i)
        if (lines_[l][i] == '%' && std::isdigit(static_cast<unsigned char>(lines_[l][i + 1]))) {
          long v = std::strtol(lines_[l].c_str() + i + 1, nullptr, 10);
          if (v > kMaxId)
            fail_at({static_cast<int>(l) + 1, static_cast<int>(i) + 1},
                    fmt::format("value id above {}", kMaxId));
          max_id = std::max(max_id, static_cast<int>(v));
        }
    for (int i = 0; i <= max_id; ++i) g_->new_node(Op::Const, {});
    defined_.assign(static_cast<size_t>(max_id + 1), false);
    first_use_.assign(static_cast<size_t>(max_id + 1), Pos{});
  }

  std::unique_ptr<Graph> run() {
    bool seen_kernel = false, in_body = false;
    for (li_ = 0; li_ < lines_.size(); ++li_) {
      col_ = 0;
      skip_ws();
      if (at_end()) continue;  // blank, or a comment line
      if (!seen_kernel) {
        kernel_line();
        seen_kernel = true;
        continue;
      }
      if (!in_body && header_line()) continue;
      in_body = true;
      statement();
    }
    if (!seen_kernel) fail_at({1, 1}, "expected 'kernel NAME', found no statement");
    if (blocks_.size() > 1)
      fail_at(pos_of_.at(blocks_.back().loop),
              "expected '}' closing this loop before the end of the text");
    finish();
    return std::move(g_);
  }

 private:
  static constexpr long kMaxId = 1 << 22;

  struct Open {
    Node* loop;
    Block* body;
    std::set<const Node*> visible;
  };

  // ---- values and syms ----
  /// The node `%N` names; a use of it outside the blocks that see its definition fails
  /// unless `declaration` (header references and carry lists, checked at the end).
  Node* value(bool declaration = false) {
    skip_ws();
    Pos p = here();
    if (peek() != '%') expected("a value (%N)");
    ++col_;
    int64_t id = integer("a value id after '%'");
    if (id < 0 || id >= static_cast<int64_t>(g_->nodes().size())) fail_at(p, "bad value id");
    Node* n = g_->nodes().at(static_cast<size_t>(id)).get();
    if (first_use_[static_cast<size_t>(id)].line == 0) first_use_[static_cast<size_t>(id)] = p;
    if (!declaration && !visible(n))
      fail_at(p, defined_[static_cast<size_t>(id)]
                     ? fmt::format("%{} is used outside the block that defines it", id)
                     : fmt::format("%{} is used before its definition", id));
    return n;
  }
  /// A value that must be a loop (tile indices, tile attributes, carried values).
  Node* loop_value() {
    skip_ws();
    Pos p = here();
    Node* n = value();
    if (n->op != Op::Loop) fail_at(p, fmt::format("%{} is not a loop", n->id));
    return n;
  }
  bool visible(const Node* n) const {
    for (const Open& o : blocks_)
      if (o.visible.count(n)) return true;
    return false;
  }
  Sym* sym(bool allow_one, Pos* where = nullptr) {
    skip_ws();
    Pos p = here();
    if (where) *where = p;
    if (allow_one && accept("1")) return nullptr;
    char k = peek();
    Sym::Kind kind = k == 't' ? Sym::tile : k == 'r' ? Sym::extent_k : Sym::block_k;
    if ((k != 't' && k != 'r' && k != 'b') || col_ + 1 >= text().size() ||
        !std::isdigit(static_cast<unsigned char>(text()[col_ + 1])))
      expected(allow_one ? "a dimension (tN, rN, bN or 1)" : "a sym (tN, rN or bN)");
    ++col_;
    size_t id = static_cast<size_t>(integer("a sym id"));
    if (id > 100000) fail_at(p, "sym id too large");
    while (g_->syms().size() <= id) {
      g_->new_sym(Sym::tile);
      sym_kind_known_.push_back(false);
      sym_use_.push_back(Pos{});
    }
    Sym* s = g_->syms()[id].get();
    if (sym_kind_known_[id] && s->kind != kind)
      fail_at(p, fmt::format("{} was used as {} before", std::string(1, k) + std::to_string(id),
                             sym_name(s)));
    s->kind = kind;
    sym_kind_known_[id] = true;
    if (sym_use_[id].line == 0) sym_use_[id] = p;
    return s;
  }

  // ---- lines ----
  void kernel_line() {
    expect("kernel");
    skip_ws();
    g_->kernel_name = peek() == '"' ? string_lit("a kernel name") : word("a kernel name");
    end_line(nullptr);
  }

  /// The optional `@fI:L:C` and `// name` that end a line, then the line's end.
  void end_line(Node* n, std::string* name = nullptr) {
    skip_ws();
    if (n && peek() == '@') {
      ++col_;
      Pos p = here();
      if (peek() != 'f') expected("a source file (fN) after '@'");
      ++col_;
      size_t f = static_cast<size_t>(integer("a file number"));
      if (f >= files_.size())
        fail_at(p, fmt::format("file f{} is not declared (`file f{} \"path\"`)", f, f));
      expect(":");
      int line = static_cast<int>(integer("a line number"));
      expect(":");
      int column = static_cast<int>(integer("a column number"));
      n->loc = SourceLoc{files_[f], line, column};
    }
    skip_ws();
    if (text().compare(col_, 2, "//") == 0) {
      col_ += 2;
      if (peek() == ' ') ++col_;  // the printer's `// name`
      std::string out;
      for (; col_ < text().size(); ++col_) {
        char c = text()[col_];
        if (c == '\\' && col_ + 1 < text().size()) {
          c = text()[++col_];
          out += c == 'n' ? '\n' : c;
        } else {
          out += c;
        }
      }
      if (name)
        *name = out;
      else if (n)
        n->name = out;
      return;
    }
    if (col_ < text().size()) expected("the end of the line");
  }

  bool header_line() {
    if (accept("index_dtype")) {
      g_->index_dtype = dtype();
      g_->index_dtype_forced = accept("forced");
    } else if (accept("check_bounds")) {
      g_->check_bounds = true;
    } else if (accept("fast_accum")) {
      g_->fast_accum = true;
    } else if (accept("loads")) {
      g_->num_loads = static_cast<int>(integer("the number of loads"));
    } else if (accept("block_size")) {
      Pos p = here();
      if (integer("a block id") != g_->num_block_sizes)
        fail_at(p, fmt::format("expected block id {} (block sizes are numbered in order)",
                               g_->num_block_sizes));
      ++g_->num_block_sizes;
      g_->block_size_hint.push_back(accept("hint") ? integer("a hint") : 0);
      std::pair<int64_t, int64_t> range{0, 0};
      if (accept("range")) {
        range.first = integer("the range's minimum");
        expect("..");
        range.second = integer("the range's maximum");
      }
      g_->block_size_range.push_back(range);
    } else if (accept("tunable")) {
      std::string name = string_lit("the tunable's name in quotes");
      g_->tunables.emplace_back(name, int_list());
    } else if (accept("arg_facts")) {
      arg_facts();
    } else if (accept("file")) {
      Pos p = here();
      std::string f = word("a file id (fN)");
      if (f != fmt::format("f{}", files_.size()))
        fail_at(p,
                fmt::format("expected file id f{} (files are numbered in order)", files_.size()));
      files_.push_back(intern(string_lit("the file's path in quotes")));
    } else if (accept("sym")) {
      sym_line();
      return true;
    } else if (accept("reduction_dims")) {
      do g_->reduction_syms.push_back(sym(false));
      while (accept(","));
    } else {
      return false;
    }
    end_line(nullptr);
    return true;
  }

  std::vector<int64_t> int_list() {
    expect("[");
    std::vector<int64_t> v;
    if (!accept("]")) {
      do v.push_back(integer("an integer"));
      while (accept(","));
      expect("]");
    }
    return v;
  }

  void arg_facts() {
    Pos p = here();
    if (integer("an argument position") != static_cast<int64_t>(g_->arg_facts.size()))
      fail_at(p, fmt::format("expected argument position {} (facts are listed in order)",
                             g_->arg_facts.size()));
    ArgFacts f;
    auto bits = [&] {
      std::vector<bool> b;
      for (int64_t x : int_list()) b.push_back(x != 0);
      return b;
    };
    for (;;) {
      if (accept("contiguous"))
        f.contiguous = true;
      else if (accept("unit_stride_dim"))
        f.unit_stride_dim = static_cast<int>(integer("a dim"));
      else if (accept("base_aligned"))
        f.base_aligned = true;
      else if (accept("stride_aligned"))
        f.stride_aligned = bits();
      else if (accept("size_div16"))
        f.size_div16 = bits();
      else if (accept("known_sizes"))
        f.known_sizes = int_list();
      else if (accept("alias"))
        f.alias_group = static_cast<int>(integer("an alias group"));
      else
        break;
    }
    g_->arg_facts.push_back(f);
  }

  void sym_line() {
    Sym* s = sym(false);
    if (declared_syms_.count(s)) fail(fmt::format("{} is declared twice", sym_name(s)));
    declared_syms_.insert(s);
    for (;;) {
      if (accept("loop")) {
        s->loop = value(true);
        expect("dim");
        s->loop_dim = static_cast<int>(integer("a loop dim"));
      } else if (accept("block")) {
        s->block_id = static_cast<int>(integer("a block id"));
      } else if (accept("extent")) {
        s->extent = value(true);
      } else if (accept("pow2")) {
        s->extent_pow2 = integer("a power of two");
      } else if (accept("trace")) {
        s->extent_at_trace = integer("the extent at trace time");
      } else {
        break;
      }
    }
    end_line(nullptr, &s->name);
  }

  std::vector<Node*> value_list() {
    std::vector<Node*> v;
    skip_ws();
    if (peek() != '%') return v;
    do v.push_back(value());
    while (accept(","));
    return v;
  }

  /// `[INDEX, ...]` of access `n`: fills n->access and returns the index operands.
  std::vector<Node*> index_list(Node* n) {
    Pos open = here();
    const Node* t = n->args.at(0);
    if (!t->is_tensor() && t->op != Op::Multicast)
      fail_at(open, fmt::format("%{} is not a tensor (an arg, alloc or multicast_like)", t->id));
    expect("[");
    std::vector<Node*> operands;
    bool empty = accept("]");
    while (!empty) {
      IndexInfo info;
      if (accept("newaxis")) {
        info.kind = IndexKind::newaxis;
        n->access.push_back(info);
        if (accept(",")) continue;
        break;
      }
      if (accept("tile"))
        info.kind = IndexKind::tile;
      else if (accept("all"))
        info.kind = IndexKind::all;
      else if (accept("gather"))
        info.kind = IndexKind::gather;
      operands.push_back(info.kind == IndexKind::tile ? loop_value() : value());
      if (accept("as")) info.sym = sym(false);
      if (!info.sym && (info.kind == IndexKind::tile || info.kind == IndexKind::all))
        expected("'as' and the index's sym");
      n->access.push_back(info);
      if (!accept(",")) break;
    }
    if (!empty) expect("]");
    if (static_cast<int>(operands.size()) != t->rank)
      fail_at(open, fmt::format("{} of %{} (rank {}) has {} indices", op_name(n->op), t->id,
                                t->rank, operands.size()));
    return operands;
  }

  void memory_order(Node* n) {
    Pos p = here();
    std::string s = word("a memory order (relaxed, acquire, release, acq_rel)");
    bool found = false;
    for (Sem x : {Sem::relaxed, Sem::acquire, Sem::release, Sem::acq_rel})
      if (s == sem_name(x)) n->sem = x, found = true;
    if (!found)
      fail_at(p, fmt::format("expected a memory order (relaxed, acquire, release, acq_rel), "
                             "found '{}'",
                             s));
    p = here();
    s = word("a scope (cta, gpu, sys)");
    found = false;
    for (Scope x : {Scope::cta, Scope::gpu, Scope::sys})
      if (s == scope_name(x)) n->scope = x, found = true;
    if (!found) fail_at(p, fmt::format("expected a scope (cta, gpu, sys), found '{}'", s));
  }

  void loop_operands(Node* n) {
    n->persistent = accept("persistent");
    skip_ws();
    while (peek() == 't' || peek() == 'g') {
      LoopDim d;
      d.is_tile = accept("tile");
      if (!d.is_tile) expect("grid");
      expect("(");
      d.begin = value();
      expect("..");
      d.end = value();
      expect(")");
      if (accept("as")) d.sym = sym(false);
      if (d.is_tile && !d.sym) expected("'as' and the tile's sym");
      if (accept("block")) d.block_id = static_cast<int>(integer("a block id"));
      if (accept("fixed")) d.fixed_block = integer("a fixed block size");
      n->dims.push_back(d);
      skip_ws();
    }
    if (n->dims.empty()) expected("a loop dimension (tile(...) or grid(...))");
    while (accept("carry")) {
      n->carried.push_back(value(true));
      expect("=");
      n->inits.push_back(value());
    }
    expect("{");
  }

  /// Reads the operands of `n` after its op name (the switch covers every op).
  void operands(Node* n, std::string& const_text) {
    switch (n->op) {
      case Op::Arg:
        n->ival = integer("the argument's position");
        break;
      case Op::Const:
        const_pos_ = here();
        const_text = token("a constant");
        if (accept("ival")) n->ival = integer("an integer"), explicit_ival_ = true;
        if (accept("fval")) n->fval = number("a number"), explicit_fval_ = true;
        break;
      case Op::Size:
      case Op::Stride:
        n->args = {value()};
        expect("dim");
        n->ival = integer("a dimension");
        break;
      case Op::LoopIndex:
      case Op::TileIndex:
      case Op::TileBegin:
      case Op::TileEnd:
      case Op::TileBlock:
      case Op::TileId: {
        n->args = {loop_value()};
        expect("dim");
        Pos p = here();
        n->ival = integer("a dimension");
        if (n->ival < 0 || n->ival >= static_cast<int64_t>(n->args[0]->dims.size()))
          fail_at(p, fmt::format("%{} has no dim {}", n->args[0]->id, n->ival));
        break;
      }
      case Op::LoopResult:
        n->args = {loop_value()};
        expect("carry");
        n->ival = integer("a carried value's position");
        break;
      case Op::Carried:
        n->args = {loop_value()};
        break;
      case Op::Alloc:
        n->args = value_list();
        if (accept("fill")) n->ival = fill_value, n->fval = number("a fill value");
        if (accept("like")) n->like = value();
        if (accept("strided")) n->fn = alloc_strided;
        break;
      case Op::ShapeCheck: {
        n->args = value_list();
        if (n->args.size() != 2) expected("two sizes");
        n->ival = accept("eq") ? 0 : accept("ge") ? 1 : (expected("'eq' or 'ge'"), 0);
        skip_ws();
        if (peek() == '"') n->name = string_lit("a description");
        break;
      }
      case Op::Unary:
        n->fn = static_cast<uint8_t>(named(unary_named, "a unary function"));
        n->args = {value()};
        break;
      case Op::Binary:
        n->fn = static_cast<uint8_t>(named(binary_named, "a binary function"));
        n->args = {value()};
        expect(",");
        n->args.push_back(value());
        break;
      case Op::Reduce:
        n->fn = static_cast<uint8_t>(named(reduce_named, "a reduction"));
        n->args = {value()};
        expect("dim");
        n->ival = integer("a dimension");
        n->keepdim = accept("keepdim");
        break;
      case Op::Permute: {
        n->args = {value()};
        expect("dims");
        expect("[");
        std::vector<int> perm;
        do {
          perm.push_back(static_cast<int>(integer("a dimension")));
        } while (accept(","));
        expect("]");
        n->ival = encode_permutation(perm);
        break;
      }
      case Op::Load: {
        n->args = {value()};
        std::vector<Node*> idx = index_list(n);
        n->args.insert(n->args.end(), idx.begin(), idx.end());
        if (accept("#")) n->load_id = static_cast<int>(integer("a load id"));
        break;
      }
      case Op::Store: {
        n->args = {value()};
        std::vector<Node*> idx = index_list(n);
        expect("=");
        n->args.push_back(value());
        n->args.insert(n->args.end(), idx.begin(), idx.end());
        break;
      }
      case Op::Atomic:
      case Op::Signal:
      case Op::Wait: {
        if (n->op == Op::Atomic)
          n->fn = static_cast<uint8_t>(named(atomic_named, "an atomic function"));
        n->args = {value()};
        std::vector<Node*> idx = index_list(n);
        while (accept(",")) n->args.push_back(value());
        n->ival = static_cast<int64_t>(n->args.size()) - 1;
        if (n->ival < 1) expected("', ' and an operand");
        n->args.insert(n->args.end(), idx.begin(), idx.end());
        memory_order(n);
        break;
      }
      case Op::Loop:
        loop_operands(n);
        break;
      case Op::Multicast:
        n->args = value_list();
        if (n->args.size() != 2) expected("an example tensor and dev_ptrs");
        n->rank = n->args[0]->rank;
        break;
      case Op::DeviceScalar:
      case Op::Return:
      case Op::Where:
      case Op::Cast:
      case Op::Full:
      case Op::Arange:
      case Op::View:
      case Op::ProgramId:
      case Op::Yield:
        n->args = value_list();
        break;
    }
  }

  /// `: TYPE` (dtype and shape, or a tensor's rank).
  void type(Node* n, bool& tensor) {
    n->dtype = dtype();
    if (accept("tensor")) {
      if (n->op != Op::Arg && n->op != Op::Alloc) fail("only an arg or alloc is a tensor");
      expect("rank");
      n->rank = static_cast<int>(integer("a rank"));
      tensor = true;
      return;
    }
    if (!accept("[")) return;
    if (accept("]")) return;
    do n->shape.push_back(sym(true));
    while (accept(","));
    expect("]");
  }

  void statement() {
    Pos start = here();
    if (accept("}")) {
      if (blocks_.size() < 2) fail_at(start, "'}' closes no loop");
      blocks_.pop_back();
      end_line(nullptr);
      return;
    }
    Node* n = nullptr;
    bool result = false;
    if (peek() == '%') {
      n = value(true);
      size_t id = static_cast<size_t>(n->id);
      if (defined_[id]) fail_at(start, fmt::format("%{} is defined twice", id));
      defined_[id] = true;
      result = accept("=");
      if (!result && !accept(":")) expected("'=' (a value) or ':' (a statement)");
    }
    Pos op_pos = here();
    Op op = named(op_named, "an op name");
    if (has_result(op) && !result)
      fail_at(op_pos, fmt::format("expected '%N = ' before '{}'", op_name(op)));
    if (!has_result(op) && result)
      fail_at(start, fmt::format("'{}' has no result (write `%N: {}`)", op_name(op), op_name(op)));
    if (!n) n = g_->new_node(op, {});  // a statement without its id: after every printed one
    int id = n->id;
    *n = Node{};
    n->op = op;
    n->id = id;
    pos_of_[n] = start;
    n->depth = static_cast<int>(blocks_.size()) - 1;
    n->dtype = op == Op::Loop                                                ? DType::i64
               : op == Op::Yield || op == Op::Return || op == Op::ShapeCheck ? DType::boolean
                                                                             : DType::f32;
    std::string const_text;
    explicit_ival_ = explicit_fval_ = false;
    operands(n, const_text);
    bool tensor = false, typed = false;
    if (op != Op::Loop && accept(":")) {
      if (op == Op::Store || op == Op::Return || op == Op::Yield || op == Op::ShapeCheck)
        fail(fmt::format("'{}' has no type", op_name(op)));
      type(n, tensor);
      typed = true;
    }
    if (!typed && op != Op::Loop && op != Op::Store && op != Op::Return && op != Op::Yield &&
        op != Op::ShapeCheck)
      expected("':' and a type");
    if (op == Op::Const) constant(n, const_text, const_pos_);
    if (op == Op::Arg)
      n->arg_kind = tensor               ? ArgKind::tensor
                    : is_float(n->dtype) ? ArgKind::float_scalar
                                         : ArgKind::int_scalar;
    if (op == Op::Alloc && !tensor) fail_at(op_pos, "an alloc's type is 'DTYPE tensor rank N'");
    check_operands(n, op_pos);
    end_line(n);
    if (op == Op::Arg && tensor && n->name.empty()) n->name = fmt::format("arg{}", n->ival);
    place(n, start);
  }

  /// What a pass would index without checking: operand counts, tensors, dims, axes.
  void check_operands(const Node* n, Pos p) const {
    auto count = [&](size_t want) {
      if (n->args.size() != want)
        fail_at(p, fmt::format("'{}' takes {} operands, found {}", op_name(n->op), want,
                               n->args.size()));
    };
    auto tensor = [&](const Node* t) {
      if (!t->is_tensor() && t->op != Op::Multicast)
        fail_at(p, fmt::format("%{} is not a tensor (an arg, alloc or multicast_like)", t->id));
    };
    auto below = [&](int64_t v, size_t n_max, const char* what) {
      if (v < 0 || v >= static_cast<int64_t>(n_max))
        fail_at(p, fmt::format("{} {} is out of range (0 to {})", what, v,
                               static_cast<int64_t>(n_max) - 1));
    };
    switch (n->op) {
      case Op::Arg:
        below(n->ival, 1 << 16, "argument position");
        break;
      case Op::Size:
      case Op::Stride:
        tensor(n->args[0]);
        below(n->ival, static_cast<size_t>(n->args[0]->rank), "dim");
        break;
      case Op::DeviceScalar:
        if (n->args.empty()) count(1);
        tensor(n->args[0]);
        count(static_cast<size_t>(n->args[0]->rank) + 1);
        break;
      case Op::Alloc:
        if (n->like) tensor(n->like);
        break;
      case Op::Reduce:
        below(n->ival, n->args[0]->shape.size(), "reduction axis");
        break;
      case Op::Atomic:
        if (n->ival != (n->afn() == AtomicFn::cas ? 2 : 1))
          fail_at(p, fmt::format("atomic {} takes {} operand(s) after the indices",
                                 atomic_name(n->afn()), n->afn() == AtomicFn::cas ? 2 : 1));
        break;
      case Op::Signal:
      case Op::Wait:
        if (n->ival > 2) fail_at(p, fmt::format("'{}' takes 1 or 2 operands", op_name(n->op)));
        break;
      case Op::Where:
        count(3);
        break;
      case Op::Cast:
      case Op::Full:
      case Op::View:
        count(1);
        break;
      case Op::Permute: {
        count(1);
        std::vector<int> perm = permutation(n);
        std::vector<int> sorted = perm;
        std::sort(sorted.begin(), sorted.end());
        const bool extra = (static_cast<uint64_t>(n->ival) >> (4 * perm.size())) != 0;
        for (size_t i = 0; i < sorted.size(); ++i)
          if (extra || sorted[i] != static_cast<int>(i) || perm.size() != n->args[0]->shape.size())
            fail_at(p, "'permute' takes a permutation of its operand's dims");
        break;
      }
      case Op::Arange:
      case Op::ProgramId:
        count(0);
        break;
      case Op::Load:
      case Op::Store:  // index_list checked the tensor and its indices
      case Op::Const:
      case Op::ShapeCheck:
      case Op::Return:
      case Op::Unary:
      case Op::Binary:
      case Op::Multicast:
      case Op::Loop:
      case Op::LoopIndex:
      case Op::TileIndex:
      case Op::TileBegin:
      case Op::TileEnd:
      case Op::TileBlock:
      case Op::TileId:
      case Op::Carried:
      case Op::Yield:
      case Op::LoopResult:
        break;
    }
  }

  void constant(Node* n, const std::string& t, Pos p) {
    ConstValue v;
    const char* e = nullptr;
    if (is_float(n->dtype)) {
      char* end = nullptr;
      v.fval = std::strtod(t.c_str(), &end);
      e = end;
    } else {
      auto r = std::from_chars(t.data(), t.data() + t.size(), v.ival);
      e = r.ec == std::errc() ? r.ptr : t.c_str();
    }
    if (e != t.c_str() + t.size() || t.empty())
      fail_at(p,
              fmt::format("expected a constant of dtype {}, found '{}'", dtype_name(n->dtype), t));
    ConstValue derived = const_secondary(n->dtype, v);
    if (is_float(n->dtype)) {
      n->fval = v.fval;
      if (!explicit_ival_) n->ival = derived.ival;
    } else {
      n->ival = v.ival;
      if (!explicit_fval_) n->fval = derived.fval;
    }
  }

  /// Appends `n` to the open block (a carried value to its loop's carried list instead).
  void place(Node* n, Pos start) {
    Open& top = blocks_.back();
    if (n->op == Op::Carried) {
      Node* loop = top.loop;
      if (!loop || n->args.at(0) != loop ||
          std::find(loop->carried.begin(), loop->carried.end(), n) == loop->carried.end())
        fail_at(start, fmt::format("%{} = carried must be listed as `carry %{} = ...` on the line "
                                   "of the loop whose body holds it",
                                   n->id, n->id));
      top.visible.insert(n);
      return;
    }
    top.body->push_back(n);
    top.visible.insert(n);
    if (n->op == Op::Loop) {
      blocks_.push_back(Open{n, &n->body, {}});
      blocks_.back().visible.insert(n);
    }
  }

  /// Checks that every used value and Sym is defined and derives what the text leaves out.
  void finish() {
    for (size_t i = 0; i < defined_.size(); ++i)
      if (!defined_[i] && first_use_[i].line)
        fail_at(first_use_[i], fmt::format("%{} is used but never defined", i));
    for (const auto& up : g_->nodes()) {
      Node* n = up.get();
      if (n->op == Op::Loop && defined_[static_cast<size_t>(n->id)])
        for (size_t i = 0; i < n->dims.size(); ++i) {
          Sym* s = n->dims[i].sym;
          if (s && !declared_syms_.count(s)) {
            s->loop = n;
            s->loop_dim = static_cast<int>(i);
            s->block_id = n->dims[i].block_id;
            declared_syms_.insert(s);
          }
        }
    }
    for (size_t i = 0; i < g_->syms().size(); ++i) {
      const Sym* s = g_->syms()[i].get();
      if (s->loop && (s->loop->op != Op::Loop ||
                      s->loop_dim >= static_cast<int>(s->loop->dims.size()) || s->loop_dim < 0))
        fail_at(sym_use_[i],
                fmt::format("{}: %{} has no loop dim {}", sym_name(s), s->loop->id, s->loop_dim));
    }
    for (size_t i = 0; i < g_->syms().size(); ++i)
      if (sym_use_[i].line && !declared_syms_.count(g_->syms()[i].get()))
        fail_at(sym_use_[i],
                fmt::format("{} is used but never declared (`sym {} ...` in the "
                            "header, or `as {}` on a loop's tile)",
                            sym_name(g_->syms()[i].get()), sym_name(g_->syms()[i].get()),
                            sym_name(g_->syms()[i].get())));
    walk(g_->host, [&](Node* n) {
      if (n->op == Op::Store) n->dtype = n->args.at(0)->dtype;
      if (n->op == Op::Signal)
        n->fn = static_cast<uint8_t>(n->ival == 2 ? AtomicFn::cas : AtomicFn::xchg);
      if (n->op == Op::Return) g_->outputs = n->args;
      if (n->op == Op::LoopResult) {
        Node* loop = n->args.at(0);
        size_t k = static_cast<size_t>(n->ival);
        if (loop->op != Op::Loop || k >= loop->carried.size())
          fail_at(pos_of_.at(n),
                  fmt::format("loop_result of %{}: no carried value {}", loop->id, k));
        if (loop->results.size() <= k) loop->results.resize(k + 1, nullptr);
        loop->results[k] = n;
      }
      if (n->op == Op::Loop && !n->carried.empty() &&
          (n->body.empty() || n->body.back()->op != Op::Yield ||
           n->body.back()->args.size() != n->carried.size()))
        fail_at(pos_of_.at(n),
                fmt::format("a loop with {} carried values ends its body with a yield of as "
                            "many values",
                            n->carried.size()));
    });
    for (const Node* n : g_->host)
      if (n->op == Op::Arg) {
        size_t i = static_cast<size_t>(n->ival);
        if (g_->args.size() <= i) g_->args.resize(i + 1, nullptr);
        if (!g_->args[i]) g_->args[i] = const_cast<Node*>(n);
      }
    for (size_t i = 0; i < g_->args.size(); ++i)
      if (!g_->args[i]) fail_at({1, 1}, fmt::format("no `arg {}` line", i));
    try {
      verify(*g_);
    } catch (const InternalError& e) {
      fail_at({1, 1}, std::string("the program is not well formed: ") + e.what());
    }
  }

  std::unique_ptr<Graph> g_;
  std::vector<bool> defined_;
  std::vector<Pos> first_use_;
  std::vector<bool> sym_kind_known_;
  std::vector<Pos> sym_use_;
  std::set<const Sym*> declared_syms_;
  std::vector<const char*> files_;
  std::map<const Node*, Pos> pos_of_;
  std::vector<Open> blocks_{Open{nullptr, &g_->host, {}}};
  bool explicit_ival_ = false, explicit_fval_ = false;
  Pos const_pos_;
};

}  // namespace

std::unique_ptr<Graph> parse(const std::string& text) { return Parser(text).run(); }

}  // namespace tessel::ir
