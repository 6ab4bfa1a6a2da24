// A kernel lambda returning a number (not a ts::Tensor, a tuple of them or nothing) does not
// compile, and the compiler says why in tessel's one message. Compiled by tests/CMakeLists.txt
// as is (it must compile) and with TESSEL_EXPECT_COMPILE_ERROR (it must be refused).
#include <tessel/tessel.hpp>

namespace ts = tessel;

void define() {
  auto scale = ts::kernel("scale", [](ts::Tensor x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) * 2.0;
#ifdef TESSEL_EXPECT_COMPILE_ERROR
    return 5;
#else
    return out;
#endif
  });
  (void)scale;
}
