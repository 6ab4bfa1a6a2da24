// Structural checks of a traced graph: operands defined earlier in an enclosing block,
// loops well formed, loads and stores with one index per tensor dimension.
#include <fmt/format.h>

#include <set>

#include "ir/ir.hpp"

namespace tessel::ir {
namespace {

struct Verifier {
  std::vector<std::set<const Node*>> scopes;

  bool visible(const Node* n) const {
    for (const auto& s : scopes)
      if (s.count(n)) return true;
    return false;
  }

  void fail(const Node* n, const std::string& what) {
    throw InternalError(fmt::format("IR verifier: %{} ({}): {}", n->id, op_name(n->op), what));
  }

  void check_operand(const Node* user, const Node* operand) {
    if (!operand) fail(user, "null operand");
    if (!visible(operand))
      fail(user, fmt::format("operand %{} not defined before use", operand->id));
  }

  void block(const Block& b) {
    scopes.emplace_back();
    for (const Node* n : b) {
      if (n->op == Op::Loop) {
        for (const LoopDim& d : n->dims) {
          check_operand(n, d.begin);
          check_operand(n, d.end);
          if (d.is_tile && !d.sym) fail(n, "tile dim without a sym");
        }
        for (const Node* i : n->inits) check_operand(n, i);
        if (n->carried.size() != n->inits.size()) fail(n, "carried/inits size mismatch");
        scopes.emplace_back(n->carried.begin(), n->carried.end());
        scopes.back().insert(n);
        block(n->body);
        scopes.pop_back();
        if (!n->carried.empty()) {
          if (n->body.empty() || n->body.back()->op != Op::Yield) fail(n, "missing yield");
          if (n->body.back()->args.size() != n->carried.size()) fail(n, "yield arity");
        }
      } else {
        for (const Node* a : n->args)
          if (a->op != Op::Loop || n->op == Op::LoopResult) check_operand(n, a);
      }
      if (is_access(n)) {
        int consumed = 0;
        for (const IndexInfo& i : n->access)
          if (i.kind != IndexKind::newaxis) ++consumed;
        if (consumed != n->args[0]->rank) fail(n, "index count != tensor rank");
      }
      scopes.back().insert(n);
    }
    scopes.pop_back();
  }
};

}  // namespace

void verify(const Graph& g) {
  Verifier v;
  v.block(g.host);
}

}  // namespace tessel::ir
