#include "passes/contractions.hpp"

#include <algorithm>
#include <map>

namespace tessel::passes {

using ir::Node;
using ir::Op;

namespace {

// Uses of each node inside the nest: operands, loop bounds and initial values.
std::map<const Node*, int> count_uses(const ir::Node* loop) {
  std::map<const Node*, int> uses;
  ir::walk(loop->body, [&](const Node* n) {
    for (const Node* a : n->args) ++uses[a];
    for (const Node* i : n->inits) ++uses[i];
    for (const ir::LoopDim& d : n->dims) {
      ++uses[d.begin];
      ++uses[d.end];
    }
  });
  return uses;
}

bool has_sym(const Node* n, const ir::Sym* s) {
  return std::find(n->shape.begin(), n->shape.end(), s) != n->shape.end();
}

// The factor whose multiply operand is `v`: casts to the sum's dtype `acc` (f32 or i32),
// views and permutes (a transposed load, `w(tn, tk).t()`: each element keeps its
// coordinates) down to a load, each used once. Empty when `v` is not such a factor.
ContractionFactor factor_of(const Node* v, const std::map<const Node*, int>& uses, DType acc) {
  ContractionFactor f;
  const Node* n = v;
  while (true) {
    auto u = uses.find(n);
    if (u == uses.end() || u->second != 1) return {};
    f.nodes.insert(f.nodes.begin(), n);
    if (n->op == Op::Load) break;
    if (n->op == Op::View || n->op == Op::Permute || (n->op == Op::Cast && n->dtype == acc) ||
        (n->op == Op::Unary && n->ufn() == ir::UnaryFn::tf32)) {
      n = n->args[0];
      continue;
    }
    return {};
  }
  const Node* load = f.load();
  if (load->is_multicast_access() || load->is_scalar() || load->dtype == DType::boolean) return {};
  for (const ir::IndexInfo& i : load->access)
    if (i.kind == ir::IndexKind::gather) return {};
  return f;
}

// Whether some dim of `a` is missing from `b`.
bool lacks_a_dim_of(const Node* b, const Node* a) {
  for (const ir::Sym* s : a->shape)
    if (s && !has_sym(b, s)) return true;
  return false;
}

// The match of Reduce `r` in block `b` at position `at`, or none (sum == nullptr).
ContractionMatch match(const ir::Block& b, size_t at, const std::map<const Node*, int>& uses) {
  const Node* r = b[at];
  ContractionMatch m;
  // Sums in f32 (float dots) or i32 (i8 dots).
  if (r->rfn() != ir::ReduceFn::sum || r->keepdim ||
      (r->dtype != DType::f32 && r->dtype != DType::i32))
    return {};
  const Node* p = r->args[0];
  if (p->op != Op::Binary || p->bfn() != ir::BinaryFn::mul || p->dtype != r->dtype) return {};
  if (uses.at(p) != 1 || p->args[0] == p->args[1]) return {};
  m.k = p->shape.at(static_cast<size_t>(r->ival));
  if (!m.k) return {};
  for (int i = 0; i < 2; ++i) {
    m.factor[i] = factor_of(p->args[i], uses, r->dtype);
    if (m.factor[i].nodes.empty() || !has_sym(m.factor[i].value(), m.k)) return {};
  }
  if (!lacks_a_dim_of(m.factor[0].value(), p) || !lacks_a_dim_of(m.factor[1].value(), p)) return {};
  // Every node from the first factor node to the sum is in this block; none of them
  // writes memory or is a loop.
  std::set<const Node*> mine = {p};
  for (const ContractionFactor& f : m.factor) mine.insert(f.nodes.begin(), f.nodes.end());
  size_t first = at;
  for (size_t i = 0; i < at; ++i)
    if (mine.count(b[i])) {
      first = i;
      break;
    }
  size_t found = 0;
  for (size_t i = first; i < at; ++i) {
    if (ir::writes_memory(b[i]) || b[i]->op == Op::Loop) return {};
    found += mine.count(b[i]);
  }
  if (found != mine.size()) return {};
  m.sum = r;
  m.product = p;
  return m;
}

void scan(const ir::Block& b, const std::map<const Node*, int>& uses,
          std::vector<ContractionMatch>& out) {
  for (size_t i = 0; i < b.size(); ++i) {
    if (b[i]->op == Op::Loop) scan(b[i]->body, uses, out);
    if (b[i]->op != Op::Reduce) continue;
    ContractionMatch m = match(b, i, uses);
    if (m.sum) out.push_back(m);
  }
}

}  // namespace

std::set<const ir::Node*> staged_nodes(const std::vector<ContractionMatch>& found) {
  std::set<const Node*> out;
  for (const ContractionMatch& m : found) {
    out.insert(m.product);
    for (const ContractionFactor& f : m.factor) out.insert(f.nodes.begin(), f.nodes.end());
  }
  return out;
}

std::vector<ContractionMatch> find_contractions(const ir::Node* loop) {
  std::map<const Node*, int> uses = count_uses(loop);
  std::vector<ContractionMatch> found;
  scan(loop->body, uses, found);
  // A contracted dim that anything else in the nest holds would take a slot of the nest's
  // layout after all: such a contraction stays a product and a sum (until none is left
  // out, as one left out holds its dim again).
  while (true) {
    std::set<const Node*> staged = staged_nodes(found);
    std::vector<ContractionMatch> kept;
    for (const ContractionMatch& m : found) {
      bool elsewhere = false;
      ir::walk(loop->body, [&](const Node* n) {
        if (staged.count(n)) return;
        elsewhere |= has_sym(n, m.k);
        if (ir::is_access(n))
          for (const ir::IndexInfo& i : n->access) elsewhere |= i.sym == m.k;
      });
      if (!elsewhere) kept.push_back(m);
    }
    if (kept.size() == found.size()) return found;
    found = kept;
  }
}

}  // namespace tessel::passes
