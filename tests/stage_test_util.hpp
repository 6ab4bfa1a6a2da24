// Test-only helper for the stage tests on text (tests/layout_text_test.cpp,
// tests/kernel_ir_test.cpp): a kernel's compile pipeline with each stage's dump.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <tessel/tessel.hpp>

#include "codegen/compile_pipeline.hpp"
#include "tests/autotune_test_util.hpp"

namespace stage_test {

struct Staged {
  tessel::codegen::CompiledStages stages;
  std::string text;  // the dump of the stage asked for
};

/// The stages of kernel k (which must outlive them) on `args` under config c, with the
/// dump of stage `stage` (a name of codegen::stage_names()); `emit`: through code generation
/// (else the pipeline stops after the layout stage).
template <class K, class... A>
Staged staged(const std::string& stage, bool emit, const K& k, const tessel::Config& c,
              const A&... args) {
  namespace cg = tessel::codegen;
  const tessel::ir::Graph& g = autotune_test::graph_of(k, args...);
  cg::PipelineOptions options{.record_ir = true};
  if (!emit) options.emit = cg::PipelineOptions::Emit::none;
  Staged s{cg::compile_pipeline(g, c, options), ""};
  for (const cg::StageIr& ir : s.stages.stage_ir)
    if (ir.stage == stage) s.text = ir.ir;
  EXPECT_FALSE(s.text.empty()) << "no dump of stage " << stage;
  return s;
}

}  // namespace stage_test
