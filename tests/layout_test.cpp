// The register layout of a loop nest (src/passes/layout.hpp): slots of tile dimensions.
#include "passes/layout.hpp"

#include <gtest/gtest.h>

#include <tessel/tessel.hpp>

#include "nvrtc_test_util.hpp"
#include "runtime/kernel_tuning.hpp"

namespace ts = tessel;

TEST(Layout, DimsThatNeverMeetShareASlotOfTheirSize) {
  // c(ts::all) and x(tm, ts::all) have all-dims of different tensors that never meet in
  // one value: they share a slot (1024 lanes), and the row tile gets its own. Both used
  // to be laid out apart (1024 * 1024 lanes), so even the default config was refused.
  auto k =
      ts::kernel("unrelated_rows", [](ts::Tensor c, ts::Tensor x, ts::Tensor out, ts::Tensor sum) {
        for (auto tm : ts::tile(out.size(0))) {
          out(tm, ts::all) = x(tm, ts::all);
          sum(tm) = ts::sum(c(ts::all), 0) + 0 * tm.index();
        }
      });
  ts::Buffer c = ts::Buffer::ones({513}, ts::f32),
             x = ts::Buffer::arange(2 * 513, ts::f32).view_as_strided({2, 513}, {513, 1}, 0);
  ts::Buffer out = ts::Buffer::zeros({2, 513}, ts::f32), sum = ts::Buffer::zeros({2}, ts::f32);
  const ts::ir::Graph& g = ts::rt::traced_graph(k.impl(), ts::detail::call_args(c, x, out, sum));
  ts::Config cfg = ts::rt::specialization_config(k.impl(), ts::detail::call_args(c, x, out, sum));
  for (const ts::ir::Node* n : g.host)
    if (n->op == ts::ir::Op::Loop)
      EXPECT_EQ(ts::passes::compute_layout(n, cfg).elems, 1024 * cfg.block_sizes->at(0));
  k(c, x, out, sum);
  EXPECT_EQ(out.to_vector(), x.to_vector());
  EXPECT_EQ(sum.to_vector(), (std::vector<double>{513, 513}));
  REQUIRE_NVRTC();
  nvrtc_test::compile(k, c, x, out, sum);
}
