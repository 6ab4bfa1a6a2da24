// A failed NVRTC compile reports its errors, not the warnings generated code may give, and a
// hint where the user's config is the cause (driver/compile_log.hpp).
#include "driver/compile_log.hpp"

#include <gtest/gtest.h>

#include <tessel/tessel.hpp>

#include "driver/cuda_api.hpp"
#include "examples/kernels/matmul.hpp"

namespace ts = tessel;

namespace {

const char* const kLog =
    "k.cu(116): warning #177-D: variable \"tb12_0\" was declared but never referenced\n"
    "    const int tb12_0 = 0;\n"
    "              ^\n"
    "\n"
    "Remark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"\n"
    "\n"
    "tessel/mma.cuh(51): warning #128-D: loop is not reachable\n"
    "    for (;;) {}\n"
    "    ^\n"
    "\n"
    "k.cu(20): error: identifier \"undefined_thing\" is undefined\n"
    "    p[0] = undefined_thing;\n"
    "           ^\n"
    "\n"
    "ptxas fatal   : (C7602) Insufficient registers (24) to compile instruction at line 1025 in "
    "function k. Try to compile with register target of 28 or higher.\n"
    "ptxas fatal   : Ptx assembly aborted due to errors\n";

TEST(CompileLog, ErrorsAreKeptInOrderAndWarningsCounted) {
  const std::string out = ts::rt::compile_log_errors(kLog);
  EXPECT_NE(out.find("(2 warnings omitted)"), std::string::npos) << out;
  EXPECT_EQ(out.find("warning"), out.rfind("warnings omitted")) << out;  // only there
  EXPECT_EQ(out.find("#177"), std::string::npos) << out;
  EXPECT_EQ(out.find("#128"), std::string::npos) << out;
  // The front end's error with its source line and caret, then ptxas's two lines.
  const size_t error = out.find("k.cu(20): error: identifier \"undefined_thing\"");
  const size_t caret = out.find("           ^");
  const size_t fatal = out.find("ptxas fatal   : (C7602)");
  const size_t aborted = out.find("ptxas fatal   : Ptx assembly aborted");
  ASSERT_NE(error, std::string::npos) << out;
  EXPECT_LT(error, caret);
  EXPECT_LT(caret, fatal);
  EXPECT_LT(fatal, aborted);
  EXPECT_NE(aborted, std::string::npos) << out;
}

// The forms NVRTC 13 prints: a catastrophic error, an error at the end of the source, an
// internal error, after a warning; a CRLF log; ptxas's information is dropped uncounted.
TEST(CompileLog, EveryFormOfErrorIsKept) {
  const std::string warning =
      "k.cu(1): warning #177-D: variable \"x\" was declared but never referenced\n"
      "    int x;\n"
      "        ^\n"
      "\n";
  for (const std::string error :
       {"k.cu(2): catastrophic error: cannot open source file \"nonexistent.h\"\n"
        "  #include \"nonexistent.h\"\n",
        "At end of source: error: expected a \"}\"\n"
        "k.cu(1): note #3196-D: to match this \"{\"\n",
        "k.cu(4): internal error: assertion failed\n"}) {
    const std::string log =
        warning + error + "\n1 error detected in the compilation of \"k.cu\".\n";
    const std::string out = ts::rt::compile_log_errors(log);
    EXPECT_NE(out.find(error), std::string::npos) << out;
    EXPECT_NE(out.find("1 error detected"), std::string::npos) << out;
    EXPECT_NE(out.find("(1 warning omitted)"), std::string::npos) << out;
    EXPECT_EQ(out.find("#177"), std::string::npos) << out;
  }
  const std::string crlf = ts::rt::compile_log_errors(
      "k.cu(1): warning #177-D: unused\r\n    int x;\r\nk.cu(2): error: bad\r\n"
      "ptxas info    : 0 bytes gmem\r\n");
  EXPECT_EQ(crlf, "k.cu(2): error: bad\n(1 warning omitted)\n");
}

TEST(CompileLog, ALogWithoutErrorsIsKeptWhole) {
  const std::string warnings = "k.cu(3): warning #177-D: variable \"x\" was declared\n  int x;\n";
  EXPECT_EQ(ts::rt::compile_log_errors(warnings), warnings);
  EXPECT_EQ(ts::rt::compile_log_errors(""), "");
}

TEST(CompileLog, TooFewRegistersHintsAtMaxnreg) {
  const std::string hint = ts::rt::compile_log_hint(kLog);
  EXPECT_NE(hint.find("than the 24 it may use (Config::maxnreg"), std::string::npos) << hint;
  EXPECT_NE(hint.find("raise maxnreg to 28 or more, or leave it unset"), std::string::npos) << hint;
  EXPECT_EQ(ts::rt::compile_log_hint("k.cu(20): error: identifier \"x\" is undefined\n"), "");
}

// A dot at maxnreg 24, under what mma.sync needs: the UserError names the kernel, says
// ptxas's reason first and hints at maxnreg, without the generated code's warnings.
TEST(CompileLog, AMaxnregTooLowForADotIsAUserErrorWithAHint) {
  if (!ts::rt::nvrtc_available()) GTEST_SKIP() << "NVRTC not found";
  ts::Config c{.block_sizes = std::vector<int64_t>{64, 64, 64}, .num_warps = 4, .num_stages = 3};
  c.maxnreg = 24;
  auto k = examples::make_dot_matmul(ts::Settings{.config = c});
  ts::Buffer x = ts::Buffer::zeros({100, 200}, ts::bf16),
             y = ts::Buffer::zeros({200, 72}, ts::bf16);
  try {
    k.cuda(true, x, y);
    FAIL() << "expected a UserError";
  } catch (const ts::UserError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("kernel 'dot_matmul'"), std::string::npos) << msg;
    const size_t fatal = msg.find("ptxas fatal");
    ASSERT_NE(fatal, std::string::npos) << msg;
    EXPECT_EQ(msg.find("warning #"), std::string::npos) << msg;
    EXPECT_NE(msg.find("raise maxnreg to"), std::string::npos) << msg;
  }
}

}  // namespace
