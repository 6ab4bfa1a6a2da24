// A number passed for a ts::Tensor parameter (or a Buffer for a number) does not compile,
// and the compiler says why: Kernel's message and the argument types.
// Compiled by tests/CMakeLists.txt as is (it must compile) and with
// TESSEL_EXPECT_COMPILE_ERROR (it must be refused).
#include <tessel/tessel.hpp>

namespace ts = tessel;

void call_scale(const ts::Buffer& x) {
  auto scale = ts::kernel("scale", [](ts::Tensor src, ts::Value a) {
    ts::Tensor out = ts::empty_like(src);
    for (auto t : ts::tile(src.size(0))) out(t) = src(t) * a;
    return out;
  });
#ifdef TESSEL_EXPECT_COMPILE_ERROR
  scale(2.0, x);
#else
  scale(x, 2.0);
#endif
}
