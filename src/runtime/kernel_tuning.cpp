// Tuning one traced specialization: the graphs the search needs (traced again for other
// tunables) around autotune::tune_for_call.
#include "runtime/kernel_tuning.hpp"

namespace tessel::rt {

autotune::TuneResult tune_specialization(TunableSpecialization& s, detail::CallArgs args,
                                         const autotune::TuneOptions& options, bool apply) {
  // Graphs traced for other tunables (by their assignment as JSON); they live until
  // tuning ends.
  std::map<std::string, std::unique_ptr<ir::Graph>> variants;
  auto tunables_of = [&](const Config& c) {
    Config only;
    only.tunables = s.traced;
    if (c.tunables)
      for (const auto& [name, v] : *c.tunables) (*only.tunables)[name] = v;
    return only;
  };
  auto traced_for = [&](const Config& c) -> ir::Graph& {
    Config only = tunables_of(c);
    if (*only.tunables == s.traced) return *s.graph;
    auto& slot = variants[only.to_json()];
    if (!slot) {
      auto g = std::make_unique<ir::Graph>();
      Settings st = s.settings;
      st.config = only;
      s.retrace(*g, st);
      slot = std::move(g);
    }
    return *slot;
  };
  // The graph a candidate's config is compiled from (codegen::compile_pipeline).
  autotune::GraphFor graph_for = [&](const Config& c) -> const ir::Graph& { return traced_for(c); };
  autotune::CallToTune call{s.kernel, s.graph, graph_for, args, s.settings, s.key};
  autotune::TuneResult r = autotune::tune_for_call(call, options);
  if (apply && r.best) {
    Config only = tunables_of(*r.best);
    if (*only.tunables != s.traced) {
      traced_for(*r.best);
      *s.graph = std::move(*variants.at(only.to_json()));
      s.traced = *only.tunables;
    }
  }
  return r;
}

}  // namespace tessel::rt
