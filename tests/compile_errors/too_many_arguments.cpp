// A call with more arguments than the kernel's lambda takes, on a stream, does not
// compile, and the compiler says why: Kernel's message and the two counts. Compiled by
// tests/CMakeLists.txt as is (it must compile) and with TESSEL_EXPECT_COMPILE_ERROR (it
// must be refused).
#include <tessel/tessel.hpp>

namespace ts = tessel;

void call_scale(const ts::Buffer& x, const ts::Buffer& out, ts::Stream stream) {
  auto scale = ts::kernel("scale", [](ts::Tensor src, ts::Value alpha, ts::Tensor dst) {
    for (auto t : ts::tile(src.size(0))) dst(t) = src(t) * alpha;
  });
#ifdef TESSEL_EXPECT_COMPILE_ERROR
  scale(stream, x, 2.0, out, 1.0);
#else
  scale(stream, x, 2.0, out);
#endif
}
