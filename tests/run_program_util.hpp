// Test-only: a program (an ir::Graph, traced or parsed or rewritten by a pass) run on the
// interpreter without a kernel around it, so that a pass's input and output can be run
// side by side (tests/ir_pass_text_test.cpp, tests/unit_tiles_test.cpp).
#pragma once

#include <tessel/tessel.hpp>
#include <vector>

#include "driver/host_env.hpp"
#include "interp/host_program.hpp"
#include "ir/ir.hpp"
#include "passes/default_config.hpp"

namespace run_program {

/// Runs program `g` on the interpreter under `config` (completed) for tensor arguments
/// `args`; returns its outputs.
inline std::vector<tessel::Buffer> run(const tessel::ir::Graph& g, const tessel::Config& config,
                                       const std::vector<tessel::Buffer>& args) {
  tessel::rt::HostEnv env;
  env.graph = &g;
  env.device = tessel::cpu();
  for (const tessel::Buffer& b : args) {
    env.arg_buffers.push_back(&b);
    env.args.push_back({&b.shape(), &b.strides()});
  }
  const tessel::Config complete = tessel::passes::complete_config(g, config, g.kernel_name);
  return tessel::rt::run_host_program(g, complete, env, nullptr);
}

}  // namespace run_program
