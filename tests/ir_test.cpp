// The IR's printer and verifier, and the NVRTC failure report.
#include "ir/ir.hpp"

#include <gtest/gtest.h>

#include <tessel/tessel.hpp>

#include "driver/cuda_api.hpp"
#include "driver/gpu_program.hpp"

namespace ts = tessel;

namespace {

TEST(Ir, PrinterShowsLoopsLoadsAndStoresWithShapes) {
  auto k = ts::kernel("add_bias", [](ts::Tensor x, ts::Tensor b) {
    ts::Tensor out = ts::empty_like(x);
    for (auto [tm, tn] : ts::tile(x.size(0), x.size(1)))
      out(tm, tn) = x(tm, tn) + b(ts::newaxis, tn);
    return out;
  });
  std::string ir = k.ir(ts::Buffer::zeros({4, 8}, ts::f32), ts::Buffer::zeros({8}, ts::f32));
  EXPECT_NE(ir.find("kernel add_bias"), std::string::npos) << ir;
  EXPECT_NE(ir.find("loop tile(%"), std::string::npos) << ir;
  EXPECT_NE(ir.find("load %1[newaxis, tile %"), std::string::npos) << ir;
  EXPECT_NE(ir.find(": f32[1, t1]"), std::string::npos) << ir;
  EXPECT_NE(ir.find(": f32[t0, t1]"), std::string::npos) << ir;
  EXPECT_NE(ir.find("store %"), std::string::npos) << ir;
}

TEST(Ir, VerifierRejectsAnOperandUsedBeforeItsDefinition) {
  ts::ir::Graph g;
  g.kernel_name = "broken";
  ts::ir::Node* a = g.new_node(ts::ir::Op::Const, {});
  ts::ir::Node* b = g.new_node(ts::ir::Op::Unary, {});
  b->args = {a};
  g.host = {b, a};  // b reads a before a is defined
  EXPECT_THROW(ts::ir::verify(g), ts::InternalError);
  g.host = {a, b};
  EXPECT_NO_THROW(ts::ir::verify(g));
}

TEST(Ir, NvrtcFailureNamesTheGeneratedLineAndTheUserLine) {
  if (!ts::rt::nvrtc_available()) GTEST_SKIP() << "NVRTC not found";
  std::string src =
      "extern \"C\" __global__ void k(float* p) {\n"
      "  p[0] = undefined_thing;  // my_kernel.cpp:42\n"
      "}\n";
  try {
    ts::rt::compile_cuda(src, "k.cu", ts::rt::CompileOptions{});
    FAIL() << "expected a CompileError";
  } catch (const ts::rt::CompileError& e) {
    std::string msg = ts::rt::compile_error_message("my_kernel", e, src);
    EXPECT_NE(msg.find("kernel 'my_kernel'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("for the code at my_kernel.cpp:42"), std::string::npos) << msg;
    EXPECT_NE(msg.find("generated line 2:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("undefined_thing"), std::string::npos) << msg;
  }
}

}  // namespace
