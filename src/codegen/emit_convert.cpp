// Layout conversion through shared memory: a load or store in a layout of its own
// (passes::assign_access_layouts) hands its value to the nest's layout, or takes it from
// there. Both layouts place the same Syms' coordinates in the bits of TS_FLAT(r), in a
// different slot order; an element's place in shared memory is its flat index in the
// source layout, plus one pad element per row of that layout's innermost slot, so that
// the reading warp, which walks down a column of those rows, meets 32 distinct banks.
#include <fmt/format.h>

#include "codegen/emitter_state.hpp"
#include "codegen/fold.hpp"
#include "common/pow2.hpp"

namespace tessel::codegen {

void Emitter::convert_layout(const std::string& src, const passes::Layout& from,
                             const std::string& dst, const passes::Layout& to, DType dtype,
                             const ir::Node* at) {
  const std::string rt = reg_type(dtype);
  const int row_bits = ceil_log2(from.slot_block.back());
  const SharedUse& use = shared_use(at);  // the kernel IR's stage (passes/shared_plan.hpp)
  // Register r of layout `to` holds, along each of to's slots, the coordinate in that
  // slot's bits of TS_FLAT(r); in `from` that coordinate sits in the bits of the same
  // Syms' slot.
  std::vector<int> from_slot(to.slot_block.size(), -1);
  for (const auto& [sym, j] : to.slot_of) from_slot[static_cast<size_t>(j)] = from.slot_of.at(sym);
  std::string place = "0";
  for (size_t j = 0; j < to.slot_block.size(); ++j) {
    if (to.slot_block[j] <= 1) continue;
    std::string c = fold::gather_bits("TS_FLAT(r)", to.slot_bits[j]);
    place = fold::bit_or(place,
                         fold::scatter_bits(c, from.slot_bits[static_cast<size_t>(from_slot[j])]));
  }
  std::string active =
      nest_.all_threads_active() ? "" : fmt::format("if (TS_FLAT(r) < {}) ", nest_.elems);
  line(fmt::format("{} {}[TS_N] = {{}};  // layout conversion: {}", rt, dst,
                   &from == &nest_ ? "the loop nest's layout to the access's"
                                   : "the access's layout to the loop nest's"),
       at);
  open("");
  line(fmt::format("{}* cv = reinterpret_cast<{}*>({});  // [tile elements + one per row]", rt, rt,
                   fold::add("ts_smem", std::to_string(use.offset))));
  if (use.barrier) line("__syncthreads();  // earlier readers of shared memory are done");
  line(fmt::format("TS_FOR(r) {}{{ const int f = TS_FLAT(r); cv[f + (f >> {})] = {}[r]; }}", active,
                   row_bits, src));
  line("__syncthreads();");
  line(fmt::format("TS_FOR(r) {}{{ const int f = {}; {}[r] = cv[f + (f >> {})]; }}", active,
                   fold::unparen(place), dst, row_bits));
  close();
}

}  // namespace tessel::codegen
