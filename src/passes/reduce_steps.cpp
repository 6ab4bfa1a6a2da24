#include "passes/reduce_steps.hpp"

#include <algorithm>

#include "common/pow2.hpp"

namespace tessel::passes {

ReduceSteps reduce_steps(const Layout& L, const ir::Node* n) {
  ReduceSteps st;
  const ir::Node* x = n->args[0];
  const ir::Sym* s = x->shape.at(static_cast<size_t>(n->ival));
  if (!s || x->is_scalar()) return st;
  const ir::ReduceFn fn = n->rfn();
  const bool arg = fn == ir::ReduceFn::argmax || fn == ir::ReduceFn::argmin;
  const int lv = L.log2_vec(), lt = L.log2_threads();
  // Bits to combine: the slot's, plus (for a scalar result) the thread bits above the
  // layout's elements, where inactive threads hold the identity.
  st.bits = L.slot_bits[static_cast<size_t>(L.slot_of.at(s))];
  std::sort(st.bits.begin(), st.bits.end());
  const int layout_bits = ceil_log2(L.elems);
  if (n->is_scalar())
    for (int b = layout_bits; b < lv + lt; ++b)
      if (b >= lv) st.bits.push_back(b);
  for (int b : st.bits) {
    if (b < lv || b >= lv + lt)
      st.reg_mask |= 1u << (b < lv ? b : b - lt);
    else if (b - lv < 5)
      st.lane_mask |= 1u << (b - lv);
    else
      st.warp_mask |= 1u << (b - lv - 5);
  }
  if (!st.warp_mask) return st;
  // Registers hold 16-bit floats as float, every other dtype as it is stored.
  st.elem = dtype_size(x->dtype) == 8 ? 8 : 4;
  st.low = __builtin_ctz(st.warp_mask);
  st.contiguous = ((st.warp_mask >> st.low) & ((st.warp_mask >> st.low) + 1)) == 0;
  // Whole warps hold one value (every lane bit combined): one value per warp goes to
  // shared memory; otherwise one value per thread.
  st.per_warp = st.lane_mask == 31u && st.contiguous;
  st.distinct_regs = L.regs() >> __builtin_popcount(st.reg_mask);
  const int64_t slots = st.per_warp ? L.threads / 32 : L.threads;
  st.values_bytes = slots * st.distinct_regs * st.elem;
  st.bytes = (st.values_bytes + (arg ? slots * st.distinct_regs * 8 : 0) + 15) / 16 * 16;
  return st;
}

}  // namespace tessel::passes
