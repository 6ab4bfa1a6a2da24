// The kernel_ir stage's text read back (passes/kernel_ir.hpp, parse_kernel_ir): per loop
// nest the shared memory stages (offsets, barriers), the memory barriers, the accesses'
// forms, the loads issued early and the values their stores round, as the text gives
// them. A node's line is `%N op [type]: part; part; ...`; a type's part is computed.
#include <fmt/format.h>

#include <algorithm>

#include "passes/kernel_ir.hpp"
#include "passes/line_cursor.hpp"
#include "passes/memory_order.hpp"
#include "passes/shared_plan.hpp"

namespace tessel::passes {

namespace {

using ir::Node;

// The parts of a node line after its ": ", split at "; ".
std::vector<std::string> parts_of(const std::string& line) {
  std::vector<std::string> out;
  size_t at = line.find(": ");
  if (at == std::string::npos) return out;
  at += 2;
  while (true) {
    size_t end = line.find("; ", at);
    out.push_back(line.substr(at, end == std::string::npos ? std::string::npos : end - at));
    if (end == std::string::npos) return out;
    at = end + 2;
  }
}

// "KIND [L<a> -> L<b>] [of STAGES, FILLER] at OFFSET, BYTES bytes, [no ]barrier before" into
// stage s (its kind, layouts, a ring's buffers and filler (TMA or cp.async) and bytes must be
// the computed ones).
void read_stage(LineCursor& r, const LineCursor& c, int64_t id, SharedStage& s) {
  const std::string kind = r.name();
  if (kind != stage_kind_name(s.kind))
    c.fail(fmt::format("%{} is a {} stage, not {}", id, stage_kind_name(s.kind), kind));
  if (s.kind == SharedStage::Kind::convert) {
    r.expect('L');
    const int64_t from = r.integer();
    r.expect("->");
    r.expect('L');
    if (from != s.from || r.integer() != s.to)
      c.fail(fmt::format("%{} converts L{} to L{}", id, s.from, s.to));
  }
  if (s.kind == SharedStage::Kind::ring) {
    r.expect("of");
    if (r.integer() != s.stages) c.fail(fmt::format("%{}'s ring has {} buffers", id, s.stages));
    r.expect(',');
    const bool cp_async = r.accept("cp.async");
    if (!cp_async) r.expect("TMA");
    if (cp_async != s.cp_async)
      c.fail(fmt::format("%{}'s ring is filled by {}", id, s.cp_async ? "cp.async" : "TMA"));
  }
  r.expect("at");
  const int64_t offset = r.integer();
  r.expect(',');
  if (r.integer() != s.bytes) c.fail(fmt::format("%{} stages {} bytes", id, s.bytes));
  r.expect("bytes");
  r.expect(',');
  const bool barrier = !r.accept("no");
  r.expect("barrier");
  r.expect("before");
  if (!r.done()) r.fail("expected the end of the part");
  s.offset = offset;
  s.barrier = barrier;
}

// "L<k> FORM[ dim D, V wide[, whole][, aligned]][, box [B, ...]][, stacked]"
// (describe(Access)); a box is read into `planned`'s dims.
Access read_access(LineCursor& r, const NestIr& nir, const Access& planned) {
  Access a;
  r.expect('L');
  a.layout = static_cast<int>(r.integer());
  if (a.layout < 0 || static_cast<size_t>(a.layout) >= nir.layouts.size())
    r.fail(fmt::format("the nest has no layout L{}", a.layout));
  const std::string form = r.name();
  bool known = false;
  for (Access::Form f : {Access::Form::one, Access::Form::per_thread, Access::Form::elements,
                         Access::Form::vector, Access::Form::tma})
    if (form == access_form_name(f)) a.form = f, known = true;
  if (!known) r.fail("expected an access form: one, per_thread, elements, vector or tma");
  if (a.form == Access::Form::vector) {
    r.expect("dim");
    a.vdim = static_cast<int>(r.integer());
    r.expect(',');
    const int64_t width = r.integer();
    const int vec = nir.layouts[static_cast<size_t>(a.layout)].vec;
    if (width != vec) r.fail(fmt::format("L{}'s vectors are {} wide", a.layout, vec));
    r.expect("wide");
  }
  while (r.accept(',')) {
    const std::string word = r.name();
    if (word == "whole" && a.form == Access::Form::vector) {
      a.whole = true;
    } else if (word == "aligned" && a.form == Access::Form::vector) {
      a.aligned = true;
    } else if (word == "box" && a.form == Access::Form::tma) {
      if (planned.form != Access::Form::tma) r.fail(weaker_access_error(a, planned));
      std::vector<int64_t> by_dim;
      r.expect('[');
      do by_dim.push_back(r.integer());
      while (r.accept(','));
      r.expect(']');
      if (by_dim.size() != planned.tma.dims.size())
        r.fail(fmt::format("the box has {} dims, the tensor {}", by_dim.size(),
                           planned.tma.dims.size()));
      a.tma = planned.tma;
      for (size_t j = 0; j < a.tma.dims.size(); ++j)
        a.tma.box[j] = by_dim[static_cast<size_t>(a.tma.dims[j])];
    } else if (word == "swizzle" && a.form == Access::Form::tma) {
      a.tma.swizzle = static_cast<int>(r.integer());
    } else if (word == "chunks" && a.form == Access::Form::tma) {
      a.tma.chunks = static_cast<int>(r.integer());
    } else if (word == "vectors" && a.form == Access::Form::tma && !a.tma.dims.empty()) {
      a.vdim = a.tma.dims[0];
    } else if (word == "stacked") {
      a.stacked = true;
    } else {
      r.fail(
          "expected 'whole' or 'aligned' (vectors), 'box', 'swizzle', 'chunks' and 'vectors' (tma) "
          "or 'stacked'");
    }
  }
  if (!r.done()) r.fail("expected the end of the part");
  if (a.form == Access::Form::tma && a.tma.dims.empty()) r.fail("expected the tma access's box");
  return a;
}

}  // namespace

void parse_kernel_ir(const std::string& text, const ir::Graph& g, NestIr& nir) {
  std::map<int, const Node*> nodes;  // the nest's, by id
  nodes[nir.loop->id] = nir.loop;
  ir::walk(nir.loop->body, [&](const Node* n) { nodes[n->id] = n; });
  std::set<const Node*> stages_given, accesses_given, memory_barriers, rounded;
  std::map<const Node*, Prefetch> prefetch;
  int header = 0;  // the line of this loop's section (0: not reached)
  const std::vector<std::string> lines = lines_of(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    LineCursor c(lines[i], static_cast<int>(i) + 1);
    if (!c.accept("//")) continue;
    if (c.accept("kernel IR of loop %")) {
      if (header) break;  // the next loop's section
      if (c.integer() == nir.loop->id) header = c.line();
      continue;
    }
    if (!header || !c.accept('%')) continue;
    const int64_t id = c.integer();
    auto found = nodes.find(static_cast<int>(id));
    if (found == nodes.end()) c.fail(fmt::format("%{} is not a node of this loop nest", id));
    const Node* n = found->second;
    for (const std::string& part : parts_of(lines[i])) {
      LineCursor r(part, c.line());
      if (r.accept("shared stage ")) {
        auto s = nir.shared.find(n);
        if (s == nir.shared.end()) c.fail(fmt::format("%{} stages nothing in shared memory", id));
        read_stage(r, c, id, s->second);
        stages_given.insert(n);
      } else if (part == "memory barrier") {
        memory_barriers.insert(n);
      } else if (r.accept("access ")) {
        auto a = nir.accesses.find(n);
        if (a == nir.accesses.end()) c.fail(fmt::format("%{} is not a memory access", id));
        const Access given = read_access(r, nir, a->second);
        if (std::string why = weaker_access_error(given, a->second); !why.empty())
          c.fail(fmt::format("%{}: {}", id, why));
        a->second = given;
        accesses_given.insert(n);
      } else if (r.accept("prefetch ")) {
        const Prefetch* planned = nir.prefetched(n);
        if (!planned) c.fail(fmt::format("%{} issues no loads early", id));
        Prefetch& p = prefetch[n];
        while (r.accept('%')) {
          const int64_t load = r.integer();
          auto m = std::find_if(planned->loads.begin(), planned->loads.end(),
                                [&](const Node* l) { return l->id == load; });
          if (m == planned->loads.end())
            c.fail(fmt::format("%{} is not a load %{} can issue early", load, id));
          p.loads.push_back(*m);
          r.expect(',');
        }
        p.tiles_ahead = static_cast<int>(r.integer());
        if (p.tiles_ahead != planned->tiles_ahead)
          c.fail(fmt::format("%{} loads {} tiles ahead", id, planned->tiles_ahead));
        if (!r.accept("tiles") && !r.accept("tile")) r.fail("expected 'tiles ahead'");
        r.expect("ahead");
        if (!r.done()) r.fail("expected the end of the part");
      } else if (part == "rounded by its store") {
        if (!nir.rounded_by_store.count(n))
          c.fail(fmt::format("%{} is not rounded by a store: it must round itself", id));
        rounded.insert(n);
      }  // else: a value's type, computed
    }
  }
  LineCursor top(header ? lines[static_cast<size_t>(header - 1)] : "", header);
  if (!header) top.fail(fmt::format("no 'kernel IR of loop %{}' section", nir.loop->id));
  for (const auto& [n, s] : nir.shared)
    if (!stages_given.count(n))
      top.fail(fmt::format("the text gives no shared stage for %{}", n->id));
  for (const auto& [n, a] : nir.accesses)
    if (!accesses_given.count(n)) top.fail(fmt::format("the text gives no access for %{}", n->id));
  for (const auto& [loop, p] : prefetch)
    for (const Node* m : p.loads)
      if (nir.access(m).form != Access::Form::vector)
        top.fail(
            fmt::format("%{} is issued early by %{} but is not a vector access", m->id, loop->id));
  nir.prefetch = prefetch;
  nir.rounded_by_store = rounded;
  place_mbarriers(nir);
  if (std::string why = shared_plan_error(nir); !why.empty()) top.fail(why);
  nir.barrier_before = memory_barriers;
  for (const Node* n : memory_order_barriers(g, nir))
    if (!memory_barriers.count(n))
      top.fail(fmt::format(
          "%{} needs a memory barrier: it may access memory another thread of the program "
          "accessed before",
          n->id));
}

}  // namespace tessel::passes
