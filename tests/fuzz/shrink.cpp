#include "fuzz/shrink.hpp"

#include <algorithm>

#include "fuzz/generate.hpp"

namespace fuzz {

namespace {

// Removes node i; its uses become node `with` (an earlier node, or -1).
void remove_node(Program& p, int i, int with) {
  p.nodes.erase(p.nodes.begin() + i);
  for (Node& n : p.nodes)
    for (int* o : {&n.a, &n.b, &n.c}) {
      if (*o == i)
        *o = with;
      else if (*o > i)
        --*o;
    }
}

// Removes the nodes no store depends on.
void drop_dead(Program& p) {
  std::vector<bool> live(p.nodes.size(), false);
  for (int i = static_cast<int>(p.nodes.size()) - 1; i >= 0; --i) {
    const Node& n = p.nodes[i];
    if (n.op == Op::store) live[i] = true;
    if (!live[i]) continue;
    for (int o : {n.a, n.b, n.c})
      if (o >= 0) live[o] = true;
    if (n.op == Op::reload)  // its store stays
      for (int j = 0; j < i; ++j)
        if (p.nodes[j].op == Op::store && p.nodes[j].input == n.input) live[j] = true;
  }
  for (int i = static_cast<int>(p.nodes.size()) - 1; i >= 0; --i)
    if (!live[i]) remove_node(p, i, -1);
}

void remove_output(Program& p, int o) {
  if (o == p.relaunch_src) {  // the second launch goes too
    const int dst = p.relaunch_dst;
    p.relaunch_src = p.relaunch_dst = -1;
    remove_output(p, dst);
    if (o > dst) --o;
  } else if (o == p.relaunch_dst) {
    p.relaunch_src = p.relaunch_dst = -1;
  }
  for (int i = static_cast<int>(p.nodes.size()) - 1; i >= 0; --i) {
    Node& n = p.nodes[i];
    if (n.op != Op::store && n.op != Op::reload) continue;
    if (n.input == o)
      remove_node(p, i, -1);
    else if (n.input > o)
      --n.input;
  }
  p.outputs.erase(p.outputs.begin() + o);
  if (p.relaunch_src > o) --p.relaunch_src;
  if (p.relaunch_dst > o) --p.relaunch_dst;
}

// Removes inputs that nothing reads.
void drop_unused_inputs(Program& p) {
  for (int k = static_cast<int>(p.inputs.size()) - 1; k >= 0; --k) {
    bool used = false;
    for (const Node& n : p.nodes) used |= (n.op == Op::load || n.op == Op::gather) && n.input == k;
    for (const Input& in : p.inputs) used |= in.alias == k;
    for (const Output& o : p.outputs) used |= o.inplace == k;
    if (used) continue;
    p.inputs.erase(p.inputs.begin() + k);
    for (Node& n : p.nodes)
      if ((n.op == Op::load || n.op == Op::gather) && n.input > k) --n.input;
    for (Input& in : p.inputs)
      if (in.alias > k) --in.alias;
    for (Output& o : p.outputs)
      if (o.inplace > k) --o.inplace;
  }
}

void resize(LoopBound& b, int64_t old_extent, int64_t extent) {
  b.end = extent + (b.kind == BoundKind::device ? b.end - old_extent : 0);
  b.begin = std::min(b.begin, extent);
}

}  // namespace

Program shrink(Program p, const std::function<bool(const Program&)>& fails) {
  auto attempt = [&](Program q) {
    drop_unused_inputs(q);
    if (!retype(q) || !fails(q)) return false;
    p = std::move(q);
    return true;
  };
  for (bool progress = true; progress;) {
    progress = false;
    for (int o = static_cast<int>(p.outputs.size()) - 1; o >= 0 && p.outputs.size() > 1; --o) {
      Program q = p;
      remove_output(q, o);
      progress |= attempt(q);
    }
    {
      Program q = p;
      drop_dead(q);
      if (q.nodes.size() < p.nodes.size()) progress |= attempt(q);
    }
    for (int i = static_cast<int>(p.nodes.size()) - 1; i >= 0; --i) {
      if (i >= static_cast<int>(p.nodes.size()) || p.nodes[i].op == Op::store) continue;
      const Node n = p.nodes[i];
      std::vector<int> withs = {-1};  // -1: unused nodes only (uses fail to type)
      for (int o : {n.a, n.b, n.c})
        if (o >= 0) withs.push_back(o);
      for (int with : withs) {
        Program q = p;
        remove_node(q, i, with);
        if (attempt(q)) {
          progress = true;
          break;
        }
      }
    }
    for (auto [extent, bound] :
         {std::pair{&Program::M, &Program::rows}, std::pair{&Program::N, &Program::cols}}) {
      const int64_t old = p.*extent;
      for (int64_t e : {int64_t{1}, old / 2, old - 1}) {
        if (e < 0 || e >= old) continue;
        Program q = p;
        q.*extent = e;
        resize(q.*bound, old, e);
        if (attempt(q)) {
          progress = true;
          break;
        }
      }
    }
    for (size_t k = 0; k < p.inputs.size(); ++k) {
      Program q = p;
      Input& in = q.inputs[k];
      if (in.view != View::contiguous) {
        in.view = View::contiguous;
        progress |= attempt(q);
      }
      q = p;
      if (q.inputs[k].fill != Fill::normal && q.inputs[k].fill != Fill::index) {
        q.inputs[k].fill = Fill::normal;
        progress |= attempt(q);
      }
    }
    for (LoopBound Program::*b : {&Program::rows, &Program::cols}) {
      if ((p.*b).kind == BoundKind::size) continue;
      Program q = p;
      LoopBound& lb = q.*b;
      lb = LoopBound{BoundKind::size, 0, b == &Program::rows ? q.M : q.N};
      progress |= attempt(q);
    }
    if (p.index_dtype) {
      Program q = p;
      q.index_dtype.reset();
      progress |= attempt(q);
    }
    if (!(p.config == ts::Config{.block_sizes = p.config.block_sizes})) {
      Program q = p;
      q.config = ts::Config{.block_sizes = p.config.block_sizes};
      progress |= attempt(q);
    }
  }
  return p;
}

}  // namespace fuzz
