// Contractions (passes/contractions.hpp): a sum over dim k of the product of two factors
// that each lack a dim of the other, never materialized.
//
//   float acc[TS_N];                        // the sum, in the nest's layout
//   {
//     __syncthreads();                      // earlier readers of shared memory are done
//     <factor 0 loaded in its own layout>   // 16-byte vectors along its innermost dim
//     <its registers to shared memory at their flat index in that layout (+1 pad per row)>
//     <factor 1 likewise>
//     __syncthreads();
//     TS_FOR(r) acc[r] = 0.0f;              // or the accumulator of `acc + sum`
//     for (int k = 0; k < BK; ++k) {        // every element: one product per k
//       float a0[N0];                       // factor 0's distinct values at k: one per
//       for (j < N0) a0[j] = f0[place0(spread(j), k)];  // setting of the register bits
//       float a1[N1]; ...                   // its place depends on (mask M0)
//       TS_FOR(r) acc[r] += a0[pick(r, M0)] * a1[pick(r, M1)];
//     }
//   }
// Each shared value is read once per k (the 8 rows and 4 columns of a thread's 32
// registers in a 64 x 64 tile on 128 threads: 12 reads for 32 products, not 64).
//
// A factor's layout may hold another number of registers than the nest's: its code is
// emitted with TS_V and TS_G defined for it (Emitter::in_layout), then defined back.
#include <fmt/format.h>

#include <cmath>
#include <functional>

#include "codegen/emitter_state.hpp"
#include "codegen/fold.hpp"
#include "common/pow2.hpp"
#include "passes/default_config.hpp"

namespace tessel::codegen {

using ir::Node;

const passes::Contraction* Emitter::contraction_of(const Node* sum) const {
  for (const passes::Contraction& c : nest_.contractions)
    if (c.match.sum == sum) return &c;
  return nullptr;
}

void Emitter::set_layout_macros(const passes::Layout& from, const passes::Layout& to) {
  if (from.vec != to.vec) {
    line("#undef TS_V");
    line(fmt::format("#define TS_V {}", to.vec));
  }
  if (from.groups != to.groups) {
    line("#undef TS_G");
    line(fmt::format("#define TS_G {}", to.groups));
  }
}

// The place in factor i's shared tile of the element that nest register r multiplies at
// contracted index k: its flat index f in the factor's (blocked) layout, or for a padded
// factor f + (f >> b) with b the bits of its innermost slot, written as
// rows * (2^b + 1) + inner (rows = f >> b, inner = f's low b bits, the contracted k), so
// that each row's address is computed once and k is a constant offset in the unrolled loop.
static std::string factor_place(const Emitter& e, const passes::Contraction& c, int i) {
  const passes::Layout& F = c.factor_layout[i];
  std::vector<const ir::Sym*> slots(F.slot_block.size());  // outer to inner
  for (const auto& [s, j] : F.slot_of) slots[static_cast<size_t>(j)] = s;
  const int row_bits = c.padded[i] ? static_cast<int>(F.slot_bits.back().size()) : 0;
  std::string place = "0", rows = "0", inner = "0";
  for (size_t j = 0; j < slots.size(); ++j) {
    const ir::Sym* s = slots[j];
    std::string coord;
    if (s == c.match.k) {
      coord = "k";
    } else {
      // The dim's bits in the nest's flat index, within the dim's block: a nest slot
      // shared with a larger dim holds coordinates past it (registers no store keeps).
      std::vector<int> bits = e.nest_.slot_bits[static_cast<size_t>(e.slot(s))];
      bits.resize(F.slot_bits[j].size());
      coord = fold::gather_bits("TS_FLAT(r)", bits);
    }
    if (fold::is_zero(coord)) continue;
    if (!c.padded[i])
      place = fold::add(place, fold::scatter_bits(coord, F.slot_bits[j]));
    else if (j + 1 == slots.size())
      inner = coord;
    else
      rows = fold::add(rows, fold::shl(coord, F.contiguous_shift(static_cast<int>(j)) - row_bits));
  }
  if (!c.padded[i]) return fold::unparen(place);
  return fold::unparen(
      fold::add(fold::mul(rows, std::to_string((int64_t{1} << row_bits) + 1)), inner));
}

// The bits of a nest register number r that factor i's place depends on: the register
// bits of the flat index among the bits of the factor's dims other than k.
static unsigned factor_register_bits(const Emitter& e, const passes::Contraction& c, int i) {
  const passes::Layout& F = c.factor_layout[i];
  const int lv = e.nest_.log2_vec(), lt = e.nest_.log2_threads();
  unsigned mask = 0;
  for (const auto& [s, j] : F.slot_of) {
    if (s == c.match.k) continue;
    const std::vector<int>& bits = e.nest_.slot_bits[static_cast<size_t>(e.slot(s))];
    for (size_t b = 0; b < F.slot_bits[static_cast<size_t>(j)].size(); ++b) {
      const int p = bits[b];
      if (p < lv) mask |= 1u << p;
      if (p >= lv + lt) mask |= 1u << (p - lt);
    }
  }
  return mask;
}

static bool contiguous(unsigned mask) {
  const unsigned low = mask >> __builtin_ctz(mask);
  return (low & (low + 1)) == 0;
}

// The register whose bits in `mask` are j (others 0), and the bits of r in mask, packed.
static std::string spread(unsigned mask, const std::string& j) {
  if (mask == 0) return "0";
  if (contiguous(mask)) return fold::shl(j, __builtin_ctz(mask));
  return fmt::format("ts::spread_bits({}, {}u)", j, mask);
}
static std::string pick(unsigned mask, const std::string& r) {
  if (mask == 0) return "0";
  if (contiguous(mask)) return fold::bits(r, __builtin_ctz(mask), mask >> __builtin_ctz(mask));
  return fmt::format("ts::squeeze_bits({}, ~{}u)", r, mask);
}

void Emitter::emit_factor(const passes::Contraction& c, int i,
                          const std::function<void()>& to_shared) {
  const passes::Layout& F = c.factor_layout[i];
  for (const auto& [s, j] : F.slot_of)
    if (flattened(s))
      unsupported(c.match.sum,
                  "a sum of products over a flattened loop's dims (set that loop's "
                  "flatten_loops entry to false)");
  line(fmt::format("// factor {} in a layout of its own: {} registers, vectors of {}", i, F.regs(),
                   F.vec));
  in_layout(F, [&] {
    in_factor_ = true;
    for (const Node* m : c.match.factor[i].nodes) emit_node(m);
    in_factor_ = false;
    to_shared();
  });
}

Emitter::Accumulation Emitter::accumulation_of(const Node* s) const {
  auto it = accumulations_.find(s);
  if (it == accumulations_.end()) it = accumulations_.emplace(s, find_accumulation(s)).first;
  return it->second;
}

Emitter::Accumulation Emitter::find_accumulation(const Node* s) const {
  // The add using s, where that is s's only use among the nest's live nodes.
  Accumulation out;
  int uses = 0;
  ir::walk(top_->body, [&](const Node* m) {
    if (!live_.count(m)) return;
    for (const Node* a : m->args) uses += a == s;
    for (const Node* a : m->inits) uses += a == s;
    if (m->op == ir::Op::Binary && m->bfn() == ir::BinaryFn::add &&
        (m->args[0] == s) != (m->args[1] == s))
      out.add = m;
  });
  const Node* add = out.add;
  const Node* acc = add ? add->args[add->args[0] == s ? 1 : 0] : nullptr;
  // Nodes are numbered in program order: acc (a carried value, or one computed ahead of
  // s) has been emitted.
  if (uses != 1 || !add || add->dtype != s->dtype || acc->dtype != s->dtype ||
      acc->shape != s->shape || acc->id > s->id || !is_array(acc))
    return {};
  out.acc = acc;
  // `acc = acc + s` as a loop's carried accumulator with no other use.
  int acc_uses = 0;
  ir::walk(top_->body, [&](const Node* m) {
    if (!live_.count(m)) return;
    for (const Node* a : m->args) acc_uses += a == acc;
  });
  ir::walk(top_->body, [&](const Node* m) {
    if (m->op != ir::Op::Loop || m->body.empty() || acc_uses != 1) return;
    const Node* y = m->body.back();
    for (size_t i = 0; i < m->carried.size() && i < y->args.size(); ++i)
      if (m->carried[i] == acc && y->args[i] == add) {
        out.loop = m;
        const Node* init = m->inits[i];
        out.from_zeros = init->op == ir::Op::Full && init->args[0]->op == ir::Op::Const &&
                         init->args[0]->fval == 0.0 && !std::signbit(init->args[0]->fval);
      }
  });
  return out;
}

bool Emitter::starts_from_zeros(const Node* loop, const Node* carried) const {
  for (const passes::Contraction* c : rings_of(loop)) {
    const Accumulation a = accumulation_of(c->match.sum);
    if (a.loop == loop && a.acc == carried && a.from_zeros) return true;
  }
  return false;
}

bool Emitter::promoted_from_zeros(const Node* loop, const Node* carried) const {
  for (const passes::Contraction* c : rings_of(loop)) {
    const Accumulation a = accumulation_of(c->match.sum);
    if (a.loop == loop && a.acc == carried && a.from_zeros && c->mma->promote_n) return true;
  }
  return false;
}

Emitter::ContractionSum Emitter::declare_contraction_sum(const Node* s,
                                                         const std::string& comment) {
  const Accumulation a = accumulation_of(s);
  if (!a.add) {
    ContractionSum sum{ids_.value(s), literal(s->dtype, 0, 0)};
    names_[s] = sum.name;
    line(fmt::format("{} {}[TS_N];  // {}", reg_type(s->dtype), sum.name, comment), s);
    return sum;
  }
  summed_into_.insert(a.add);
  // Summed into a loop's carried accumulator: its own registers (no copies in or out,
  // which would also end wgmma's pipelining).
  if (a.loop) {
    ContractionSum sum{names_.at(a.acc), ""};
    names_[s] = names_[a.add] = sum.name;
    line(fmt::format("// {}: the {}, summed into it", sum.name, comment), s);
    return sum;
  }
  ContractionSum sum{ids_.value(a.add), at(a.acc, "r")};
  names_[s] = names_[a.add] = sum.name;
  line(fmt::format("{} {}[TS_N];  // the accumulator plus the {}", reg_type(s->dtype), sum.name,
                   comment),
       s);
  return sum;
}

void Emitter::emit_contraction(const passes::Contraction& c) {
  if (c.mma && c.mma->wgmma) return emit_wgmma_contraction(c);
  if (c.mma) return emit_mma_contraction(c);
  const Node* n = c.match.sum;
  const ContractionSum sum = declare_contraction_sum(
      n, fmt::format("sum over {} of products, factors in shared memory", ir::sym_name(c.match.k)));
  const std::string& nm = sum.name;
  const SharedUse& use = shared_use(n);  // the kernel IR's stage (passes/shared_plan.hpp)
  open("");
  // Factors in shared memory and registers as the sum's dtype (f32; i32 for i8 dots).
  const std::string type = reg_type(n->dtype);
  std::string tile[2];
  for (int i = 0; i < 2; ++i) {
    tile[i] = fmt::format("f{}_{}", n->id, i);
    line(fmt::format("{t}* {} = reinterpret_cast<{t}*>(ts_smem + {});", tile[i],
                     use.offset + c.shared_offset[i], fmt::arg("t", type)));
  }
  if (use.barrier) line("__syncthreads();  // earlier readers of shared memory are done");
  for (int i = 0; i < 2; ++i) {
    const passes::Layout& F = c.factor_layout[i];
    emit_factor(c, i, [&] {
      std::string active =
          F.all_threads_active() ? "" : fmt::format("if (TS_FLAT(r) < {}) ", F.elems);
      std::string at = c.padded[i] ? fmt::format("f + (f >> {})", ceil_log2(F.slot_block.back()))
                                   : std::string("f");
      line(fmt::format("TS_FOR(r) {}{{ const int f = TS_FLAT(r); {}[{}] = {}; }}", active, tile[i],
                       at, this->at(c.match.factor[i].value(), "r")));
    });
  }
  line("__syncthreads();");
  if (!sum.init.empty()) line(fmt::format("TS_FOR(r) {}[r] = {};", nm, sum.init));
  int64_t bk = plan_.block(c.match.k);
  open(fmt::format("_Pragma(\"unroll 8\") for (int k = 0; k < {}; ++k)", bk));
  std::string operand[2];
  for (int i = 0; i < 2; ++i) {
    const unsigned mask = factor_register_bits(*this, c, i);
    const int count = 1 << __builtin_popcount(mask);
    operand[i] = fmt::format("a{}", i);
    line(fmt::format("{} {}[{}];  // factor {} at k: one value per setting of register bits {:#x}",
                     type, operand[i], count, i, mask));
    open_unrolled(fmt::format("_Pragma(\"unroll\") for (int j = 0; j < {}; ++j)", count));
    line(fmt::format("const int r = {};", spread(mask, "j")));
    line(fmt::format("{}[j] = {}[{}];", operand[i], tile[i], factor_place(*this, c, i)));
    close();
    operand[i] += "[" + pick(mask, "r") + "]";
  }
  line(fmt::format("TS_FOR(r) {}[r] += {} * {};", nm, operand[0], operand[1]));
  close();
  close();
}

}  // namespace tessel::codegen
