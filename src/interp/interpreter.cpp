#include "interp/interpreter.hpp"

namespace tessel::interp {
void run_loop(const ir::Graph& g, const ir::Node* loop, rt::HostEnv& env, const Config& config) {
  throw InternalError("interpreter not implemented yet");
}
}  // namespace tessel::interp
