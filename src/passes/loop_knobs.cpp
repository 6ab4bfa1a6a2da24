#include "passes/loop_knobs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>

namespace tessel::passes {

std::vector<const ir::Node*> multi_dim_loops(const ir::Graph& g) {
  std::vector<const ir::Node*> out;
  ir::walk(g.host, [&](const ir::Node* n) {
    if (n->op == ir::Op::Loop && n->dims.size() >= 2) out.push_back(n);
  });
  return out;
}

std::vector<const ir::Node*> grouped_loops(const ir::Graph& g) {
  std::vector<const ir::Node*> out;
  for (const ir::Node* n : g.host)
    if (n->op == ir::Op::Loop && n->dims.size() >= 2) out.push_back(n);
  return out;
}

static std::string where(const ir::Node* n) {
  std::string s = n->loc.str();
  return s.empty() ? "" : " at " + s;
}

std::string flatten_blocker(const ir::Node* loop) {
  if (loop->dims.size() < 2) return "the loop has one dimension";
  for (const ir::LoopDim& d : loop->dims)
    if (!d.is_tile) return "it is a ts::grid loop (flattening applies to ts::tile loops)";
  auto own = [&](const ir::Sym* s) { return s && s->kind == ir::Sym::tile && s->loop == loop; };
  // How many of the loop's dims a shape has: 0 or all of them is fine.
  auto partial = [&](const std::vector<const ir::Sym*>& shape) {
    size_t k = 0;
    for (const ir::Sym* s : shape) k += own(s);
    return k > 0 && k < loop->dims.size();
  };
  std::string why;
  ir::walk(loop->body, [&](const ir::Node* n) {
    if (!why.empty()) return;
    switch (n->op) {
      case ir::Op::TileBegin:
      case ir::Op::TileEnd:
      case ir::Op::TileBlock:
      case ir::Op::TileId:
        if (n->args[0] == loop)
          why = fmt::format("the tile attribute ({}){} has no single value in a flattened tile",
                            ir::op_name(n->op), where(n));
        return;
      // Not tile attributes: the shape test below.
      case ir::Op::Arg:
      case ir::Op::Size:
      case ir::Op::Stride:
      case ir::Op::Alloc:
      case ir::Op::DeviceScalar:
      case ir::Op::ShapeCheck:
      case ir::Op::Return:
      case ir::Op::Const:
      case ir::Op::Unary:
      case ir::Op::Binary:
      case ir::Op::Where:
      case ir::Op::Cast:
      case ir::Op::Full:
      case ir::Op::Arange:
      case ir::Op::Permute:
      case ir::Op::View:
      case ir::Op::Reduce:
      case ir::Op::Load:
      case ir::Op::Store:
      case ir::Op::Atomic:
      case ir::Op::Signal:
      case ir::Op::Wait:
      case ir::Op::Multicast:
      case ir::Op::Loop:
      case ir::Op::LoopIndex:
      case ir::Op::TileIndex:
      case ir::Op::ProgramId:
      case ir::Op::Carried:
      case ir::Op::Yield:
      case ir::Op::LoopResult:
        break;
    }
    std::vector<const ir::Sym*> shape(n->shape.begin(), n->shape.end());
    if (partial(shape)) {
      why = fmt::format(
          "the value{} has only some of the loop's dimensions (shape {}); reductions over a "
          "loop dimension, t.index() and loads or stores of some of the dims do that",
          where(n), ir::shape_str(n->shape));
      return;
    }
    if (n->op == ir::Op::Store) {
      std::vector<const ir::Sym*> target(ir::stack_shape(n).begin(), ir::stack_shape(n).end());
      for (const ir::IndexInfo& i : n->access)
        if (i.sym) target.push_back(i.sym);
      if (partial(target))
        why = fmt::format("the store{} writes along only some of the loop's dimensions", where(n));
    }
  });
  return why;
}

std::vector<int> permutation_of_rank(int k, int64_t rank) {
  std::vector<int> left(k), out;
  std::iota(left.begin(), left.end(), 0);
  std::vector<int64_t> fact(k + 1, 1);
  for (int i = 1; i <= k; ++i) fact[i] = fact[i - 1] * i;
  for (int i = k; i >= 1; --i) {
    int64_t q = rank / fact[i - 1];
    rank %= fact[i - 1];
    out.push_back(left.at(q));
    left.erase(left.begin() + q);
  }
  return out;
}

int64_t rank_of_permutation(const std::vector<int>& perm) {
  int64_t rank = 0;
  int k = static_cast<int>(perm.size());
  for (int i = 0; i < k; ++i) {
    int smaller = 0;
    for (int j = i + 1; j < k; ++j) smaller += perm[j] < perm[i];
    int64_t f = 1;
    for (int j = 2; j < k - i; ++j) f *= j;
    rank += smaller * f;
  }
  return rank;
}

static int position(const std::vector<const ir::Node*>& loops, const ir::Node* loop) {
  auto it = std::find(loops.begin(), loops.end(), loop);
  return it == loops.end() ? -1 : static_cast<int>(it - loops.begin());
}

LoopKnobs loop_knobs(const ir::Graph& g, const ir::Node* loop, const Config& c) {
  LoopKnobs k;
  k.order.resize(loop->dims.size());
  std::iota(k.order.begin(), k.order.end(), 0);
  int i = position(multi_dim_loops(g), loop);
  if (i >= 0 && c.loop_orders && i < static_cast<int>(c.loop_orders->size()))
    k.order = (*c.loop_orders)[i];
  if (i >= 0 && c.flatten_loops && i < static_cast<int>(c.flatten_loops->size()))
    k.flatten = (*c.flatten_loops)[i];
  int j = position(grouped_loops(g), loop);
  if (j >= 0 && c.l2_groupings && j < static_cast<int>(c.l2_groupings->size()))
    k.l2_grouping = (*c.l2_groupings)[j];
  return k;
}

void complete_loop_knobs(const ir::Graph& g, Config& c, const std::string& kernel) {
  std::vector<const ir::Node*> loops = multi_dim_loops(g), grouped = grouped_loops(g);
  auto fail = [&](const ir::Node* at, const std::string& what, const std::string& hint) {
    throw UserError(kernel, at ? at->loc : ir::first_loop_loc(g), "config: " + what, hint);
  };
  auto check_count = [&](const char* key, size_t given, size_t want, const char* which) {
    if (given != want)
      fail(nullptr,
           fmt::format("{} has {} entries, the kernel has {} {}(s) of two or more dimensions", key,
                       given, want, which),
           fmt::format("give one entry per {} of two or more dimensions, in trace order (see "
                       "ts::Config::{})",
                       which, key));
  };
  if (!loops.empty()) {
    if (!c.loop_orders) {
      c.loop_orders.emplace();
      for (const ir::Node* l : loops)
        c.loop_orders->push_back(permutation_of_rank(static_cast<int>(l->dims.size()), 0));
    }
    if (!c.flatten_loops) c.flatten_loops.emplace(loops.size(), false);
  }
  if (!grouped.empty() && !c.l2_groupings) c.l2_groupings.emplace(grouped.size(), 1);
  const char* multi = "loop";
  const char* top = "top-level loop";
  if (c.loop_orders) check_count("loop_orders", c.loop_orders->size(), loops.size(), multi);
  if (c.flatten_loops) check_count("flatten_loops", c.flatten_loops->size(), loops.size(), multi);
  if (c.l2_groupings) check_count("l2_groupings", c.l2_groupings->size(), grouped.size(), top);
  for (size_t i = 0; c.loop_orders && i < loops.size(); ++i) {
    std::vector<int> p = (*c.loop_orders)[i], sorted = p;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int> want(loops[i]->dims.size());
    std::iota(want.begin(), want.end(), 0);
    if (sorted != want)
      fail(loops[i],
           fmt::format("loop_orders[{}] = [{}] is not a permutation of the loop's {} dimensions", i,
                       fmt::join(p, ", "), want.size()),
           fmt::format("use a permutation of [{}]", fmt::join(want, ", ")));
  }
  for (size_t i = 0; c.flatten_loops && i < loops.size(); ++i) {
    if (!(*c.flatten_loops)[i]) continue;
    std::string why = flatten_blocker(loops[i]);
    if (!why.empty())
      fail(loops[i],
           fmt::format("flatten_loops[{}] = true, but this loop cannot be flattened: {}", i, why),
           "set it to false (the autotuner only offers flattening where the loop body is "
           "elementwise over the "
           "whole tile)");
  }
  bool xyz = c.pid_type && *c.pid_type == PidType::xyz;
  for (size_t j = 0; c.l2_groupings && j < grouped.size(); ++j) {
    int gsz = (*c.l2_groupings)[j];
    if (gsz <= 0 || (gsz & (gsz - 1)) != 0)
      fail(grouped[j], fmt::format("l2_groupings[{}] = {} is not a positive power of two", j, gsz),
           "use 1 (no grouping), 2, 4, 8, 16, 32 or 64");
    if (gsz == 1) continue;
    if (xyz)
      fail(grouped[j], fmt::format("l2_groupings[{}] = {} with pid_type xyz", j, gsz),
           "grouped program ordering needs one flat program id: use pid_type flat or a persistent "
           "one, or "
           "l2_groupings 1");
    if (c.flatten_loops && (*c.flatten_loops)[position(loops, grouped[j])])
      fail(grouped[j], fmt::format("l2_groupings[{}] = {} on a flattened loop", j, gsz),
           "a flattened loop has one dimension to order: set its l2_groupings entry to 1 or do not "
           "flatten it");
  }
}

}  // namespace tessel::passes
