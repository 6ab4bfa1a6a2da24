// A multicast tensor is not a ts::Tensor: what takes a tensor (here the example of another
// multicast tensor) does not take one. Compiled by tests/CMakeLists.txt as is (it must compile) and
// with TESSEL_EXPECT_COMPILE_ERROR (it must be refused).
#include <tessel/tessel.hpp>

namespace ts = tessel;

void call_copy(const ts::Buffer& dev_ptrs, const ts::Buffer& like) {
  auto copy = ts::kernel("copy", [](ts::Tensor ptrs, ts::Tensor example) {
    ts::Tensor out = ts::empty_like(example);
    for (auto t : ts::tile(example.size(0))) {
      auto bufs = ts::multicast_like(example, ptrs(ts::all));
#ifdef TESSEL_EXPECT_COMPILE_ERROR
      auto wrong = ts::multicast_like(bufs, ptrs(ts::all));
      (void)wrong;
#endif
      out(t) = ts::sum(bufs(t), 0);
    }
    return out;
  });
  copy(dev_ptrs, like);
}
