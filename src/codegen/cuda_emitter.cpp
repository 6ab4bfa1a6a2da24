// The kernel skeleton (signature, program-to-tile mapping) and device loops. Parameters:
// emit_params.cpp; elementwise values: emit_elementwise.cpp; memory ops: emit_memory.cpp;
// reductions: emit_reduce.cpp.
#include "codegen/cuda_emitter.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "codegen/emitter_state.hpp"
#include "codegen/fold.hpp"
#include "ir/host_eval.hpp"
#include "passes/default_config.hpp"
#include "passes/key_facts.hpp"
#include "passes/loop_knobs.hpp"
#include "passes/tensor_cores.hpp"

namespace tessel::codegen {

using ir::Node;
using ir::Op;

std::string reg_type(DType t) {
  // 16- and 8-bit floats compute in f32 registers; every other dtype is held as it is stored.
  return is_narrow_float(t) ? "float" : dtype_cuda_storage(t);
}

std::string literal(DType t, double f, int64_t i) {
  switch (t) {
    case DType::boolean:
      return i ? "true" : "false";
    case DType::i32:
      return i == INT32_MIN ? "(-2147483647 - 1)" : fmt::format("{}", static_cast<int32_t>(i));
    case DType::i8:
      return fmt::format("(signed char)({})", static_cast<int8_t>(i));
    case DType::i64:
      return i == INT64_MIN ? "(-9223372036854775807LL - 1)" : fmt::format("{}LL", i);
    case DType::u64:
      return fmt::format("{}ULL", static_cast<uint64_t>(i));
    case DType::f64:
      if (std::isinf(f)) return f > 0 ? "(1.0/0.0)" : "(-1.0/0.0)";
      if (std::isnan(f)) return "(0.0/0.0)";
      return fmt::format("{:.17g}", f).find_first_of(".e") == std::string::npos
                 ? fmt::format("{:.17g}.0", f)
                 : fmt::format("{:.17g}", f);
    case DType::f16:
    case DType::bf16:
    case DType::f8e4m3:
    case DType::f8e5m2:
    case DType::f32: {
      float x = static_cast<float>(f);
      if (std::isinf(x)) return x > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
      if (std::isnan(x)) return "__int_as_float(0x7fc00000)";
      std::string s = fmt::format("{:.9g}", x);
      if (s.find_first_of(".e") == std::string::npos) s += ".0";
      return s + "f";
    }
  }
  throw InternalError("literal: not a dtype");
}

Emitter::Emitter(const ir::Graph& g, const passes::KernelPlan& plan, const passes::NestIr& nir,
                 CudaKernel& out)
    : g_(g),
      top_(plan.loop),
      plan_(plan),
      L_(&nir.nest()),
      nest_(nir.nest()),
      out_(out),
      nir_(nir),
      live_(nir.live) {
  idx_t_ = g.index_dtype == DType::i64 ? "long long" : "int";
  for (const passes::Contraction& c : nest_.contractions)
    if (c.mma && c.mma->producer_warp && live_.count(c.match.sum)) producer_ = &c;
}

const Emitter::SharedUse& Emitter::shared_use(const Node* n) const {
  static const SharedUse unplanned{};  // not planned: none
  const SharedUse* u = nir_.stage(n);
  TESSEL_CHECK(u, "no shared memory stage planned for %" + std::to_string(n->id));
  return u ? *u : unplanned;
}

void Emitter::line(const std::string& s, const Node* at) {
  body_ << std::string(indent_ * 2, ' ');
  // Past a producer warpgroup's branch the program's barriers are the consumers' (the producer
  // neither waits at them nor has exited while the consumers do).
  static constexpr std::string_view kAll = "__syncthreads();";
  const size_t at_all = consumers_only_ ? s.find(kAll) : std::string::npos;
  if (at_all == std::string::npos)
    body_ << s;
  else
    body_ << s.substr(0, at_all) << "ts::sync_threads_of(TS_T);" << s.substr(at_all + kAll.size());
  if (at) body_ << "  " << loc_comment(at);
  body_ << "\n";
}
void Emitter::open(const std::string& s, const Node* at) {
  line(s.empty() ? "{" : s + " {", at);
  ++indent_;
}
void Emitter::open_unrolled(const std::string& s) { open(s); }
void Emitter::close() {
  --indent_;
  line("}");
}

std::string Emitter::loc_comment(const Node* n) const {
  if (!n || !n->loc.line) return "";
  return "// " + n->loc.str();
}

void Emitter::unsupported(const Node* n, const std::string& what) const {
  throw UserError(g_.kernel_name, n->loc, "the CUDA backend cannot lower this yet: " + what,
                  "run it on the interpreter (CPU Buffers or TESSEL_INTERPRET=1), or rewrite it");
}

std::string Emitter::slot_coord(const ir::Sym* s, const std::string& r) const {
  return fold::gather_bits(fmt::format("TS_FLAT({})", r),
                           L_->slot_bits[static_cast<size_t>(L_->slot_of.at(s))]);
}

bool Emitter::flattened(const ir::Sym* s) const {
  if (s->kind != ir::Sym::tile) return false;
  auto it = dims.find({s->loop, s->loop_dim});
  return it != dims.end() && !it->second.flat.empty();
}

std::string Emitter::coord(const ir::Sym* s, const std::string& r) const {
  if (flattened(s)) return dims.at({s->loop, s->loop_dim}).flat + "[" + r + "]";
  return slot_coord(s, r);
}

std::string Emitter::active(const std::string& r) const {
  if (L_->all_threads_active()) return "true";
  return fmt::format("(TS_FLAT({}) < {})", r, L_->elems);
}

bool Emitter::valid_by_vector(const ir::Sym* s) const {
  if (L_->vec <= 1 || flattened(s)) return false;
  int k = slot(s);
  if (k != L_->vector_slot() || L_->slot_block[k] % L_->vec != 0)
    return false;  // not the vector lanes
  if (plan_.block(s) % L_->vec != 0) return false;
  if (s->kind != ir::Sym::tile) return passes::multiple_of_16(g_, s->extent);
  const ir::LoopDim& ld = s->loop->dims.at(static_cast<size_t>(s->loop_dim));
  return passes::multiple_of_16(g_, ld.begin) && passes::multiple_of_16(g_, ld.end) &&
         plan_.block(ld) % 16 == 0;
}

std::string Emitter::sym_valid(const ir::Sym* s, const std::string& r_in) {
  if (s->kind == ir::Sym::block_k) return "true";  // every lane of a BlockSize's block is valid
  // Whole vectors are valid or not together: test each vector's first element, so the
  // test is shared by its registers (fewer live predicates).
  std::string r = valid_by_vector(s) ? fmt::format("({} & ~(TS_V - 1))", fold::paren(r_in)) : r_in;
  std::string c = coord(s, r);
  std::string v;
  if (s->kind == ir::Sym::tile) {
    const DimVars& dv = dims.at({s->loop, s->loop_dim});
    v = fold::cmp(fold::add(dv.tb, c), "<", dv.te);
  } else {
    // A 32-bit compare when indices are 32-bit (extents are 64-bit host integers).
    // A tensor's size is its size parameter, already in the index dtype.
    const Node* x = s->extent;
    bool size = x->op == Op::Size && x->args[0]->is_tensor() && !passes::known_int(g_, x);
    std::string lim = size ? size_param(x->args[0], static_cast<int>(x->ival)) : scalar(x);
    if (idx_t_ == "int" && !size) lim = "ts::clamp_int(" + lim + ")";
    v = fold::cmp(c, "<", lim);
  }
  int64_t sb = plan_.block(s);
  if (sb < L_->slot_block[slot(s)])
    v = fold::land({v, fold::cmp(slot_coord(s, r), "<", std::to_string(sb))});
  return v;
}

// ---- loops ----

Emitter::DimVars Emitter::dim_vars(const Node* loop, int d) const {
  DimVars dv;
  dv.block = plan_.block(loop->dims.at(d));
  dv.lb = fmt::format("lb{}_{}", loop->id, d);
  dv.tb = fmt::format("tb{}_{}", loop->id, d);
  dv.te = fmt::format("te{}_{}", loop->id, d);
  return dv;
}

void Emitter::skip_unused_zero_inits() {
  std::map<const Node*, int> uses;  // by the nest's live nodes: operands and inits
  ir::walk(top_->body, [&](const Node* m) {
    if (!live_.count(m)) return;
    for (const Node* a : m->args) ++uses[a];
    for (const Node* a : m->inits) ++uses[a];
  });
  ir::walk(top_->body, [&](const Node* m) {
    if (m->op != Op::Loop || !live_.count(m)) return;
    for (size_t i = 0; i < m->carried.size(); ++i)
      if (live_.count(m->carried[i]) && starts_from_zeros(m, m->carried[i]) &&
          uses[m->inits[i]] == 1)
        unused_inits_.insert(m->inits[i]);
  });
}

void Emitter::emit_loop(const Node* n) {
  // Loop-carried values live in variables declared before the loop; one that nothing
  // live reads (its result unused after the loop) is not computed at all.
  for (size_t i = 0; i < n->carried.size(); ++i) {
    const Node* c = n->carried[i];
    if (!live_.count(c)) continue;
    std::string nm = ids_.carried(c, n->inits[i]);
    names_[c] = nm;
    if (promoted_from_zeros(n, c)) {
      line(fmt::format("{} {}[TS_N];  // zeros: each tile of K's sums are added into it",
                       reg_type(c->dtype), nm),
           n->inits[i]);
      line(fmt::format("TS_FOR(r) {}[r] = {};", nm, literal(c->dtype, 0, 0)));
    } else if (starts_from_zeros(n, c) && plan_.persistent) {
      // In a persistent program the zeros end the previous tile's accumulator: left
      // undefined, ptxas keeps its registers live across the program loop, beside the
      // epilogue's values (255 registers and spills at 128x256 tiles on 8 warps).
      line(fmt::format("{} {}[TS_N];  // zeros, though the first products overwrite them:",
                       reg_type(c->dtype), nm),
           n->inits[i]);
      line(fmt::format("TS_FOR(r) {}[r] = {};  // the previous tile's accumulator ends", nm,
                       literal(c->dtype, 0, 0)));
    } else if (starts_from_zeros(n, c)) {
      line(fmt::format("{} {}[TS_N];  // zeros: the first products of the loop overwrite it",
                       reg_type(c->dtype), nm),
           n->inits[i]);
    } else if (is_array(c)) {
      line(fmt::format("{} {}[TS_N];", reg_type(c->dtype), nm), n);
      line(fmt::format("TS_FOR(r) {}[r] = {};", nm, at(n->inits[i], "r")));
    } else {
      line(fmt::format("{} {} = {};", reg_type(c->dtype), nm, scalar(n->inits[i])), n);
    }
    names_[n->results[i]] = nm;
  }
  int opened = 0;
  const passes::LoopKnobs& knobs = plan_.knobs(n);
  const passes::Prefetch* early = nir_.prefetched(n);  // num_stages >= 2
  // Contractions on wgmma over its K, each with a ring of its own.
  const std::vector<const passes::Contraction*> rings = rings_of(n);
  if (n == split_loop_)
    emit_split_bounds(n);
  else if (early || !rings.empty())
    line(fmt::format("const long long lb{}_0 = {}, le{}_0 = {};", n->id, scalar(n->dims[0].begin),
                     n->id, scalar(n->dims[0].end)),
         n);
  if (early) emit_prefetch_first(n, *early);
  for (const passes::Contraction* c : rings) emit_ring_first(n, *c);
  if (knobs.flatten) {
    // One loop over the flattened index space, a tile of prod(block) elements per step.
    for (size_t d = 0; d < n->dims.size(); ++d)
      line(fmt::format("const long long lb{}_{} = {}, le{}_{} = {};", n->id, d,
                       scalar(n->dims[d].begin), n->id, d, scalar(n->dims[d].end)),
           n);
    std::string numel = emit_flat_extents(n, knobs.order);
    int64_t elems = plan_.tile_elems(n);
    std::string fb = fmt::format("fb{}", n->id);
    open(fmt::format("for (long long {} = 0; {} < {}; {} += {})", fb, fb, numel, fb, elems));
    emit_flat_coords(n, knobs.order, fb);
    ++opened;
  }
  // Per-dim loops, knobs.order[0] outermost (Helion's loop_orders for device loops).
  for (size_t k = 0; k < n->dims.size() && !knobs.flatten; ++k) {
    int d = knobs.order[k];
    const ir::LoopDim& ld = n->dims[d];
    DimVars dv = dim_vars(n, d);
    std::string le = fmt::format("le{}_{}", n->id, d);
    // Loop control in 64 bits (a bound near the index dtype's limit must not overflow);
    // the tile's begin and end, which are valid indices, in the index dtype.
    if (!early && rings.empty())  // else declared before the first tile's loads
      line(fmt::format("const long long {} = {}, {} = {};", dv.lb, scalar(ld.begin), le,
                       scalar(ld.end)),
           n);
    open(fmt::format("for (long long {}_ = {}; {}_ < {}; {}_ += {})", dv.tb, dv.lb, dv.tb, le,
                     dv.tb, dv.block));
    line(fmt::format("const {} {} = ({}){}_;", idx_t_, dv.tb, idx_t_, dv.tb));
    line(fmt::format("const {} {} = ({})min({}_ + {}, {});", idx_t_, dv.te, idx_t_, dv.tb, dv.block,
                     le));
    dims[{n, d}] = dv;
    ++opened;
  }
  if (early) emit_prefetch_next(n, *early);
  emit_block(n->body);
  if (!n->carried.empty()) {
    const Node* y = n->body.back();
    // A value computed in the carried one's own registers (a sum of products summed into
    // its accumulator: Emitter::declare_contraction_sum) needs no update.
    auto in_place = [&](size_t i) {
      auto nm = names_.find(y->args[i]);
      return nm != names_.end() && nm->second == ids_.carried(n->carried[i], n->inits[i]);
    };
    // Next values first (they may read the carried ones), then the update.
    for (size_t i = 0; i < n->carried.size(); ++i) {
      const Node* c = n->carried[i];
      if (!live_.count(c) || in_place(i)) continue;
      std::string next = ids_.carried(c, n->inits[i], /*next=*/true);
      if (is_array(c)) {
        line(fmt::format("{} {}[TS_N];", reg_type(c->dtype), next));
        line(fmt::format("TS_FOR(r) {}[r] = {};", next, at(y->args[i], "r")));
      } else {
        line(fmt::format("const {} {} = {};", reg_type(c->dtype), next, scalar(y->args[i])));
      }
    }
    for (size_t i = 0; i < n->carried.size(); ++i) {
      const Node* c = n->carried[i];
      if (!live_.count(c) || in_place(i)) continue;
      std::string var = ids_.carried(c, n->inits[i]),
                  next = ids_.carried(c, n->inits[i], /*next=*/true);
      if (is_array(c))
        line(fmt::format("TS_FOR(r) {}[r] = {}[r];", var, next));
      else
        line(fmt::format("{} = {};", var, next));
    }
  }
  for (int i = 0; i < opened; ++i) close();
  for (const passes::Contraction* c : rings) emit_ring_last(n, *c);
  if (n == split_loop_) emit_split_reduction(n);
}

// ---- flattened loops (Helion's flatten_loops) ----
//
// A flattened loop of dims d0..dk-1 (slowest to fastest in `order`) with extents n_d
// iterates one index space of prod(n_d) elements in tiles of P = prod(block_d). Register
// r's element keeps its layout slots' bits c_d (as in any loop) and is element
// e = fb + sum_d c_d * W_d of the flat space (W: row-major weights of the blocks), at
// coordinate (e / S_d) % n_d along dim d (S: row-major strides of the extents; the
// slowest dim omits the modulo, so an element past the end is past its dim's end and
// masked there).

std::string Emitter::emit_flat_extents(const Node* n, const std::vector<int>& order) {
  std::string numel;
  for (int d : order) {
    line(fmt::format("const long long fn{}_{} = le{}_{} > lb{}_{} ? le{}_{} - lb{}_{} : 0;", n->id,
                     d, n->id, d, n->id, d, n->id, d, n->id, d));
    numel += fmt::format("{}fn{}_{}", numel.empty() ? "" : " * ", n->id, d);
  }
  return "(" + numel + ")";
}

void Emitter::emit_flat_coords(const Node* n, const std::vector<int>& order,
                               const std::string& fb) {
  std::string decl, local;
  bool in_layout = true;
  int64_t weight = 1;
  std::vector<std::string> stride(n->dims.size());
  std::string s = "1";
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    int d = *it;
    const ir::Sym* sym = n->dims[d].sym;
    in_layout &= L_->slot_of.count(sym) > 0;
    if (in_layout) {
      std::string c = slot_coord(sym, "r");
      local = (weight == 1 ? c : fmt::format("{} * {}", c, weight)) +
              (local.empty() ? "" : " + " + local);
    }
    weight *= plan_.block(n->dims[d]);
    stride[d] = s;
    s = s == "1" ? fmt::format("fn{}_{}", n->id, d) : fmt::format("fn{}_{} * {}", n->id, d, s);
    decl = fmt::format("fc{}_{}[TS_N]{}", n->id, d, decl.empty() ? "" : ", " + decl);
  }
  for (size_t d = 0; d < n->dims.size(); ++d) {
    DimVars dv = dim_vars(n, static_cast<int>(d));
    dv.flat = fmt::format("fc{}_{}", n->id, d);
    line(fmt::format("const {} {} = ({}){}, {} = ({})le{}_{};", idx_t_, dv.tb, idx_t_, dv.lb, dv.te,
                     idx_t_, n->id, d));
    dims[{n, static_cast<int>(d)}] = dv;
  }
  if (!in_layout) return;  // no value has the loop's dims: no coordinates are read
  line(fmt::format("{} {};  // flattened coordinates, dims {} (slowest first)", idx_t_, decl,
                   fmt::join(order, ", ")));
  open("TS_FOR(r)");
  line(fmt::format("const long long e = {} + {};", fb, local));
  for (size_t k = 0; k < order.size(); ++k) {
    int d = order[k];
    std::string q = stride[d] == "1"                           ? "e"
                    : stride[d].find('*') == std::string::npos ? fmt::format("e / {}", stride[d])
                                                               : fmt::format("e / ({})", stride[d]);
    if (k > 0) q = fmt::format("{} % fn{}_{}", q == "e" ? q : "(" + q + ")", n->id, d);
    line(fmt::format("fc{}_{}[r] = ({})({});", n->id, d, idx_t_, q));
  }
  close();
}

// ---- the kernel ----

// The begin of loop dim `ld` in expressions: 0 when it is the constant 0 (so index
// arithmetic folds), else its variable `var`.
static std::string begin_expr(const ir::LoopDim& ld, const std::string& var) {
  return ld.begin->op == Op::Const && ld.begin->ival == 0 ? "0" : var;
}

// Tile indices i<d> of the running program's tile (pid, or blockIdx with xyz), and the
// dims' DimVars. knobs.order[0] varies fastest across program ids (Helion's loop_orders);
// with knobs.l2_grouping G > 1, consecutive program ids walk G tiles along order[0] before
// moving along order[1] (Triton's grouped ordering, "GROUP_SIZE_M" in its matmul tutorial).
// xyz: the k-th dim of the order takes grid axis k.
void Emitter::emit_program_tiles(const passes::LoopKnobs& knobs,
                                 const std::vector<std::string>& counts, bool xyz) {
  const Node* n = top_;
  const std::vector<int>& o = knobs.order;
  const char* axes[] = {"x", "y", "z"};
  size_t first = 0;  // dims of the order decomposed from rem
  if (xyz) {
    for (size_t k = 0; k < o.size(); ++k) {
      line(fmt::format("const long long i{} = blockIdx.{};", o[k], axes[k]));
      line(fmt::format("if (i{} >= {}) return;", o[k], counts[o[k]]));
    }
    first = o.size();
  } else {
    line("long long rem = pid;");
  }
  if (!xyz && knobs.l2_grouping > 1) {
    const std::string &m = counts[o[0]], &nn = counts[o[1]];
    if (o.size() > 2) {
      line(fmt::format(
          "const long long p2 = rem % ({} * {});  // position in the grouped 2-D plane", m, nn));
      line(fmt::format("rem /= {} * {};", m, nn));
    } else {
      line("const long long p2 = rem;");
    }
    line(fmt::format(
        "const long long group = {}LL * {};  // programs per group of {} tiles along dim {}",
        knobs.l2_grouping, nn, knobs.l2_grouping, o[0]));
    line(fmt::format("const long long first = p2 / group * {}LL;", knobs.l2_grouping));
    line(fmt::format("const long long gsize = min({} - first, {}LL);", m, knobs.l2_grouping));
    line(fmt::format("const long long i{} = first + p2 % group % gsize;", o[0]));
    line(fmt::format("const long long i{} = p2 % group / gsize;", o[1]));
    first = 2;
  }
  for (size_t k = first; k < o.size(); ++k) {
    line(fmt::format("const long long i{} = rem % {};", o[k], counts[o[k]]));
    line(fmt::format("rem /= {};", counts[o[k]]));
  }
  for (size_t d = 0; d < n->dims.size(); ++d) {
    DimVars dv = dim_vars(n, static_cast<int>(d));
    std::string le = fmt::format("le{}_{}", n->id, d);
    std::string first = fold::add(begin_expr(n->dims[d], dv.lb),
                                  fold::mul(fmt::format("i{}", d), std::to_string(dv.block)));
    line(fmt::format("const {} {} = ({}){};", idx_t_, dv.tb, idx_t_, fold::paren(first)));
    line(fmt::format("const {} {} = ({})min({}, {});", idx_t_, dv.te, idx_t_,
                     fold::add(first, std::to_string(dv.block)), le));
    dims[{n, static_cast<int>(d)}] = dv;
  }
}

void Emitter::run() {
  ids_.name_carried_first(top_->body);
  staged_ = passes::staged_nodes(nest_);
  skip_unused_zero_inits();
  for (const Node* n : live_) {
    if (ir::writes_memory(n)) written_.insert(n->args[0]);
    multicast_ |= n->op == Op::Multicast;
  }

  // Split-K where a loop over K runs on wgmma; else not applied, as the CUDA says.
  std::string no_split;
  if (plan_.split_k > 1) split_loop_ = find_split_loop(no_split);
  if (!no_split.empty())
    line(fmt::format("// split_k {} is not applied: {}", plan_.split_k, no_split));
  // Likewise Config::warp_specialize (passes::plan_tensor_cores says why).
  if (plan_.warp_specialize && !producer_) {
    std::string why = "the loop has no ts::dot";
    for (const passes::Contraction& c : nest_.contractions)
      if (!c.no_producer_warp.empty()) why = c.no_producer_warp;
    line("// warp_specialize is not applied: " + why);
  }
  // Program -> tile mapping of the top-level loop.
  const Node* n = top_;
  const passes::LoopKnobs& knobs = plan_.knobs(n);
  std::vector<std::string> counts;
  for (size_t d = 0; d < n->dims.size(); ++d) {
    const ir::LoopDim& ld = n->dims[d];
    std::string lb = fmt::format("lb{}_{}", n->id, d), le = fmt::format("le{}_{}", n->id, d);
    line(fmt::format("const long long {} = {}, {} = {};", lb, scalar(ld.begin), le, scalar(ld.end)),
         n);
    if (knobs.flatten) continue;
    int64_t block = plan_.block(ld);
    std::string nt = fmt::format("nt{}", d), b = begin_expr(ld, lb);
    std::string extent = fold::sub(le, b);
    std::string tiles =
        block == 1 ? extent
                   : fmt::format("({}) / {}", fold::add(extent, std::to_string(block - 1)), block);
    line(fmt::format("const long long {} = {} > {} ? {} : 0;  // tiles of dim {}", nt, le, b, tiles,
                     d));
    counts.push_back(nt);
  }
  int64_t flat_elems = plan_.tile_elems(n);  // flattened: elements per tile
  if (knobs.flatten) {
    std::string numel = emit_flat_extents(n, knobs.order);
    line(fmt::format("const long long total = ({} + {}) / {};  // flattened tiles", numel,
                     flat_elems - 1, flat_elems));
  } else {
    std::string total = "1";
    for (const std::string& c : counts) total = fold::mul(total, c);
    line(fmt::format("const long long total = {};", total));
  }
  PidType pid = plan_.pid_type;
  // A flattened loop has one dimension: pid_type xyz launches it along x alone.
  bool xyz = pid == PidType::xyz && !n->persistent && !knobs.flatten;
  const passes::Prefetch* prefetch = nir_.prefetched(n);  // num_stages >= 2, persistent
  const std::vector<const Node*> early = prefetch ? prefetch->loads : std::vector<const Node*>{};
  program_counts_ = counts;
  if (pid == PidType::persistent_blocked) {
    line("const long long per = (total + gridDim.x - 1) / gridDim.x;");
    line("const long long pid_begin = (long long)blockIdx.x * per;");
    line("const long long pid_end = min(pid_begin + per, total);");
    program_walk_ = {"pid_begin", "1", "pid_end"};
    if (producer_) emit_producer_warp(*producer_);
    if (!early.empty()) emit_program_prefetch_first(early, knobs, counts, "pid_begin", "pid_end");
    declare_ring_cursors();
    open("for (long long pid = pid_begin; pid < pid_end; ++pid)");
  } else if (pid == PidType::persistent_interleaved) {
    program_walk_ = {"(long long)blockIdx.x", "gridDim.x", "total"};
    if (producer_) emit_producer_warp(*producer_);
    if (!early.empty())
      emit_program_prefetch_first(early, knobs, counts, "(long long)blockIdx.x", "total");
    declare_ring_cursors();
    open("for (long long pid = blockIdx.x; pid < total; pid += gridDim.x)");
  } else {
    open("");
    if (split_loop_) {
      emit_split_program();
    } else if (!xyz) {
      line("const long long pid = blockIdx.x;");
      line("if (pid >= total) return;");
      program_walk_ = {"pid", "1", "pid + 1"};  // one program id
      if (producer_) emit_producer_warp(*producer_);
    }
  }
  if (knobs.flatten) {
    std::string fb = fmt::format("fb{}", n->id);
    line(fmt::format("const long long {} = pid * {};  // first flat element of the tile", fb,
                     flat_elems));
    emit_flat_coords(n, knobs.order, fb);
  } else {
    emit_program_tiles(knobs, counts, xyz);
  }
  // Each early load is taken where it stands (emit_load: take_program_prefetch).
  program_prefetched_.insert(early.begin(), early.end());
  program_next_ = pid == PidType::persistent_blocked ? "pid + 1" : "pid + gridDim.x";
  program_end_ = pid == PidType::persistent_blocked ? "pid_end" : "total";
  emit_block(n->body);
  close();

  // Assemble.
  std::ostringstream src;
  std::string shown = g_.kernel_name;  // one comment line, whatever the name holds
  for (char& c : shown)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  src << "// Generated by tessel for kernel '" << shown << "', loop at " << n->loc.str()
      << ", lowered for sm_" << plan_.arch << ".\n";
  src << "// config: " << plan_.config_json << "\n";
  src << "#include \"tessel/tessel.cuh\"\n";
  // <cuda/atomic> (libcu++) costs NVRTC time (docs/DECISIONS.md): only where used.
  if (uses_atomics_) src << "#include \"tessel/atomics.cuh\"\n";
  if (uses_tma_) src << "#include \"tessel/tma.cuh\"\n";
  if (uses_mma_) src << "#include \"tessel/mma.cuh\"\n";
  if (uses_wgmma_) src << "#include \"tessel/wgmma.cuh\"\n";
  // <cuda_fp8.h> likewise: where a value or argument of the kernel is an 8-bit float.
  if (std::any_of(g_.nodes().begin(), g_.nodes().end(),
                  [](const std::unique_ptr<Node>& m) { return is_f8(m->dtype); }))
    src << "#include \"tessel/fp8.cuh\"\n";
  src << "\n";
  for (const auto& [name, text] : wgmma_functions_) src << text << "\n";
  src << fmt::format(
      "#define TS_T {}\n#define TS_V {}\n#define TS_G {}\n#define TS_N (TS_G * TS_V)\n",
      L_->threads, L_->vec, L_->groups);
  src << "#define TS_FLAT(r) (((((r) / TS_V) * TS_T + tid) * TS_V) + (r) % TS_V)\n";
  src << "#define TS_FOR(r) _Pragma(\"unroll\") for (int r = 0; r < TS_N; ++r)\n\n";
  // __launch_bounds__ and __maxnreg__ exclude each other (nvcc/NVRTC); both set the
  // register budget, the first from the thread count, the second from Config::maxnreg or,
  // where a producer warpgroup's registers move to the consumers (setmaxnreg), the count
  // every thread launches with: setmaxnreg needs it fixed at entry, which a kernel using
  // fewer than __launch_bounds__ allows leaves unknown (ptxas then ignores it: C7508).
  // A producer warpgroup (Config::warp_specialize) runs past the nest's TS_T threads.
  const int threads = L_->threads + (producer_ ? passes::kProducerThreads : 0);
  std::string bounds = plan_.maxnreg       ? fmt::format("__maxnreg__({})", *plan_.maxnreg)
                       : launch_registers_ ? fmt::format("__maxnreg__({})", launch_registers_)
                                           : fmt::format("__launch_bounds__({})", threads);
  src << fmt::format("extern \"C\" __global__ void {} {}(", bounds, out_.name);
  for (size_t i = 0; i < out_.params.size(); ++i) {
    const Param& p = out_.params[i];
    if (i) src << ",\n    ";
    switch (p.kind) {
      case Param::tensor_ptr: {
        bool ro = !written_.count(p.node);
        // __restrict__ promises no other pointer reaches this memory (and lets the compiler
        // use non-coherent loads): not so when another argument's bytes overlap these.
        // A multicast tensor's buffers may be any argument's memory.
        bool aliased = multicast_ || (p.node->op == Op::Arg &&
                                      static_cast<size_t>(p.node->ival) < g_.arg_facts.size() &&
                                      g_.arg_facts[p.node->ival].alias_group >= 0);
        src << fmt::format("{}{}*{} {}", ro ? "const " : "", dtype_cuda_storage(p.node->dtype),
                           ro && !aliased ? " __restrict__" : "",
                           param_names_.at("T" + std::to_string(p.node->id)));
        break;
      }
      case Param::tensor_size:
        src << idx_t_ << " " << param_names_.at(fmt::format("S{}_{}", p.node->id, p.dim));
        break;
      case Param::tensor_stride:
        src << idx_t_ << " " << param_names_.at(fmt::format("D{}_{}", p.node->id, p.dim));
        break;
      case Param::host_int:
        src << (p.dtype == DType::i32 ? "int " : "long long ")
            << param_names_.at("H" + std::to_string(p.node->id));
        break;
      case Param::host_float:
        src << (p.dtype == DType::f64 ? "double " : "float ")
            << param_names_.at("H" + std::to_string(p.node->id));
        break;
      case Param::device_ptr:
        src << "const " << dtype_cuda_storage(p.node->dtype) << "* "
            << param_names_.at("P" + std::to_string(p.node->id));
        break;
      case Param::check_record:
        src << "long long* ts_check";
        break;
      case Param::split_workspace:
        src << "unsigned char* __restrict__ ts_split";
        break;
      case Param::tensor_map:
        src << "const __grid_constant__ ts::TensorMap "
            << param_names_.at("M" + std::to_string(p.node->id));
        break;
    }
  }
  src << ") {\n";
  src << "  const int tid = threadIdx.x;\n";
  // Programs launch TS_T threads: with the range known, the compiler folds the masks of
  // register coordinates (TS_FLAT(r) & ...) and addresses registers by constant offsets.
  src << (producer_ ? fmt::format("  __builtin_assume(tid >= 0 && tid < TS_T + {});  // a producer "
                                  "too\n",
                                  passes::kProducerThreads)
                    : "  __builtin_assume(tid >= 0 && tid < TS_T);\n");
  if (nir_.shared_bytes > 0)
    src << fmt::format("  extern __shared__ __align__({}) unsigned char ts_smem[];\n",
                       uses_wgmma_ ? 1024
                       : uses_tma_ ? 128
                                   : 16);
  // Loads by tensor descriptor: their mbarriers, made once per program, and the phase of
  // each that its next wait waits for.
  std::vector<std::pair<int, int64_t>> mbarriers;  // load id, offset
  for (const auto& [m, st] : nir_.shared)
    if (st.kind == passes::SharedStage::Kind::tma) mbarriers.emplace_back(m->id, st.mbarrier);
  std::sort(mbarriers.begin(), mbarriers.end());
  if (!mbarriers.empty()) {
    src << "  if (tid == 0) {\n";
    for (const auto& [id, at] : mbarriers)
      src << fmt::format("    ts::mbarrier_init(ts_smem + {});\n", at);
    src << "    ts::fence_mbarrier_init();\n  }\n";
    src << fmt::format("  {};\n", L_->threads <= 32 ? "__syncwarp()" : "__syncthreads()");
    for (const auto& [id, at] : mbarriers) src << fmt::format("  unsigned ph{} = 0;\n", id);
  }
  declare_rings(src);
  src << prologue_.str() << body_.str() << "}\n";
  out_.source = src.str();
  out_.threads = threads;
  out_.shared_bytes = static_cast<int>(nir_.shared_bytes);
  if (uses_atomics_ || uses_tma_) out_.nvrtc_options.push_back("-pch");
  // wgmma is an sm_90a instruction (arch-specific features: PTX ISA "Target ISA notes").
  if (uses_wgmma_) out_.nvrtc_options.push_back("--gpu-architecture=sm_90a");
}

void emit_kernel(const ir::Graph& g, const passes::KernelPlan& plan, const passes::NestIr& nir,
                 CudaKernel& out) {
  Emitter e(g, plan, nir, out);
  e.run();
}

}  // namespace tessel::codegen
