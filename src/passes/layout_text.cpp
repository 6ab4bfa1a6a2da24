#include "passes/layout_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <vector>

#include "common/pow2.hpp"
#include "ir/parser.hpp"
#include "passes/access_layouts.hpp"
#include "passes/line_cursor.hpp"
#include "passes/tensor_cores.hpp"

namespace tessel::passes {

namespace {

int log2_size(LineCursor& c, int64_t size) {
  const int b = ceil_log2(size);
  if (size < 1 || (int64_t{1} << b) != size) c.fail(fmt::format("{} is not a power of two", size));
  return b;
}

layout::LinearLayout parse_layout_line(LineCursor& c) {
  std::vector<layout::LinearLayout::InDim> ins;
  while (!c.accept("->")) {
    layout::LinearLayout::InDim in;
    in.name = c.name();
    c.expect('[');
    const int bits = log2_size(c, c.integer());
    c.expect(']');
    c.expect(':');
    while (c.accept('(')) {
      layout::LinearLayout::Basis b;
      do b.push_back(static_cast<int32_t>(c.integer()));
      while (c.accept(','));
      c.expect(')');
      in.bases.push_back(b);
    }
    if (static_cast<int>(in.bases.size()) != bits)
      c.fail(fmt::format("input dim {} of size {} needs {} bases, not {}", in.name,
                         int64_t{1} << bits, bits, in.bases.size()));
    ins.push_back(std::move(in));
    c.accept(';');
  }
  std::vector<layout::LinearLayout::OutDim> outs;
  do {
    layout::LinearLayout::OutDim o;
    o.name = c.name();
    c.expect('[');
    o.size = static_cast<int32_t>(c.integer());
    log2_size(c, o.size);
    c.expect(']');
    outs.push_back(o);
  } while (c.accept(','));
  if (!c.done()) c.fail("expected the end of the layout");
  for (const auto& in : ins)
    for (const auto& b : in.bases)
      if (b.size() != outs.size())
        c.fail(fmt::format("a basis of {} has {} coordinates for {} output dims", in.name, b.size(),
                           outs.size()));
  return layout::LinearLayout(std::move(ins), std::move(outs));
}

// The slots "[NAMES: BLOCK] ..." after the cursor, as the nest's slot numbers.
std::vector<int> parse_slots(LineCursor& c, const Layout& L) {
  std::map<std::string, int> slot_of_name;
  for (const auto& [s, k] : L.slot_of) slot_of_name[ir::sym_name(s)] = k;
  std::vector<int> order;
  while (c.accept('[')) {
    int slot = -1;
    std::string first;
    while (!c.accept(':')) {
      std::string nm = c.name();
      auto it = slot_of_name.find(nm);
      if (it == slot_of_name.end()) c.fail(fmt::format("{} is not a tile dim of this loop", nm));
      if (slot >= 0 && it->second != slot)
        c.fail(fmt::format("{} and {} are in different slots of this loop", first, nm));
      slot = it->second;
      first = nm;
    }
    const int64_t block = c.integer();
    c.expect(']');
    if (block != L.slot_block.at(static_cast<size_t>(slot)))
      c.fail(fmt::format("the slot of {} holds {} elements in this loop, not {}", first,
                         L.slot_block[static_cast<size_t>(slot)], block));
    order.push_back(slot);
  }
  return order;
}

}  // namespace

layout::LinearLayout parse_linear_layout(const std::string& text, int line) {
  std::string one = text;
  for (char& ch : one)
    if (ch == '\n') ch = ';';
  LineCursor c(one, line);
  return parse_layout_line(c);
}

std::map<const ir::Node*, Layout> parse_layouts(const std::string& text, const ir::Graph& g,
                                                const Config& config) {
  std::map<int, const ir::Node*> loops;
  for (const ir::Node* n : g.host)
    if (n->op == ir::Op::Loop) loops[n->id] = n;
  std::map<int, const ir::Node*> nodes;
  for (const auto& up : g.nodes()) nodes[up->id] = up.get();
  std::map<const ir::Node*, Layout> out;
  Layout* cur = nullptr;
  const std::vector<std::string> lines = lines_of(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    LineCursor c(lines[i], static_cast<int>(i) + 1);
    if (!c.accept("//")) continue;
    if (c.accept("layout of loop %")) {
      const int64_t id = c.integer();
      auto it = loops.find(static_cast<int>(id));
      if (it == loops.end()) c.fail(fmt::format("%{} is not a top-level loop of the kernel", id));
      Layout L = compute_layout(it->second, config, &g);
      assign_access_layouts(g, it->second, config, L);
      plan_tensor_cores(g, plan_kernel(g, it->second, config), L);
      L.own_order.clear();  // the text lists them
      c.expect(':');
      while (!c.accept("slots outer to inner:")) {
        if (c.done()) c.fail("expected 'slots outer to inner:'");
        c.name();  // counts and words the computed layout holds
        c.accept(',');
        c.accept(';');
      }
      std::vector<int> order = parse_slots(c, L);
      for (size_t k = 0; k < order.size(); ++k)
        if (order.size() != L.slot_block.size() || order[k] != static_cast<int>(k))
          c.fail("the slots differ from the ones this loop's layout has");
      cur = &(out[it->second] = L);
      continue;
    }
    if (!cur) continue;
    if (c.accept("as a linear layout:")) {
      layout::LinearLayout placement = parse_layout_line(c);
      if (placement != linear_layout(*cur)) {
        if (tensor_core_placement(*cur))
          c.fail(
              "a nest whose sums of products run on tensor cores keeps the mma.sync "
              "accumulator's placement");
        try {
          *cur = with_placement(*cur, placement);
        } catch (const InternalError& e) {
          c.fail(std::string("a placement this layout cannot take: ") + e.what());
        }
      }
      continue;
    }
    if (c.accept('%')) {
      const int64_t id = c.integer();
      if (!c.accept('(')) continue;  // a contraction's line: computed
      c.name();
      c.expect(')');
      if (!c.accept("in its own layout:")) continue;
      auto it = nodes.find(static_cast<int>(id));
      if (it == nodes.end()) c.fail(fmt::format("%{} is not a node of the kernel", id));
      std::vector<int> order = parse_slots(c, *cur);
      std::vector<int> sorted = order;
      std::sort(sorted.begin(), sorted.end());
      for (size_t k = 0; k < sorted.size(); ++k)
        if (sorted.size() != cur->slot_block.size() || sorted[k] != static_cast<int>(k))
          c.fail("an own layout orders all of the nest's slots, each once");
      cur->own_order[it->second] = order;
    }
  }
  return out;
}

}  // namespace tessel::passes
