#include "passes/race_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <vector>

namespace tessel::passes {

using ir::Node;
using ir::Op;

namespace {

/// Which launch dims (bits) each node of one top-level loop nest depends on.
class LaunchDeps {
 public:
  LaunchDeps(const ir::Graph& g, const Node* top)
      : top_(top), all_((1u << top->dims.size()) - 1), deps_(g.nodes().size(), 0) {
    visit_block(top->body);
  }

  uint32_t all() const { return all_; }
  uint32_t of(const Node* n) const { return deps_.at(n->id); }

  /// The launch dims the positions of Sym `s` depend on: a launch dim's own bit, a nested
  /// loop's bounds.
  uint32_t of_sym(const ir::Sym* s) const {
    if (!s || s->kind != ir::Sym::tile) return 0;
    return s->loop == top_ ? 1u << s->loop_dim : bounds(s->loop);
  }

  /// The launch dims the indices of store `n` depend on. A multicast store's buffers are
  /// indexed by its dev_ptrs value: programs storing through different addresses write
  /// different buffers (programs storing one element of one buffer are still a race).
  uint32_t covered(const Node* n) const {
    uint32_t c = n->is_multicast_access() ? of(n->args[0]) : 0;
    for (const ir::Sym* s : ir::stack_shape(n)) c |= of_sym(s);
    size_t op = 2;
    for (const ir::IndexInfo& info : n->access) {
      if (info.kind == ir::IndexKind::newaxis) continue;
      const Node* operand = n->args.at(op++);
      if (info.kind == ir::IndexKind::tile) c |= of_sym(info.sym);
      if (info.kind == ir::IndexKind::scalar || info.kind == ir::IndexKind::gather)
        c |= of(operand);
    }
    return c;
  }

 private:
  uint32_t bounds(const Node* loop) const {
    uint32_t b = 0;
    for (const ir::LoopDim& d : loop->dims) b |= of(d.begin) | of(d.end);
    return b;
  }

  uint32_t position(const Node* n) const {
    const Node* loop = n->args.at(0);
    if (n->op == Op::TileBlock) return 0;
    return loop == top_ ? 1u << n->ival : bounds(loop);
  }

  void visit_block(const ir::Block& b) {
    for (const Node* n : b) visit(n);
  }

  void visit(const Node* n) {
    uint32_t d = 0;
    switch (n->op) {
      case Op::LoopIndex:
      case Op::TileIndex:
      case Op::TileBegin:
      case Op::TileEnd:
      case Op::TileBlock:
      case Op::TileId:
        d = position(n);
        break;
      case Op::ProgramId:
        d = all_;
        break;
      case Op::Load:  // args[0]: a tensor (no launch dims) or a multicast tensor (its dev_ptrs)
        for (const Node* a : n->args) d |= of(a);
        for (const ir::IndexInfo& info : n->access) d |= of_sym(info.sym);
        break;
      case Op::Reduce:  // the reduced dimension's valid elements (a tile's ragged edge)
        d = of(n->args[0]) | of_sym(n->args[0]->shape.at(static_cast<size_t>(n->ival)));
        break;
      case Op::LoopResult:
        d = of(n->args[0]->carried.at(static_cast<size_t>(n->ival)));
        break;
      case Op::Loop:
        visit_loop(n);
        return;
      case Op::Atomic:  // the old values depend on the order the programs run in
      case Op::Signal:
        d = all_;
        break;
      case Op::Store:
      case Op::Wait:
      case Op::Yield:
        return;
      // Values: depend on their operands.
      case Op::Arg:
      case Op::Size:
      case Op::Stride:
      case Op::Alloc:
      case Op::DeviceScalar:
      case Op::ShapeCheck:
      case Op::Return:
      case Op::Const:
      case Op::Unary:
      case Op::Binary:
      case Op::Where:
      case Op::Cast:
      case Op::Full:
      case Op::Arange:
      case Op::Permute:
      case Op::View:
      case Op::Multicast:
      case Op::Carried:
        for (const Node* a : n->args) d |= of(a);
        break;
    }
    deps_.at(n->id) = d;
  }

  // Carried values depend on their initial value, every iteration's next value, and how
  // many iterations run (the loop's bounds): iterated until nothing changes.
  void visit_loop(const Node* loop) {
    const Node* yield = loop->carried.empty() ? nullptr : loop->body.back();
    for (size_t i = 0; i < loop->carried.size(); ++i)
      deps_.at(loop->carried[i]->id) = of(loop->inits[i]) | bounds(loop);
    while (true) {
      visit_block(loop->body);
      bool changed = false;
      for (size_t i = 0; yield && i < loop->carried.size(); ++i) {
        uint32_t& c = deps_.at(loop->carried[i]->id);
        uint32_t next = c | of(yield->args[i]);
        changed |= next != c;
        c = next;
      }
      if (!changed) return;
    }
  }

  const Node* top_;
  uint32_t all_;
  std::vector<uint32_t> deps_;  // by node id
};

/// Whether `value` reads tensor `t` (a load or a device scalar of it, or of a tensor that
/// may alias it), through data flow.
bool reads_tensor(const ir::Graph& g, const Node* value, const Node* t) {
  std::vector<const Node*> stack{value};
  std::set<const Node*> seen;
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (!n || !seen.insert(n).second) continue;
    if ((n->op == Op::Load || n->op == Op::DeviceScalar) && ir::may_alias(g, n->args.at(0), t))
      return true;
    if (n->op == Op::Carried) {
      const Node* loop = n->args.at(0);
      for (size_t i = 0; i < loop->carried.size(); ++i)
        if (loop->carried[i] == n) {
          stack.push_back(loop->inits[i]);
          stack.push_back(loop->body.back()->args.at(i));
        }
      continue;
    }
    if (n->op == Op::LoopResult) {
      stack.push_back(n->args.at(0)->carried.at(static_cast<size_t>(n->ival)));
      continue;
    }
    for (const Node* a : n->args) stack.push_back(a);
  }
  return false;
}

std::string dims_str(uint32_t mask, const Node* top) {
  std::vector<std::string> names;
  for (size_t d = 0; d < top->dims.size(); ++d)
    if (mask & (1u << d)) names.push_back(fmt::format("{}", d));
  std::string list;
  for (size_t i = 0; i < names.size(); ++i)
    list += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return fmt::format("{} {}", names.size() == 1 ? "dimension" : "dimensions", list);
}

// The launch dims with at most one program whatever the config: constant bounds one
// index apart (a grid) or within the tile's fixed block size.
uint32_t single_program_dims(const Node* top) {
  uint32_t single = 0;
  for (size_t d = 0; d < top->dims.size(); ++d) {
    const ir::LoopDim& ld = top->dims[d];
    if (ld.begin->op != Op::Const || ld.end->op != Op::Const) continue;
    const int64_t extent = ld.end->ival - ld.begin->ival;
    if (extent <= std::max<int64_t>(1, ld.is_tile ? ld.fixed_block : 1)) single |= 1u << d;
  }
  return single;
}

void check_store(const ir::Graph& g, const Node* top, const LaunchDeps& deps, const Node* n) {
  const uint32_t missing = deps.all() & ~deps.covered(n) & ~single_program_dims(top);
  if (!missing) return;
  const Node* t = n->args[0];
  const Node* value = n->args[1];
  std::string why;
  const bool one = (missing & (missing - 1)) == 0;
  if (deps.of(value) & missing)
    why = fmt::format(
        "and the stored value depends on {}, so each program writes its own value there",
        one ? "it" : "them");
  else if (reads_tensor(g, value, t))
    why = fmt::format(
        "and the stored value reads {}: a read-modify-write from every program, whose updates "
        "are lost",
        ir::describe_tensor(t));
  else
    return;  // every program writes the same value
  throw UserError(
      g.kernel_name, n->loc,
      fmt::format(
          "several programs of the launch write the same elements of {}: the store's indices "
          "do not depend on {} of the top-level loop at {} (one program per {}), {}",
          ir::describe_tensor(t), dims_str(missing, top), top->loc.str(),
          top->dims[0].is_tile ? "tile" : "grid index", why),
      "index the store with every tile of the loop (e.g. out(tm, tn) in a loop over tiles tm, tn), "
      "reduce inside one program (make that dimension a device loop nested inside this one), or "
      "use an atomic (ts::atomic_add, ...), which several programs may apply to one element");
}

// The launch dim of tensor dim `dim`'s index of access n when it is a tile of the
// top-level loop `top`, else -1.
int launch_dim_of_index(const Node* n, const Node* top, size_t dim) {
  size_t d = 0;
  for (const ir::IndexInfo& info : n->access) {
    if (info.kind == ir::IndexKind::newaxis) continue;
    if (d++ != dim) continue;
    const ir::Sym* s = info.sym;
    return info.kind == ir::IndexKind::tile && s && s->kind == ir::Sym::tile && s->loop == top
               ? s->loop_dim
               : -1;
  }
  return -1;
}

// A store and a load of one tensor in one launch whose tile indices cross (the load's dim
// d at the tile of launch dim a, the store's at that of launch dim b != a: an in-place
// transpose, x(tn, tm) = x(tm, tn).t()): program (i, j) overwrites elements that program
// (j, i) reads, in whichever order the programs run.
void check_crossed_read(const Node* top, const Node* store, const ir::Block& b,
                        const std::string& kernel) {
  const Node* t = store->args[0];
  const uint32_t single = single_program_dims(top);
  for (const Node* n : b) {
    if (n->op == Op::Loop) check_crossed_read(top, store, n->body, kernel);
    if (n->op != Op::Load || n->args[0] != t || t->op == Op::Multicast) continue;
    for (size_t d = 0; d < static_cast<size_t>(t->rank); ++d) {
      int a = launch_dim_of_index(n, top, d), w = launch_dim_of_index(store, top, d);
      if (a < 0 || w < 0 || a == w || (single >> a & 1) || (single >> w & 1)) continue;
      throw UserError(
          kernel, store->loc,
          fmt::format("programs of the launch read elements of {} that other programs write: "
                      "the load at {} indexes its dimension {} with the tile of launch dimension "
                      "{}, this store with the tile of launch dimension {} (an in-place "
                      "transpose), so a program may read an element before or after another "
                      "overwrites it",
                      ir::describe_tensor(t), n->loc.str(), d, a, w),
          "write the result into another tensor (x.new_empty(...)), or index the load and the "
          "store with the same tiles");
    }
  }
}

void check_block(const ir::Graph& g, const Node* top, const LaunchDeps& deps, const ir::Block& b) {
  for (const Node* n : b) {
    if (n->op == Op::Store) {
      check_store(g, top, deps, n);
      check_crossed_read(top, n, top->body, g.kernel_name);
    }
    if (n->op == Op::Loop) check_block(g, top, deps, n->body);
  }
}

}  // namespace

void check_races(const ir::Graph& g) {
  for (const Node* n : g.host) {
    if (n->op != Op::Loop) continue;
    LaunchDeps deps(g, n);
    check_block(g, n, deps, n->body);
  }
}

}  // namespace tessel::passes

namespace tessel::passes {

bool is_read_modify_write(const ir::Graph& g, const ir::Node* n) {
  return reads_tensor(g, n->args.at(1), n->args.at(0));
}

}  // namespace tessel::passes
