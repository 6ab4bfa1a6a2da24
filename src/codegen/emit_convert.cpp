// Layout conversion through shared memory (or, where only lanes and registers trade bits,
// by warp shuffles: Emitter::exchange_lanes): a load or store in a layout of its own
// (passes::assign_access_layouts) hands its value to the nest's layout, or takes it from
// there. Both layouts place the same Syms' coordinates in the bits of TS_FLAT(r), in a
// different slot order; an element's place in shared memory is its flat index in the
// source layout, plus one pad element per row of that layout's innermost slot, so that
// the reading warp, which walks down a column of those rows, meets 32 distinct banks.
#include <fmt/format.h>

#include <algorithm>

#include "codegen/emitter_state.hpp"
#include "codegen/fold.hpp"
#include "common/pow2.hpp"
#include "passes/lane_exchange.hpp"

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

void Emitter::exchange_lanes(const std::string& src, const passes::Layout& from,
                             const std::string& dst, const passes::Layout& to, DType dtype,
                             const ir::Node* at) {
  const std::string rt = reg_type(dtype);
  const passes::LaneExchange x = passes::lane_exchange(from, to);
  line(fmt::format("{} {}[TS_N];  // layout conversion: {} lane bit{} exchanged for register "
                   "bits by warp shuffles, {}-wide vectors",
                   rt, dst, x.swaps.size(), x.swaps.size() == 1 ? "" : "s", to.vec),
       at);
  open("");
  const std::string x_ = fmt::format("ex{}", at->id);  // the registers being exchanged
  line(fmt::format("{} {}[TS_N];", rt, x_));
  line(fmt::format("TS_FOR(r) {}[r] = {}[r];", x_, src));
  // One orbit of registers at a time (those differing only in the exchanged register bits),
  // so that few exchanged values are live at once: orbit o's registers are r = base | own,
  // base from o's bits at the other register bits, own from q's at the exchanged ones.
  const int reg_bits = static_cast<int>(x.reg_to.size());
  std::vector<int> exchanged_bits, other_bits;
  for (const auto& [lane, reg] : x.swaps) exchanged_bits.push_back(reg);
  for (int i = 0; i < reg_bits; ++i)
    if (std::find(exchanged_bits.begin(), exchanged_bits.end(), i) == exchanged_bits.end())
      other_bits.push_back(i);
  const std::vector<int>& to_bits = x.reg_to;
  const int members = 1 << exchanged_bits.size();
  open(fmt::format("_Pragma(\"unroll\") for (int o = 0; o < {}; ++o)", (1 << reg_bits) / members));
  line(fmt::format("const int base = {};", fold::unparen(fold::scatter_bits("o", other_bits))));
  for (size_t j = 0; j < x.swaps.size(); ++j) {
    const auto [lane, reg] = x.swaps[j];
    // Lanes with the lane bit set take their partner's registers with the register bit
    // clear; lanes without it, those with it set.
    const int m = 1 << reg;
    open(fmt::format("_Pragma(\"unroll\") for (int q = 0; q < {}; ++q)", members));
    line(fmt::format("const int r = base | {};",
                     fold::unparen(fold::scatter_bits("q", exchanged_bits))));
    line(fmt::format("if (r & {}) continue;", m));
    line(fmt::format("const bool hi = (tid >> {}) & 1;  // lane bit {}, register bit {}", lane,
                     lane, reg));
    line(fmt::format("const {} got = __shfl_xor_sync(0xffffffffu, hi ? {x}[r] : {x}[r | {}], {});",
                     rt, m, 1 << lane, fmt::arg("x", x_)));
    line(fmt::format("{x}[r | {m}] = hi ? {x}[r | {m}] : got;", fmt::arg("x", x_),
                     fmt::arg("m", m)));
    line(fmt::format("{x}[r] = hi ? got : {x}[r];", fmt::arg("x", x_)));
    close();
  }
  open(fmt::format("_Pragma(\"unroll\") for (int q = 0; q < {}; ++q)", members));
  line(fmt::format("const int r = base | {};",
                   fold::unparen(fold::scatter_bits("q", exchanged_bits))));
  std::string to_reg = "0";  // register r's place in `to`
  for (int i = 0; i < reg_bits; ++i)
    to_reg = fold::bit_or(
        to_reg, fold::scatter_bits(fold::gather_bits("r", {i}), {to_bits[static_cast<size_t>(i)]}));
  line(fmt::format("{}[{}] = {}[r];", dst, fold::unparen(to_reg), x_));
  close();
  close();
  close();
}

}  // namespace tessel::codegen
