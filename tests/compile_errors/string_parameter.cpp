// A kernel lambda with a parameter that is no ts::Tensor, ts::Value or C++ number (a
// std::string) does not compile, and the compiler says why in one message of ts::kernel's
// (not in the instantiations of the trace). Compiled by tests/CMakeLists.txt as is (it
// must compile) and with TESSEL_EXPECT_COMPILE_ERROR (it must be refused).
#include <string>
#include <tessel/tessel.hpp>

namespace ts = tessel;

#ifdef TESSEL_EXPECT_COMPILE_ERROR
using Label = std::string;
#else
using Label = int;
#endif

void define_add_one() {
  auto add_one = ts::kernel("add_one", [](ts::Tensor x, Label) {
    for (auto t : ts::tile(x.size(0))) x(t) = x(t) + 1;
  });
  (void)add_one;
}
