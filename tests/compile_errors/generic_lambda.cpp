// A generic kernel lambda (an `auto` parameter) does not compile, and the compiler says why in
// tessel's one message (explicit parameter types). Compiled by tests/CMakeLists.txt as is (it
// must compile) and with TESSEL_EXPECT_COMPILE_ERROR (it must be refused).
#include <tessel/tessel.hpp>

namespace ts = tessel;

#ifdef TESSEL_EXPECT_COMPILE_ERROR
#define TENSOR_PARAM auto
#else
#define TENSOR_PARAM ts::Tensor
#endif

void define() {
  auto scale = ts::kernel("scale", [](TENSOR_PARAM x) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) * 2.0;
    return out;
  });
  (void)scale;
}
