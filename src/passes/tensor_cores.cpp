#include "passes/tensor_cores.hpp"

#include <fmt/format.h>

#include <cmath>
#include <set>

#include "common/pow2.hpp"
#include "layout/mma_layouts.hpp"
#include "passes/access_plan.hpp"
#include "passes/prefetch_plan.hpp"

namespace tessel::passes {

namespace {

// The operand dtype of factor f on tensor cores: f16, bf16, f8e4m3 or f8e5m2 for a load of
// that dtype widened to f32, i8 for an i8 load widened to i32, f32 (TF32) for an f32 load
// truncated to TF32 (views aside); else none.
std::optional<DType> operand_dtype(const ContractionFactor& f) {
  const DType t = f.load()->dtype;
  if (t != DType::f16 && t != DType::bf16 && t != DType::f32 && !is_f8(t) && t != DType::i8)
    return std::nullopt;
  const DType widened = t == DType::i8 ? DType::i32 : DType::f32;
  bool tf32 = false;
  for (size_t i = 1; i < f.nodes.size(); ++i) {
    const ir::Node* n = f.nodes[i];
    if (n->op == ir::Op::View || n->op == ir::Op::Permute) continue;
    if (t != DType::f32 && n->op == ir::Op::Cast && n->dtype == widened) continue;
    if (t == DType::f32 && n->op == ir::Op::Unary && n->ufn() == ir::UnaryFn::tf32 && !tf32) {
      tf32 = true;
      continue;
    }
    return std::nullopt;
  }
  if (t == DType::f32 && !tf32) return std::nullopt;  // ieee products: CUDA cores
  return t;
}

// Factor i of c as reasons name it: its id in the stage dumps and the tensor it tiles.
std::string factor_name(const Contraction& c, int i) {
  return fmt::format("factor %{} (a tile of {})", c.match.factor[i].value()->id,
                     ir::describe_tensor(c.match.factor[i].load()->args[0]));
}

// Whether mma.sync takes the plan's operands (m16n8k16, m16n8k8 and m16n8k32): 16-bit floats
// and TF32 staged either way; 8-bit ones (f8e4m3, f8e5m2, i8) staged K-major only (ldmatrix
// transposes 16-bit elements, not bytes), `why_not` saying so.
bool on_mma_sync(const Contraction& c, const Contraction::Mma& mma, std::string& why_not) {
  if (dtype_size(mma.operand) >= 2 || (mma.k_inner[0] && mma.k_inner[1])) return true;
  for (int i = 0; i < 2; ++i)
    if (!mma.k_inner[i])
      why_not += fmt::format(
          "{}and mma.sync reads 8-bit factors K-major only: {} is not contiguous along K (pass "
          "a K-major view, e.g. w.transpose(0, 1) of a [N, K] tensor for y)",
          why_not.empty() ? "" : "; ", factor_name(c, i));
  return false;
}

// The Syms of v's shape (size-1 dims left out).
std::set<const ir::Sym*> dims_of(const ir::Node* v) {
  std::set<const ir::Sym*> out;
  for (const ir::Sym* s : v->shape)
    if (s) out.insert(s);
  return out;
}

// The Sym of layout F's innermost slot.
const ir::Sym* innermost(const Layout& F) {
  for (const auto& [s, k] : F.slot_of)
    if (k == static_cast<int>(F.slot_block.size()) - 1) return s;
  return nullptr;
}

// wm x wn warps (wm * wn = warps) for a bm x bn accumulator: M's block a multiple of 16 wm,
// N's of 8 wn, the warp tile (bm / wm) x (bn / wn) closest to square (fewest shared reads
// per product); {0, 0} when none fits.
std::pair<int, int> split_warps(int warps, int64_t bm, int64_t bn) {
  std::pair<int, int> best{0, 0};
  double best_skew = 1e9;
  for (int wm = 1; wm <= warps; wm *= 2) {
    const int wn = warps / wm;
    if (bm % (16 * wm) != 0 || bn % (8 * wn) != 0) continue;
    const double skew = std::abs(std::log2(static_cast<double>(bm / wm) / (bn / wn)));
    if (skew < best_skew) {
      best_skew = skew;
      best = {wm, wn};
    }
  }
  return best;
}

bool any_flattened(const KernelPlan& plan) {
  for (const auto& [loop, knobs] : plan.knobs_by_loop)
    if (knobs.flatten) return true;
  return false;
}

layout::LinearLayout accumulator(const Layout& L, const Contraction::Mma& mma) {
  if (mma.wgmma) {
    // wgmma's rows and columns: the tile's M and N, or N and M where it computes the
    // transposed product (swap_ab), whose accumulator is then the tile's transposed.
    const int r = mma.swap_ab ? 1 : 0;
    const layout::LinearLayout d = layout::wgmma_accumulator(
        {static_cast<int32_t>(L.slot_block[r]), static_cast<int32_t>(L.slot_block[1 - r])},
        static_cast<int32_t>(L.slot_block[1 - r] / mma.warps_n), {mma.warps_m, mma.warps_n});
    return mma.swap_ab ? d.transpose_outs({1, 0}) : d;
  }
  return layout::mma_sync_accumulator(
      {static_cast<int32_t>(L.slot_block[0]), static_cast<int32_t>(L.slot_block[1])},
      {mma.warps_m, mma.warps_n});
}

// The tensor-core plan of contraction c in nest L, or none (the conditions of the header),
// `why_not` saying why.
std::optional<Contraction::Mma> plan_mma(const KernelPlan& plan, const Layout& L,
                                         const Contraction& c, std::string& why_not) {
  auto refuse = [&](std::string why) {
    why_not = std::move(why);
    return std::nullopt;
  };
  const ir::Node* sum = c.match.sum;
  if (sum->shape.size() != 2 || !sum->shape[0] || !sum->shape[1])
    return refuse(
        "the product is not 2-D (a batched dot is 2-D in each program where its batch tile has "
        "block size 1: ts::TileOptions{.block_size = {1, 0, 0}})");
  const ir::Sym* m = sum->shape[0];
  const ir::Sym* n = sum->shape[1];
  const ir::Sym* k = c.match.k;
  auto sm = L.slot_of.find(m), sn = L.slot_of.find(n);
  if (sm == L.slot_of.end() || sn == L.slot_of.end() || sm->second != 0 || sn->second != 1)
    return refuse(fmt::format(
        "the loop's layout does not hold the result as [{}, {}] (rows outer, columns inner): "
        "a transposed store or another value of the loop sets its order; store the result "
        "as it is (out(tm, tn) = acc) and transpose it in a separate kernel",
        ir::sym_name(m), ir::sym_name(n)));
  const int64_t bm = plan.block(m), bn = plan.block(n), bk = plan.block(k);
  const std::optional<DType> t = operand_dtype(c.match.factor[0]);
  if (!t || t != operand_dtype(c.match.factor[1]))
    return refuse(
        "the factors are not loads of one tensor-core dtype (f16, bf16, TF32, 8-bit), widened "
        "only");
  if (L.slot_block[0] != bm || L.slot_block[1] != bn)
    return refuse("the loop's layout holds more than one block of M or N");
  if (!has_mma_sync(plan.arch, *t))
    return refuse(fmt::format("sm_{} has no mma.sync for {} (sm_{} and later)", plan.arch,
                              dtype_name(*t), is_f8(*t) ? 89 : 80));
  if (bk % (32 / dtype_size(*t)) != 0)
    return refuse(fmt::format("K's block {} is not a multiple of {}", bk, 32 / dtype_size(*t)));
  Contraction::Mma mma;
  mma.operand = *t;
  const std::set<const ir::Sym*> a_dims{m, k}, b_dims{k, n};
  const std::set<const ir::Sym*> d0 = dims_of(c.match.factor[0].value());
  const std::set<const ir::Sym*> d1 = dims_of(c.match.factor[1].value());
  if (d0 == a_dims && d1 == b_dims)
    mma.a = 0;
  else if (d1 == a_dims && d0 == b_dims)
    mma.a = 1;
  else
    return refuse("a factor has dims other than [M, K] or [K, N]");
  std::tie(mma.warps_m, mma.warps_n) = split_warps(L.threads / 32, bm, bn);
  if (mma.warps_m == 0)
    return refuse(fmt::format(
        "no split of {} warps gives each 16 rows of M's block {} and 8 columns of N's block {}",
        L.threads / 32, bm, bn));
  for (int i = 0; i < 2; ++i) {
    const Layout& F = c.factor_layout[i];
    mma.k_inner[i] = innermost(F) == k;
    // 16 bytes of padding: the rows one ldmatrix reads (16-bit), or the rows and columns
    // the threads of a warp read (TF32: 4 rows of 8 along K, 8 along M or N), fall in
    // distinct banks.
    mma.pitch[i] = F.slot_block.back() + (*t != DType::f32 ? 16 / dtype_size(*t)
                                          : mma.k_inner[i] ? 4
                                                           : 8);
  }
  return mma;
}

// The tensor dim of load n's tensor that tile Sym s indexes, or -1.
int tensor_dim_of(const ir::Node* n, const ir::Sym* s) {
  int d = 0;
  for (const ir::IndexInfo& info : n->access) {
    if (info.kind == ir::IndexKind::newaxis) continue;
    if (info.kind == ir::IndexKind::tile && info.sym == s) return d;
    ++d;
  }
  return -1;
}

// Factor i's box for wgmma: its load's tile as one TMA box whose contiguous dim (K for a
// K-major operand, M or N else) is a multiple of 128 bytes, cut into chunks of 128
// bytes (the 128-byte swizzle's row), its other tile dim a block of M, N or K and every other
// dim a scalar index; or none, `why_not` saying why.
std::optional<TmaBox> wgmma_box(const ir::Graph& g, const KernelPlan& plan, const Contraction& c,
                                int i, bool& k_major, std::string& why_not) {
  const ir::Node* load = c.match.factor[i].load();
  std::string why;
  std::optional<TmaBox> b = tile_box(g, plan, load, plan.shared_limit(), &why);
  if (!b || b->box.size() < 2) {
    why_not =
        fmt::format("the TMA cannot copy {}: {}", factor_name(c, i), b ? "it is not 2-D" : why);
    return std::nullopt;
  }
  const int64_t elem = dtype_size(load->dtype);
  if (b->box[0] * elem % 128 != 0) {
    why_not = fmt::format(
        "{} has rows of {} bytes along its contiguous dim, not a multiple of the 128-byte "
        "swizzle",
        factor_name(c, i), b->box[0] * elem);
    return std::nullopt;
  }
  int tiles = 0;
  for (size_t j = 1; j < b->box.size(); ++j) tiles += b->box[j] > 1;
  if (tiles != 1 || b->box[1] <= 1) {  // rows: the TMA dim after the contiguous one
    why_not = fmt::format("{} is not 2-D in its tensor", factor_name(c, i));
    return std::nullopt;
  }
  k_major = tensor_dim_of(load, c.match.k) == b->dims[0];
  b->chunks = static_cast<int>(b->box[0] * elem / 128);
  b->box[0] = 128 / elem;
  b->swizzle = 128;
  return b;
}

// The wgmma plan of contraction c whose mma.sync plan is `mma`, or none:
// warps a multiple of 4, the warpgroups along M where M's block has 64 rows for each, the
// others along N (a 64-row tile on 8 warps: two warpgroups of 64 x N / 2), each issuing
// m64nNk16 (k8: TF32) for n = N's block / warpgroups along N, a multiple of 8 up to 256 (of
// 64 where B's tile is N-major: its 64-column chunks), K's block a multiple of that k, TF32
// factors both K-major; K a device loop of
// one dim that is not flattened, each factor a load at its top level whose tile the TMA can
// copy ahead (wgmma_box, may_load_ahead); the ring of at least 2 stages within a program's
// shared memory (num_stages stages where they fit).
// `why_not` says why not.
std::optional<Contraction::Mma> plan_wgmma(const ir::Graph& g, const KernelPlan& plan,
                                           const Layout& L, const Contraction& c,
                                           Contraction::Mma mma, std::string& why_not) {
  auto refuse = [&](std::string why) {
    why_not = std::move(why);
    return std::nullopt;
  };
  const ir::Sym* k = c.match.k;
  const int64_t bm = L.slot_block[0], bn = L.slot_block[1], bk = plan.block(k);
  // A block of M below 64 rows (a decode's few rows) and one of N of whole 64 rows: wgmma
  // computes the transposed product, its rows N's and its columns M's (swap_ab).
  mma.swap_ab = bm % 64 != 0 && bn % 64 == 0;
  const int64_t rows = mma.swap_ab ? bn : bm, cols = mma.swap_ab ? bm : bn;
  const char* const cols_name = mma.swap_ab ? "M" : "N";
  const int wa = mma.swap_ab ? 1 - mma.a : mma.a;  // the factor wgmma reads as A
  const int warpgroups = L.threads / 128;
  int wm = std::max(warpgroups, 1);  // warpgroups along wgmma's rows, then its columns
  while (wm > 1 && rows % (64 * wm) != 0) wm /= 2;
  const int wn = std::max(warpgroups, 1) / wm;
  const int64_t n = cols / wn;  // columns of each warpgroup's wgmma
  if (!has_wgmma(plan.arch))
    return refuse(fmt::format("sm_{} has no wgmma (sm_90 only)", plan.arch));
  if (g.check_bounds) return refuse("bounds checking (each access checked where it runs)");
  if (L.threads % 128 != 0) return refuse("fewer than 4 warps (a warpgroup)");
  if (rows % 64 != 0)
    return refuse(fmt::format("neither M's block {} nor N's block {} is a multiple of 64", bm, bn));
  if (cols % (8 * wn) != 0 || n > 256)
    return refuse(fmt::format("{}'s block {} on {} warpgroups along {}{}", cols_name, cols, wn,
                              cols_name,
                              mma.swap_ab ? " (wgmma's N: M's block is below 64, N's its M)" : ""));
  if (bk % mma.wgmma_k() != 0)
    return refuse(fmt::format("K's block {} is not a multiple of {}", bk, mma.wgmma_k()));
  if (k->kind != ir::Sym::tile || k->loop->dims.size() != 1 || plan.knobs(k->loop).flatten)
    return refuse("K is not the only dim of an unflattened tile loop");
  // The accumulator's registers (bm / (64 wm) fragments of n / 2) and room for the rest:
  // under a smaller Config::maxnreg ptxas cannot allocate wgmma's operands. Without it a
  // thread has 65536 / threads registers (at most 255): ptxas spills the fragments it has no
  // room for, but one wgmma's fragment and its operands must fit: n / 2 + 26 by ptxas 13.0's
  // "Insufficient registers" (256 columns on 16 warps, 128 on 32).
  if (plan.maxnreg && *plan.maxnreg < rows / (64 * wm) * n / 2 + 64)
    return refuse(fmt::format("maxnreg {} leaves no room for the accumulator", *plan.maxnreg));
  const int per_thread = std::min(255, 65536 / L.threads);
  if (per_thread < n / 2 + 32)
    return refuse(fmt::format(
        "num_warps {} leaves {} registers per thread, too few for a wgmma of {} columns (fewer "
        "warps, or a smaller N block)",
        L.threads / 32, per_thread, n));
  // 8-bit float products summed into f32 one tile of K at a time (Mma::promote_n): the
  // partial sums of one instruction beside the accumulator, the instruction narrowed (a
  // multiple of 8 columns dividing n) until both fit with room for the rest.
  if (is_f8(mma.operand) && !g.fast_accum) {
    const int64_t acc = rows / (64 * wm) * n / 2;
    mma.promote_n = n;
    while (mma.promote_n % 16 == 0 && acc + mma.promote_n / 2 + 48 > per_thread) mma.promote_n /= 2;
  }
  mma.stage_bytes = 0;
  for (int i = 0; i < 2; ++i) {
    if (!may_load_ahead(g, plan.loop, k->loop, c.match.factor[i].load()))
      return refuse(fmt::format("{} cannot be loaded ahead of its use", factor_name(c, i)));
    bool k_major = false;
    std::optional<TmaBox> b = wgmma_box(g, plan, c, i, k_major, why_not);
    if (!b) return std::nullopt;
    // wgmma reads 32-bit (TF32) and 8-bit operands K-major only (PTX ISA, "Matrix
    // Descriptor Format": the transpose operands exist for 16-bit types alone): such a
    // factor that is M- or N-major is copied K-major by the threads (Mma::transposed), its
    // K block whole 128-byte rows of the copy.
    mma.transposed[i] = dtype_size(mma.operand) != 2 && !k_major;
    if (mma.transposed[i] && bk * dtype_size(mma.operand) % 128 != 0)
      return refuse(fmt::format(
          "{} {} is {}-major: wgmma reads it K-major only, from a copy whose rows of K are 128 "
          "bytes ({} elements; K's block is {})",
          mma.ptx_operand(), factor_name(c, i), i == mma.a ? "M" : "N",
          128 / dtype_size(mma.operand), bk));
    if (mma.transposed[i]) mma.transpose_bytes[i] = b->bytes;
    // Warpgroups along wgmma's N start at column n wg: in an N-major B, a 64-column chunk.
    if (wn > 1 && i != wa && !k_major && !mma.transposed[i] && n % 64 != 0)
      return refuse(fmt::format("{} columns per warpgroup of an {}-major B (64-column chunks)", n,
                                cols_name));
    mma.box[i] = *b;
    mma.k_inner[i] = k_major;
    mma.stage_bytes += b->bytes;
  }
  mma.across_programs = plan.persistent;
  for (int i = 0; i < 2; ++i)
    mma.across_programs &= may_load_across_programs(g, plan.loop, k->loop, c.match.factor[i].load(),
                                                    /*tile_begins=*/true);
  mma.stages = std::max(2, plan.num_stages);  // as many as fit: plan_tensor_cores
  mma.wgmma = true;
  mma.warps_m = 4 * wm;
  mma.warps_n = wn;
  return mma;
}

// Whether node v of the nest of top-level loop `nest` is computed outside it (a host value
// or a constant): what a producer warpgroup, which runs none of the nest's code, may read.
bool outside_program(const ir::Node* nest, const ir::Node* v) {
  if (v->op == ir::Op::Const) return true;
  bool inside = false;
  ir::walk(nest->body, [&](const ir::Node* m) { inside |= m == v; });
  return !inside && v != nest;
}

// Config::warp_specialize: a producer warpgroup for the nest's one dot on wgmma whose factors'
// tiles follow from the program id and K (their loop over K in the program's body, bounded
// by values from outside it; their other indices likewise), or the reason it has none.
void plan_producer_warp(const ir::Graph& g, const KernelPlan& plan, Layout& L) {
  std::vector<Contraction*> rings;
  for (Contraction& c : L.contractions)
    if (c.mma && c.mma->wgmma) rings.push_back(&c);
  auto refuse = [&](const std::string& why) {
    for (Contraction& c : L.contractions) c.no_producer_warp = why;
  };
  if (rings.size() > 1) return refuse("the loop has more than one ts::dot on wgmma");
  if (rings.empty()) {
    std::string why = "no ts::dot of the loop runs on wgmma";
    for (const Contraction& c : L.contractions)
      if (!c.not_wgmma.empty()) {
        why += " (not on wgmma: " + c.not_wgmma + ")";
        break;
      }
    return refuse(why);
  }
  Contraction& c = *rings.front();
  if (plan.split_k > 1) return refuse("split_k shares each tile among programs");
  if (plan.pid_type == PidType::xyz) return refuse("pid_type xyz (use flat or a persistent one)");
  if (plan.maxnreg) return refuse("maxnreg caps the registers the consumers take from it");
  if (L.threads + kProducerThreads > kMaxThreadsPerProgram)
    return refuse(fmt::format(
        "num_warps {} leaves no room for the producer's {} threads (a program has at most {} "
        "threads; use num_warps {} or fewer)",
        L.threads / 32, kProducerThreads, kMaxThreadsPerProgram,
        prev_pow2((kMaxThreadsPerProgram - kProducerThreads) / 32)));
  const ir::Node* k = c.match.k->loop;
  for (int i = 0; i < 2; ++i) {
    const ir::Node* load = c.match.factor[i].load();
    bool from_id = may_load_across_programs(g, plan.loop, k, load, /*tile_begins=*/true);
    for (const ir::LoopDim& d : k->dims)
      from_id &= outside_program(plan.loop, d.begin) && outside_program(plan.loop, d.end);
    // Indices: the tiles of K and of the program, their begins (a batch tile of one
    // element, which the producer computes from the program id), host values.
    for (size_t j = 1; j < load->args.size(); ++j) {
      const ir::Node* a = load->args[j];
      const bool begin = a->op == ir::Op::TileBegin && a->args[0] == plan.loop;
      if (a != k && a != plan.loop && !begin) from_id &= outside_program(plan.loop, a);
    }
    if (!from_id)
      return refuse(
          fmt::format("{} does not follow from the program id and K alone", factor_name(c, i)));
  }
  c.mma->producer_warp = true;
}

// Places the nest's contractions on wgmma or mma.sync where they fit (Contraction::mma), else
// says why (Contraction::not_wgmma); the accumulator's placement becomes the nest's.
void place_on_tensor_cores(const ir::Graph& g, const KernelPlan& plan, Layout& L) {
  if (L.slot_block.size() != 2 || any_flattened(plan)) {
    for (Contraction& c : L.contractions)
      c.not_wgmma =
          L.slot_block.size() != 2
              ? "the loop's tiles are not 2-D (a batch tile of block size 1 leaves them 2-D)"
              : "the Config flattens a loop (flatten_loops)";
    return;
  }
  std::vector<std::optional<Contraction::Mma>> plans;
  int64_t per_stage = 0;  // bytes of one buffer of every ring
  int64_t fixed = 0;      // and of their K-major copies
  for (Contraction& c : L.contractions) {
    c.not_wgmma.clear();
    std::optional<Contraction::Mma> mma = plan_mma(plan, L, c, c.not_wgmma);
    if (mma)
      if (std::optional<Contraction::Mma> w = plan_wgmma(g, plan, L, c, *mma, c.not_wgmma)) mma = w;
    if (mma && !mma->wgmma && !on_mma_sync(c, *mma, c.not_wgmma)) mma.reset();  // CUDA cores
    if (mma && mma->wgmma) per_stage += mma->stage_bytes;
    if (mma && mma->wgmma) fixed += mma->transpose_total();
    plans.push_back(mma);
  }
  // The rings of a nest's contractions on wgmma share a program's shared memory (less their
  // mbarriers and the 1024-byte alignment): num_stages buffers each where they fit, else as
  // many as fit, at least 2; else mma.sync.
  int stages = std::max(2, plan.num_stages);
  const int64_t budget = plan.shared_limit() - 2048 - fixed;
  while (stages > 2 && stages * per_stage > budget) --stages;
  std::optional<Contraction::Mma> first;
  for (size_t i = 0; i < L.contractions.size(); ++i) {
    Contraction& c = L.contractions[i];
    std::optional<Contraction::Mma> mma = plans[i];
    if (mma && mma->wgmma) {
      if (stages * per_stage > budget) {
        std::string unused;
        mma = plan_mma(plan, L, c, unused);
        c.not_wgmma = "two stages of its rings do not fit in shared memory";
        if (mma && !on_mma_sync(c, *mma, c.not_wgmma)) mma.reset();
      } else {
        mma->stages = stages;
      }
    }
    // One placement holds the nest: every contraction on tensor cores has the same one.
    if (!mma || (first && (first->wgmma != mma->wgmma || first->swap_ab != mma->swap_ab ||
                           first->warps_m != mma->warps_m || first->warps_n != mma->warps_n)))
      continue;
    if (!first) first = mma;
    c.mma = mma;
    if (mma->wgmma) {
      c.padded[0] = c.padded[1] = false;
      c.shared_bytes = mma->stages * mma->stage_bytes + mma->transpose_total();
      continue;
    }
    c.shared_bytes = 0;
    for (int i = 0; i < 2; ++i) {
      c.padded[i] = false;
      c.shared_offset[i] = c.shared_bytes;
      const int64_t rows = c.factor_layout[i].slot_block.front();
      c.shared_bytes += (rows * mma->pitch[i] * dtype_size(mma->operand) + 15) / 16 * 16;
    }
  }
  if (!first) return;
  // The accumulator places each of the tile's elements once: every thread holds
  // elems / threads of them (a tile of 16-bit loads may have set wider vectors).
  if (L.elems < static_cast<int64_t>(L.threads) * L.vec) {
    L.vec = static_cast<int>(L.elems / L.threads);
    L.groups = 1;
  }
  L = with_placement(L, accumulator(L, *first));
}

}  // namespace

void plan_tensor_cores(const ir::Graph& g, const KernelPlan& plan, Layout& L) {
  place_on_tensor_cores(g, plan, L);
  if (plan.warp_specialize) plan_producer_warp(g, plan, L);
}

std::optional<layout::LinearLayout> tensor_core_placement(const Layout& L) {
  for (const Contraction& c : L.contractions)
    if (c.mma) return accumulator(L, *c.mma);
  return std::nullopt;
}

}  // namespace tessel::passes
