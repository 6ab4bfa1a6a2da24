// Test-only helper for the stage tests on text (tests/layout_text_test.cpp,
// tests/kernel_ir_test.cpp, tests/tensor_descriptor_test.cpp): a kernel's compile pipeline
// with each stage's dump, and the kernel IR's lines edited and read back.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <tessel/tessel.hpp>

#include "codegen/compile_pipeline.hpp"
#include "ir/parser.hpp"
#include "passes/kernel_ir.hpp"
#include "tests/autotune_test_util.hpp"

namespace stage_test {

struct Staged {
  tessel::codegen::CompiledStages stages;
  std::string text;  // the dump of the stage asked for
};

/// The stages of kernel k lowered for a GPU of compute capability `arch`
/// (PipelineOptions::arch); staged() below, for passes::kDefaultArch.
template <class K, class... A>
Staged staged_for(int arch, const std::string& stage, bool emit, const K& k,
                  const tessel::Config& c, const A&... args) {
  namespace cg = tessel::codegen;
  const tessel::ir::Graph& g = autotune_test::graph_of(k, args...);
  cg::PipelineOptions options{.arch = arch, .record_ir = true};
  if (!emit) options.emit = cg::PipelineOptions::Emit::none;
  Staged s{cg::compile_pipeline(g, c, options), ""};
  for (const cg::StageIr& ir : s.stages.stage_ir)
    if (ir.stage == stage) s.text = ir.ir;
  EXPECT_FALSE(s.text.empty()) << "no dump of stage " << stage;
  return s;
}

/// The stages of kernel k (which must outlive them) on `args` under config c, with the
/// dump of stage `stage` (a name of codegen::stage_names()); `emit`: through code generation
/// (else the pipeline stops after the layout stage).
template <class K, class... A>
Staged staged(const std::string& stage, bool emit, const K& k, const tessel::Config& c,
              const A&... args) {
  return staged_for(tessel::passes::kDefaultArch, stage, emit, k, c, args...);
}

// The kernel IR's line for node n (the line starting "//   %<id> " after "// kernel IR of
// loop"), or "".
inline std::string line_of(const std::string& text, const tessel::ir::Node* n) {
  const std::string head = fmt::format("//   %{} ", n->id);
  size_t at = text.find(head, text.find("// kernel IR of loop"));
  if (at == std::string::npos) return "";
  return text.substr(at, text.find('\n', at) - at);
}

inline const tessel::ir::Node* first(const tessel::codegen::LoopStages& l, tessel::ir::Op op) {
  const tessel::ir::Node* found = nullptr;
  tessel::ir::walk(l.loop->body, [&](const tessel::ir::Node* n) {
    if (!found && n->op == op) found = n;
  });
  return found;
}

// The stage text with `from` replaced by `to` in node n's line.
inline std::string edited(const std::string& text, const tessel::ir::Node* n,
                          const std::string& from, const std::string& to) {
  std::string out = text;
  const std::string line = line_of(text, n);
  std::string now = line;
  size_t at = now.find(from);
  EXPECT_NE(at, std::string::npos) << line;
  if (at == std::string::npos) return out;
  now.replace(at, from.size(), to);
  out.replace(out.find(line), line.size(), now);
  return out;
}

inline std::string parse_error(const std::string& text, const tessel::ir::Graph& g,
                               tessel::passes::NestIr nir) {
  try {
    tessel::passes::parse_kernel_ir(text, g, nir);
  } catch (const tessel::ir::ParseError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ParseError for " << text;
  return "";
}

/// The CUDA of loop 0 of `s` with its kernel IR read back from `text`.
inline std::string cuda_of(const Staged& s, const std::string& text) {
  const tessel::codegen::LoopStages& l = s.stages.loops.at(0);
  tessel::passes::NestIr nir = l.nir;
  tessel::passes::parse_kernel_ir(text, s.stages.program(), nir);
  return tessel::codegen::generate_cuda(s.stages.program(), l.plan, nir).source;
}

}  // namespace stage_test
