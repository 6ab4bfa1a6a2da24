#include "autotune/candidate_compiler.hpp"

#include <memory>
#include <semaphore>

#include "codegen/embedded.hpp"
#include "driver/cubin_cache.hpp"
#include "driver/cuda_api.hpp"

namespace tessel::autotune {

namespace {

std::string first_lines(const std::string& s, size_t max_chars = 600) {
  return s.size() <= max_chars ? s : s.substr(0, max_chars) + " ...";
}

// Code generation for one config, on the calling thread.
BuiltCandidate generate(const Config& config, const GraphFor& graph_for) {
  BuiltCandidate c;
  try {
    c.stages = codegen::compile_pipeline(graph_for(config), config, {.arch = rt::target_arch()});
    c.graph = &c.stages.program();
    c.config = c.stages.config;
    for (codegen::LoopStages& l : c.stages.loops)
      c.kernels.emplace_back(l.loop, std::move(l.kernel));
  } catch (const Error& e) {
    c = BuiltCandidate{};
    c.failure = std::string("code generation failed: ") + first_lines(e.what());
  }
  return c;
}

}  // namespace

std::vector<std::future<BuiltCandidate>> build_candidates(const std::vector<Config>& configs,
                                                          const GraphFor& graph_for, int arch,
                                                          int threads) {
  auto slots = std::make_shared<std::counting_semaphore<>>(std::max(1, threads));
  std::vector<std::future<BuiltCandidate>> out;
  for (const Config& config : configs) {
    BuiltCandidate c = generate(config, graph_for);
    if (!c.failure.empty()) {
      std::promise<BuiltCandidate> ready;
      ready.set_value(std::move(c));
      out.push_back(ready.get_future());
      continue;
    }
    out.push_back(std::async(std::launch::async, [c = std::move(c), slots, arch]() mutable {
      slots->acquire();
      try {
        rt::CompileOptions opts;
        opts.arch = arch;
        opts.headers = embedded_headers();
        for (const auto& [loop, k] : c.kernels) {
          opts.extra = k.nvrtc_options;
          c.cubins.push_back(compile_cached(k.source, k.name + ".cu", opts));
        }
      } catch (const rt::CompileError& e) {
        c.failure = "NVRTC failed: " + first_lines(e.log);
      } catch (const std::exception& e) {
        c.failure = std::string("compilation failed: ") + first_lines(e.what());
      }
      slots->release();
      return std::move(c);
    }));
  }
  return out;
}

}  // namespace tessel::autotune
