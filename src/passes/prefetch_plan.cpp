#include "passes/prefetch_plan.hpp"

#include <algorithm>
#include <functional>
#include <set>

#include "passes/kernel_ir.hpp"

namespace tessel::passes {

using ir::Node;
using ir::Op;

// Every node inside `b`, nested loops included, into `out`.
static void collect(const ir::Block& b, std::set<const Node*>& out) {
  for (const Node* n : b) {
    out.insert(n);
    if (n->op == Op::Loop) collect(n->body, out);
  }
}

// The tensors stored anywhere in `nest`'s body.
static std::vector<const Node*> stored_tensors(const Node* nest) {
  std::set<const Node*> in_program;
  collect(nest->body, in_program);
  std::vector<const Node*> stored;
  for (const Node* n : in_program)
    if (ir::writes_memory(n)) stored.push_back(n->args[0]);
  return stored;
}

// Whether load n's indices are `loop`'s tile or values from outside it (`inside`: its nodes).
static bool indices_known_ahead(const Node* n, const Node* loop,
                                const std::set<const Node*>& inside) {
  for (size_t i = 1; i < n->args.size(); ++i)
    if (n->args[i] != loop && inside.count(n->args[i])) return false;
  return true;
}

static bool stored_to(const ir::Graph& g, const std::vector<const Node*>& stored, const Node* n) {
  return std::any_of(stored.begin(), stored.end(),
                     [&](const Node* t) { return ir::may_alias(g, t, n->args[0]); });
}

bool may_load_ahead(const ir::Graph& g, const Node* nest, const Node* loop, const Node* n) {
  if (std::find(loop->body.begin(), loop->body.end(), n) == loop->body.end()) return false;
  std::set<const Node*> inside;
  collect(loop->body, inside);
  return indices_known_ahead(n, loop, inside) && !stored_to(g, stored_tensors(nest), n);
}

bool may_load_across_programs(const ir::Graph& g, const Node* nest, const Node* loop, const Node* n,
                              bool tile_begins) {
  if (!may_load_ahead(g, nest, loop, n) ||
      std::find(nest->body.begin(), nest->body.end(), loop) == nest->body.end())
    return false;
  std::set<const Node*> in_program;
  collect(nest->body, in_program);
  // The same in every program: values from outside it, and scalar arithmetic of them.
  std::function<bool(const Node*)> invariant = [&](const Node* v) {
    if (v == nest) return false;
    if (!in_program.count(v)) return true;
    const bool pure = v->op == Op::Const || v->op == Op::Unary || v->op == Op::Binary ||
                      v->op == Op::Where || v->op == Op::Cast;
    return pure && v->is_scalar() && std::all_of(v->args.begin(), v->args.end(), invariant);
  };
  for (const ir::LoopDim& d : loop->dims)
    if (!invariant(d.begin) || !invariant(d.end)) return false;
  auto begin_of_nest = [&](const Node* v) {
    return tile_begins && v->op == Op::TileBegin && v->args[0] == nest;
  };
  for (size_t i = 1; i < n->args.size(); ++i)
    if (n->args[i] != loop && n->args[i] != nest && !invariant(n->args[i]) &&
        !begin_of_nest(n->args[i]))
      return false;
  return true;
}

// The loads of `loop` (the top-level loop or a device loop) that qualify.
static std::vector<const Node*> early_loads(const ir::Graph& g, const NestIr& nir,
                                            const std::set<const Node*>& staged,
                                            const std::set<const Node*>& factor_loads,
                                            const std::vector<const Node*>& stored,
                                            const Node* loop) {
  std::set<const Node*> inside;
  collect(loop->body, inside);
  std::vector<const Node*> out;
  for (const Node* n : loop->body) {
    if (n->op != Op::Load || !nir.live.count(n) || n->is_scalar()) continue;
    if (nir.own.count(n)) continue;  // converted loads are not issued early
    // A contraction's factor nodes are emitted by its sum: only its loads, in the factor's layout.
    if (staged.count(n) && !factor_loads.count(n)) continue;
    if (stored_to(g, stored, n)) continue;
    auto a = nir.accesses.find(n);
    if (indices_known_ahead(n, loop, inside) && a != nir.accesses.end() &&
        a->second.form == Access::Form::vector)
      out.push_back(n);
  }
  return out;
}

std::map<const Node*, Prefetch> plan_prefetch(const ir::Graph& g, const KernelPlan& plan,
                                              const NestIr& nir) {
  std::map<const Node*, Prefetch> out;
  if (plan.num_stages < 2 || g.check_bounds) return out;
  const std::vector<const Node*> stored = stored_tensors(nir.loop);
  const std::set<const Node*> staged = staged_nodes(nir.nest());
  std::set<const Node*> factor_loads;
  for (const Contraction& c : nir.nest().contractions)
    for (int i = 0; i < 2; ++i) factor_loads.insert(c.match.factor[i].load());
  auto add = [&](const Node* loop, int ahead) {
    std::vector<const Node*> loads = early_loads(g, nir, staged, factor_loads, stored, loop);
    if (!loads.empty()) out[loop] = {ahead, loads};
  };
  if (plan.persistent && !plan.knobs(nir.loop).flatten) add(nir.loop, 1);
  ir::walk(nir.loop->body, [&](const Node* n) {
    if (n->op == Op::Loop && nir.live.count(n) && n->dims.size() == 1 && !plan.knobs(n).flatten)
      add(n, std::min(plan.num_stages, 4) - 1);
  });
  return out;
}

}  // namespace tessel::passes
