#include "interp/unwritten.hpp"

#include <fmt/format.h>

#include "interp/write_log.hpp"

namespace tessel::interp {

using ir::Node;
using ir::Op;

namespace {

// How messages name access `n`, and whether it reads the memory of its tensor args[0]
// (ordinary accesses: a multicast access addresses other memory).
struct AccessRead {
  const char* name = nullptr;
  bool reads = false;
};
AccessRead access_read(const Node* n) {
  switch (n->op) {
    case Op::Load:
      return {"load", true};
    case Op::DeviceScalar:
      return {"device scalar (an element read in host code: t(i), t.item(), ts::load(t))", true};
    case Op::Wait:
      return {"ts::wait", true};
    case Op::Atomic:  // an exchange's old value is its result only
      return {"atomic", n->afn() != ir::AtomicFn::xchg};
    case Op::Signal:
      return {"ts::signal", n->ival == 2};  // with wait_for
    // No tensor read.
    case Op::Arg:
    case Op::Size:
    case Op::Stride:
    case Op::Alloc:
    case Op::ShapeCheck:
    case Op::Return:
    case Op::Const:
    case Op::Unary:
    case Op::Binary:
    case Op::Where:
    case Op::Cast:
    case Op::Full:
    case Op::Arange:
    case Op::Permute:
    case Op::View:
    case Op::Reduce:
    case Op::Store:
    case Op::Multicast:
    case Op::Loop:
    case Op::LoopIndex:
    case Op::TileIndex:
    case Op::TileBegin:
    case Op::TileEnd:
    case Op::TileBlock:
    case Op::TileId:
    case Op::ProgramId:
    case Op::Carried:
    case Op::Yield:
    case Op::LoopResult:
      break;
  }
  return {};
}

bool reads_tensor(const Node* n) { return access_read(n).reads; }
const char* access_name(const Node* n) { return access_read(n).name; }

}  // namespace

UnwrittenMemory::UnwrittenMemory(const ir::Graph& g) : g_(g) {
  const size_t nodes = g.nodes().size();
  read_.assign(nodes, 0);
  tracked_.assign(nodes, 0);
  written_.resize(nodes);
  for (const auto& n : g.nodes()) {
    if (n->args.empty() || !reads_tensor(n.get())) continue;
    const Node* t = n->args[0];
    if (t->op == Op::Alloc && t->ival == ir::fill_none) read_[static_cast<size_t>(t->id)] = 1;
  }
}

void UnwrittenMemory::track(const rt::HostEnv& env) {
  for (const auto& [n, b] : env.allocs) {
    const size_t id = static_cast<size_t>(n->id);
    if (id >= read_.size() || !read_[id] || tracked_[id]) continue;
    tracked_[id] = 1;
    // Dense allocations (row-major, or an argument's stride order): offsets [0, numel).
    written_[id].assign(static_cast<size_t>(b.numel()), 0);
  }
}

void UnwrittenMemory::unwritten(const Node* n, const Buffer& t, int64_t offset) const {
  throw UserError(
      g_.kernel_name, n->loc,
      fmt::format("this {} reads element {} of {}, which ts::empty allocated and nothing has "
                  "written yet: on a GPU the element holds garbage (the interpreter's "
                  "allocations are zeroed, so the kernel would pass here and fail there)",
                  access_name(n), element_str(t, offset), ir::describe_tensor(n->args[0])),
      "initialise the tensor (ts::zeros_like, ts::full_like, x.new_zeros, x.new_full) or write "
      "the element before reading it");
}

}  // namespace tessel::interp
