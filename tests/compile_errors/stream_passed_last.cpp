// A call that passes its stream last, of a kernel that returns a Buffer, does not compile,
// and the compiler says why in tessel's message alone (the stream goes first), which the
// caller's use of the result does not follow with errors of its own (tests/CMakeLists.txt
// refuses "conversion from 'void'"). Compiled by
// tests/CMakeLists.txt as is (it must compile) and with TESSEL_EXPECT_COMPILE_ERROR (it
// must be refused).
#include <tessel/tessel.hpp>

namespace ts = tessel;

ts::Buffer call_scale(const ts::Buffer& x, ts::Stream stream) {
  auto scale = ts::kernel("scale", [](ts::Tensor src, ts::Value alpha) {
    auto dst = ts::empty_like(src);
    for (auto t : ts::tile(src.size(0))) dst(t) = src(t) * alpha;
    return dst;
  });
#ifdef TESSEL_EXPECT_COMPILE_ERROR
  ts::Buffer out = scale(x, 2.0, stream);
#else
  ts::Buffer out = scale(stream, x, 2.0);
#endif
  return out;
}
