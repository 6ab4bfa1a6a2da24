#include "driver/bounds_report.hpp"

#include <fmt/format.h>

#include "frontend/trace.hpp"

namespace tessel::rt {

namespace {

// " (the constant -k counted from the end)" when the index of tensor dim `dim` of `access`
// is a negative constant the frontend counted from the end (size + -k), else "".
std::string from_end_note(const ir::Node* access, int dim) {
  size_t a = ir::first_index(access);
  int d = 0;
  for (const ir::IndexInfo& info : access->access) {
    if (info.kind == ir::IndexKind::newaxis) continue;
    if (d++ == dim && a < access->args.size()) {
      const ir::Node* i = access->args[a];
      if (i->op == ir::Op::Binary && i->bfn() == ir::BinaryFn::add && i->args.size() == 2 &&
          i->args[1]->op == ir::Op::Const && i->args[1]->ival < 0)
        return fmt::format(" (the constant {} counted from the end)", i->args[1]->ival);
      return "";
    }
    ++a;
  }
  return "";
}

}  // namespace

UserError bounds_error(const ir::Graph& g, const ir::Node* access, int dim, int64_t index,
                       int64_t extent, bool on_every_call) {
  return UserError(g.kernel_name, access->loc,
                   fmt::format("{} index {}{} is out of range for dimension {} of {} (size {})",
                               access->op == ir::Op::Load     ? "a load's"
                               : access->op == ir::Op::Store  ? "a store's"
                               : access->op == ir::Op::Signal ? "a ts::signal's"
                               : access->op == ir::Op::Wait   ? "a ts::wait's"
                                                              : "an atomic's",
                               index, from_end_note(access, dim), dim,
                               frontend::describe_tensor(access->args.at(0)), extent),
                   on_every_call
                       ? "index within [0, size) (an index computed on the host, from constants, "
                         "scalar arguments and sizes, is checked on every call)"
                       : "index within [0, size) (Settings::check_bounds reports this; without "
                         "it an out-of-range load reads 0 and an out-of-range store is "
                         "skipped)");
}

void raise_bounds_record(const ir::Graph& g, const BoundsRecord& record) {
  if (record[0] == 0) return;
  int64_t id = record[0] - 1;
  const auto& nodes = g.nodes();
  if (id < 0 || id >= static_cast<int64_t>(nodes.size()) || !ir::is_access(nodes[id].get()))
    throw InternalError(fmt::format(
        "bounds record names node {}, not a load or store of kernel '{}'", id, g.kernel_name));
  const ir::Node* n = nodes[id].get();
  if (record[1] == -1 && (n->op == ir::Op::Wait || n->op == ir::Op::Signal)) {
    const ir::Node* want = n->args.at(n->op == ir::Op::Wait ? 1 : 2);
    throw UserError(
        g.kernel_name, n->loc,
        fmt::format("{} on {} at element offset {} waited for {} but the element still held {} "
                    "after {} polls (Settings::check_bounds gave up; without it this wait hangs "
                    "the GPU)",
                    n->op == ir::Op::Wait ? "ts::wait" : "ts::signal with wait_for",
                    frontend::describe_tensor(n->args.at(0)), record[2],
                    want->op == ir::Op::Const ? std::to_string(want->ival) : "its value", record[3],
                    kWaitPolls),
        "signal that element from another program of the same launch, and launch no more "
        "programs than run on the GPU at once (or use a persistent kernel): a program that "
        "has not started cannot signal");
  }
  throw bounds_error(g, n, static_cast<int>(record[1]), record[2], record[3]);
}

}  // namespace tessel::rt
