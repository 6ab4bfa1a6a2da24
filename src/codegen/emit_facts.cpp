// What the emitter knows about values beyond their shapes: which hold one value in all
// of a thread's registers (loaded once, stored from register 0; emit_memory.cpp), which
// comparisons of tile indices hold for every element (folded to true), and which f16/bf16
// values are rounded by the stores that consume them.
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "codegen/emitter_state.hpp"

namespace tessel::codegen {

using ir::Node;
using ir::Op;

bool Emitter::spans_registers(const ir::Sym* s) const {
  if (flattened(s)) return true;
  int lv = L_->log2_vec(), lt = L_->log2_threads();
  for (int b : L_->slot_bits[static_cast<size_t>(slot(s))])
    if (b < lv || b >= lv + lt) return true;  // a register bit
  return false;
}

bool Emitter::same_in_every_register(const Node* n) const {
  for (const ir::Sym* s : n->shape)
    if (s && spans_registers(s)) return false;
  return true;
}

bool Emitter::gathers_same_in_every_register(const Node* n, size_t first) const {
  size_t op = first;
  for (const ir::IndexInfo& info : n->access) {
    if (info.kind == ir::IndexKind::newaxis) continue;
    const Node* operand = n->args[op++];
    if (info.kind == ir::IndexKind::gather && is_array(operand) && !same_in_every_register(operand))
      return false;
  }
  return true;
}

bool Emitter::tile_index_always_in_bounds(const Node* n) const {
  if (n->op != Op::Binary || (n->bfn() != ir::BinaryFn::lt && n->bfn() != ir::BinaryFn::ge))
    return false;
  const Node* idx = n->args[0];
  while (idx->op == Op::Cast && is_integer(idx->dtype) && is_integer(idx->args[0]->dtype) &&
         dtype_size(idx->dtype) >= dtype_size(idx->args[0]->dtype))
    idx = idx->args[0];  // widening integer casts keep the value
  if (idx->op != Op::TileIndex || flattened(idx->shape[0])) return false;
  const Node* loop = idx->args[0];
  const ir::LoopDim& ld = loop->dims.at(static_cast<size_t>(idx->ival));
  auto it = dims.find({loop, static_cast<int>(idx->ival)});
  std::optional<int64_t> begin = known_int(ld.begin), end = known_int(ld.end),
                         bound = known_int(n->args[1]);
  if (it == dims.end() || !begin || !end || !bound) return false;
  int64_t block = it->second.block;
  // Every tile full, and no register coordinate past the block (its slot holds exactly
  // the block): begin <= index < end for every element.
  if (block <= 0 || (*end - *begin) % block != 0 || L_->slot_block[slot(idx->shape[0])] != block)
    return false;
  return n->bfn() == ir::BinaryFn::lt ? *bound >= *end : *bound <= *begin;
}

void Emitter::find_values_rounded_by_stores() {
  std::map<const Node*, std::vector<std::pair<const Node*, size_t>>> uses;  // (user, arg position)
  for (const auto& up : g_.nodes()) {
    const Node* m = up.get();
    for (size_t i = 0; i < m->args.size(); ++i) uses[m->args[i]].push_back({m, i});
    for (const Node* a : m->inits) uses[a].push_back({m, SIZE_MAX});
    for (const ir::LoopDim& d : m->dims) {
      uses[d.begin].push_back({m, SIZE_MAX});
      uses[d.end].push_back({m, SIZE_MAX});
    }
  }
  for (const Node* n : live_) {
    bool rounds = n->op == Op::Cast || n->op == Op::Unary || n->op == Op::Binary;
    if (!rounds || (n->dtype != DType::f16 && n->dtype != DType::bf16)) continue;
    auto it = uses.find(n);
    if (it == uses.end()) continue;
    bool only_stored = true;
    for (const auto& [user, pos] : it->second)
      only_stored &= user->op == Op::Store && pos == 1 && user->args[0]->dtype == n->dtype;
    if (only_stored) rounded_by_store_.insert(n);
  }
}

}  // namespace tessel::codegen
