// The order in which a program's kernel is written, shared by the builder (which calls
// the tessel DSL) and the printer (which writes it as C++ source): the top-level loop,
// then the nodes in order; in the nested forms the phase-0 nodes, each reduction's
// accumulator, the inner loop with the phase-1 nodes and the accumulation steps, then the
// phase-2 nodes with the reductions' results.
//
// A sink S provides: top_loop(body), inner_loop(body), node(i), acc_init(i),
// acc_step(i), acc_final(i).
#pragma once

#include "fuzz/program.hpp"

namespace fuzz {

/// Whether node i is a reduction over columns accumulated over the inner loop's tiles.
inline bool accumulated(const Program& p, int i) {
  return nested(p.form) && is_reduce(p.nodes[i].op) && p.nodes[i].shape == Shape::row;
}

template <class S>
void walk(const Program& p, S& s) {
  const int n = static_cast<int>(p.nodes.size());
  auto skip = [&](int i) { return p.nodes[i].op == Op::literal; };
  s.top_loop([&] {
    if (!nested(p.form)) {
      for (int i = 0; i < n; ++i)
        if (!skip(i)) s.node(i);
      return;
    }
    for (int i = 0; i < n; ++i)
      if (!skip(i) && p.nodes[i].phase == 0 && !accumulated(p, i)) s.node(i);
    for (int i = 0; i < n; ++i)
      if (accumulated(p, i)) s.acc_init(i);
    s.inner_loop([&] {
      for (int i = 0; i < n; ++i) {
        if (accumulated(p, i))
          s.acc_step(i);
        else if (!skip(i) && p.nodes[i].phase == 1)
          s.node(i);
      }
    });
    for (int i = 0; i < n; ++i) {
      if (accumulated(p, i))
        s.acc_final(i);
      else if (!skip(i) && p.nodes[i].phase == 2)
        s.node(i);
    }
  });
}

}  // namespace fuzz
