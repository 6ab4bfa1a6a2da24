#include "passes/lane_exchange.hpp"

#include <fmt/format.h>

#include "common/pow2.hpp"
#include "tessel/error.hpp"

namespace tessel::passes {

namespace {

using Basis = layout::LinearLayout::Basis;

// The (slot, coordinate bit) an input bit's basis holds, or {-1, -1} (none, or several).
std::pair<int, int> held(const Basis& b) { return layout::held_bit(b).value_or(std::pair{-1, -1}); }

// The index among `bases` of the one holding (slot, bit), or -1.
int find(const std::vector<Basis>& bases, int slot, int bit) {
  for (size_t i = 0; i < bases.size(); ++i)
    if (held(bases[i]) == std::pair{slot, bit}) return static_cast<int>(i);
  return -1;
}

}  // namespace

std::optional<Layout> lanes_exchanged(const Layout& L, int slot, int vec) {
  if (!L.all_threads_active() || vec < 2 || L.regs() % vec != 0 ||
      L.slot_block.at(static_cast<size_t>(slot)) < vec)
    return std::nullopt;
  const layout::LinearLayout lin = linear_layout(L);
  std::vector<layout::LinearLayout::InDim> ins = lin.in_dims();
  std::vector<Basis>& reg = ins[0].bases;
  std::vector<Basis>& lane = ins[1].bases;
  const int lv = ceil_log2(vec);
  for (int b = 0; b < lv; ++b) {
    if (find(reg, slot, b) >= 0) continue;
    const int l = find(lane, slot, b);
    if (l < 0) return std::nullopt;  // a warp bit (or no single bit) holds it
    int r = -1;
    for (int above = lv; r < 0 && above < ceil_log2(L.slot_block[static_cast<size_t>(slot)]);
         ++above)
      r = find(reg, slot, above);
    if (r < 0) return std::nullopt;
    std::swap(reg[static_cast<size_t>(r)], lane[static_cast<size_t>(l)]);
  }
  // The vector's registers first, in the order of the coordinate bits they hold.
  std::vector<Basis> renumbered;
  for (int b = 0; b < lv; ++b) renumbered.push_back(reg[static_cast<size_t>(find(reg, slot, b))]);
  for (const Basis& x : reg)
    if (held(x).first != slot || held(x).second >= lv) renumbered.push_back(x);
  reg = renumbered;
  Layout base = L;
  base.vec = vec;
  base.groups = L.regs() / vec;
  Layout out = with_placement(base, layout::LinearLayout(ins, lin.out_dims()));
  if (out.vec != vec) return std::nullopt;
  out.own_order.clear();
  return out;
}

LaneExchange lane_exchange(const Layout& from, const Layout& to) {
  const layout::LinearLayout f = linear_layout(from), t = linear_layout(to);
  const std::vector<Basis>&freg = f.in_dims()[0].bases, &flane = f.in_dims()[1].bases,
        &fwarp = f.in_dims()[2].bases;
  const std::vector<Basis>&treg = t.in_dims()[0].bases, &tlane = t.in_dims()[1].bases,
        &twarp = t.in_dims()[2].bases;
  auto fail = [](const std::string& why) {
    throw InternalError(
        "lane_exchange: the layouts differ by more than lanes exchanged for "
        "registers: " +
        why);
  };
  if (freg.size() != treg.size() || flane.size() != tlane.size() || fwarp != twarp)
    fail("their sizes or warps");
  LaneExchange out;
  std::vector<Basis> x = freg;  // what each register bit holds after the swaps
  for (size_t l = 0; l < flane.size(); ++l) {
    if (flane[l] == tlane[l]) continue;
    auto [slot, bit] = held(tlane[l]);
    const int r = slot < 0 ? -1 : find(freg, slot, bit);
    if (r < 0) fail(fmt::format("lane bit {}", l));
    out.swaps.emplace_back(static_cast<int>(l), r);
    x[static_cast<size_t>(r)] = flane[l];
  }
  for (const Basis& b : x) {
    auto [slot, bit] = held(b);
    const int r = slot < 0 ? -1 : find(treg, slot, bit);
    if (r < 0) fail("a register bit");
    out.reg_to.push_back(r);
  }
  return out;
}

}  // namespace tessel::passes
