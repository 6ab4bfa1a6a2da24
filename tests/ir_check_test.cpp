// The FileCheck-style helper of pass tests on IR text (tests/ir_check_util.hpp).
#include <gtest/gtest.h>

#include "tests/ir_check_util.hpp"

namespace {

TEST(IrCheck, MatchesChecksInOrder) {
  EXPECT_EQ(ir_check::check("a\nb\nc\n", "CHECK: a\nCHECK-NEXT: b\nCHECK-NOT: x\nCHECK: c"), "");
}

TEST(IrCheck, ReportsACheckNotFoundAndWhereMatchingStopped) {
  std::string msg = ir_check::check("a\nb\nc\n", "CHECK: b\nCHECK: a");
  EXPECT_NE(msg.find("CHECK: a (check line 2) not found from the marked line on"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("> 3: c"), std::string::npos) << msg;
}

TEST(IrCheck, ReportsACheckNextThatIsNotOnTheNextLine) {
  std::string msg = ir_check::check("a\nb\nc\n", "CHECK: a\nCHECK-NEXT: c");
  EXPECT_NE(msg.find("CHECK-NEXT: c (check line 2) is not on the next line"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("> 2: b"), std::string::npos) << msg;
}

TEST(IrCheck, ReportsACheckNotThatMatches) {
  std::string msg = ir_check::check("a\nb\nc\n", "CHECK: a\nCHECK-NOT: b\nCHECK: c");
  EXPECT_NE(msg.find("CHECK-NOT: b (check line 2) matched"), std::string::npos) << msg;
  EXPECT_NE(msg.find("> 2: b"), std::string::npos) << msg;
  EXPECT_NE(ir_check::check("a\nb\n", "CHECK: a\nCHECK-NOT: b"), "");  // up to the end
}

TEST(IrCheck, RefusesAnUnknownDirective) {
  EXPECT_NE(ir_check::check("a\n", "CHECK-SAME: a").find("unknown check directive"),
            std::string::npos);
  EXPECT_EQ(ir_check::check("a\n", "nothing to check"), "no CHECK lines");
}

}  // namespace
