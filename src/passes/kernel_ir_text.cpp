// The kernel_ir stage's text read back (passes/kernel_ir.hpp, parse_kernel_ir): the shared
// memory stages of one loop nest, their offsets and barriers as the text gives them.
#include <fmt/format.h>

#include "passes/kernel_ir.hpp"
#include "passes/line_cursor.hpp"
#include "passes/memory_order.hpp"
#include "passes/shared_plan.hpp"

namespace tessel::passes {

void parse_kernel_ir(const std::string& text, const ir::Graph& g, NestIr& nir) {
  std::map<int, const ir::Node*> staged;  // by node id
  for (const auto& [n, s] : nir.shared) staged[n->id] = n;
  std::map<int, const ir::Node*> nodes;  // the nest's, by id
  ir::walk(nir.loop->body, [&](const ir::Node* n) { nodes[n->id] = n; });
  std::set<const ir::Node*> given, memory_barriers;
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
    std::string line = lines[i];
    for (const char* tail : {"; memory barrier", ": memory barrier"}) {
      const std::string t = tail;
      if (line.size() >= t.size() && line.compare(line.size() - t.size(), t.size(), t) == 0) {
        auto n = nodes.find(static_cast<int>(id));
        if (n == nodes.end()) c.fail(fmt::format("%{} is not a node of this loop nest", id));
        memory_barriers.insert(n->second);
        line.erase(line.size() - t.size() + (t[0] == ':' ? 1 : 0));
      }
    }
    const size_t at = line.find("shared stage ");
    if (at == std::string::npos) continue;  // a value's type: computed
    auto it = staged.find(static_cast<int>(id));
    if (it == staged.end()) c.fail(fmt::format("%{} stages nothing in shared memory", id));
    SharedStage& s = nir.shared.at(it->second);
    LineCursor r(line.substr(at + 13), c.line());
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
    r.expect("at");
    const int64_t offset = r.integer();
    r.expect(',');
    if (r.integer() != s.bytes) c.fail(fmt::format("%{} stages {} bytes", id, s.bytes));
    r.expect("bytes");
    r.expect(',');
    const bool barrier = !r.accept("no");
    r.expect("barrier");
    r.expect("before");
    if (!r.done()) r.fail("expected the end of the line");
    s.offset = offset;
    s.barrier = barrier;
    given.insert(it->second);
  }
  LineCursor top(header ? lines[static_cast<size_t>(header - 1)] : "", header);
  if (!header) top.fail(fmt::format("no 'kernel IR of loop %{}' section", nir.loop->id));
  for (const auto& [id, n] : staged)
    if (!given.count(n)) top.fail(fmt::format("the text gives no shared stage for %{}", id));
  nir.shared_bytes = 0;
  for (const auto& [n, s] : nir.shared)
    nir.shared_bytes = std::max(nir.shared_bytes, s.offset + s.bytes);
  if (std::string why = shared_plan_error(nir); !why.empty()) top.fail(why);
  nir.barrier_before = memory_barriers;
  for (const ir::Node* n : memory_order_barriers(g, nir))
    if (!memory_barriers.count(n))
      top.fail(fmt::format(
          "%{} needs a memory barrier: it may access memory another thread of the program "
          "accessed before",
          n->id));
}

}  // namespace tessel::passes
