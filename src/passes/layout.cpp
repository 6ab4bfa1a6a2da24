#include "passes/layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "common/pow2.hpp"
#include "passes/default_config.hpp"

namespace tessel::passes {

int Layout::log2_vec() const { return ceil_log2(vec); }
int Layout::log2_threads() const { return ceil_log2(threads); }

int64_t Layout::slot_mask(int k) const {
  int64_t m = 0;
  for (int b : slot_bits.at(static_cast<size_t>(k))) m |= int64_t{1} << b;
  return m;
}

int Layout::contiguous_shift(int k) const {
  const std::vector<int>& bits = slot_bits.at(static_cast<size_t>(k));
  for (size_t j = 1; j < bits.size(); ++j)
    if (bits[j] != bits[0] + static_cast<int>(j)) return -1;
  return bits.empty() ? 0 : bits[0];
}

int Layout::vector_slot() const {
  for (size_t k = 0; k < slot_bits.size(); ++k)
    if (!slot_bits[k].empty() && slot_bits[k][0] == 0) return static_cast<int>(k);
  return -1;
}

void Layout::place_blocked() {
  slot_bits.assign(slot_block.size(), {});
  int shift = 0;
  for (size_t i = slot_block.size(); i-- > 0;)
    for (int b = 0; (int64_t{1} << b) < slot_block[i]; ++b) slot_bits[i].push_back(shift++);
}

Layout Layout::reordered(const std::vector<int>& order) const {
  Layout R = *this;
  R.own_order.clear();
  R.own_order_refused.clear();
  R.contractions.clear();
  R.unfit_contractions.clear();
  std::vector<int> rank(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    rank[static_cast<size_t>(order[i])] = static_cast<int>(i);
    R.slot_block[i] = slot_block[static_cast<size_t>(order[i])];
  }
  for (auto& [s, k] : R.slot_of) k = rank[static_cast<size_t>(k)];
  R.place_blocked();
  return R;
}

namespace {

// The input bit (register, lane or warp, and its bit) that bit p of the flat index is.
std::pair<const char*, int> flat_input(const Layout& L, int p) {
  const int lv = L.log2_vec(), lt = L.log2_threads();
  if (p < lv) return {layout::kRegister, p};
  if (p >= lv + lt) return {layout::kRegister, p - lt};
  return p - lv < 5 ? std::pair{layout::kLane, p - lv} : std::pair{layout::kWarp, p - lv - 5};
}

// Per slot, the names of its Syms in order, joined by `sep` ("slot<k>" for none).
std::vector<std::string> slot_names(const Layout& L, const char* sep) {
  std::vector<std::vector<std::string>> syms(L.slot_block.size());
  for (const auto& [s, k] : L.slot_of) syms[static_cast<size_t>(k)].push_back(ir::sym_name(s));
  std::vector<std::string> names(syms.size());
  for (size_t k = 0; k < syms.size(); ++k) {
    std::sort(syms[k].begin(), syms[k].end());
    for (const std::string& nm : syms[k]) names[k] += (names[k].empty() ? "" : sep) + nm;
    if (names[k].empty()) names[k] = fmt::format("slot{}", k);
  }
  return names;
}

}  // namespace

layout::LinearLayout linear_layout(const Layout& L) {
  const int lt = L.log2_threads();
  const int reg_bits = ceil_log2(L.regs());
  std::vector<layout::LinearLayout::OutDim> outs;
  const std::vector<std::string> names = slot_names(L, "|");
  for (size_t k = 0; k < L.slot_block.size(); ++k)
    outs.push_back({names[k], static_cast<int32_t>(L.slot_block[k])});
  const layout::LinearLayout::Basis zero(outs.size(), 0);
  std::vector<layout::LinearLayout::InDim> ins{
      {layout::kRegister, {}}, {layout::kLane, {}}, {layout::kWarp, {}}};
  ins[0].bases.assign(static_cast<size_t>(reg_bits), zero);
  ins[1].bases.assign(static_cast<size_t>(std::min(lt, 5)), zero);
  ins[2].bases.assign(static_cast<size_t>(std::max(lt - 5, 0)), zero);
  for (size_t k = 0; k < L.slot_bits.size(); ++k)
    for (size_t j = 0; j < L.slot_bits[k].size(); ++j) {
      auto [dim, bit] = flat_input(L, L.slot_bits[k][j]);
      for (auto& in : ins)
        if (in.name == dim) in.bases.at(static_cast<size_t>(bit))[k] = int32_t{1} << j;
    }
  return layout::LinearLayout(std::move(ins), std::move(outs));
}

Layout with_placement(const Layout& L, const layout::LinearLayout& placement) {
  const layout::LinearLayout shape = linear_layout(L);
  auto fail = [](const std::string& why) { layout::layout_error("with_placement: " + why); };
  if (!L.all_threads_active()) fail("a layout with inactive threads");
  bool same_outs = placement.out_dims().size() == shape.out_dims().size();
  for (size_t k = 0; same_outs && k < shape.out_dims().size(); ++k)
    same_outs = placement.out_dims()[k].size == shape.out_dims()[k].size;
  if (!same_outs) fail("other output dims than the layout's slots");
  for (size_t i = 0; i < shape.in_dims().size(); ++i)
    if (placement.in_dims().size() != shape.in_dims().size() ||
        placement.in_dims()[i].name != shape.in_dims()[i].name ||
        placement.in_dims()[i].bases.size() != shape.in_dims()[i].bases.size())
      fail("other input dims than register, lane and warp of the layout's sizes");
  if (!placement.is_injective() || !placement.is_surjective()) fail("not a bijection");
  // Each input bit holds one output bit: (slot, coordinate bit) per input bit.
  struct Held {
    int slot = -1, bit = -1;
  };
  auto held = [&](const layout::LinearLayout::Basis& b) {
    std::optional<std::pair<int, int>> h = layout::held_bit(b);
    if (!h) fail("an input bit holding several bits");
    return Held{h->first, h->second};
  };
  const std::vector<layout::LinearLayout::Basis>& regs = placement.in_dims()[0].bases;
  // The vector lanes: the low register bits holding one slot's bits 0, 1, ... in order.
  int lv = 0;
  const int vslot = regs.empty() ? -1 : held(regs[0]).slot;
  while (lv < std::min(L.log2_vec(), static_cast<int>(regs.size())) &&
         held(regs[static_cast<size_t>(lv)]).slot == vslot &&
         held(regs[static_cast<size_t>(lv)]).bit == lv)
    ++lv;
  Layout R = L;
  R.vec = 1 << lv;
  R.groups = L.regs() / R.vec;
  R.slot_bits.assign(L.slot_block.size(), {});
  for (size_t k = 0; k < R.slot_bits.size(); ++k)
    R.slot_bits[k].assign(static_cast<size_t>(ceil_log2(L.slot_block[k])), -1);
  int p = 0;  // flat bit, input dims in f's order
  auto put = [&](const layout::LinearLayout::Basis& b) {
    Held h = held(b);
    R.slot_bits[static_cast<size_t>(h.slot)][static_cast<size_t>(h.bit)] = p++;
  };
  for (int i = 0; i < lv; ++i) put(regs[static_cast<size_t>(i)]);
  for (const auto& b : placement.in_dims()[1].bases) put(b);
  for (const auto& b : placement.in_dims()[2].bases) put(b);
  for (size_t i = static_cast<size_t>(lv); i < regs.size(); ++i) put(regs[i]);
  return R;
}

const ir::Sym* unit_stride_sym(const ir::Graph& g, const ir::Node* n) {
  const int unit = ir::unit_stride_dim(g, ir::addressed_tensor(n));
  int dim = 0;
  for (const ir::IndexInfo& info : n->access) {
    if (info.kind == ir::IndexKind::newaxis) continue;
    if (dim++ == unit) return info.kind == ir::IndexKind::scalar ? nullptr : info.sym;
  }
  return nullptr;
}

std::set<const ir::Node*> staged_nodes(const Layout& L) {
  std::vector<ContractionMatch> found;
  for (const Contraction& c : L.contractions) found.push_back(c.match);
  return staged_nodes(found);
}

// The factors of a wgmma contraction that the threads copy K-major, for the layout dump:
// "; %3 and %5 copied K-major by the threads", or "" for none.
static std::string copied_factors(const Contraction& c) {
  std::string ids;
  for (int i = 0; i < 2; ++i)
    if (c.mma->transposed[i])
      ids += fmt::format("{}%{}", ids.empty() ? "" : " and ", c.match.factor[i].value()->id);
  return ids.empty() ? "" : "; " + ids + " copied K-major by the threads";
}

std::string describe(const Layout& L, const ir::Node* loop) {
  const std::vector<std::string> names = slot_names(L, " ");
  auto slots = [&](const std::vector<int>& order) {
    std::string out;
    for (int k : order)
      out += fmt::format(" [{}: {}]", names[static_cast<size_t>(k)],
                         L.slot_block[static_cast<size_t>(k)]);
    return out;
  };
  std::vector<int> nest(L.slot_block.size());
  for (size_t k = 0; k < nest.size(); ++k) nest[k] = static_cast<int>(k);
  std::string placement = linear_layout(L).to_string();
  for (size_t p = placement.find('\n'); p != std::string::npos; p = placement.find('\n', p))
    placement.replace(p, 1, "; ");
  std::string out = fmt::format(
      "// layout of loop %{}: {} threads, vectors of {}, {} groups, {} registers per value; "
      "slots outer to inner:{}\n//   as a linear layout: {}\n",
      loop->id, L.threads, L.vec, L.groups, L.regs(), slots(nest), placement);
  std::map<int, std::pair<const ir::Node*, const std::vector<int>*>> own;  // by node id
  for (const auto& [n, order] : L.own_order) own[n->id] = {n, &order};
  for (const auto& [id, own_layout] : own)
    out += fmt::format("//   %{} ({}) in its own layout:{}\n", id,
                       ir::op_name(own_layout.first->op), slots(*own_layout.second));
  std::map<int, std::pair<const ir::Node*, std::string>> kept;  // by node id
  for (const auto& [n, why] : L.own_order_refused) kept[n->id] = {n, why};
  for (const auto& [id, n_why] : kept)
    out += fmt::format("//   %{} ({}) in the nest's layout: {}\n", id, ir::op_name(n_why.first->op),
                       n_why.second);
  for (const Contraction& c : L.contractions) {
    out += fmt::format(
        "//   %{} contracts %{} over {}, {} bytes of shared memory{}; factors:", c.match.sum->id,
        c.match.product->id, ir::sym_name(c.match.k), c.shared_bytes,
        !c.mma ? (c.not_wgmma.empty() ? std::string() : "; not on tensor cores: " + c.not_wgmma)
        : c.mma->wgmma
            ? fmt::format(
                  ", on tensor cores (wgmma m64n{}k{} {}{}, {} warpgroups{}, a ring of {} "
                  "buffers filled by TMA{}{}{}{})",
                  L.slot_block[c.mma->swap_ab ? 0 : 1] / c.mma->warps_n, c.mma->wgmma_k(),
                  c.mma->ptx_operand(),
                  c.mma->swap_ab ? " of the transposed product, A and B swapped" : "",
                  c.mma->warps_m / 4 * c.mma->warps_n,
                  c.mma->warps_n > 1
                      ? fmt::format(" ({} along {})", c.mma->warps_n, c.mma->swap_ab ? "M" : "N")
                      : "",
                  c.mma->stages, c.mma->across_programs ? " across programs" : "",
                  c.mma->producer_warp ? " issued by a producer warpgroup" : "", copied_factors(c),
                  c.mma->promote_n ? fmt::format("; each tile of K's sums added into f32, {} "
                                                 "columns at a time",
                                                 c.mma->promote_n)
                                   : "")
            : fmt::format(", on tensor cores (mma.sync {}, warps {} x {}{})",
                          c.mma->operand == DType::f32 ? std::string("m16n8k8 tf32")
                          : dtype_size(c.mma->operand) == 1
                              ? "m16n8k32 " + dtype_name(c.mma->operand)
                              : "m16n8k16 " + dtype_name(c.mma->operand),
                          c.mma->warps_m, c.mma->warps_n,
                          c.not_wgmma.empty() ? "" : "; not wgmma: " + c.not_wgmma));
    for (int i = 0; i < 2; ++i) {
      const Layout& F = c.factor_layout[i];
      if (c.mma && c.mma->wgmma)  // never in registers: by TMA into the ring, swizzled
        out += fmt::format(" %{} by TMA, {}-byte chunks swizzled,", c.match.factor[i].value()->id,
                           c.mma->box[i].swizzle);
      else
        out += fmt::format(" %{} in vectors of {}, {} groups,", c.match.factor[i].value()->id,
                           F.vec, F.groups);
      for (size_t k = 0; k < F.slot_block.size(); ++k)
        for (const auto& [s, j] : F.slot_of)
          if (j == static_cast<int>(k))
            out += fmt::format(" [{}: {}]", ir::sym_name(s), F.slot_block[k]);
      out += c.padded[i] ? " padded;" : ";";
    }
    if (!c.no_producer_warp.empty())
      out += " warp_specialize not applied: " + c.no_producer_warp + ";";
    out.back() = '\n';
  }
  return out;
}

namespace {

struct SymInfo {
  int first = 0;              // order of first appearance
  int inner_score = 1 << 20;  // smallest distance from the end of a shape it appears at
  int64_t accessed_last = 0;  // elements of the loads and stores whose innermost index it is
};

void collect(const ir::Graph* g, const ir::Block& b, const Config& config,
             const std::set<const ir::Node*>& staged, std::vector<const ir::Sym*>& order,
             std::map<const ir::Sym*, SymInfo>& info,
             std::set<std::pair<const ir::Sym*, const ir::Sym*>>& interfere, int& min_bytes) {
  for (const ir::Node* n : b) {
    if (staged.count(n)) continue;  // a contraction's factor or product
    ir::Shape target;               // a store's dims are those of the elements it writes
    if (n->op == ir::Op::Store) {
      for (ir::Sym* s : ir::stack_shape(n))
        if (s) target.push_back(s);
      for (const ir::IndexInfo& i : n->access)
        if (i.sym) target.push_back(i.sym);
    }
    const ir::Shape& s = n->op == ir::Op::Store ? target : n->shape;
    for (size_t i = 0; i < s.size(); ++i) {
      if (!s[i]) continue;
      if (!info.count(s[i])) {
        info[s[i]].first = static_cast<int>(order.size());
        order.push_back(s[i]);
      }
      int dist = static_cast<int>(s.size() - 1 - i);
      info[s[i]].inner_score = std::min(info[s[i]].inner_score, dist);
      for (size_t j = 0; j < s.size(); ++j)
        if (s[j] && j != i) interfere.insert({s[i], s[j]});
    }
    if (ir::is_access(n)) {
      min_bytes = std::min(min_bytes, dtype_size(ir::addressed_tensor(n)->dtype));
      const ir::Sym* last = nullptr;
      int64_t elems = 1;
      for (const ir::IndexInfo& i : n->access) {
        if (i.kind != ir::IndexKind::newaxis) last = i.sym;
        if (i.sym) elems *= sym_block(i.sym, config);
      }
      // The dim the tensor is contiguous along, where the graph's facts tell.
      if (const ir::Sym* unit = g ? unit_stride_sym(*g, n) : nullptr) last = unit;
      if (last) info[last].accessed_last += elems;
    }
    if (n->op == ir::Op::Loop)
      collect(g, n->body, config, staged, order, info, interfere, min_bytes);
  }
}

// The layout of contraction factor f: a slot per dim of its shape, in order, `inner`
// (when one of them) moved innermost.
Layout factor_layout(const ContractionFactor& f, const Config& config, int threads,
                     const ir::Sym* inner) {
  std::vector<const ir::Sym*> order;
  for (const ir::Sym* s : f.value()->shape)
    if (s && s != inner) order.push_back(s);
  for (const ir::Sym* s : f.value()->shape)
    if (s && s == inner) order.push_back(s);
  Layout F;
  F.threads = threads;
  for (const ir::Sym* s : order) F.slot_block.push_back(sym_block(s, config));
  F.place_blocked();
  int bits = 0;
  for (const std::vector<int>& b : F.slot_bits) bits += static_cast<int>(b.size());
  F.elems = int64_t{1} << bits;
  for (size_t k = 0; k < order.size(); ++k) F.slot_of[order[k]] = static_cast<int>(k);
  int bytes = dtype_size(ir::addressed_tensor(f.load())->dtype);
  F.vec = static_cast<int>(std::min<int64_t>(F.slot_block.back(), 16 / std::max(1, bytes)));
  F.groups =
      static_cast<int>(std::max<int64_t>(1, F.elems / (static_cast<int64_t>(threads) * F.vec)));
  return F;
}

}  // namespace

Contraction plan_contraction(const ContractionMatch& m, const Config& config, int threads,
                             const ir::Sym* inner0, const ir::Sym* inner1) {
  Contraction c;
  c.match = m;
  for (int i = 0; i < 2; ++i) {
    const Layout& F = c.factor_layout[i] =
        factor_layout(m.factor[i], config, threads, i == 0 ? inner0 : inner1);
    c.padded[i] = F.slot_of.at(m.k) == static_cast<int>(F.slot_block.size()) - 1;
    int64_t elems = F.elems + (c.padded[i] ? F.elems / F.slot_block.back() : 0);
    c.shared_offset[i] = c.shared_bytes;
    c.shared_bytes += (elems * 4 + 15) / 16 * 16;  // f32 registers
  }
  return c;
}

// Whether contraction c, whose factors' f32 staging for the CUDA cores is past the shared
// memory limit, may still fit on tensor cores: 8- and 16-bit factors, two stages of a
// wgmma ring of them within the limit (plan_tensor_cores decides; layouts() refuses it if
// it lands elsewhere). Else says why in `why_not`.
static bool may_fit_on_tensor_cores(const Contraction& c, int64_t shared_limit, int arch,
                                    std::string& why_not) {
  int64_t ring = 0;
  bool narrow = true;
  for (int i = 0; i < 2; ++i) {
    const DType t = c.match.factor[i].load()->dtype;
    narrow &= dtype_size(t) <= 2;
    ring += 2 * c.factor_layout[i].elems * dtype_size(t);
  }
  if (narrow && ring <= shared_limit) return true;
  const DType operand = c.match.factor[0].load()->dtype;
  why_not = !has_mma_sync(arch, operand)
                ? fmt::format("sm_{} has no tensor-core instruction for {} factors", arch,
                              dtype_name(operand))
                : fmt::format("on tensor cores two buffers of its factors' tiles need {} KiB",
                              (ring + 1023) / 1024);
  return false;
}

Layout compute_layout(const ir::Node* loop, const Config& config, const ir::Graph* g, int arch) {
  const int threads = 32 * config.num_warps.value_or(4);
  const int64_t shared_limit = shared_bytes_limit(arch);
  std::vector<Contraction> contractions, too_large;
  std::vector<ContractionMatch> found;
  for (const ContractionMatch& m : find_contractions(loop)) {
    Contraction c = plan_contraction(m, config, threads);
    if (c.shared_bytes > shared_limit &&
        !may_fit_on_tensor_cores(c, shared_limit, arch, c.not_wgmma)) {  // stays a product
      too_large.push_back(c);
      continue;
    }
    contractions.push_back(c);
    found.push_back(m);
  }
  std::vector<const ir::Sym*> order;
  std::map<const ir::Sym*, SymInfo> info;
  std::set<std::pair<const ir::Sym*, const ir::Sym*>> interfere;
  int min_bytes = 16;
  collect(g, loop->body, config, staged_nodes(found), order, info, interfere, min_bytes);
  // A 2-D contraction's result is held with its last dim innermost (a tensor-core
  // accumulator's columns, passes/tensor_cores.hpp): in a tie it outvotes the accesses,
  // which convert (`out(tn, tm) = acc.t()` stores through its own layout).
  for (const Contraction& c : contractions)
    if (c.match.sum->shape.size() == 2 && c.match.sum->shape[1])
      info[c.match.sum->shape[1]].accessed_last += int64_t{1} << 50;

  // Greedy slot assignment, largest blocks first (ties: first appearance), so that dims
  // that never meet share a slot with dims of their own size: `c(ts::all)` [1024] beside
  // `x(tm, ts::all)` [tm, 1024] puts both all-dims in one slot (1024 * tm elements), where
  // first-appearance order put tm with c's dim and x's dim apart (1024 * 1024). A
  // BlockSize's block (block_k) and the tiles of the loops using it share one slot: their
  // lanes line up.
  std::set<int> lined;
  for (const ir::Sym* s : order)
    if (s->kind == ir::Sym::block_k) lined.insert(s->block_id);
  std::map<int, int> slot_of_block;  // BlockSize id -> its slot
  std::vector<std::vector<const ir::Sym*>> slots;
  std::map<const ir::Sym*, int> slot_of;
  std::vector<const ir::Sym*> by_size = order;
  std::stable_sort(by_size.begin(), by_size.end(), [&](const ir::Sym* a, const ir::Sym* b) {
    return sym_block(a, config) > sym_block(b, config);
  });
  for (const ir::Sym* s : by_size) {
    int chosen = -1;
    bool grouped = s->kind != ir::Sym::extent_k && lined.count(s->block_id);
    // Even where they meet in one value: the CUDA emitter refuses a value with two
    // dimensions in one slot (codegen::Emitter::emit_node), the interpreter computes it.
    if (grouped && slot_of_block.count(s->block_id)) chosen = slot_of_block[s->block_id];
    for (size_t k = 0; k < slots.size() && chosen < 0; ++k) {
      bool ok = true;
      for (const ir::Sym* o : slots[k]) ok &= !interfere.count({s, o});
      if (ok) chosen = static_cast<int>(k);
    }
    if (grouped) slot_of_block[s->block_id] = chosen < 0 ? static_cast<int>(slots.size()) : chosen;
    if (chosen < 0) {
      chosen = static_cast<int>(slots.size());
      slots.emplace_back();
    }
    slots[chosen].push_back(s);
    slot_of[s] = chosen;
  }
  // Order slots outer to inner: larger distance-from-the-end first.
  std::vector<int> perm(slots.size());
  for (size_t k = 0; k < perm.size(); ++k) perm[k] = static_cast<int>(k);
  // In a nest that permutes a value (a transpose), ties (both dims last in some shape) go
  // to the slot whose dims the accesses moving the most elements index last: the nest's
  // layout is the one most of its memory traffic wants, the other accesses convert
  // (passes/access_layouts.hpp); first appearance would depend on the order C++ evaluates
  // operands in. Other nests keep the first-appearance order (and their generated code).
  bool permuted = false;
  ir::walk(loop->body, [&](const ir::Node* n) { permuted |= n->op == ir::Op::Permute; });
  struct Score {
    int inner;
    int64_t votes;
    int first;
  };
  auto score = [&](int k) {
    Score sc{1 << 20, 0, 0};
    for (const ir::Sym* s : slots[k]) {
      sc.inner = std::min(sc.inner, info[s].inner_score);
      sc.votes += info[s].accessed_last;
      sc.first = std::max(sc.first, info[s].first);
    }
    return sc;
  };
  std::stable_sort(perm.begin(), perm.end(), [&](int a, int b) {
    Score sa = score(a), sb = score(b);
    if (sa.inner != sb.inner) return sa.inner > sb.inner;
    if (permuted && sa.inner == 0 && sa.votes != sb.votes) return sa.votes < sb.votes;
    return sa.first < sb.first;
  });
  std::vector<int> rank(slots.size());
  for (size_t i = 0; i < perm.size(); ++i) rank[perm[i]] = static_cast<int>(i);

  Layout L;
  L.threads = threads;
  L.shared_limit = shared_limit;
  L.contractions = contractions;
  L.unfit_contractions = too_large;
  L.slot_block.assign(slots.size(), 1);
  for (size_t k = 0; k < slots.size(); ++k)
    for (const ir::Sym* s : slots[k])
      L.slot_block[rank[k]] = std::max(L.slot_block[rank[k]], sym_block(s, config));
  for (auto& [s, k] : slot_of) L.slot_of[s] = rank[k];
  L.place_blocked();
  int bits = 0;
  for (const std::vector<int>& b : L.slot_bits) bits += static_cast<int>(b.size());
  L.elems = int64_t{1} << bits;
  int64_t inner = slots.empty() ? 1 : L.slot_block.back();
  L.vec =
      static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(inner, 16 / std::max(1, min_bytes))));
  int64_t per_round = static_cast<int64_t>(L.threads) * L.vec;
  L.groups = static_cast<int>(std::max<int64_t>(1, L.elems / per_round));
  return L;
}

}  // namespace tessel::passes
