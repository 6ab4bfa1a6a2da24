#include "passes/key_facts.hpp"

namespace tessel::passes {

using ir::Node;
using ir::Op;

static const ir::ArgFacts* facts(const ir::Graph& g, const Node* t) {
  if (t->op != Op::Arg) return nullptr;
  size_t i = static_cast<size_t>(t->ival);
  return i < g.arg_facts.size() ? &g.arg_facts[i] : nullptr;
}

bool multiple_of_16(const ir::Graph& g, const Node* n) {
  if (n->op == Op::Const) return n->ival % 16 == 0;
  if (n->op == Op::Size) return size_multiple_of_16(g, n->args[0], static_cast<int>(n->ival));
  return false;
}

std::optional<int64_t> known_int(const ir::Graph& g, const Node* n) {
  if (n->op == Op::Const && is_integer(n->dtype)) return n->ival;
  if (n->op != Op::Size) return std::nullopt;
  const Node* t = n->args[0];
  size_t dim = static_cast<size_t>(n->ival);
  if (t->op == Op::Alloc) return known_int(g, t->args.at(dim));
  const ir::ArgFacts* f = facts(g, t);
  if (f && dim < f->known_sizes.size() && f->known_sizes[dim] >= 0) return f->known_sizes[dim];
  return std::nullopt;
}

bool size_multiple_of_16(const ir::Graph& g, const Node* t, int dim_in) {
  size_t dim = static_cast<size_t>(dim_in);
  if (t->op == Op::Alloc) return multiple_of_16(g, t->args.at(dim));
  const ir::ArgFacts* f = facts(g, t);
  if (!f) return false;
  if (dim < f->known_sizes.size() && f->known_sizes[dim] >= 0) return f->known_sizes[dim] % 16 == 0;
  return dim < f->size_div16.size() && f->size_div16[dim];
}

bool outer_strides_aligned(const ir::Graph& g, const Node* t, int vdim) {
  if (t->op == Op::Alloc)  // row-major: outer strides are multiples of the last size
    return t->fn == ir::alloc_row_major && vdim == t->rank - 1 &&
           (t->rank <= 1 || size_multiple_of_16(g, t, t->rank - 1));
  const ir::ArgFacts* f = facts(g, t);
  if (!f || !f->base_aligned) return false;
  for (int d = 0; d < t->rank; ++d)
    if (d != vdim && !f->stride_aligned.at(static_cast<size_t>(d))) return false;
  return true;
}

}  // namespace tessel::passes
