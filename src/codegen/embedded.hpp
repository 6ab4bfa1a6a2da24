// tessel's device header library (src/codegen/device/*.cuh), embedded at build time.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tessel {
/// Pairs of ("tessel/<file>.cuh", text), as #include'd by generated code.
const std::vector<std::pair<std::string, std::string>>& embedded_headers();
}  // namespace tessel
