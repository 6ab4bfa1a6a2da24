#include "passes/access_plan.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "passes/kernel_ir.hpp"
#include "passes/key_facts.hpp"

namespace tessel::passes {

using ir::Node;
using ir::Op;

const char* access_form_name(Access::Form f) {
  switch (f) {
    case Access::Form::one:
      return "one";
    case Access::Form::per_thread:
      return "per_thread";
    case Access::Form::elements:
      return "elements";
    case Access::Form::vector:
      return "vector";
    case Access::Form::tma:
      return "tma";
  }
  return "";
}

bool flattened(const KernelPlan& plan, const ir::Sym* s) {
  return s->kind == ir::Sym::tile && plan.knobs(s->loop).flatten;
}

bool spans_registers(const KernelPlan& plan, const Layout& L, const ir::Sym* s) {
  if (flattened(plan, s)) return true;
  const int lv = L.log2_vec(), lt = L.log2_threads();
  for (int b : L.slot_bits[static_cast<size_t>(L.slot_of.at(s))])
    if (b < lv || b >= lv + lt) return true;  // a register bit
  return false;
}

bool same_in_every_register(const KernelPlan& plan, const Layout& L, const Node* n) {
  for (const ir::Sym* s : n->shape)
    if (s && spans_registers(plan, L, s)) return false;
  return true;
}

bool gathers_same_in_every_register(const KernelPlan& plan, const Layout& L, const Node* n) {
  size_t op = ir::first_index(n);
  for (const ir::IndexInfo& info : n->access) {
    if (info.kind == ir::IndexKind::newaxis) continue;
    const Node* operand = n->args[op++];
    if (info.kind == ir::IndexKind::gather && !operand->is_scalar() &&
        !same_in_every_register(plan, L, operand))
      return false;
  }
  return true;
}

namespace {

// The vector form of array access n in L, where its facts allow one (else elements).
Access vector_access(const ir::Graph& g, const KernelPlan& plan, const Layout& L, const Node* n) {
  Access a;
  const Node* t = ir::addressed_tensor(n);
  const int unit = ir::unit_stride_dim(g, t);
  if (unit < 0 || L.vec <= 1 || n->is_multicast_access()) return a;
  // The index infos of the tensor dims (newaxis adds none), and each one's operand.
  std::vector<const ir::IndexInfo*> dims;
  std::vector<const Node*> operands;
  size_t op = ir::first_index(n);
  for (const ir::IndexInfo& info : n->access) {
    if (info.kind == ir::IndexKind::newaxis) continue;
    dims.push_back(&info);
    operands.push_back(n->args[op++]);
  }
  if (static_cast<size_t>(unit) >= dims.size()) return a;
  for (const ir::IndexInfo* info : dims)
    if (info->kind == ir::IndexKind::gather) return a;
  const ir::IndexInfo& last = *dims[static_cast<size_t>(unit)];
  if (last.kind != ir::IndexKind::tile && last.kind != ir::IndexKind::all) return a;
  const int slot = L.slot_of.at(last.sym);
  if (flattened(plan, last.sym) || slot != L.vector_slot() ||
      plan.block(last.sym) != L.slot_block[static_cast<size_t>(slot)])
    return a;
  a.form = Access::Form::vector;
  a.vdim = unit;
  // Indices along the dim start at a multiple of the vector width: ts::all from 0, a tile
  // from its loop's begin in steps of its block (both multiples of 16).
  bool idx_ok = last.kind == ir::IndexKind::all;
  bool lim_ok = size_multiple_of_16(g, t, unit);
  if (last.kind == ir::IndexKind::tile) {
    const Node* loop = operands[static_cast<size_t>(unit)];
    const ir::LoopDim& ld = loop->dims.at(static_cast<size_t>(last.sym->loop_dim));
    idx_ok = multiple_of_16(g, ld.begin) && plan.block(last.sym) % 16 == 0;
    lim_ok &= multiple_of_16(g, ld.end);
  }
  a.whole = idx_ok && lim_ok;
  a.aligned = idx_ok && outer_strides_aligned(g, t, unit);
  return a;
}

}  // namespace

Access plan_access(const ir::Graph& g, const KernelPlan& plan, const Layout& L, int layout,
                   const Node* n) {
  Access a;
  std::optional<TmaBox> box = layout == 0 ? tensor_descriptor_box(g, plan, n) : std::nullopt;
  if (box) {
    a.form = Access::Form::tma;
    a.tma = *box;
    // Read from the box in vectors where a pointer load would move them.
    if (vector_access(g, plan, L, n).form == Access::Form::vector) a.vdim = box->dims[0];
  } else if (n->op == Op::Load) {
    if (n->is_scalar())
      a.form = Access::Form::one;
    else if (same_in_every_register(plan, L, n) && gathers_same_in_every_register(plan, L, n))
      a.form = Access::Form::per_thread;
    else
      a = vector_access(g, plan, L, n);
  } else if (reaches_one_element(n)) {
    a.form = Access::Form::one;  // a store's, an atomic's, a signal's or a wait's element
  } else if (n->op == Op::Store) {
    a = vector_access(g, plan, L, n);
    if (a.form != Access::Form::vector || !covered_slots(L, n).count(L.vector_slot())) {
      a = {};
      const Node* v = n->args[1];
      bool uniform = (v->is_scalar() || same_in_every_register(plan, L, v)) &&
                     gathers_same_in_every_register(plan, L, n);
      for (const ir::IndexInfo& info : n->access)
        if (info.sym && spans_registers(plan, L, info.sym)) uniform = false;
      for (const ir::Sym* s : ir::stack_shape(n))
        if (s && spans_registers(plan, L, s)) uniform = false;
      if (uniform) a.form = Access::Form::per_thread;
    }
  }  // else an atomic, signal or wait: each element by its owner (elements)
  a.layout = layout;
  a.stacked = n->is_multicast_access();
  return a;
}

std::string describe(const Access& a, const Layout& L) {
  std::string s = fmt::format("access L{} {}", a.layout, access_form_name(a.form));
  if (a.form == Access::Form::vector) {
    s += fmt::format(" dim {}, {} wide", a.vdim, L.vec);
    if (a.whole) s += ", whole";
    if (a.aligned) s += ", aligned";
  }
  if (a.form == Access::Form::tma) {
    std::vector<int64_t> by_dim(a.tma.box.size());  // in the tensor's dim order
    for (size_t j = 0; j < a.tma.dims.size(); ++j)
      by_dim[static_cast<size_t>(a.tma.dims[j])] = a.tma.box[j];
    s += fmt::format(", box [{}]", fmt::join(by_dim, ", "));
    if (a.tma.swizzle) s += fmt::format(", swizzle {}, chunks {}", a.tma.swizzle, a.tma.chunks);
    if (a.vdim >= 0) s += ", vectors";
  }
  if (a.stacked) s += ", stacked";
  return s;
}

std::string weaker_access_error(const Access& given, const Access& planned) {
  if (given.layout != planned.layout)
    return fmt::format("the access runs in L{}, not L{}", planned.layout, given.layout);
  if (given.stacked != planned.stacked)
    return planned.stacked ? "the access is to a multicast tensor's buffers (stacked)"
                           : "the access is not to a multicast tensor (stacked)";
  if ((given.form == Access::Form::tma) != (planned.form == Access::Form::tma))
    return planned.form == Access::Form::tma
               ? "the access is tma (a tensor descriptor's box): it is kept as planned"
               : "the access cannot be tma: Config::indexing, the layout or the tensor's facts "
                 "do not allow a tensor descriptor";
  if (given.form == planned.form) {
    if (given.form == Access::Form::tma) {
      if (given.vdim >= 0 && planned.vdim < 0)
        return "its box cannot be read in vectors (the layout's vectors do not run along its "
               "contiguous dim)";
      return given.tma == planned.tma ? "" : "the access's box is not the planned one";
    }
    if (given.form != Access::Form::vector) return "";
    if (given.vdim != planned.vdim)
      return fmt::format("its vectors run along dim {}, not {}", planned.vdim, given.vdim);
    if (given.whole && !planned.whole)
      return "its vectors are not known to be wholly valid or wholly invalid (whole)";
    if (given.aligned && !planned.aligned)
      return "its vector addresses are not known to be aligned to 16 bytes (aligned)";
    return "";
  }
  if (planned.form == Access::Form::vector && given.form == Access::Form::elements) return "";
  return fmt::format("the access is {}; it can only be weakened from vector to elements",
                     access_form_name(planned.form));
}

}  // namespace tessel::passes
