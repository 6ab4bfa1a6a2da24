// Loads and stores: address arithmetic in the index dtype, masks (tile edges, extents,
// tensor bounds, inactive threads), 16-byte vector accesses along a contiguous innermost
// dimension.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "codegen/emitter_state.hpp"
#include "codegen/fold.hpp"
#include "common/pow2.hpp"
#include "passes/default_config.hpp"

namespace tessel::codegen {

using ir::Node;
using ir::Op;

namespace {

/// How one tensor dimension of an access is addressed, as expressions of register "r".
struct DimAccess {
  ir::IndexKind kind;
  const ir::Sym* sym = nullptr;
  std::string idx;    // index along the dimension (index dtype)
  std::string lim;    // tile/all: exclusive upper limit of idx (hoisted variable)
  std::string extra;  // tile/all: a test of the slot's bits past the Sym's block
  std::string end;    // tile: the tile's own end, where lanes before it may leave the tensor
  std::string raw, size, in_range;  // scalar/gather/tile: the index value, the size, their test
  std::string mask;                 // gather: validity of the index operand's tile coordinates
  const Node* operand = nullptr;    // tile: the loop
  /// Whether the element's index is valid (bool expression of idx).
  std::string valid() const {
    switch (kind) {
      case ir::IndexKind::tile:
        return fold::land({fold::cmp(idx, ">=", "0"), fold::cmp(idx, "<", lim), extra});
      case ir::IndexKind::all:
        return fold::land({fold::cmp(idx, "<", lim), extra});
      case ir::IndexKind::scalar:
      case ir::IndexKind::gather:
      case ir::IndexKind::newaxis:
        break;
    }
    return fold::land({in_range, mask});
  }
};

struct AccessPlan {
  std::vector<DimAccess> dims;  // one per tensor dimension
  std::string base;             // tensor pointer (a multicast tensor: the register's buffer)
  std::vector<std::string> stack_valid;  // a multicast tensor: validity of its dev_ptrs coords
  bool vector = false;                   // dim vdim vectorized
  size_t vdim = 0;                       // the tensor dim of unit stride vectors run along
  // Vector accesses: every vector is wholly valid or wholly invalid (index and limit are
  // multiples of the vector width), and every vector address is aligned to its size.
  bool whole = false, aligned = false;
};

}  // namespace

// Whether the lanes of a tile of loop dim `ld` that lie within the loop stay within dim `d`
// of tensor `t` wherever the code runs: the loop's end is a tensor's size (the call then
// checks that it covers every tensor the tile indexes: TraceContext::check_tile_covers),
// t's own extent (an allocation's), or a constant no larger than t's known size, and its
// begin is a constant of 0 or more.
// Else (a bound of the user's own, e.g. a ts::Value or a device-resident size) lanes past
// t's end are masked, and reported under Settings::check_bounds.
static bool tile_stays_inside(const Emitter& e, const Node* t, int d, const ir::LoopDim& ld) {
  if (ld.begin && !(ld.begin->op == Op::Const && ld.begin->ival >= 0)) return false;
  if (ld.end->op == Op::Size) return true;
  if (t->op == Op::Alloc && t->args.at(static_cast<size_t>(d)) == ld.end) return true;
  const int64_t size = e.known_size(t, d);
  return ld.end->op == Op::Const && size >= 0 && ld.end->ival <= size;
}

// The addressing of access n (a load or store; any memory op) at register expression r:
// per tensor dimension its index and validity, the base pointer. A multicast tensor
// (ts::multicast_like) is addressed here only: the base of register r is its dev_ptrs
// value at r (the buffer of r's stack coordinates) cast to the example's element type,
// the offsets are the example's (its strides and sizes), and the dev_ptrs coordinates
// are masked as a tile or ts::all value's are (Helion's StackIndexingStrategy).
static AccessPlan plan_access(Emitter& e, const Node* n, size_t first_operand,
                              const std::string& r) {
  const Node* t = ir::addressed_tensor(n);
  AccessPlan p;
  if (n->is_multicast_access()) {
    const Node* ptrs = n->args[0]->args[1];
    p.base = fmt::format("reinterpret_cast<{}*>({})", dtype_cuda_storage(t->dtype),
                         e.is_array(ptrs) ? e.at(ptrs, r) : e.scalar(ptrs));
    for (const ir::Sym* s : ptrs->shape)
      if (s) p.stack_valid.push_back(e.sym_valid(s, r));
  } else {
    p.base = e.tensor_param(t);
  }
  size_t op = first_operand;
  int d = 0;
  for (const ir::IndexInfo& info : n->access) {
    if (info.kind == ir::IndexKind::newaxis) continue;
    const Node* operand = n->args[op++];
    DimAccess a;
    a.kind = info.kind;
    a.sym = info.sym;
    a.operand = operand;
    std::string size = e.size_param(t, d);
    switch (info.kind) {
      case ir::IndexKind::scalar: {
        // The bounds test is in the operand's own dtype: an i64 index past 2^31 must not
        // wrap into range when narrowed to a 32-bit index dtype.
        a.raw = e.scalar(operand);
        a.size = size;
        a.idx = fmt::format("(({}){})", e.idx_t(), a.raw);
        a.in_range = fold::land(
            {fold::cmp(fold::paren(a.raw), ">=", "0"), fold::cmp(fold::paren(a.raw), "<", size)});
        break;
      }
      case ir::IndexKind::tile: {
        const Emitter::DimVars& dv = e.dims.at({operand, info.sym->loop_dim});
        a.lim = fmt::format("lim{}_{}", n->id, d);
        e.line(fmt::format("const {} {} = min({}, {});", e.idx_t(), a.lim, dv.te, size));
        a.idx = fold::add(dv.tb, e.coord(info.sym, r));
        int64_t sb = e.plan_.block(info.sym);
        if (sb < e.L_->slot_block[e.slot(info.sym)])
          a.extra = fold::cmp(e.slot_coord(info.sym, r), "<", std::to_string(sb));
        if (!tile_stays_inside(e, t, d, operand->dims.at(static_cast<size_t>(info.sym->loop_dim))))
          a.end = dv.te;
        a.raw = a.idx;
        a.size = size;
        a.in_range = fold::land(
            {fold::cmp(fold::paren(a.idx), ">=", "0"), fold::cmp(fold::paren(a.idx), "<", size)});
        break;
      }
      case ir::IndexKind::all: {
        a.lim = size;
        a.idx = e.coord(info.sym, r);
        int64_t sb = e.plan_.block(info.sym);
        if (sb < e.L_->slot_block[e.slot(info.sym)])
          a.extra = fold::cmp(a.idx, "<", std::to_string(sb));
        break;
      }
      case ir::IndexKind::gather: {
        a.raw = e.at(operand, r);  // tested in its own dtype, as a scalar index
        a.size = size;
        a.idx = fmt::format("(({}){})", e.idx_t(), a.raw);
        a.in_range = fold::land(
            {fold::cmp(fold::paren(a.raw), ">=", "0"), fold::cmp(fold::paren(a.raw), "<", size)});
        // An index computed from tiles is masked where those tiles are (Helion's rule).
        std::vector<std::string> masks;
        for (const ir::Sym* s : operand->shape)
          if (s) masks.push_back(e.sym_valid(s, r));
        a.mask = masks.empty() ? "" : fold::land(masks);
        break;
      }
      case ir::IndexKind::newaxis:
        break;
    }
    p.dims.push_back(a);
    ++d;
  }
  // The kernel IR's access (passes/access_plan.hpp): vectors, whole, aligned.
  const passes::Access& access = e.nir_.access(n);
  if (access.form == passes::Access::Form::vector) {
    p.vector = true;
    p.vdim = static_cast<size_t>(access.vdim);
    p.whole = access.whole;
    p.aligned = access.aligned;
  }
  return p;
}

std::string Emitter::check_record_param() {
  if (param_names_.emplace("C", "ts_check").second)
    out_.params.push_back(Param{Param::check_record, nullptr});
  return "ts_check";
}

// Settings::check_bounds: before access n (planned at register expression r: "r" inside
// TS_FOR, or a constant), reports an out-of-range scalar index wherever the access runs,
// and an out-of-range gather or tile index of every element whose other indices are
// valid (a tile's lanes past its own end are masked by design; lanes within it but past
// the tensor's end, as a ts::tile bound larger than the tensor, are reported), in dim
// order, as the interpreter meets them (interp/memory_ops.cpp). ts::report_oob keeps the
// first report of the launch.
static void emit_bounds_checks(Emitter& e, const Node* n, const AccessPlan& p,
                               const std::string& r) {
  if (!e.g_.check_bounds) return;
  auto report = [&](size_t d) {
    const DimAccess& a = p.dims[d];
    return fmt::format("ts::report_oob({}, {}, {}, (long long)({}), (long long)({}))",
                       e.check_record_param(), n->id + 1, d, a.raw, a.size);
  };
  std::vector<std::string> others = {e.active(r)};
  others.insert(others.end(), p.stack_valid.begin(), p.stack_valid.end());
  std::string checks;
  for (size_t d = 0; d < p.dims.size(); ++d) {
    const DimAccess& a = p.dims[d];
    if (a.kind == ir::IndexKind::scalar)
      e.line(fmt::format("if (!({})) {};", a.in_range, report(d)), n);
    if (a.kind == ir::IndexKind::gather || (a.kind == ir::IndexKind::tile && !a.end.empty())) {
      others.push_back(a.kind == ir::IndexKind::gather
                           ? a.mask
                           : fold::land({fold::cmp(a.idx, "<", a.end), a.extra}));
      checks +=
          fmt::format("{}if (!({})) {};", checks.empty() ? "" : " else ", a.in_range, report(d));
    } else {
      others.push_back(a.valid());
    }
  }
  if (checks.empty()) return;
  e.line(
      fmt::format("{}if ({}) {{ {} }}", r == "r" ? "TS_FOR(r) " : "", fold::land(others), checks),
      n);
}

// The template arguments of ld_vec / st_vec for plan p.
static std::string vec_args(const std::string& mem, const AccessPlan& p) {
  return fmt::format("{}, TS_V, {}, {}", mem, p.whole ? "true" : "false",
                     p.aligned ? "true" : "false");
}

static std::string offset_expr(Emitter& e, const Node* t, const AccessPlan& p) {
  std::string off = "0";
  for (size_t d = 0; d < p.dims.size(); ++d)
    off = fold::add(off, fold::mul(p.dims[d].idx, e.stride_param(t, static_cast<int>(d))));
  return off;
}

static std::string valid_expr(Emitter& e, const AccessPlan& p, const std::string& r,
                              bool skip_vector_dim) {
  std::vector<std::string> terms = {e.active(r)};
  terms.insert(terms.end(), p.stack_valid.begin(), p.stack_valid.end());
  for (size_t d = 0; d < p.dims.size(); ++d) {
    if (skip_vector_dim && d == p.vdim) continue;
    terms.push_back(p.dims[d].valid());
  }
  return fold::land(terms);
}

// Inside the scope of one element or vector (a TS_FOR body, a vector's loop), one index
// expression per line: declares idx<d> for each tile/all index that is not a name, and the
// element's offset `off` (index dtype) when it is an expression; rewrites p to use them.
// Returns the offset.
static std::string emit_index_locals(Emitter& e, const Node* t, AccessPlan& p) {
  for (size_t d = 0; d < p.dims.size(); ++d) {
    DimAccess& a = p.dims[d];
    if ((a.kind != ir::IndexKind::tile && a.kind != ir::IndexKind::all) || fold::is_name(a.idx))
      continue;
    std::string local = fmt::format("idx{}", d);
    e.line(fmt::format("const {} {} = {};", e.idx_t(), local, fold::unparen(a.idx)));
    a.idx = local;
  }
  std::string off = offset_expr(e, t, p);
  if (fold::atomic(off)) return off;
  e.line(fmt::format("const {} off = {};", e.idx_t(), off));
  return "off";
}

// The number of valid elements of the vector at the innermost index `last`: a count of
// TS_V when `valid` holds (declared as the local `ok` when it is a test), else 0.
static std::string vector_count(Emitter& e, const std::string& valid, const DimAccess& last) {
  // Both in the index dtype: a 64-bit index past 2^31 must not be narrowed to int.
  std::string count = fmt::format("ts::nvalid<TS_V, {}>({}, {})", e.idx_t(),
                                  fold::unparen(last.idx), fold::unparen(last.lim));
  if (fold::is_true(valid)) return count;
  std::string ok = valid;
  if (!fold::is_name(valid)) {
    e.line(fmt::format("const bool ok = {};", valid));
    ok = "ok";
  }
  return fmt::format("{} ? {} : 0", ok, count);
}

// Load n's L2 eviction priority (Config::load_eviction_policies) as a ts::Evict, or ""
// for none.
static std::string evict_arg(const Emitter& e, const Node* n) {
  const std::vector<EvictionPolicy>& policies = e.plan_.load_eviction;
  if (policies.empty() || n->load_id < 0) return "";
  switch (policies.at(static_cast<size_t>(n->load_id))) {
    case EvictionPolicy::first:
      return "ts::Evict::first";
    case EvictionPolicy::last:
      return "ts::Evict::last";
    case EvictionPolicy::none:
      break;
  }
  return "";
}

// ts::ld or ts::ld<policy> for load n.
static std::string ld_call(const Emitter& e, const Node* n) {
  std::string policy = evict_arg(e, n);
  return policy.empty() ? "ts::ld" : "ts::ld<" + policy + ">";
}

// The vector loads of plan p (p.vector) into raw.
static void emit_ld_vec(Emitter& e, const Node* n, AccessPlan p, const std::string& raw) {
  const Node* t = ir::addressed_tensor(n);
  e.open("_Pragma(\"unroll\") for (int g = 0; g < TS_G; ++g)");
  e.line("const int r = g * TS_V;");
  std::string off = emit_index_locals(e, t, p);
  std::string policy = evict_arg(e, n);
  std::string count = vector_count(e, valid_expr(e, p, "r", true), p.dims[p.vdim]);
  e.line(fmt::format("ts::ld_vec<{}{}>({}, {}, &{}[r]);", vec_args(dtype_cuda_storage(t->dtype), p),
                     policy.empty() ? "" : ", " + policy, fold::add(p.base, off), count, raw));
  e.close();
}

void Emitter::emit_vector_load_into(const Node* n, const std::string& raw) {
  emit_ld_vec(*this, n, plan_access(*this, n, 1, "r"), raw);
}

void Emitter::emit_vector_copy_into(const Node* n, const std::string& tile, int64_t inner,
                                    int64_t pitch) {
  AccessPlan p = plan_access(*this, n, 1, "r");
  const Node* t = ir::addressed_tensor(n);
  open("_Pragma(\"unroll\") for (int g = 0; g < TS_G; ++g)");
  line("const int r = g * TS_V, f = TS_FLAT(r);");
  const std::string off = emit_index_locals(*this, t, p);
  const std::string count = vector_count(*this, valid_expr(*this, p, "r", true), p.dims[p.vdim]);
  // Threads past the layout's elements (small tiles) hold none.
  line(fmt::format("{}ts::cp_async_vec<{}>({} + (f >> {}) * {} + (f & {}), {}, {});",
                   L_->all_threads_active() ? "" : fmt::format("if (f < {}) ", L_->elems),
                   vec_args(dtype_cuda_storage(t->dtype), p), tile, ceil_log2(inner), pitch,
                   inner - 1, fold::add(p.base, off), count));
  close();
}

void Emitter::emit_load(const Node* n) {
  if (program_prefetched_.count(n)) return take_program_prefetch(n);  // by the program before
  if (prefetched_.count(n)) return;  // loaded one iteration early (emit_pipeline.cpp)
  const Node* t = ir::addressed_tensor(n);
  std::string nm = ids_.value(n);
  names_[n] = nm;
  if (!is_array(n)) {
    AccessPlan p = plan_access(*this, n, 1, "0");
    emit_bounds_checks(*this, n, p, "0");
    std::vector<std::string> valid = p.stack_valid;
    for (const DimAccess& a : p.dims) valid.push_back(a.valid());
    line(fmt::format("const {} {} = {}({}, {});", reg_type(n->dtype), nm, ld_call(*this, n),
                     fold::add(p.base, offset_expr(*this, t, p)), fold::land(valid)),
         n);
    return;
  }
  if (const passes::Layout* own = own_layout(n)) {
    // Loaded in its own layout (vectors along its contiguous dimension), then converted.
    std::string raw = fmt::format("c{}", n->id);
    in_layout(*own, [&] { emit_array_load(n, raw); });
    convert_layout(raw, *own, nm, nest_, n->dtype, n);
    return;
  }
  emit_array_load(n, nm);
}

void Emitter::emit_array_load(const Node* n, const std::string& nm) {
  const Node* t = ir::addressed_tensor(n);
  std::string mem = dtype_cuda_storage(t->dtype);
  line(fmt::format("{} {}[TS_N];", reg_type(n->dtype), nm), n);
  const passes::Access::Form form = nir_.access(n).form;
  if (form == passes::Access::Form::per_thread) {
    // One value in every register (never a vector: vectors span register bits): loaded
    // once, then copied (the compiler does not merge the registers' loads, each behind
    // its own mask test).
    AccessPlan p = plan_access(*this, n, 1, "0");
    emit_bounds_checks(*this, n, p, "0");
    line(fmt::format("const {} {}_0 = {}({}, {});", reg_type(n->dtype), nm, ld_call(*this, n),
                     fold::add(p.base, offset_expr(*this, t, p)),
                     valid_expr(*this, p, "0", false)));
    line(fmt::format("TS_FOR(r) {}[r] = {}_0;", nm, nm));
    return;
  }
  if (form == passes::Access::Form::tma) return emit_tma_load(n, nm);
  AccessPlan p = plan_access(*this, n, 1, "r");
  emit_bounds_checks(*this, n, p, "r");
  if (p.vector) {
    // Every vector is loaded in memory format first, then converted: no load waits for
    // another's data before it is issued.
    std::string raw = fmt::format("m{}", n->id);
    line(fmt::format("__align__(16) {} {}[TS_N];", mem, raw));
    emit_ld_vec(*this, n, p, raw);
    line(fmt::format("ts::to_regs<{}, TS_N>({}, {});", mem, raw, nm));
  } else {
    open_unrolled("TS_FOR(r)");
    std::string off = emit_index_locals(*this, t, p);
    line(fmt::format("{}[r] = {}({}, {});", nm, ld_call(*this, n), fold::add(p.base, off),
                     valid_expr(*this, p, "r", false)));
    close();
  }
}

void Emitter::emit_tma_load(const Node* n, const std::string& nm) {
  const Node* t = ir::addressed_tensor(n);
  const passes::TmaBox& box = nir_.access(n).tma;
  const passes::SharedStage& st = *nir_.stage(n);
  const std::string mem = dtype_cuda_storage(t->dtype);
  AccessPlan p = plan_access(*this, n, 1, "r");
  emit_bounds_checks(*this, n, p, "r");
  // The box's tensor coordinates (TMA dim order), and each dim's coordinate in the box at r.
  std::vector<std::string> coords, inside(p.dims.size());
  std::string nonempty;
  for (int d : box.dims) {
    const DimAccess& a = p.dims[static_cast<size_t>(d)];
    if (a.kind == ir::IndexKind::tile)
      coords.push_back(fmt::format("(int){}", dims.at({a.operand, a.sym->loop_dim}).tb));
    else if (a.kind == ir::IndexKind::all)
      coords.push_back("0");
    else
      coords.push_back(fmt::format("(int)({})", a.raw));
  }
  std::vector<std::string> sizes;
  for (size_t d = 0; d < p.dims.size(); ++d) {
    const DimAccess& a = p.dims[d];
    inside[d] = a.kind == ir::IndexKind::tile  ? coord(a.sym, "r")
                : a.kind == ir::IndexKind::all ? a.idx
                                               : "0";
    sizes.push_back(fold::cmp(size_param(t, static_cast<int>(d)), ">", "0"));
  }
  std::string soff = "0", pitch = "1";
  for (size_t j = 0; j < box.dims.size(); ++j) {
    soff = fold::add(soff, fold::mul(inside[static_cast<size_t>(box.dims[j])], pitch));
    pitch = fold::mul(pitch, std::to_string(box.box[j]));
  }
  const std::string map = tensor_map_param(n);
  const std::string dst = fold::add("ts_smem", std::to_string(st.offset));
  const std::string bar = fold::add("ts_smem", std::to_string(st.mbarrier));
  const std::string phase = fmt::format("ph{}", n->id);
  line(fmt::format("// %{}: its box [{}] (TMA dim order) by tensor descriptor into shared memory",
                   n->id, fmt::join(box.box, ", ")),
       n);
  if (st.barrier)
    line(fmt::format("{};  // earlier readers of shared memory are done",
                     L_->threads <= 32 ? "__syncwarp()" : "__syncthreads()"));
  // A tensor without elements has no box to copy (every element is masked).
  std::string guard = fold::land(sizes);
  open(fold::is_true(guard) ? "" : fmt::format("if ({})", guard));
  open("if (tid == 0)");
  if (nir_.barrier_before.count(n)) line("ts::fence_proxy_async_global();");
  line(fmt::format("ts::tma_load<{}>({}, {}, {}, {}u, {{{}}});", box.dims.size(), map, dst, bar,
                   box.bytes, fmt::join(coords, ", ")));
  close();
  line(fmt::format("ts::mbarrier_wait({}, {});", bar, phase));
  line(fmt::format("{} ^= 1u;", phase));
  close();
  line(fmt::format("const {}* s{} = reinterpret_cast<const {}*>({});", mem, n->id, mem, dst));
  std::string from = fmt::format("s{}[{}]", n->id, fold::unparen(soff));
  if (nir_.access(n).vdim >= 0) {
    // The layout's vectors run along the box's dim 0: one vector read per TS_V registers
    // where the other dims are valid (inside the box: the index fills its slot), each
    // element masked after.
    p.vdim = static_cast<size_t>(nir_.access(n).vdim);
    const std::string raw = fmt::format("m{}", n->id);
    line(fmt::format("__align__(16) {} {}[TS_N];", mem, raw));
    open("_Pragma(\"unroll\") for (int g = 0; g < TS_G; ++g)");
    line("const int r = g * TS_V;");
    line(fmt::format("ts::ld_vec<{}, TS_V, true, true>(s{} + {}, {} ? TS_V : 0, &{}[r]);", mem,
                     n->id, fold::paren(soff), fold::paren(valid_expr(*this, p, "r", true)), raw));
    close();
    from = raw + "[r]";
  }
  open_unrolled("TS_FOR(r)");
  line(fmt::format("{}[r] = {} ? ts::Mem<{}>::to_reg({}) : ({})0;", nm,
                   valid_expr(*this, p, "r", false), mem, from, reg_type(n->dtype)));
  close();
}

// The layout slots that the elements written by access n span (their coordinates tell
// the elements apart): the slots of its tile and ts::all dims and of its gather indices.
int64_t Emitter::copy_bits(const Node* n) const {
  int64_t bits = 0;
  for (int k : passes::copy_slots(*L_, n)) bits |= L_->slot_mask(k);
  return bits;
}

// The tests that pick the owner of each element among its copies: coordinate 0 along
// every copy slot.
static std::vector<std::string> owner_terms(const Emitter& e, const Node* n) {
  std::vector<std::string> terms;
  for (int k : passes::copy_slots(*e.L_, n))
    terms.push_back(fold::cmp(
        fold::gather_bits("TS_FLAT(r)", e.L_->slot_bits[static_cast<size_t>(k)]), "==", "0"));
  return terms;
}

std::string Emitter::owner_test(const Node* n) const {
  std::string test;
  for (const std::string& t : owner_terms(*this, n)) test += " && " + t;
  return test;
}

Emitter::Element Emitter::element_at(const Node* n) {
  const bool one = writes_one_element(n);
  const std::string r = one ? "0" : "r";
  AccessPlan p = plan_access(*this, n, ir::first_index(n), r);
  emit_bounds_checks(*this, n, p, r);
  Element el;
  el.offset = offset_expr(*this, ir::addressed_tensor(n), p);
  el.ptr = fold::add(p.base, el.offset);
  std::vector<std::string> valid;
  if (one) {
    valid.push_back("tid == 0");
    valid.insert(valid.end(), p.stack_valid.begin(), p.stack_valid.end());
    for (const DimAccess& a : p.dims) valid.push_back(a.valid());
  } else {
    valid.push_back(valid_expr(*this, p, r, false));
    for (const std::string& t : owner_terms(*this, n)) valid.push_back(t);
  }
  el.valid = fold::land(valid);
  return el;
}

void Emitter::emit_store(const Node* n) {
  const Node* v = n->args[1];
  if (writes_one_element(n)) {
    // One element: written once, by register 0 of thread 0.
    Element el = element_at(n);
    line(fmt::format("ts::st({}, {}, {});", el.ptr, el.valid, at(v, "0")), n);
    return;
  }
  const passes::Layout* own = is_array(v) ? own_layout(n) : nullptr;
  if (!own) return emit_array_store(n, "");
  // Converted to the store's own layout (vectors along its contiguous dimension) first.
  std::string converted = fmt::format("c{}", n->id);
  if (nir_.exchanged.count(n))
    exchange_lanes(names_.at(v), nest_, converted, *own, v->dtype, n);
  else
    convert_layout(names_.at(v), nest_, converted, *own, v->dtype, n);
  in_layout(*own, [&] { emit_array_store(n, converted); });
}

// Store n of a tile value, in layout L_; `value`: the array holding it there ("": the
// value's own name).
void Emitter::emit_array_store(const Node* n, const std::string& value) {
  const Node* t = ir::addressed_tensor(n);
  const Node* v = n->args[1];
  std::string mem = dtype_cuda_storage(t->dtype);
  std::string saved = names_.count(v) ? names_.at(v) : "";
  if (!value.empty()) names_[v] = value;
  AccessPlan p = plan_access(*this, n, 2, "r");
  emit_bounds_checks(*this, n, p, "r");
  const std::vector<std::string> owner = owner_terms(*this, n);
  auto with_dedupe = [&](const std::string& valid) {
    std::vector<std::string> terms = {valid};
    terms.insert(terms.end(), owner.begin(), owner.end());
    return fold::land(terms);
  };
  const passes::Access::Form form = nir_.access(n).form;
  const bool uniform = form == passes::Access::Form::per_thread;
  if (form == passes::Access::Form::vector) {
    open("_Pragma(\"unroll\") for (int g = 0; g < TS_G; ++g)", n);
    line("const int r = g * TS_V;");
    std::string src;
    if (is_array(v)) {
      src = fmt::format("&{}[r]", names_.at(v));
    } else {
      line(fmt::format("{} bc[TS_V];", reg_type(v->dtype)));
      line(
          fmt::format("_Pragma(\"unroll\") for (int i = 0; i < TS_V; ++i) bc[i] = {};", scalar(v)));
      src = "bc";
    }
    std::string off = emit_index_locals(*this, t, p);
    std::string count =
        vector_count(*this, with_dedupe(valid_expr(*this, p, "r", true)), p.dims[p.vdim]);
    line(fmt::format("ts::st_vec<{}>({}, {}, {});", vec_args(mem, p), fold::add(p.base, off), count,
                     src));
    close();
  } else {
    // uniform: one value and one element in every register: register 0 stores (of the
    // thread whose elements' bits outside the stored slots are 0, as the dedupe test says).
    open_unrolled(uniform ? "" : "TS_FOR(r)");
    if (uniform) line("const int r = 0;");
    std::string off = emit_index_locals(*this, t, p);
    line(fmt::format("ts::st({}, {}, {});", fold::add(p.base, off),
                     with_dedupe(valid_expr(*this, p, "r", false)), at(v, "r")),
         n);
    close();
  }
  if (!value.empty()) names_[v] = saved;
}

}  // namespace tessel::codegen
