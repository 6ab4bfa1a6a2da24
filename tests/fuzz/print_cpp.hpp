// The printer: a program as a self-contained C++ gtest source that builds the same
// kernel through the DSL, runs it on the CPU Buffers of the program's data, and expects
// the naive evaluator's outputs (a regression test once the bug is fixed).
#pragma once

#include <string>

#include "fuzz/program.hpp"

namespace fuzz {

std::string print_cpp(const Program& p);

}  // namespace fuzz
