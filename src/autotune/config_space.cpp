#include "autotune/config_space.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "codegen/compile_pipeline.hpp"
#include "common/pow2.hpp"
#include "passes/contractions.hpp"
#include "passes/default_config.hpp"
#include "passes/loop_knobs.hpp"
#include "passes/tensor_descriptor.hpp"

namespace tessel::autotune {

namespace {

constexpr int64_t kMaxBlock = 8192;            // per tile dimension
constexpr int64_t kUnknownExtentBlock = 1024;  // extent read on the device

std::vector<int64_t> powers(int64_t lo, int64_t hi) {
  std::vector<int64_t> out;
  for (int64_t p = lo; p <= hi; p *= 2) out.push_back(p);
  return out;
}

bool is_persistent(int64_t pid) {
  auto p = static_cast<PidType>(pid);
  return p == PidType::persistent_blocked || p == PidType::persistent_interleaved;
}

using passes::extent_elems;

// Per block id: the largest extent_elems of the top-level nests that use it (`contractions`:
// each top-level loop's).
std::vector<int64_t> carried_extents(
    const ir::Graph& g,
    const std::vector<std::pair<const ir::Node*, std::vector<passes::ContractionMatch>>>&
        contractions) {
  std::vector<int64_t> out(g.num_block_sizes, 1);
  for (const auto& [top, matches] : contractions) {
    int64_t e = extent_elems(top->body, passes::staged_nodes(matches));
    ir::walk({const_cast<ir::Node*>(top)}, [&](const ir::Node* n) {
      if (n->op != ir::Op::Loop) return;
      for (const ir::LoopDim& d : n->dims)
        if (d.block_id >= 0) out.at(d.block_id) = std::max(out.at(d.block_id), e);
    });
  }
  return out;
}

}  // namespace

ConfigSpace::ConfigSpace(const ir::Graph& g, const Config& forced, const std::string& kernel,
                         std::optional<int> gpu_arch)
    : graph_(g),
      kernel_(kernel),
      arch_(gpu_arch.value_or(passes::kDefaultArch)),
      num_stores_(passes::num_stores(g)) {
  const bool tma = gpu_arch && passes::has_tma(*gpu_arch);
  Config def = passes::complete_config(g, forced, kernel);
  base_.indexing = forced.indexing;

  for (const ir::Node* loop : g.host)
    if (loop->op == ir::Op::Loop) contractions_.emplace_back(loop, passes::find_contractions(loop));
  std::vector<int64_t> carried = carried_extents(g, contractions_);
  // A dot's M and N blocks reach 64 however short the extent: wgmma multiplies tiles of
  // 64 rows (M = 16 in a 64-row tile, the decode case, runs on wgmma and can split K).
  std::set<int> product_dims;
  bool products = false;
  for (const auto& [loop, matches] : contractions_)
    for (const passes::ContractionMatch& c : matches) {
      products = true;
      for (const ir::Sym* s : c.sum->shape)
        if (s && s->block_id >= 0) product_dims.insert(s->block_id);
    }
  for (int b = 0; b < g.num_block_sizes; ++b) {
    Knob k{Knob::block_size, b, "block_sizes[" + std::to_string(b) + "]", {}, true};
    int64_t d = def.block_sizes->at(b);
    if (forced.block_sizes) {
      k.choices = {d};
    } else {
      int64_t hint = g.block_size_hint.at(b);
      auto [rmin, rmax] = g.block_size_range.at(b);
      int64_t hi = std::min(hint > 0 ? next_pow2(hint) : kUnknownExtentBlock, kMaxBlock);
      if (product_dims.count(b)) hi = std::max<int64_t>(hi, 64);
      int64_t lo = (hi <= 16 || carried[b] >= 16) ? 1 : 16;
      if (rmin > 0) lo = std::max(lo, next_pow2(rmin));
      if (rmax > 0) hi = std::min(hi, prev_pow2(rmax));
      k.choices = powers(std::min(lo, d), std::max(hi, d));
    }
    knobs_.push_back(k);
  }
  auto fixed_or = [](const auto& f, std::vector<int64_t> all) {
    return f ? std::vector<int64_t>{static_cast<int64_t>(*f)} : all;
  };
  knobs_.push_back({Knob::num_warps, 0, "num_warps", fixed_or(forced.num_warps, {1, 2, 4, 8, 16})});
  // Two stages pipeline the loads of device loops and of persistent programs' loops over
  // tiles (codegen/emit_pipeline.cpp): offered always (every kernel has a top-level loop,
  // which persistent pid types turn into a program loop); canonical() sets 1 where they
  // change nothing.
  // One walk: nested loops, and the loads of each tensor (for the eviction knobs below).
  std::map<const ir::Node*, int> loads_of;
  std::function<void(const ir::Block&, int)> scan = [&](const ir::Block& b, int depth) {
    for (const ir::Node* n : b) {
      if (n->op == ir::Op::Load) ++loads_of[n->args[0]];
      if (n->op == ir::Op::Loop) {
        nested_loops_ |= depth > 0;
        scan(n->body, depth + 1);
      }
    }
  };
  scan(g.host, 0);
  // A sum of products on wgmma rings num_stages buffers of its operands' tiles
  // (passes/tensor_cores.hpp): 3 and 4 are offered there.
  knobs_.push_back({Knob::num_stages, 0, "num_stages",
                    fixed_or(forced.num_stages, products ? std::vector<int64_t>{1, 2, 3, 4}
                                                         : std::vector<int64_t>{1, 2})});
  // 0 stands for unset (the compiler's choice for num_warps, up to 255 registers). Caps
  // are offered to kernels with reductions, whose rows held in registers limit how many
  // programs share an SM; elementwise tiles need few registers.
  knobs_.push_back(
      {Knob::maxnreg, 0, "maxnreg",
       fixed_or(forced.maxnreg, g.reduction_syms.empty() ? std::vector<int64_t>{0}
                                                         : std::vector<int64_t>{0, 64, 128}),
       false});

  bool persistent = false, xyz_ok = true;
  for (const ir::Node* n : g.host) {
    if (n->op != ir::Op::Loop) continue;
    persistent |= n->persistent;
    xyz_ok &= n->dims.size() <= 3;
  }
  auto pid = [](PidType p) { return static_cast<int64_t>(p); };
  std::vector<int64_t> pids;
  if (!persistent) pids.push_back(pid(PidType::flat));
  if (!persistent && xyz_ok) pids.push_back(pid(PidType::xyz));
  pids.push_back(pid(PidType::persistent_blocked));
  pids.push_back(pid(PidType::persistent_interleaved));
  // A forced grouping rules xyz out (they cannot be combined; see complete_loop_knobs).
  bool forced_grouping =
      forced.l2_groupings && std::any_of(forced.l2_groupings->begin(), forced.l2_groupings->end(),
                                         [](int v) { return v > 1; });
  if (forced_grouping) std::erase(pids, pid(PidType::xyz));
  if (forced.pid_type) pids = {pid(*forced.pid_type)};
  knobs_.push_back({Knob::pid_type, 0, "pid_type", pids, false});
  bool any_persistent = std::any_of(pids.begin(), pids.end(), is_persistent);
  // Split-K for dots of flat programs (Config::split_k; not applied where no loop over K
  // runs on wgmma).
  bool flat = std::find(pids.begin(), pids.end(), pid(PidType::flat)) != pids.end();
  knobs_.push_back({Knob::split_k, 0, "split_k",
                    fixed_or(forced.split_k, products && flat ? std::vector<int64_t>{1, 2, 4}
                                                              : std::vector<int64_t>{1})});
  knobs_.push_back({Knob::warp_specialize, 0, "warp_specialize",
                    forced.warp_specialize
                        ? std::vector<int64_t>{*forced.warp_specialize ? 1 : 0}
                        : (products ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0}),
                    false});
  knobs_.push_back(
      {Knob::num_sm_multiplier, 0, "num_sm_multiplier",
       fixed_or(forced.num_sm_multiplier,
                any_persistent ? std::vector<int64_t>{0, 1, 2, 4, 8} : std::vector<int64_t>{0})});
  // num_sm_multiplier 0 stands for unset: a persistent grid sized by occupancy.

  for (size_t i = 0; i < g.reduction_syms.size(); ++i) {
    Knob k{Knob::reduction_loop,
           static_cast<int>(i),
           "reduction_loops[" + std::to_string(i) + "]",
           {},
           true};
    if (forced.reduction_loops && i < forced.reduction_loops->size()) {
      k.choices = {(*forced.reduction_loops)[i].value_or(0)};
    } else {
      int64_t pow2 = g.reduction_syms[i]->extent_pow2;
      if (pow2 >= 32) k.choices = powers(16, pow2 / 2);
      k.choices.push_back(0);  // none: the whole extent in registers
    }
    knobs_.push_back(k);
  }
  for (size_t i = 0; i < g.tunables.size(); ++i) {
    const auto& [name, choices] = g.tunables[i];
    Knob k{Knob::tunable, static_cast<int>(i), "tunables." + name, choices, false};
    if (forced.tunables && forced.tunables->count(name)) k.choices = {forced.tunables->at(name)};
    knobs_.push_back(k);
  }
  // Per load: none, first, last (EvictionPolicy values), unordered; offered where data
  // can be read again (reduction dims, whose looped form reads a row once per pass; nested
  // loops; a tensor read by two loads), or forced. A one-pass kernel keeps none.
  bool reread =
      nested_loops_ || !g.reduction_syms.empty() ||
      std::any_of(loads_of.begin(), loads_of.end(), [](const auto& e) { return e.second > 1; });
  if (reread || forced.load_eviction_policies)
    for (int i = 0; i < g.num_loads; ++i) {
      Knob k{Knob::load_eviction,
             i,
             "load_eviction_policies[" + std::to_string(i) + "]",
             {0, 1, 2},
             false};
      if (forced.load_eviction_policies)
        k.choices = {static_cast<int64_t>(forced.load_eviction_policies->at(i))};
      knobs_.push_back(k);
    }
  if (tma && !forced.indexing) {
    // Loads the TMA may move, but not a dot's factors: wgmma's are copied by the TMA
    // whatever their entry says, mma.sync's never are.
    std::set<const ir::Node*> factors;
    for (const auto& [loop, matches] : contractions_) factors.merge(passes::staged_nodes(matches));
    std::map<int, const ir::Node*> loads;  // by load id
    ir::walk(g.host, [&](const ir::Node* n) {
      if (n->op == ir::Op::Load && n->load_id >= 0) loads.emplace(n->load_id, n);
    });
    for (const auto& [id, n] : loads)
      if (!factors.count(n) && passes::tma_may_move(g, n))
        knobs_.push_back(
            {Knob::indexing, id, "indexing[" + std::to_string(id) + "]", {0, 1}, false});
  }
  add_loop_knobs(forced, pids);
  default_ = canonical(point(def));
}

void ConfigSpace::add_loop_knobs(const Config& forced, const std::vector<int64_t>& pids) {
  std::vector<const ir::Node*> loops = passes::multi_dim_loops(graph_),
                               grouped = passes::grouped_loops(graph_);
  for (size_t i = 0; i < loops.size(); ++i) {
    int dims = static_cast<int>(loops[i]->dims.size());
    loop_dims_.push_back(dims);
    Knob k{Knob::loop_order,
           static_cast<int>(i),
           "loop_orders[" + std::to_string(i) + "]",
           {0},
           false};
    if (forced.loop_orders)
      k.choices = {passes::rank_of_permutation(forced.loop_orders->at(i))};
    else if (dims <= 4)
      for (int64_t r = 1, n = dims == 2 ? 2 : dims == 3 ? 6 : 24; r < n; ++r)
        k.choices.push_back(r);
    knobs_.push_back(k);
  }
  for (const ir::Node* top : grouped)
    grouped_at_.push_back(
        static_cast<int>(std::find(loops.begin(), loops.end(), top) - loops.begin()));
  for (size_t i = 0; i < loops.size(); ++i) {
    Knob k{Knob::flatten_loop,
           static_cast<int>(i),
           "flatten_loops[" + std::to_string(i) + "]",
           {0},
           true};
    auto j = std::find(grouped_at_.begin(), grouped_at_.end(), static_cast<int>(i));
    bool grouped_forced = j != grouped_at_.end() && forced.l2_groupings &&
                          forced.l2_groupings->at(j - grouped_at_.begin()) > 1;
    if (forced.flatten_loops)
      k.choices = {forced.flatten_loops->at(i) ? 1 : 0};
    else if (!grouped_forced && passes::flatten_blocker(loops[i]).empty())
      k.choices.push_back(1);
    knobs_.push_back(k);
  }
  bool only_xyz = pids.size() == 1 && pids[0] == static_cast<int64_t>(PidType::xyz);
  for (size_t j = 0; j < grouped.size(); ++j) {
    Knob k{Knob::l2_grouping,
           static_cast<int>(j),
           "l2_groupings[" + std::to_string(j) + "]",
           {1},
           true};
    bool flat_forced = forced.flatten_loops && forced.flatten_loops->at(grouped_at_[j]);
    if (forced.l2_groupings)
      k.choices = {forced.l2_groupings->at(j)};
    else if (!only_xyz && !flat_forced)
      k.choices = powers(1, 64);
    knobs_.push_back(k);
  }
}

Config ConfigSpace::config(const Point& p) const {
  Config c = base_;
  if (graph_.num_block_sizes > 0) c.block_sizes.emplace(graph_.num_block_sizes, 1);
  if (!graph_.reduction_syms.empty()) c.reduction_loops.emplace(graph_.reduction_syms.size());
  if (!graph_.tunables.empty()) c.tunables.emplace();
  if (!loop_dims_.empty()) {
    c.loop_orders.emplace(loop_dims_.size());
    c.flatten_loops.emplace(loop_dims_.size(), false);
  }
  if (!grouped_at_.empty()) c.l2_groupings.emplace(grouped_at_.size(), 1);
  for (size_t i = 0; i < knobs_.size(); ++i) {
    const Knob& k = knobs_[i];
    int64_t v = k.choices.at(p.at(i));
    switch (k.kind) {
      case Knob::block_size:
        (*c.block_sizes)[k.index] = v;
        break;
      case Knob::num_warps:
        c.num_warps = static_cast<int>(v);
        break;
      case Knob::num_stages:
        c.num_stages = static_cast<int>(v);
        break;
      case Knob::maxnreg:
        c.maxnreg = v == 0 ? std::nullopt : std::optional<int>(static_cast<int>(v));
        break;
      case Knob::pid_type:
        c.pid_type = static_cast<PidType>(v);
        break;
      case Knob::num_sm_multiplier:
        c.num_sm_multiplier = v == 0 ? std::nullopt : std::optional<int>(static_cast<int>(v));
        break;
      case Knob::reduction_loop:
        (*c.reduction_loops)[k.index] = v == 0 ? std::nullopt : std::optional<int64_t>(v);
        break;
      case Knob::tunable:
        (*c.tunables)[graph_.tunables.at(k.index).first] = v;
        break;
      case Knob::load_eviction:
        // Set only when some load has a policy (configs stay short otherwise).
        if (v != 0) {
          if (!c.load_eviction_policies)
            c.load_eviction_policies.emplace(graph_.num_loads, EvictionPolicy::none);
          (*c.load_eviction_policies)[k.index] = static_cast<EvictionPolicy>(v);
        }
        break;
      case Knob::loop_order:
        (*c.loop_orders)[k.index] = passes::permutation_of_rank(loop_dims_.at(k.index), v);
        break;
      case Knob::flatten_loop:
        (*c.flatten_loops)[k.index] = v != 0;
        break;
      case Knob::l2_grouping:
        (*c.l2_groupings)[k.index] = static_cast<int>(v);
        break;
      case Knob::split_k:
        c.split_k = v > 1 ? std::optional<int>(static_cast<int>(v)) : std::nullopt;
        break;
      case Knob::warp_specialize:
        c.warp_specialize = v ? std::optional<bool>(true) : std::nullopt;
        break;
      case Knob::indexing:
        // Set only when some load takes a tensor descriptor (configs stay short otherwise).
        if (v != 0) {
          if (!c.indexing)
            c.indexing.emplace(static_cast<size_t>(graph_.num_loads + num_stores_), "pointer");
          (*c.indexing)[static_cast<size_t>(k.index)] = "tensor_descriptor";
        }
        break;
    }
  }
  if (c.pid_type && !is_persistent(static_cast<int64_t>(*c.pid_type))) c.num_sm_multiplier.reset();
  return c;
}

Point ConfigSpace::point(const Config& c) const {
  Point p(knobs_.size(), 0);
  for (size_t i = 0; i < knobs_.size(); ++i) {
    const Knob& k = knobs_[i];
    std::optional<int64_t> v;
    switch (k.kind) {
      case Knob::block_size:
        if (c.block_sizes && k.index < static_cast<int>(c.block_sizes->size()))
          v = (*c.block_sizes)[k.index];
        break;
      case Knob::num_warps:
        if (c.num_warps) v = *c.num_warps;
        break;
      case Knob::num_stages:
        if (c.num_stages) v = *c.num_stages;
        break;
      case Knob::maxnreg:
        v = c.maxnreg.value_or(0);
        break;
      case Knob::pid_type:
        if (c.pid_type) v = static_cast<int64_t>(*c.pid_type);
        break;
      case Knob::num_sm_multiplier:
        v = c.num_sm_multiplier.value_or(0);
        break;
      case Knob::reduction_loop:
        // Unset means a persistent reduction (0, "none").
        v = c.reduction_loops && k.index < static_cast<int>(c.reduction_loops->size())
                ? (*c.reduction_loops)[k.index].value_or(0)
                : 0;
        break;
      case Knob::load_eviction:
        v = c.load_eviction_policies && k.index < static_cast<int>(c.load_eviction_policies->size())
                ? static_cast<int64_t>((*c.load_eviction_policies)[k.index])
                : 0;
        break;
      case Knob::tunable:
        if (c.tunables) {
          auto it = c.tunables->find(graph_.tunables.at(k.index).first);
          if (it != c.tunables->end()) v = it->second;
        }
        break;
      case Knob::loop_order:
        if (c.loop_orders && k.index < static_cast<int>(c.loop_orders->size()) &&
            static_cast<int>((*c.loop_orders)[k.index].size()) == loop_dims_.at(k.index))
          v = passes::rank_of_permutation((*c.loop_orders)[k.index]);
        break;
      case Knob::flatten_loop:
        if (c.flatten_loops && k.index < static_cast<int>(c.flatten_loops->size()))
          v = (*c.flatten_loops)[k.index] ? 1 : 0;
        break;
      case Knob::l2_grouping:
        if (c.l2_groupings && k.index < static_cast<int>(c.l2_groupings->size()))
          v = (*c.l2_groupings)[k.index];
        break;
      case Knob::split_k:
        v = c.split_k.value_or(1);
        break;
      case Knob::warp_specialize:
        v = c.warp_specialize.value_or(false) ? 1 : 0;
        break;
      case Knob::indexing:  // one entry for all ops, or one per op (loads first)
        if (c.indexing) {
          const size_t j = c.indexing->size() == 1 ? 0 : static_cast<size_t>(k.index);
          v = j < c.indexing->size() && (*c.indexing)[j] == "tensor_descriptor";
        }
        break;
    }
    if (!v) {
      p[i] = default_.empty() ? 0 : default_[i];
      continue;
    }
    auto exact = std::find(k.choices.begin(), k.choices.end(), *v);
    if (exact != k.choices.end() || !k.ordered || *v <= 0) {
      p[i] = exact != k.choices.end() ? static_cast<int>(exact - k.choices.begin()) : 0;
      continue;
    }
    double best = 1e300;
    for (size_t j = 0; j < k.choices.size(); ++j) {
      if (k.choices[j] <= 0) continue;
      double d = std::fabs(std::log2(static_cast<double>(k.choices[j])) -
                           std::log2(static_cast<double>(*v)));
      if (d < best) best = d, p[i] = static_cast<int>(j);
    }
  }
  return p;
}

Point ConfigSpace::canonical(Point p) const {
  auto set_one = [&](size_t j) {
    auto one = std::find(knobs_[j].choices.begin(), knobs_[j].choices.end(), 1);
    if (one != knobs_[j].choices.end()) p[j] = static_cast<int>(one - knobs_[j].choices.begin());
  };
  bool xyz = false, persistent_pid = false;
  std::set<int> flat;  // loop_orders indices of flattened loops
  for (size_t i = 0; i < knobs_.size(); ++i) {
    int64_t v = knobs_[i].choices.at(p[i]);
    if (knobs_[i].kind == Knob::pid_type) xyz = v == static_cast<int64_t>(PidType::xyz);
    if (knobs_[i].kind == Knob::pid_type) persistent_pid = is_persistent(v);
    if (knobs_[i].kind == Knob::flatten_loop && v) flat.insert(knobs_[i].index);
    if (knobs_[i].kind == Knob::pid_type && v != static_cast<int64_t>(PidType::flat))
      for (size_t j = 0; j < knobs_.size(); ++j)
        if (knobs_[j].kind == Knob::split_k) set_one(j);
    if (knobs_[i].kind != Knob::pid_type || is_persistent(v)) continue;
    for (size_t j = 0; j < knobs_.size(); ++j)
      if (knobs_[j].kind == Knob::num_sm_multiplier) set_one(j);
  }
  for (size_t j = 0; j < knobs_.size(); ++j)
    if (knobs_[j].kind == Knob::l2_grouping && (xyz || flat.count(grouped_at_.at(knobs_[j].index))))
      set_one(j);
  // Without a device loop (none written, no reduction rolled into one) and without a
  // persistent program loop, stages do nothing.
  bool rolled = false;
  for (size_t j = 0; j < knobs_.size(); ++j)
    rolled |= knobs_[j].kind == Knob::reduction_loop && knobs_[j].choices.at(p[j]) != 0;
  if (!nested_loops_ && !rolled && !persistent_pid)
    for (size_t j = 0; j < knobs_.size(); ++j)
      if (knobs_[j].kind == Knob::num_stages) set_one(j);
  return p;
}

bool ConfigSpace::valid(const Point& p) const {
  if (p == default_) return true;  // the default is always measured
  Config c = config(p);
  if (c.maxnreg && int64_t{32} * c.num_warps.value_or(4) * *c.maxnreg > 65536)
    return false;  // cannot launch
  try {
    // What a call with this config runs, up to its CUDA (the register budget included).
    codegen::compile_pipeline(graph_, c,
                              {.emit = codegen::PipelineOptions::Emit::none, .arch = arch_});
  } catch (const std::exception&) {
    return false;  // e.g. a reduction the pass cannot chunk, too many registers
  }
  return true;
}

int64_t ConfigSpace::size() const {
  int64_t n = 1;
  for (const Knob& k : knobs_)
    n = std::min<int64_t>(n * static_cast<int64_t>(k.choices.size()), int64_t{1} << 62);
  return n;
}

Point ConfigSpace::random_point(std::mt19937_64& rng) const {
  for (int attempt = 0; attempt < 1000; ++attempt) {
    Point p(knobs_.size());
    for (size_t i = 0; i < knobs_.size(); ++i)
      p[i] = std::uniform_int_distribution<int>(
          0, static_cast<int>(knobs_[i].choices.size()) - 1)(rng);
    p = canonical(p);
    if (valid(p)) return p;
  }
  return default_;
}

std::vector<Point> ConfigSpace::neighbors(const Point& p, int radius) const {
  // Moves of one knob: its index after the move.
  auto moves = [&](size_t i) {
    std::vector<int> out;
    const Knob& k = knobs_[i];
    int n = static_cast<int>(k.choices.size());
    if (k.ordered) {
      if (p[i] - 1 >= 0) out.push_back(p[i] - 1);
      if (p[i] + 1 < n) out.push_back(p[i] + 1);
    } else {
      for (int j = 0; j < n; ++j)
        if (j != p[i]) out.push_back(j);
    }
    return out;
  };
  std::vector<Point> out;
  std::set<Point> seen{canonical(p)};
  auto add = [&](Point q) {
    q = canonical(std::move(q));
    if (seen.insert(q).second && valid(q)) out.push_back(q);
  };
  for (size_t i = 0; i < knobs_.size(); ++i) {
    for (int a : moves(i)) {
      Point q = p;
      q[i] = a;
      if (radius <= 1) {
        add(q);
        continue;
      }
      for (size_t j = i + 1; j < knobs_.size(); ++j)
        for (int b : moves(j)) {
          Point r = q;
          r[j] = b;
          add(r);
        }
    }
  }
  return out;
}

std::vector<Point> ConfigSpace::matmul_points() const {
  struct Tile {
    int64_t m, n, k;
    int warps, stages;
    bool persistent = false;  // persistent_blocked programs (no l2_groupings: slower there)
    int split = 1;            // split_k
    bool ws = false;          // warp_specialize
  };
  // mma.sync tiles, then wgmma ones (K blocks of 64, TMA rings: passes/tensor_cores.hpp); a
  // persistent program's ring runs on into its next tile (Contraction::Mma::across_programs).
  static const Tile kTiles[] = {{128, 128, 32, 4, 2},
                                {128, 64, 32, 4, 2},
                                {64, 64, 32, 4, 2},
                                {128, 256, 32, 8, 2},
                                {16, 32, 128, 2, 2},
                                {128, 256, 64, 8, 4},
                                {128, 128, 64, 4, 4},
                                {256, 128, 64, 8, 3},
                                {128, 256, 64, 8, 4, true},
                                {256, 128, 64, 8, 4, true},
                                {64, 128, 64, 4, 4, false, 2},
                                // M = 16 (decode) on wgmma's transposed product, split in 2
                                {16, 128, 64, 4, 4, false, 2},
                                {64, 256, 64, 8, 4, false, 4},
                                {128, 256, 64, 8, 4, true, 1, true},
                                // TF32 with a row-major y: 256 x 128 x 32, copied K-major by
                                // the consumers while a producer issues the TMA copies
                                {256, 128, 64, 8, 4, false, 1, true}};
  std::vector<Point> out;
  const Config base = config(default_);
  for (const auto& [loop, matches] : contractions_) {
    for (const passes::ContractionMatch& c : matches) {
      // A batched dot ([B, M, N]) seeds its M and N with a batch block of 1, where each
      // program's dot is 2-D (passes/unit_tiles.hpp).
      const ir::Shape& sum = c.sum->shape;
      if (sum.size() != 2 && sum.size() != 3) continue;
      const ir::Shape mn(sum.end() - 2, sum.end());
      const ir::Sym* batch = sum.size() == 3 ? sum[0] : nullptr;
      if (!mn[0] || !mn[1]) continue;
      // A dim whose block the kernel fixes (a grouped GEMM's 64 rows) keeps it: the tile's
      // other blocks, warps and stages still seed the search.
      const int ids[3] = {mn[0]->block_id, mn[1]->block_id, c.k->block_id};
      if (ids[0] < 0 && ids[1] < 0 && ids[2] < 0) continue;
      // The tiles' K blocks are for 16-bit operands: the same bytes of K for others (a TF32
      // tile of 32: a 128-byte row, as bf16's 64).
      const int64_t elem = dtype_size(c.factor[0].load()->dtype);
      for (const Tile& t : kTiles) {
        Config cfg = base;
        const int64_t sizes[3] = {t.m, t.n, std::max<int64_t>(8, t.k * 2 / elem)};
        for (int d = 0; d < 3; ++d)
          if (ids[d] >= 0) cfg.block_sizes->at(static_cast<size_t>(ids[d])) = sizes[d];
        if (batch && batch->block_id >= 0)
          cfg.block_sizes->at(static_cast<size_t>(batch->block_id)) = 1;
        cfg.num_warps = t.warps;
        cfg.num_stages = t.stages;
        if (t.persistent) cfg.pid_type = PidType::persistent_blocked;
        if (t.split > 1) cfg.split_k = t.split;
        if (t.ws) cfg.warp_specialize = true;
        Point p = canonical(point(cfg));
        if (valid(p) && std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
      }
    }
  }
  return out;
}

Point ConfigSpace::shifted(const Point& p, Knob::Kind kind, int steps) const {
  Point q = p;
  for (size_t i = 0; i < knobs_.size(); ++i)
    if (knobs_[i].kind == kind)
      q[i] = std::clamp(q[i] + steps, 0, static_cast<int>(knobs_[i].choices.size()) - 1);
  return canonical(q);
}

}  // namespace tessel::autotune
