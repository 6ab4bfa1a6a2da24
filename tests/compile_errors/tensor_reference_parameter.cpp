// A kernel lambda taking a ts::Tensor by non-const reference does not compile, and the
// compiler says why in tessel's one message (by value or const reference). Compiled by
// tests/CMakeLists.txt as is (it must compile) and with TESSEL_EXPECT_COMPILE_ERROR (it must be
// refused).
#include <tessel/tessel.hpp>

namespace ts = tessel;

#ifdef TESSEL_EXPECT_COMPILE_ERROR
using TensorParam = ts::Tensor&;
#else
using TensorParam = const ts::Tensor&;
#endif

void define() {
  auto scale = ts::kernel("scale", [](TensorParam x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) * 2.0;
    return out;
  });
  (void)scale;
}
