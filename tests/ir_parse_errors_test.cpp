// Text that is not an IR program: ir::parse throws ir::ParseError (a UserError) with the
// line and column, what it expected there, and the line with a caret.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <tessel/tessel.hpp>

#include "ir/parser.hpp"

namespace ts = tessel;
namespace ir = tessel::ir;

namespace {

// A copy kernel; lines are numbered from 1 ("kernel copy").
const char* const kCopy =
    "kernel copy\n"                                   // 1
    "  index_dtype i32\n"                             // 2
    "  block_size 0 hint 64\n"                        // 3
    "  sym t0 loop %4 dim 0 block 0\n"                // 4
    "  %0 = arg 0 : f32 tensor rank 1\n"              // 5
    "  %1 = size %0 dim 0 : i64\n"                    // 6
    "  %2 = alloc %1 like %0 : f32 tensor rank 1\n"   // 7
    "  %3 = const 0 : i64\n"                          // 8
    "  %4 = loop tile(%3..%1) as t0 block 0 {\n"      // 9
    "    %5 = load %0[tile %4 as t0] #0 : f32[t0]\n"  // 10
    "    %6: store %2[tile %4 as t0] = %5\n"          // 11
    "  }\n"                                           // 12
    "  %7: return %2\n";                              // 13

/// kCopy with line `line` (1-based) replaced by `text` ("" removes it).
std::string with_line(int line, const std::string& text) {
  std::string s = kCopy;
  size_t b = 0;
  for (int i = 1; i < line; ++i) b = s.find('\n', b) + 1;
  size_t e = s.find('\n', b) + 1;
  return s.substr(0, b) + (text.empty() ? "" : text + "\n") + s.substr(e);
}

struct Failure {
  int line = -1, column = -1;
  std::string message;
};

Failure parse_failure(const std::string& text) {
  try {
    ir::parse(text);
  } catch (const ir::ParseError& e) {
    return {e.line(), e.column(), e.what()};
  }
  return {};
}

void expect_failure(const std::string& text, int line, int column, const std::string& what) {
  Failure f = parse_failure(text);
  EXPECT_EQ(f.line, line) << f.message;
  EXPECT_EQ(f.column, column) << f.message;
  EXPECT_NE(f.message.find(fmt::format("IR text line {}, column {}: {}", line, column, what)),
            std::string::npos)
      << f.message;
}

TEST(IrParseErrors, TheCopyKernelParses) { EXPECT_EQ(ir::print(*ir::parse(kCopy)), kCopy); }

TEST(IrParseErrors, AnUnknownOpNamesWhatWasExpected) {
  expect_failure(with_line(10, "    %5 = lod %0[tile %4 as t0] #0 : f32[t0]"), 10, 10,
                 "expected an op name, found 'lod'");
}

TEST(IrParseErrors, TheMessageShowsTheLineWithACaret) {
  Failure f = parse_failure(with_line(10, "    %5 = lod %0[tile %4 as t0] #0 : f32[t0]"));
  EXPECT_NE(f.message.find("\n        %5 = lod %0[tile %4 as t0] #0 : f32[t0]\n" +
                           std::string(4 + 9, ' ') + "^"),
            std::string::npos)
      << f.message;
}

TEST(IrParseErrors, AParseErrorIsAUserError) {
  EXPECT_THROW(ir::parse("kernel k\n  %0 = nothing\n"), ts::UserError);
}

TEST(IrParseErrors, AMissingBracketIsReportedWhereItBelongs) {
  expect_failure(with_line(10, "    %5 = load %0[tile %4 as t0 #0 : f32[t0]"), 10, 32,
                 "expected ']', found '#0'");
}

TEST(IrParseErrors, AValueUsedBeforeItsDefinition) {
  expect_failure(with_line(11, "    %8: store %2[tile %4 as t0] = %6"), 11, 35,
                 "%6 is used before its definition");
}

TEST(IrParseErrors, AValueOfALoopBodyUsedAfterTheLoop) {
  expect_failure(with_line(13, "  %7: return %5"), 13, 14,
                 "%5 is used outside the block that defines it");
}

TEST(IrParseErrors, AWrongNumberOfIndices) {
  expect_failure(with_line(10, "    %5 = load %0[tile %4 as t0, %3] #0 : f32[t0]"), 10, 17,
                 "load of %0 (rank 1) has 2 indices");
}

TEST(IrParseErrors, ALoopLeftOpen) {
  expect_failure(with_line(12, ""), 9, 3,
                 "expected '}' closing this loop before the end of the text");
}

TEST(IrParseErrors, AClosingBraceWithoutALoop) {
  expect_failure(std::string(kCopy) + "  }\n", 14, 3, "'}' closes no loop");
}

TEST(IrParseErrors, AnUnknownDtype) {
  expect_failure(
      with_line(10, "    %5 = load %0[tile %4 as t0] #0 : f33[t0]"), 10, 38,
      "expected a dtype (bool, i8, i32, i64, u64, f16, bf16, f32, f64, f8e4m3, f8e5m2), found "
      "'f33'");
}

TEST(IrParseErrors, ASymThatIsNeverDeclared) {
  expect_failure(with_line(10, "    %5 = load %0[tile %4 as t0] #0 : f32[r7]"), 10, 42,
                 "r7 is used but never declared");
}

TEST(IrParseErrors, ASymUsedAsTwoKinds) {
  expect_failure(with_line(10, "    %5 = load %0[tile %4 as t0] #0 : f32[r0]"), 10, 42,
                 "r0 was used as t0 before");
}

TEST(IrParseErrors, ASourceFileThatIsNotDeclared) {
  expect_failure(with_line(10, "    %5 = load %0[tile %4 as t0] #0 : f32[t0]  @f1:3:4"), 10, 48,
                 "file f1 is not declared");
}

TEST(IrParseErrors, AConstantThatIsNotANumberOfItsDtype) {
  expect_failure(with_line(8, "  %3 = const zero : i64"), 8, 14,
                 "expected a constant of dtype i64, found 'zero'");
  expect_failure(with_line(8, "  %3 = const 0.5 : i64"), 8, 14,
                 "expected a constant of dtype i64, found '0.5'");
}

TEST(IrParseErrors, AValueWithoutItsType) {
  expect_failure(with_line(10, "    %5 = load %0[tile %4 as t0] #0"), 10, 35,
                 "expected ':' and a type, found end of line");
}

TEST(IrParseErrors, AValueDefinedTwice) {
  expect_failure(with_line(8, "  %1 = const 0 : i64"), 8, 3, "%1 is defined twice");
}

TEST(IrParseErrors, TextWithoutAKernelLine) {
  expect_failure("", 1, 1, "expected 'kernel NAME'");
  expect_failure("// only a comment\n", 1, 1, "expected 'kernel NAME'");
}

TEST(IrParseErrors, AStoreWithAResult) {
  expect_failure(with_line(11, "    %9 = store %2[tile %4 as t0] = %5"), 11, 5,
                 "'store' has no result (write `%N: store`)");
}

TEST(IrParseErrors, AnOpWithAResultWrittenWithoutOne) {
  expect_failure(with_line(8, "  const 0 : i64"), 8, 3, "expected '%N = ' before 'const'");
}

TEST(IrParseErrors, TextAfterTheEndOfAStatement) {
  expect_failure(with_line(11, "    %6: store %2[tile %4 as t0] = %5 extra"), 11, 38,
                 "expected the end of the line, found 'extra'");
}

TEST(IrParseErrors, ACarriedValueMissingFromItsLoopLine) {
  expect_failure(with_line(11, "    %6 = carried %4 : f32[t0]"), 11, 5,
                 "%6 = carried must be listed as `carry %6 = ...` on the line of the loop");
}

TEST(IrParseErrors, ALoopWithCarriedValuesWithoutAYield) {
  std::string text = with_line(9, "  %4 = loop tile(%3..%1) as t0 block 0 carry %8 = %3 {");
  text = text.substr(0, text.find("    %5")) + "    %8 = carried %4 : i64\n" +
         text.substr(text.find("    %5"));
  expect_failure(text, 9, 3,
                 "a loop with 1 carried values ends its body with a yield of as many values");
}

TEST(IrParseErrors, AMemoryOrderThatDoesNotExist) {
  std::string text =
      with_line(11, "    %6 = atomic add %2[tile %4 as t0], %5 seq_cst gpu : f32[t0]");
  expect_failure(text, 11, 43,
                 "expected a memory order (relaxed, acquire, release, acq_rel), found 'seq_cst'");
}

TEST(IrParseErrors, AFunctionThatDoesNotExist) {
  expect_failure(with_line(11, "    %6 = unary cube %5 : f32[t0]"), 11, 16,
                 "expected a unary function, found 'cube'");
}

TEST(IrParseErrors, ATileIndexOfAValueThatIsNotALoop) {
  expect_failure(with_line(10, "    %5 = load %0[tile %3 as t0] #0 : f32[t0]"), 10, 23,
                 "%3 is not a loop");
  expect_failure(with_line(11, "    %6 = tile_begin %4 dim 1 : i32"), 11, 28, "%4 has no dim 1");
}

TEST(IrParseErrors, ASymOfALoopDimThatDoesNotExist) {
  expect_failure(with_line(4, "  sym t0 loop %4 dim 2 block 0"), 4, 7, "t0: %4 has no loop dim 2");
}

TEST(IrParseErrors, OperandsAPassWouldIndexWithoutChecking) {
  expect_failure(with_line(10, "    %5 = load %3[] #0 : f32"), 10, 17,
                 "%3 is not a tensor (an arg, alloc or multicast_like)");
  expect_failure(with_line(10, "    %5 = load %0[] #0 : f32"), 10, 17,
                 "load of %0 (rank 1) has 0 indices");
  expect_failure(with_line(6, "  %1 = size %0 dim 1 : i64"), 6, 8,
                 "dim 1 is out of range (0 to 0)");
  expect_failure(with_line(11, "    %6 = reduce sum %5 dim 1 : f32"), 11, 10,
                 "reduction axis 1 is out of range (0 to 0)");
  expect_failure(with_line(11, "    %6 = where %5, %5 : f32[t0]"), 11, 10,
                 "'where' takes 3 operands, found 2");
  expect_failure(with_line(11, "    %6 = atomic cas %2[tile %4 as t0], %5 relaxed gpu : f32[t0]"),
                 11, 10, "atomic cas takes 2 operand(s) after the indices");
  expect_failure(with_line(10, "    %5 = load %0[tile %4] #0 : f32[t0]"), 10, 25,
                 "expected 'as' and the index's sym, found ']'");
  expect_failure(with_line(9, "  %4 = loop tile(%3..%1) {"), 9, 26,
                 "expected 'as' and the tile's sym, found '{'");
}

TEST(IrParseErrors, AnUnterminatedString) {
  expect_failure("kernel \"k\n", 1, 10, "expected '\"' closing the string");
}

// A row sum through a nested loop's carried accumulator.
const char* const kCarried =
    "kernel acc\n"
    "  index_dtype i32\n"
    "  block_size 0 hint 8\n"
    "  block_size 1 hint 64\n"
    "  file f0 \"acc.cpp\"\n"
    "  sym t0 loop %5 dim 0 block 0\n"
    "  sym t1 loop %9 dim 0 block 1\n"
    "  sym r2 extent %2 pow2 64 trace 64  // x.size(1)\n"
    "  %0 = arg 0 : f32 tensor rank 2  // x\n"
    "  %1 = size %0 dim 0 : i64\n"
    "  %2 = size %0 dim 1 : i64\n"
    "  %3 = alloc %1 : f32 tensor rank 1  @f0:3:4\n"
    "  %4 = const 0 : i64\n"
    "  %5 = loop tile(%4..%1) as t0 block 0 {\n"
    "    %6 = const 0 : f32\n"
    "    %7 = full %6 : f32[t0]\n"
    "    %9 = loop tile(%4..%2) as t1 block 1 carry %8 = %7 {\n"
    "      %8 = carried %9 : f32[t0]  // acc\n"
    "      %10 = load %0[tile %5 as t0, tile %9 as t1] #0 : f32[t0, t1]\n"
    "      %11 = reduce sum %10 dim 1 : f32[t0]\n"
    "      %12 = binary add %8, %11 : f32[t0]\n"
    "      %15: yield %12\n"
    "    }\n"
    "    %13 = loop_result %9 carry 0 : f32[t0]\n"
    "    %14 = atomic add %3[tile %5 as t0], %13 relaxed gpu : f32[t0]\n"
    "  }\n"
    "  %16: return %3\n";

TEST(IrParseErrors, MangledTextIsAParseErrorNeverACrash) {
  for (const char* text : {kCopy, kCarried}) {
    EXPECT_EQ(ir::print(*ir::parse(text)), text);
    std::string t = text;
    int errors = 0;
    for (size_t i = 0; i < t.size(); ++i)
      for (int how = 0; how < 3; ++how) {
        std::string m = t;
        if (how == 0) m.erase(i, 1);                    // a character left out
        if (how == 1) m.erase(i, m.find('\n', i) - i);  // the rest of a line
        if (how == 2 && std::isdigit(static_cast<unsigned char>(m[i]))) m[i] = '7';  // an id
        try {
          ir::print(*ir::parse(m));
        } catch (const ir::ParseError&) {
          ++errors;
        } catch (const std::exception& e) {
          ADD_FAILURE() << "not a ParseError: " << e.what() << "\nfor:\n" << m;
        }
      }
    EXPECT_GT(errors, static_cast<int>(t.size()));  // most mangled texts are not programs
  }
}

}  // namespace

TEST(IrParseErrors, APermuteOfTheWrongNumberOfDims) {
  // kCopy's load is 1-D: [0] permutes it, [0, 1] names a dim it lacks, [] none.
  std::string ok =
      with_line(11, "    %8 = permute %5 dims [0] : f32[t0]\n    %6: store %2[tile %4 as t0] = %8");
  EXPECT_NO_THROW(ir::parse(ok));
  for (const char* dims : {"[0, 1]", "[1]"}) {
    Failure f =
        parse_failure(with_line(11, std::string("    %8 = permute %5 dims ") + dims +
                                        " : f32[t0]\n    %6: store %2[tile %4 as t0] = %8"));
    EXPECT_EQ(f.line, 11) << dims << ": " << f.message;
    EXPECT_NE(f.message.find("'permute' takes a permutation of its operand's dims"),
              std::string::npos)
        << f.message;
  }
}
