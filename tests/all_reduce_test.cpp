// The one-shot all-reduce example (examples/kernels/all_reduce.hpp) on the interpreter:
// every rank in one launch (the interpreter's form), R = 2 and 4, f32 and bf16, ragged
// sizes, exact against a plain sum of the ranks' values; the pads are zero after every
// call; a rank left out makes the barrier an error, not a hang; NVRTC compile for sm_90.
#include "examples/kernels/all_reduce.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <tessel/tessel.hpp>
#include <vector>

#include "nvrtc_test_util.hpp"
#include "user_error_util.hpp"

namespace ts = tessel;

namespace {

/// Rank r's value at i: a small integer, so that sums are exact in bf16 and f32 alike.
double value(int r, int64_t i) { return static_cast<double>((i * 7 + r * 3) % 19) - 9.0; }

/// R CPU ranks of n elements holding value(r, i), with pads for `block`-element tiles.
ts::SymmetricBuffer ranks_of(int64_t n, int ranks, ts::DType t, int64_t block) {
  ts::SymmetricBuffer sb = ts::SymmetricBuffer::on_device(
      {n}, t, ranks, ts::cpu(), examples::all_reduce_pad_elements(n, ranks, block));
  for (int r = 0; r < ranks; ++r) {
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = value(r, i);
    sb.buffer(r).copy_from(ts::Buffer::from_vector(v, {n}, t));
  }
  return sb;
}

/// The plain sum over ranks, once per rank in `ranks`: [K, n] row-major.
std::vector<double> reference(int64_t n, int world, int rows) {
  std::vector<double> want;
  for (int k = 0; k < rows; ++k)
    for (int64_t i = 0; i < n; ++i) {
      double s = 0;
      for (int r = 0; r < world; ++r) s += value(r, i);
      want.push_back(s);
    }
  return want;
}

/// The line of examples/kernels/all_reduce.hpp holding `text` (its first), 0 when none.
int header_line(const std::string& text) {
  return user_error_test::line_in_file(TESSEL_SOURCE_DIR "/examples/kernels/all_reduce.hpp", text);
}

ts::Buffer all_ranks(int world) {
  std::vector<double> r(static_cast<size_t>(world));
  for (int k = 0; k < world; ++k) r[static_cast<size_t>(k)] = k;
  return ts::Buffer::from_vector(r, {world}, ts::i64);
}

}  // namespace

TEST(AllReduce, EveryRankGetsThePlainSumOfEveryRanksBuffer) {
  const int64_t block = 16;
  auto k = examples::make_one_shot_all_reduce(block);
  for (int world : {2, 4})
    for (ts::DType t : {ts::f32, ts::bf16})
      for (int64_t n : {1, 15, 16, 17, 70}) {
        ts::SymmetricBuffer sb = ranks_of(n, world, t, block);
        ts::Buffer out = ts::Buffer::zeros({world, n}, t);
        for (int call = 0; call < 2; ++call) {  // the pads are reusable: zero after a call
          k(sb.dev_ptrs(0), sb.buffer(0), sb.signal_pad_ptrs(0), sb.signal_pad(0), all_ranks(world),
            out);
          EXPECT_EQ(out.to_vector(), reference(n, world, world))
              << world << " ranks, " << dtype_name(t) << ", n = " << n << ", call " << call;
          for (int r = 0; r < world; ++r) {
            std::vector<double> pad = sb.signal_pad(r).to_vector();
            EXPECT_EQ(pad, std::vector<double>(pad.size(), 0)) << "pad of rank " << r;
          }
        }
      }
}

TEST(AllReduce, ARankThatNeverJoinsMakesTheBarrierAnErrorNotAHang) {
  const int64_t block = 16;
  auto k = examples::make_one_shot_all_reduce(block);
  // One tile, so the one wait that reports is rank 0's at tile 0.
  ts::SymmetricBuffer sb = ranks_of(block, 2, ts::f32, block);
  ts::Buffer only0 = ts::Buffer::from_vector({0}, {1}, ts::i64);
  ts::Buffer out = ts::Buffer::zeros({1, block}, ts::f32);
  std::string msg = user_error_test::user_error([&] {
    k(sb.dev_ptrs(0), sb.buffer(0), sb.signal_pad_ptrs(0), sb.signal_pad(0), only0, out);
  });
  user_error_test::expect_message(
      msg, "one_shot_all_reduce", "all_reduce.hpp", header_line("ts::wait(mine"),
      "ts::wait on the multicast tensor of line", "signal that element from another program");
  // Rank 0's first barrier waits for rank 1's signal in slot [tile 0, rank 1].
  user_error_test::expect_message(msg, "one_shot_all_reduce", "all_reduce.hpp", 0,
                                  "element (1) of the buffer at dev_ptrs element 0 (row-major) "
                                  "waits for the value 1 but it holds 0",
                                  "signal that element from another program");
}

TEST(AllReduceCompile, TheRankKernelCompilesForSm90) {
  REQUIRE_NVRTC();
  const int64_t block = 1024;
  for (ts::DType t : {ts::f32, ts::bf16}) {
    ts::SymmetricBuffer sb = ranks_of(5000, 4, t, block);
    ts::Buffer out = ts::Buffer::zeros({1, 5000}, t);
    std::string src = nvrtc_test::compile(
        examples::make_one_shot_all_reduce(block, examples::all_reduce_settings(132, 4)),
        sb.dev_ptrs(0), sb.buffer(0), sb.signal_pad_ptrs(0), sb.signal_pad(0),
        ts::Buffer::from_vector({1}, {1}, ts::i64), out);
    EXPECT_NE(src.find("ts::wait_for<true, ts::release, ts::sys"), std::string::npos) << src;
    EXPECT_NE(src.find("ts::wait_for<true, ts::acquire, ts::sys"), std::string::npos) << src;
    EXPECT_EQ(src.find("multimem"), std::string::npos) << src;
  }
}
