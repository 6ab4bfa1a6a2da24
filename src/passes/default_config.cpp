#include "passes/default_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <set>
#include <tuple>

#include "common/count_text.hpp"
#include "common/pow2.hpp"
#include "passes/layout.hpp"
#include "passes/loop_knobs.hpp"
#include "passes/roll_reductions.hpp"

namespace tessel::passes {

int64_t block_size(const ir::LoopDim& d, const Config& c) {
  if (!d.is_tile) return 1;
  if (d.fixed_block) return d.fixed_block;
  return c.block_sizes->at(d.block_id);
}

int64_t sym_block(const ir::Sym* s, const Config& c) {
  if (!s) return 1;
  if (s->kind == ir::Sym::extent_k) return s->extent_pow2;
  if (s->kind == ir::Sym::block_k) return c.block_sizes->at(s->block_id);
  return block_size(s->loop->dims.at(s->loop_dim), c);
}

int64_t extent_elems(const ir::Block& b, const std::set<const ir::Node*>& skip) {
  int64_t best = 1;
  for (const ir::Node* n : b) {
    if (skip.count(n)) continue;
    int64_t p = 1;
    for (const ir::Sym* s : n->shape)
      if (s && s->kind == ir::Sym::extent_k) p *= s->extent_pow2;
    best = std::max(best, p);
    if (n->op == ir::Op::Loop) best = std::max(best, extent_elems(n->body, skip));
  }
  return best;
}

// Default block sizes, per top-level loop nest: a budget of 4096 elements per tile
// value (divided by the padded extents the nest's values carry) shared by all tile
// dimensions of the nest, given out innermost loop first and innermost dimension first,
// at most 1024 along one dimension. A contraction's summed dim (passes/contractions.hpp)
// is no dim of the nest's values: it gets 32 (as the k block of a CUDA-core GEMM), outside
// the budget, its factors' extents do not divide the budget, and the nest's other dims
// get at most 64 each.
static void collect_dims(const ir::Node* loop, int depth,
                         std::vector<std::tuple<int, int, const ir::LoopDim*>>& out) {
  for (size_t d = 0; d < loop->dims.size(); ++d)
    if (loop->dims[d].is_tile && loop->dims[d].block_id >= 0)
      out.emplace_back(depth, static_cast<int>(d), &loop->dims[d]);
  for (const ir::Node* n : loop->body)
    if (n->op == ir::Op::Loop) collect_dims(n, depth + 1, out);
}

static void default_blocks(const ir::Block& b, const ir::Graph& g, std::vector<int64_t>& out) {
  for (const ir::Node* n : b) {
    if (n->op != ir::Op::Loop) continue;
    std::vector<std::tuple<int, int, const ir::LoopDim*>> dims;
    collect_dims(n, 0, dims);
    std::stable_sort(dims.begin(), dims.end(), [](const auto& x, const auto& y) {
      if (std::get<0>(x) != std::get<0>(y)) return std::get<0>(x) > std::get<0>(y);
      return std::get<1>(x) > std::get<1>(y);
    });
    std::vector<ContractionMatch> contractions = find_contractions(n);
    std::set<int> summed;  // block ids of contracted tile dims
    for (const ContractionMatch& m : contractions)
      if (m.k->kind == ir::Sym::tile)
        summed.insert(m.k->loop->dims.at(static_cast<size_t>(m.k->loop_dim)).block_id);
    int64_t budget = std::max<int64_t>(1, 4096 / extent_elems(n->body, staged_nodes(contractions)));
    std::set<int> done;  // a shared BlockSize is sized once
    for (const auto& [depth, d, ld] : dims) {
      if (!done.insert(ld->block_id).second) continue;
      int64_t hint = g.block_size_hint.at(ld->block_id);
      auto [lo, hi] = g.block_size_range.at(ld->block_id);
      const bool k = summed.count(ld->block_id) > 0;
      // Around a contraction, output tiles of up to 64 along each dim (square, as a
      // CUDA-core GEMM's), not one long row.
      const int64_t cap = k ? 32 : summed.empty() ? 1024 : 64;
      int64_t bs = std::max<int64_t>(
          1, std::min({next_pow2(hint > 0 ? hint : 1024), cap, k ? cap : budget}));
      if (hi) bs = std::min(bs, prev_pow2(hi));
      bs = std::max(bs, next_pow2(lo));  // register_block_size checks [lo, hi] holds one
      out.at(ld->block_id) = bs;
      if (!k) budget = std::max<int64_t>(1, budget / bs);
    }
  }
}

// Config::tunables: every name must be declared by the kernel (ts::register_tunable) and
// its value one of the declared choices; names the config leaves out get their first
// choice. Left unset for kernels without tunables.
template <class Fail>
static void complete_tunables(const ir::Graph& g, Config& c, const Fail& fail) {
  if (c.tunables) {
    for (const auto& [name, value] : *c.tunables) {
      auto it = std::find_if(g.tunables.begin(), g.tunables.end(),
                             [&](const auto& t) { return t.first == name; });
      if (it == g.tunables.end())
        fail(fmt::format("unknown tunable '{}'", name),
             "the kernel declares no ts::register_tunable of that name");
      else if (std::find(it->second.begin(), it->second.end(), value) == it->second.end())
        fail(fmt::format("tunable '{}' = {} is not one of its choices", name, value),
             "use one of the values given to ts::register_tunable");
    }
  }
  if (g.tunables.empty()) return;
  if (!c.tunables) c.tunables.emplace();
  for (const auto& [name, choices] : g.tunables) c.tunables->try_emplace(name, choices.front());
}

int num_stores(const ir::Graph& g) {
  int stores = 0;
  ir::walk(g.host, [&](const ir::Node* n) { stores += n->op == ir::Op::Store; });
  return stores;
}

Config complete_config(const ir::Graph& g, Config c, const std::string& kernel) {
  SourceLoc at = ir::first_loop_loc(g);  // errors point at the loop nest the config tiles
  auto fail = [&](const std::string& what, const std::string& hint) {
    throw UserError(kernel, at, "config: " + what, hint);
  };
  if (!c.block_sizes) {
    std::vector<int64_t> bs(g.num_block_sizes, 64);
    default_blocks(g.host, g, bs);
    c.block_sizes = bs;
  }
  if (static_cast<int>(c.block_sizes->size()) != g.num_block_sizes)
    fail(fmt::format("{} given, the kernel has {}",
                     count_of(static_cast<int64_t>(c.block_sizes->size()), "block size"),
                     count_of(g.num_block_sizes, "tunable tile dimension")),
         "give one block size per ts::register_block_size and per ts::tile dimension without a "
         "fixed "
         "block_size, in the order they are traced");
  for (size_t i = 0; i < c.block_sizes->size(); ++i) {
    int64_t b = (*c.block_sizes)[i];
    if (b <= 0 || (b & (b - 1)) != 0)
      fail(fmt::format("block size {} is not a positive power of two", b), "use 1, 2, 4, 8, ...");
    auto [lo, hi] = g.block_size_range.at(i);  // ts::register_block_size(min, max); 0 = none
    if ((lo && b < lo) || (hi && b > hi))
      fail(fmt::format(
               "block_sizes[{}] = {} is outside the range [{}, {}] its ts::register_block_size "
               "declares",
               i, b, lo, hi ? fmt::format("{}", hi) : std::string("unbounded")),
           "use a power of two within the declared range");
  }
  if (!c.num_warps) {
    // About 16 elements of a tile value per thread: 4 warps up to 2048 elements, up to 16
    // warps for larger tiles (e.g. whole rows of 16384).
    int64_t elems = 1;
    c.num_warps = 4;
    for (const ir::Node* n : g.host)
      if (n->op == ir::Op::Loop) elems = std::max(elems, compute_layout(n, c).elems);
    int w = 4;
    while (w < 16 && elems / (32 * w) > 16) w *= 2;
    c.num_warps = w;
  }
  int w = *c.num_warps;
  if (w <= 0 || w > 32 || (w & (w - 1)) != 0)
    fail(fmt::format("num_warps {} is not a power of two in [1, 32]", w),
         "use 1, 2, 4, 8, 16 or 32");
  if (!c.num_stages) c.num_stages = 1;
  if (*c.num_stages < 1)
    fail(fmt::format("num_stages {} is not a positive integer", *c.num_stages),
         "use 1 (no pipelining), or 2 or more (a device loop's loads issued num_stages - 1 "
         "iterations early, up to 3 iterations (num_stages above 4 act as 4); a ts::dot on "
         "wgmma rings num_stages buffers, as many as fit)");
  if (c.maxnreg && (*c.maxnreg < 24 || *c.maxnreg > 255))
    fail(fmt::format("maxnreg {} is outside [24, 255]", *c.maxnreg),
         "use a register cap per thread between 24 and 255, or leave maxnreg unset");
  if (c.maxnreg && int64_t{32} * w * *c.maxnreg > 65536)
    fail(fmt::format("maxnreg {} with num_warps {} needs {} registers per program; an SM has 65536",
                     *c.maxnreg, w, int64_t{32} * w * *c.maxnreg),
         fmt::format("use maxnreg <= {} for num_warps {}, or fewer warps", 65536 / (32 * w), w));
  if (c.num_sm_multiplier &&
      (*c.num_sm_multiplier < 1 || (*c.num_sm_multiplier & (*c.num_sm_multiplier - 1)) != 0))
    fail(fmt::format("num_sm_multiplier {} is not a positive power of two", *c.num_sm_multiplier),
         "use 1, 2, 4 or 8 (programs per SM of a persistent kernel), or leave it unset");
  if (c.indexing) {
    size_t ops = static_cast<size_t>(g.num_loads + num_stores(g));
    if (c.indexing->size() != 1 && c.indexing->size() != ops)
      fail(fmt::format("{} indexing entries given, the kernel has {} loads and stores",
                       c.indexing->size(), ops),
           "give one entry for all, or one per load and store");
  }
  if (c.indexing)
    for (const std::string& s : *c.indexing)
      if (s != "pointer" && s != "tensor_descriptor")
        fail(fmt::format("indexing \"{}\" is not supported", s),
             "use \"pointer\" or \"tensor_descriptor\" (TMA loads), or leave indexing unset");
  if (c.load_eviction_policies)
    for (EvictionPolicy p : *c.load_eviction_policies)
      if (static_cast<unsigned>(p) > static_cast<unsigned>(EvictionPolicy::last))
        fail(fmt::format("load eviction policy value {} is not one of none, first, last",
                         static_cast<int>(p)),
             "use ts::EvictionPolicy::none, first or last");
  if (c.load_eviction_policies && static_cast<int>(c.load_eviction_policies->size()) != g.num_loads)
    fail(fmt::format("{} load eviction polic{} given, the kernel has {} load{}",
                     c.load_eviction_policies->size(),
                     c.load_eviction_policies->size() == 1 ? "y" : "ies", g.num_loads,
                     g.num_loads == 1 ? "" : "s"),
         "give one entry (\"\", \"first\" or \"last\") per tensor read inside a loop, in source "
         "order, or leave "
         "load_eviction_policies unset");
  // Reductions over very long extents (more than 16384 padded elements) default to
  // chunks of 4096 (a looped reduction) rather than whole rows in registers.
  if (!c.reduction_loops) {
    std::vector<std::optional<int64_t>> rl;
    bool any = false;
    for (const ir::Sym* s : g.reduction_syms) {
      bool long_row = s->extent_pow2 > 16384;
      rl.push_back(long_row ? std::optional<int64_t>(4096) : std::nullopt);
      any |= long_row;
    }
    if (any) c.reduction_loops = rl;
  }
  bool persistent = false;
  for (const ir::Node* n : g.host)
    if (n->op == ir::Op::Loop) persistent |= n->persistent;
  if (c.pid_type &&
      static_cast<unsigned>(*c.pid_type) > static_cast<unsigned>(PidType::persistent_interleaved))
    fail(
        fmt::format(
            "pid_type value {} is not one of flat, xyz, persistent_blocked, persistent_interleaved",
            static_cast<int>(*c.pid_type)),
        "use a ts::PidType enumerator");
  if (!c.pid_type) c.pid_type = persistent ? PidType::persistent_interleaved : PidType::flat;
  if (persistent && (*c.pid_type == PidType::flat || *c.pid_type == PidType::xyz))
    fail(fmt::format("pid_type {} for a kernel whose top-level loop bound is read on the device",
                     pid_type_name(*c.pid_type)),
         "use persistent_blocked or persistent_interleaved (or leave pid_type unset)");
  if (c.split_k && (*c.split_k < 1 || *c.split_k > 16 || (*c.split_k & (*c.split_k - 1)) != 0))
    fail(fmt::format("split_k {} is not a power of two in [1, 16]", *c.split_k),
         "use 1 (no split), 2, 4, 8 or 16 programs per output tile");
  if (c.split_k.value_or(1) > 1 && *c.pid_type != PidType::flat)
    fail(fmt::format("split_k {} with pid_type {}", *c.split_k, pid_type_name(*c.pid_type)),
         "split-K runs on pid_type flat: use it, or split_k 1");
  // The defaults that change nothing stay unset: a config that spells them out names the
  // same compiled kernel (dumps, caches) as one that leaves them out.
  if (c.split_k == 1) c.split_k.reset();
  if (c.warp_specialize == false) c.warp_specialize.reset();
  if (c.indexing && std::all_of(c.indexing->begin(), c.indexing->end(),
                                [](const std::string& s) { return s == "pointer"; }))
    c.indexing.reset();
  if (c.load_eviction_policies &&
      std::all_of(c.load_eviction_policies->begin(), c.load_eviction_policies->end(),
                  [](EvictionPolicy p) { return p == EvictionPolicy::none; }))
    c.load_eviction_policies.reset();
  if (*c.pid_type == PidType::flat || *c.pid_type == PidType::xyz) c.num_sm_multiplier.reset();
  if (c.tunables && c.tunables->empty() && g.tunables.empty()) c.tunables.reset();
  if (c.reduction_loops && c.reduction_loops->empty() && reduction_dims(g).empty())
    c.reduction_loops.reset();
  complete_tunables(g, c, fail);
  complete_loop_knobs(g, c, kernel);
  return c;
}

}  // namespace tessel::passes
