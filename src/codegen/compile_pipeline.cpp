#include "codegen/compile_pipeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <set>
#include <utility>

#include "passes/access_layouts.hpp"
#include "passes/default_config.hpp"
#include "passes/roll_reductions.hpp"
#include "passes/tensor_cores.hpp"
#include "passes/unit_tiles.hpp"

namespace tessel::codegen {

namespace {

// Stage 3: the program lowered for the config's reduction_loops (null: unchanged).
std::unique_ptr<ir::Graph> roll(const ir::Graph& g, const Config& requested, Config& config) {
  try {
    return passes::roll_reductions(g, config);
  } catch (const UserError&) {
    if (requested.reduction_loops) throw;
    // The default chunking of a very long reduction does not apply to this kernel.
    config.reduction_loops.reset();
    return nullptr;
  }
}

// Stage 4: tile indices are computed in the index dtype (loop control is 64-bit): a
// constant loop bound beyond 32 bits (written, or a rolled reduction over ts::arange(n))
// would wrap them. (With the index dtype unset, the index_32 guards trace such a kernel
// with 64-bit indices.)
void check_index_bounds(const ir::Graph& traced, const ir::Graph& g) {
  if (traced.index_dtype != DType::i32 || !traced.index_dtype_forced) return;
  std::function<void(const ir::Block&)> scan = [&](const ir::Block& b) {
    for (const ir::Node* n : b) {
      if (n->op != ir::Op::Loop) continue;
      for (const ir::LoopDim& d : n->dims)
        for (const ir::Node* c : {d.begin, d.end})
          if (c->op == ir::Op::Const && (c->ival > INT32_MAX || c->ival < INT32_MIN))
            throw UserError(
                g.kernel_name, n->loc,
                fmt::format("the loop bound {} goes beyond 32-bit index arithmetic", c->ival),
                "set Settings::index_dtype = ts::i64");
      scan(n->body);
    }
  };
  scan(g.host);
}

// The hint for a contraction whose factors do not fit shared memory: a smaller block of its
// summed dim (`more` after it), or a tile loop over a whole summed dim.
std::string smaller_k_hint(const passes::Contraction& c, const char* more) {
  const ir::Sym* k = c.match.k;
  return k->kind == ir::Sym::tile
             ? fmt::format(
                   "use a smaller block size for the summed dim (the tile of the loop "
                   "at {}){}",
                   k->loop->loc.str(), more)
             : std::string("sum over a ts::tile of that dim instead of all of it");
}

// Stage 5: tile values are held in registers: a config that cannot fit is refused (a
// clear error instead of spilled code, an allocation failure or a compiler that runs for
// minutes).
// Refuses layout L of a value of loop `n` when it holds too many registers per thread.
void check_registers(const ir::Graph& g, const ir::Node* n, const Config& config,
                     const passes::Layout& L) {
  // Layout::regs() in 64 bits: L.groups wraps for tiles past 2^31 rounds of threads.
  int64_t regs = std::max<int64_t>(1, L.elems / (int64_t{L.threads} * L.vec)) * L.vec;
  if (regs <= kMaxRegistersPerTileValue) return;
  std::string why, hint;
  for (const passes::Contraction& c : L.unfit_contractions) {
    // A sum of products whose factors would have been staged in shared memory.
    why += fmt::format(
        "; the sum of products at {} is held as a product: staged for the CUDA "
        "cores its factors need {} KiB of shared memory (at most {} KiB){}",
        c.match.sum->loc.str(), (c.shared_bytes + 1023) / 1024, L.shared_limit / 1024,
        c.not_wgmma.empty() ? "" : ", and " + c.not_wgmma);
    hint = smaller_k_hint(c, " or for the factors' other dims") + "; ";
  }
  // Sums of products that are not contractions (an operand computed, or loaded outside the
  // sum's loop: passes/contractions.hpp) hold their whole product.
  std::set<const ir::Node*> planned;
  for (const passes::Contraction& c : L.contractions) planned.insert(c.match.sum);
  for (const passes::Contraction& c : L.unfit_contractions) planned.insert(c.match.sum);
  ir::walk(n->body, [&](const ir::Node* r) {
    if (r->op != ir::Op::Reduce || r->rfn() != ir::ReduceFn::sum || planned.count(r)) return;
    const ir::Node* p = r->args[0];
    if (p->op != ir::Op::Binary || p->bfn() != ir::BinaryFn::mul || p->shape.size() < 3) return;
    why += fmt::format(
        "; the sum of products at {} (a ts::dot, or a sum of a broadcast product) holds its "
        "whole {} product, because an operand is not a load of its own made in the sum's loop "
        "and seen only through casts to the product's dtype (f32, or i32 for i8) and views: "
        "a computed value, a cast to another dtype first, a gathered load, a load other "
        "values use too, or a load from before the loop; or another value of the loop spans "
        "the summed dim",
        r->loc.str(), ir::shape_str(p->shape));
    hint =
        "load both operands of the product in the loop where it is summed, once per dot and in "
        "their own dtype (e.g. ts::dot(q(tm, tk), k(tk, tn)) inside the loop over tk); ";
  });
  throw UserError(
      g.kernel_name, n->loc,
      fmt::format("config {}: a tile value of this loop nest spans {} elements, {} registers "
                  "per thread (at most {}){}",
                  config.to_json(), L.elems, regs, kMaxRegistersPerTileValue, why),
      hint +
          "use smaller block sizes, more warps (num_warps), or reduction_loops for long "
          "reductions");
}

// Refuses a contraction kept for tensor cores (8- and 16-bit factors whose f32 staging for
// the CUDA cores does not fit shared memory: passes/layout.cpp) that did not land on them.
void check_contraction_staging(const ir::Graph& g, const Config& config, const passes::Layout& L) {
  for (const passes::Contraction& c : L.contractions) {
    if (c.shared_bytes <= L.shared_limit) continue;
    throw UserError(
        g.kernel_name, c.match.sum->loc,
        fmt::format("config {}: the factors of this sum of products need {} KiB of shared "
                    "memory (at most {} KiB) where it is not on wgmma{}",
                    config.to_json(), (c.shared_bytes + 1023) / 1024, L.shared_limit / 1024,
                    c.not_wgmma.empty() ? "" : " (not on wgmma: " + c.not_wgmma + ")"),
        smaller_k_hint(c, ""));
  }
}

std::vector<LoopStages> layouts(const ir::Graph& g, const Config& config, int arch) {
  std::vector<LoopStages> out;
  for (const ir::Node* n : g.host) {
    if (n->op != ir::Op::Loop) continue;
    passes::Layout L = passes::compute_layout(n, config, &g, arch);
    check_registers(g, n, config, L);
    for (const passes::Contraction& c : L.contractions)
      for (const passes::Layout& F : c.factor_layout) check_registers(g, n, config, F);
    passes::KernelPlan plan = passes::plan_kernel(g, n, config, arch);
    passes::assign_access_layouts(g, n, config, plan, L);
    passes::plan_tensor_cores(g, plan, L);
    check_contraction_staging(g, config, L);
    out.push_back(LoopStages{n, std::move(plan), L, {}, {}, {}});
  }
  return out;
}

// Stages 6 and 7: the kernel IR and then the CUDA of each loop.
template <class F>
void per_loop(PipelineOptions::Emit how, std::vector<LoopStages>& loops, F&& make) {
  if (how == PipelineOptions::Emit::none) return;
  for (LoopStages& l : loops) {
    if (!l.failure.empty()) continue;
    try {
      make(l);
    } catch (const UserError& e) {
      if (how != PipelineOptions::Emit::all_reporting_failures) throw;
      l.failure = e.what();
    }
  }
}

}  // namespace

const std::vector<std::string>& stage_names() {
  static const std::vector<std::string> names{
      "traced",       "complete_config", "roll_reductions", "unit_tiles",
      "index_bounds", "layout",          "kernel_ir",       "emit"};
  return names;
}

CompiledStages compile_pipeline(const ir::Graph& traced, const Config& config,
                                const PipelineOptions& options) {
  CompiledStages s;
  s.traced = &traced;
  s.config = config;
  auto done = [&](int number) {
    if (!options.record_ir) return;
    std::string layouts;  // from the layout stage on
    for (const LoopStages& l : s.loops) {
      layouts += passes::describe(l.layout, l.loop) + passes::describe(l.plan);
      if (l.nir.loop) layouts += passes::describe(l.nir);
    }
    s.stage_ir.push_back(
        {number, stage_names().at(number - 1),
         fmt::format("// stage {}: {}\n// config: {}\n{}{}", number, stage_names().at(number - 1),
                     s.config.to_json(), layouts, ir::print(s.program()))});
  };
  try {
    done(1);
    s.config = passes::complete_config(traced, config, traced.kernel_name);
    done(2);
    s.lowered = roll(traced, config, s.config);
    done(3);
    if (auto squeezed = passes::squeeze_unit_tiles(s.program(), s.config))
      s.lowered = std::move(squeezed);
    done(4);
    check_index_bounds(traced, s.program());
    done(5);
    s.loops = layouts(s.program(), s.config, options.arch);
    done(6);
    const ir::Graph& g = s.program();
    per_loop(options.emit, s.loops,
             [&](LoopStages& l) { l.nir = passes::lower_nest(g, l.plan, l.layout); });
    done(7);
    per_loop(options.emit, s.loops,
             [&](LoopStages& l) { l.kernel = generate_cuda(g, l.plan, l.nir); });
    done(8);
  } catch (const UserError& e) {
    if (options.on_failure) options.on_failure(s, e.what());
    throw;
  }
  return s;
}

}  // namespace tessel::codegen
