// ts::multicast_like and ts::MulticastTensor: a stack of equally shaped buffers addressed
// through a u64 tile value of device pointers (Helion's hl.multicast_like). The trace
// records one Multicast node (args: the example tensor, the dev_ptrs value); loads and
// stores of it (tensors.cpp) index the example and put dev_ptrs' shape first.
#include <fmt/format.h>

#include "frontend/trace.hpp"

namespace tessel {

using frontend::TraceContext;
using ir::Node;
using ir::Op;

namespace {

[[noreturn]] void misused(SourceLoc loc, const char* as) {
  TraceContext::current(loc).fail(
      loc, fmt::format("a multicast tensor (ts::multicast_like) is used as {}", as),
      "only loads and stores use a multicast tensor: index it (`bufs(t)` loads one slice from "
      "every buffer, `bufs(t) = v` stores), then compute with the loaded value");
}

}  // namespace

Operand::Operand(const MulticastTensor&, Loc loc) : loc_(SourceLoc::from(loc)) {
  misused(loc_, "a value");
}

Index::Index(const MulticastTensor&, Loc l) : kind(value_k), loc(SourceLoc::from(l)) {
  misused(loc, "an index");
}

MulticastTensor::MulticastTensor(Node* n) : node_(n), loop_(nullptr) {
  TraceContext& ctx = TraceContext::current({});
  trace_ = ctx.id();
  if (ctx.depth() > 0) loop_ = ctx.loop_level(ctx.depth()).loop;
}

Node* MulticastTensor::node_at(SourceLoc loc) const {
  TraceContext& ctx = TraceContext::current(loc);
  if (trace_ != ctx.id())
    ctx.fail(loc, "a ts::MulticastTensor from another trace (an earlier call, or another kernel)",
             "make the multicast tensor inside the loop that uses it");
  bool open = false;
  for (int l = 1; l <= ctx.depth(); ++l) open |= ctx.loop_level(l).loop == loop_;
  if (!open)
    ctx.fail(loc, "a multicast tensor is used outside the loop that made it",
             "call ts::multicast_like inside the loop where its loads and stores are");
  return node_;
}

int MulticastTensor::dim() const { return node_->rank; }
DType MulticastTensor::dtype() const { return node_->dtype; }

TensorRef MulticastTensor::operator()() const { return TensorRef(node_at({}), {}, {}); }
TensorRef MulticastTensor::operator()(Index a) const {
  return TensorRef(node_at(a.loc), {a}, a.loc);
}
TensorRef MulticastTensor::operator()(Index a, Index b) const {
  return TensorRef(node_at(a.loc), {a, b}, a.loc);
}
TensorRef MulticastTensor::operator()(Index a, Index b, Index c) const {
  return TensorRef(node_at(a.loc), {a, b, c}, a.loc);
}
TensorRef MulticastTensor::operator()(Index a, Index b, Index c, Index d) const {
  return TensorRef(node_at(a.loc), {a, b, c, d}, a.loc);
}
TensorRef MulticastTensor::operator()(Index a, Index b, Index c, Index d, Index e) const {
  return TensorRef(node_at(a.loc), {a, b, c, d, e}, a.loc);
}
TensorRef MulticastTensor::operator()(Index a, Index b, Index c, Index d, Index e, Index f) const {
  return TensorRef(node_at(a.loc), {a, b, c, d, e, f}, a.loc);
}

MulticastTensor multicast_like(const Tensor& example, const Operand& dev_ptrs, Loc l) {
  SourceLoc loc = SourceLoc::from(l);
  TraceContext& ctx = TraceContext::current(loc);
  Node* like = example.node_at(loc);
  if (ctx.depth() == 0)
    ctx.fail(loc, "ts::multicast_like outside a device loop",
             "make the multicast tensor inside the ts::tile or ts::grid loop that loads or stores "
             "it, from dev_ptrs loaded there (`ts::multicast_like(like, dev_ptrs(ts::all))`)");
  Node* ptrs = dev_ptrs.node();
  if (ptrs->dtype != DType::u64)
    ctx.fail(loc,
             fmt::format("the dev_ptrs of ts::multicast_like are {} values; device addresses are "
                         "u64",
                         dtype_name(ptrs->dtype)),
             "pass a ts::u64 tensor of addresses (ts::SymmetricBuffer::dev_ptrs() gives one, as "
             "torch.uint64 data pointers in Helion)");
  Node* n = ctx.add(Op::Multicast, like->dtype, ptrs->shape, {like, ptrs}, loc);
  n->rank = like->rank;
  return MulticastTensor(n);
}

MulticastTensor multicast_like(const Tensor&, const Tensor& dev_ptrs, Loc l) {
  SourceLoc loc = SourceLoc::from(l);
  dev_ptrs.node_at(loc);
  TraceContext::current(loc).fail(
      loc, "ts::multicast_like takes dev_ptrs as a tile value, not a tensor",
      "load the addresses inside the loop: ts::multicast_like(like, dev_ptrs(ts::all)) (or "
      "dev_ptrs(ts::all, ts::all), or dev_ptrs(t) for a tile of them)");
}

}  // namespace tessel
