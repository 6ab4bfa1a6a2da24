// kernel.cuda (and kernel.ir, kernel.autotune) with arguments the kernel lambda does not take
// (a count without the number) does not compile, and the compiler says why in tessel's one
// message. Compiled by tests/CMakeLists.txt as is (it must compile) and with
// TESSEL_EXPECT_COMPILE_ERROR (it must be refused).
#include <tessel/tessel.hpp>

namespace ts = tessel;

std::vector<std::string> generated(const ts::Buffer& x) {
  auto add = ts::kernel("add", [](ts::Tensor src, ts::Value s) {
    ts::Tensor out = ts::empty_like(src);
    for (auto t : ts::tile(src.size(0))) out(t) = src(t) + s;
    return out;
  });
#ifdef TESSEL_EXPECT_COMPILE_ERROR
  return add.cuda(true, x);
#else
  return add.cuda(true, x, 1.0);
#endif
}
