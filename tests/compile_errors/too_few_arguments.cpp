// A call with fewer arguments than the kernel's lambda takes does not compile, and the
// compiler says why: Kernel's message and the two counts. Compiled by tests/CMakeLists.txt
// as is (it must compile) and with TESSEL_EXPECT_COMPILE_ERROR (it must be refused).
#include <tessel/tessel.hpp>

namespace ts = tessel;

void call_copy(const ts::Buffer& x, const ts::Buffer& y) {
  auto copy = ts::kernel("copy", [](ts::Tensor src, ts::Tensor dst) {
    for (auto t : ts::tile(src.size(0))) dst(t) = src(t);
  });
#ifdef TESSEL_EXPECT_COMPILE_ERROR
  copy(x);
#else
  copy(x, y);
#endif
}
