#include "passes/layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "passes/default_config.hpp"

namespace tessel::passes {

static int log2i(int64_t v) {
  int l = 0;
  while ((int64_t{1} << l) < v) ++l;
  return l;
}

int Layout::log2_vec() const { return log2i(vec); }
int Layout::log2_threads() const { return log2i(threads); }

Layout Layout::reordered(const std::vector<int>& order) const {
  Layout R = *this;
  R.own_order.clear();
  std::vector<int> rank(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    rank[static_cast<size_t>(order[i])] = static_cast<int>(i);
    R.slot_block[i] = slot_block[static_cast<size_t>(order[i])];
  }
  for (auto& [s, k] : R.slot_of) k = rank[static_cast<size_t>(k)];
  int shift = 0;
  for (int i = static_cast<int>(order.size()) - 1; i >= 0; --i) {
    R.slot_shift[static_cast<size_t>(i)] = shift;
    shift += log2i(R.slot_block[static_cast<size_t>(i)]);
  }
  return R;
}

std::string describe(const Layout& L, const ir::Node* loop) {
  auto slots = [&](const std::vector<int>& order) {
    std::string out;
    for (int k : order) {
      std::string syms;
      for (const auto& [s, j] : L.slot_of)
        if (j == k) syms += (syms.empty() ? "" : " ") + ir::sym_name(s);
      out += fmt::format(" [{}: {}]", syms, L.slot_block[static_cast<size_t>(k)]);
    }
    return out;
  };
  std::vector<int> nest(L.slot_block.size());
  for (size_t k = 0; k < nest.size(); ++k) nest[k] = static_cast<int>(k);
  std::string out = fmt::format(
      "// layout of loop %{}: {} threads, vectors of {}, {} groups, {} registers per value; "
      "slots outer to inner:{}\n",
      loop->id, L.threads, L.vec, L.groups, L.regs(), slots(nest));
  for (const auto& [n, order] : L.own_order)
    out += fmt::format("//   %{} ({}) in its own layout:{}\n", n->id, ir::op_name(n->op),
                       slots(order));
  return out;
}

namespace {

struct SymInfo {
  int first = 0;              // order of first appearance
  int inner_score = 1 << 20;  // smallest distance from the end of a shape it appears at
  int64_t accessed_last = 0;  // elements of the loads and stores whose innermost index it is
};

void collect(const ir::Block& b, const Config& config, std::vector<const ir::Sym*>& order,
             std::map<const ir::Sym*, SymInfo>& info,
             std::set<std::pair<const ir::Sym*, const ir::Sym*>>& interfere, int& min_bytes) {
  for (const ir::Node* n : b) {
    ir::Shape target;  // a store's dims are those of the elements it writes
    if (n->op == ir::Op::Store) {
      for (ir::Sym* s : ir::stack_shape(n))
        if (s) target.push_back(s);
      for (const ir::IndexInfo& i : n->access)
        if (i.sym) target.push_back(i.sym);
    }
    const ir::Shape& s = n->op == ir::Op::Store ? target : n->shape;
    for (size_t i = 0; i < s.size(); ++i) {
      if (!s[i]) continue;
      if (!info.count(s[i])) {
        info[s[i]].first = static_cast<int>(order.size());
        order.push_back(s[i]);
      }
      int dist = static_cast<int>(s.size() - 1 - i);
      info[s[i]].inner_score = std::min(info[s[i]].inner_score, dist);
      for (size_t j = 0; j < s.size(); ++j)
        if (s[j] && j != i) interfere.insert({s[i], s[j]});
    }
    if (ir::is_access(n)) {
      min_bytes = std::min(min_bytes, dtype_size(ir::addressed_tensor(n)->dtype));
      const ir::Sym* last = nullptr;
      int64_t elems = 1;
      for (const ir::IndexInfo& i : n->access) {
        if (i.kind != ir::IndexKind::newaxis) last = i.sym;
        if (i.sym) elems *= sym_block(i.sym, config);
      }
      if (last) info[last].accessed_last += elems;
    }
    if (n->op == ir::Op::Loop) collect(n->body, config, order, info, interfere, min_bytes);
  }
}

}  // namespace

Layout compute_layout(const ir::Node* loop, const Config& config) {
  std::vector<const ir::Sym*> order;
  std::map<const ir::Sym*, SymInfo> info;
  std::set<std::pair<const ir::Sym*, const ir::Sym*>> interfere;
  int min_bytes = 16;
  collect(loop->body, config, order, info, interfere, min_bytes);

  // Greedy slot assignment, largest blocks first (ties: first appearance), so that dims
  // that never meet share a slot with dims of their own size: `c(ts::all)` [1024] beside
  // `x(tm, ts::all)` [tm, 1024] puts both all-dims in one slot (1024 * tm elements), where
  // first-appearance order put tm with c's dim and x's dim apart (1024 * 1024). A
  // BlockSize's block (block_k) and the tiles of the loops using it share one slot: their
  // lanes line up.
  std::set<int> lined;
  for (const ir::Sym* s : order)
    if (s->kind == ir::Sym::block_k) lined.insert(s->block_id);
  std::map<int, int> slot_of_block;  // BlockSize id -> its slot
  std::vector<std::vector<const ir::Sym*>> slots;
  std::map<const ir::Sym*, int> slot_of;
  std::vector<const ir::Sym*> by_size = order;
  std::stable_sort(by_size.begin(), by_size.end(), [&](const ir::Sym* a, const ir::Sym* b) {
    return sym_block(a, config) > sym_block(b, config);
  });
  for (const ir::Sym* s : by_size) {
    int chosen = -1;
    bool grouped = s->kind != ir::Sym::extent_k && lined.count(s->block_id);
    // Even where they meet in one value: the CUDA emitter refuses a value with two
    // dimensions in one slot (codegen::Emitter::emit_node), the interpreter computes it.
    if (grouped && slot_of_block.count(s->block_id)) chosen = slot_of_block[s->block_id];
    for (size_t k = 0; k < slots.size() && chosen < 0; ++k) {
      bool ok = true;
      for (const ir::Sym* o : slots[k]) ok &= !interfere.count({s, o});
      if (ok) chosen = static_cast<int>(k);
    }
    if (grouped) slot_of_block[s->block_id] = chosen < 0 ? static_cast<int>(slots.size()) : chosen;
    if (chosen < 0) {
      chosen = static_cast<int>(slots.size());
      slots.emplace_back();
    }
    slots[chosen].push_back(s);
    slot_of[s] = chosen;
  }
  // Order slots outer to inner: larger distance-from-the-end first.
  std::vector<int> perm(slots.size());
  for (size_t k = 0; k < perm.size(); ++k) perm[k] = static_cast<int>(k);
  // In a nest that permutes a value (a transpose), ties (both dims last in some shape) go
  // to the slot whose dims the accesses moving the most elements index last: the nest's
  // layout is the one most of its memory traffic wants, the other accesses convert
  // (passes/access_layouts.hpp); first appearance would depend on the order C++ evaluates
  // operands in. Other nests keep the first-appearance order (and their generated code).
  bool permuted = false;
  ir::walk(loop->body, [&](const ir::Node* n) { permuted |= n->op == ir::Op::Permute; });
  struct Score {
    int inner;
    int64_t votes;
    int first;
  };
  auto score = [&](int k) {
    Score sc{1 << 20, 0, 0};
    for (const ir::Sym* s : slots[k]) {
      sc.inner = std::min(sc.inner, info[s].inner_score);
      sc.votes += info[s].accessed_last;
      sc.first = std::max(sc.first, info[s].first);
    }
    return sc;
  };
  std::stable_sort(perm.begin(), perm.end(), [&](int a, int b) {
    Score sa = score(a), sb = score(b);
    if (sa.inner != sb.inner) return sa.inner > sb.inner;
    if (permuted && sa.inner == 0 && sa.votes != sb.votes) return sa.votes < sb.votes;
    return sa.first < sb.first;
  });
  std::vector<int> rank(slots.size());
  for (size_t i = 0; i < perm.size(); ++i) rank[perm[i]] = static_cast<int>(i);

  Layout L;
  L.threads = 32 * config.num_warps.value_or(4);
  L.slot_block.assign(slots.size(), 1);
  for (size_t k = 0; k < slots.size(); ++k)
    for (const ir::Sym* s : slots[k])
      L.slot_block[rank[k]] = std::max(L.slot_block[rank[k]], sym_block(s, config));
  for (auto& [s, k] : slot_of) L.slot_of[s] = rank[k];
  L.slot_shift.assign(slots.size(), 0);
  int shift = 0;
  for (int i = static_cast<int>(slots.size()) - 1; i >= 0; --i) {
    L.slot_shift[i] = shift;
    shift += log2i(L.slot_block[i]);
  }
  L.elems = int64_t{1} << shift;
  int64_t inner = slots.empty() ? 1 : L.slot_block.back();
  L.vec =
      static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(inner, 16 / std::max(1, min_bytes))));
  int64_t per_round = static_cast<int64_t>(L.threads) * L.vec;
  L.groups = static_cast<int>(std::max<int64_t>(1, L.elems / per_round));
  return L;
}

}  // namespace tessel::passes
