#include "autotune/autotuner.hpp"

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "autotune/config_cache.hpp"
#include "autotune/gpu_backend.hpp"
#include "autotune/search.hpp"
#include "common/disk_cache.hpp"
#include "driver/cuda_api.hpp"

namespace tessel::autotune {

Budget budget_for(AutotuneEffort effort) {
  if (effort == AutotuneEffort::full) return Budget{400, 600};
  return Budget{40, 60};
}

Config apply_overrides(Config c, const Config& f) {
  if (f.block_sizes) c.block_sizes = f.block_sizes;
  if (f.num_warps) c.num_warps = f.num_warps;
  if (f.num_stages) c.num_stages = f.num_stages;
  if (f.maxnreg) c.maxnreg = f.maxnreg;
  if (f.pid_type) c.pid_type = f.pid_type;
  if (f.num_sm_multiplier) c.num_sm_multiplier = f.num_sm_multiplier;
  if (f.loop_orders) c.loop_orders = f.loop_orders;
  if (f.flatten_loops) c.flatten_loops = f.flatten_loops;
  if (f.l2_groupings) c.l2_groupings = f.l2_groupings;
  if (f.reduction_loops) c.reduction_loops = f.reduction_loops;
  if (f.indexing) c.indexing = f.indexing;
  if (f.load_eviction_policies) c.load_eviction_policies = f.load_eviction_policies;
  if (f.tunables) {
    if (!c.tunables) c.tunables.emplace();
    for (const auto& [name, v] : *f.tunables) (*c.tunables)[name] = v;
  }
  return c;
}

// TESSEL_AUTOTUNE_LOG=<file>: every trial as JSON, for people studying a search.
static void write_log(const std::string& kernel, const TuneResult& r) {
  const char* path = std::getenv("TESSEL_AUTOTUNE_LOG");
  if (!path || !*path) return;
  nlohmann::json trials = nlohmann::json::array();
  const char* status[] = {"ok", "failed", "rejected"};
  for (const Trial& t : r.trials)
    trials.push_back(
        {{"config", nlohmann::json::parse(t.config.to_json())},
         {"status", status[t.result.status]},
         {"time_us",
          t.result.status == Measurement::ok ? nlohmann::json(t.result.time_us) : nlohmann::json()},
         {"reason", t.result.reason}});
  nlohmann::json j{
      {"kernel", kernel}, {"seconds", r.seconds}, {"note", r.note}, {"trials", trials}};
  if (r.best) j["best"] = nlohmann::json::parse(r.best->to_json());
  std::ofstream(path, std::ios::app) << j.dump() << "\n";
}

static std::atomic<int64_t> g_tunes{0};

int64_t tune_count() { return g_tunes.load(); }

TuneResult tune(const ConfigSpace& space, Backend& backend, const TuneOptions& options,
                Progress* progress) {
  ++g_tunes;
  Budget budget = options.budget.value_or(budget_for(options.effort));
  Trials trials(space, backend, budget, progress);
  if (progress) progress->update(0, 0, 0, std::numeric_limits<double>::infinity(), /*force=*/true);
  TuneResult r;
  try {
    switch (options.search) {
      case SearchKind::pattern: {
        PatternSearchOptions o;
        if (options.effort == AutotuneEffort::full) {
          o.frontier = 3;
          o.wide_seeds = true;
          o.two_knob_moves = true;
        }
        pattern_search(trials, o);
        break;
      }
      case SearchKind::random:
        random_search(trials, options.seed);
        break;
      case SearchKind::list:
        list_search(trials, options.list);
        break;
    }
  } catch (const Error& e) {
    r.note = std::string("tuning stopped: ") + e.what();
  }
  r.trials = trials.all();
  r.failed = trials.failed();
  r.rejected = trials.rejected();
  if (trials.best()) {
    r.best = r.trials[*trials.best()].config;
    r.best_us = r.trials[*trials.best()].result.time_us;
  }
  r.seconds = progress ? progress->elapsed() : 0;
  write_log(space.kernel(), r);
  if (progress)
    progress->finish(r.best ? &*r.best : nullptr, r.best_us, static_cast<int>(r.trials.size()),
                     r.failed, r.rejected, r.note);
  return r;
}

TuneResult tune_for_call(const CallToTune& call, const TuneOptions& options) {
  const Config forced = call.settings.autotune_config_overrides.value_or(Config{});
  bool cached = options.use_cache && !cache_disabled();
  int device = 0;
  for (const detail::CallArg& a : call.args)
    if (const Buffer* b = detail::buffer_arg(a)) {
      device = b->device().index;
      break;
    }
  ConfigKeyParts parts;
  if (cached) {
    std::string gpu = options.backend ? "custom backend" : gpu_description(device);
    parts = config_key_parts(*call.graph, call.spec_key, call.settings, gpu);
    if (std::optional<TunedRecord> hit = load_tuned(parts)) {
      TuneResult r;
      r.best = hit->config;
      r.best_us = hit->time_us;
      r.from_cache = true;
      return r;
    }
  }
  // Configs as lowered for the GPU (loads get indexing knobs where it has the TMA).
  std::optional<int> arch;
  if (!options.backend && rt::cuda_available()) arch = rt::target_arch();
  ConfigSpace space(*call.graph, forced, call.kernel, arch);  // UserError for invalid overrides
  TuneOptions opts = options;
  for (Config& c : opts.list) c = apply_overrides(c, forced);
  Progress progress(call.kernel);
  TuneResult r;
  try {
    GpuBackendOptions g;
    g.graph_for = call.graph_for;
    g.reference = options.reference;
    if (options.effort == AutotuneEffort::full) {
      g.target_ms = 150;
      g.max_reps = 200;
    }
    Config reference = space.config(space.default_point());
    std::unique_ptr<Backend> backend =
        options.backend ? options.backend(call, reference)
                        : std::make_unique<GpuBackend>(*call.graph, call.args, call.settings,
                                                       reference, call.kernel, g);
    r = tune(space, *backend, opts, &progress);
  } catch (const UserError&) {
    throw;
  } catch (const Error& e) {
    r.note = std::string("tuning impossible: ") + e.what();
    progress.finish(nullptr, 0, 0, 0, 0, r.note);
  }
  if (r.best && cached)
    store_tuned(parts,
                TunedRecord{*r.best, r.best_us, static_cast<int>(r.trials.size()), call.kernel});
  return r;
}

}  // namespace tessel::autotune
