#include "passes/store_rounding.hpp"

#include <map>
#include <utility>
#include <vector>

namespace tessel::passes {

using ir::Node;
using ir::Op;

std::set<const Node*> values_rounded_by_stores(const ir::Graph& g,
                                               const std::set<const Node*>& live) {
  std::map<const Node*, std::vector<std::pair<const Node*, size_t>>> uses;  // (user, arg position)
  for (const auto& up : g.nodes()) {
    const Node* m = up.get();
    for (size_t i = 0; i < m->args.size(); ++i) uses[m->args[i]].push_back({m, i});
    for (const Node* a : m->inits) uses[a].push_back({m, SIZE_MAX});
    for (const ir::LoopDim& d : m->dims) {
      uses[d.begin].push_back({m, SIZE_MAX});
      uses[d.end].push_back({m, SIZE_MAX});
    }
  }
  std::set<const Node*> out;
  for (const Node* n : live) {
    bool rounds = n->op == Op::Cast || n->op == Op::Unary || n->op == Op::Binary;
    if (!rounds || !is_narrow_float(n->dtype)) continue;
    auto it = uses.find(n);
    if (it == uses.end()) continue;
    bool only_stored = true;
    for (const auto& [user, pos] : it->second)
      only_stored &= user->op == Op::Store && pos == 1 && user->args[0]->dtype == n->dtype;
    if (only_stored) out.insert(n);
  }
  return out;
}

}  // namespace tessel::passes
