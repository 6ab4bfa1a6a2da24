// Comparisons of tile indices that hold for every element (folded to true).
#include <optional>

#include "codegen/emitter_state.hpp"
#include "passes/key_facts.hpp"

namespace tessel::codegen {

using ir::Node;
using ir::Op;

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
  std::optional<int64_t> begin = passes::known_int(g_, ld.begin),
                         end = passes::known_int(g_, ld.end),
                         bound = passes::known_int(g_, n->args[1]);
  if (it == dims.end() || !begin || !end || !bound) return false;
  int64_t block = it->second.block;
  // Every tile full, and no register coordinate past the block (its slot holds exactly
  // the block): begin <= index < end for every element.
  if (block <= 0 || (*end - *begin) % block != 0 || L_->slot_block[slot(idx->shape[0])] != block)
    return false;
  return n->bfn() == ir::BinaryFn::lt ? *bound >= *end : *bound <= *begin;
}

}  // namespace tessel::codegen
