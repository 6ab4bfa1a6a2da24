#include "ir/clone.hpp"

namespace tessel::ir {

Sym* Cloner::map_sym(const Sym* s) {
  if (!s) return nullptr;
  auto it = syms_.find(s);
  if (it != syms_.end()) return it->second;
  Sym* c = dst_.new_sym(s->kind);
  int id = c->id;
  *c = *s;
  c->id = id;
  syms_[s] = c;
  if (s->loop) c->loop = map(s->loop);
  if (s->extent) c->extent = map(s->extent);
  return c;
}

Node* Cloner::fresh(const Node* n) {
  Node* c = dst_.new_node(n->op, n->loc);
  int id = c->id;
  *c = *n;
  c->id = id;
  c->body.clear();
  nodes_[n] = c;
  return c;
}

Node* Cloner::map(const Node* n) {
  if (!n) return nullptr;
  auto it = nodes_.find(n);
  if (it != nodes_.end()) return it->second;
  // A node referenced before it is copied (a Loop from its tile Syms, a Carried from
  // its loop): make the shell now; copy_into fills it.
  return fresh(n);
}

Node* Cloner::copy_into(const Node* n, Block& out) {
  Node* c = map(n);
  for (Node*& a : c->args) a = map(a);
  c->like = map(c->like);
  for (Sym*& s : c->shape) s = map_sym(s);
  for (IndexInfo& i : c->access) i.sym = map_sym(i.sym);
  if (n->op == Op::Loop) {
    for (LoopDim& d : c->dims) {
      d.begin = map(d.begin);
      d.end = map(d.end);
      d.sym = map_sym(d.sym);
    }
    for (Node*& i : c->inits) i = map(i);
    for (Node*& k : c->carried) {
      k = map(k);
      for (Node*& a : k->args) a = map(a);
      for (Sym*& s : k->shape) s = map_sym(s);
    }
    c->body.clear();
    copy_block(n->body, c->body);
    for (Node*& r : c->results) r = map(r);
  }
  out.push_back(c);
  return c;
}

void Cloner::copy_block(const Block& b, Block& out) {
  for (const Node* n : b) copy_into(n, out);
}

void copy_graph_facts(const Graph& g, Graph& out) {
  out.kernel_name = g.kernel_name;
  out.num_block_sizes = g.num_block_sizes;
  out.num_loads = g.num_loads;
  out.block_size_hint = g.block_size_hint;
  out.block_size_range = g.block_size_range;
  out.tunables = g.tunables;
  out.index_dtype = g.index_dtype;
  out.index_dtype_forced = g.index_dtype_forced;
  out.check_bounds = g.check_bounds;
  out.fast_accum = g.fast_accum;
  out.arg_facts = g.arg_facts;
}

std::unique_ptr<Graph> clone_graph(const Graph& g) {
  auto out = std::make_unique<Graph>();
  copy_graph_facts(g, *out);
  Cloner c(*out);
  for (const Node* a : g.args) c.map(a);
  c.copy_block(g.host, out->host);
  for (const Node* a : g.args) out->args.push_back(c.map(a));
  for (const Node* o : g.outputs) out->outputs.push_back(c.map(o));
  for (const Sym* s : g.reduction_syms) out->reduction_syms.push_back(c.map_sym(s));
  return out;
}

}  // namespace tessel::ir
