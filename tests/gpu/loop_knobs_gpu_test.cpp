// Config::loop_orders, flatten_loops and l2_groupings on the GPU: every knob value gives
// exactly the interpreter's result (the knobs change which program or loop step computes
// an element, never its value). Inputs are small integers, so every sum is exact.
#include <gtest/gtest.h>

#include <string>
#include <tessel/testing.hpp>

#include "examples/kernels/basic.hpp"
#include "gpu_test_util.hpp"
#include "passes/loop_knobs.hpp"
#include "tests/loop_knobs_kernels.hpp"

namespace ts = tessel;
using namespace loop_knobs_test;

namespace {

using Orders = std::vector<std::vector<int>>;

/// A CPU Buffer of integers in [-9, 9] (exact in f32), different per `seed`.
ts::Buffer small_ints(std::vector<int64_t> shape, int seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<double>((i * 7 + seed * 5 + i / 13) % 19 - 9);
  return ts::Buffer::from_vector(v, std::move(shape), ts::f32);
}

ts::Buffer on_gpu(const ts::Buffer& b) { return b.to(ts::cuda(0)); }

ts::Config config(std::vector<int64_t> blocks, ts::PidType pid, Orders orders,
                  std::vector<bool> flatten, int l2) {
  return ts::Config{.block_sizes = std::move(blocks),
                    .pid_type = pid,
                    .loop_orders = std::move(orders),
                    .flatten_loops = std::move(flatten),
                    .l2_groupings = std::vector<int>{l2}};
}

/// Runs the kernel `make(settings)` under `c` on the CPU arguments (the interpreter) and on
/// their GPU copies; expects the same values exactly.
template <class Make, class... A>
void expect_same_as_interpreter(const Make& make, const ts::Config& c, const A&... cpu_args) {
  auto k = make(ts::Settings{.config = c});
  ts::Buffer want = k(cpu_args...);
  ts::Buffer got = k(on_gpu(cpu_args)...);
  ASSERT_EQ(got.shape(), want.shape()) << c.to_json();
  EXPECT_EQ(ts::count_mismatches(got.to(ts::cpu()), want, 0, 0), 0) << c.to_json();
}

const ts::PidType kFlat = ts::PidType::flat, kXyz = ts::PidType::xyz,
                  kBlocked = ts::PidType::persistent_blocked,
                  kInterleaved = ts::PidType::persistent_interleaved;
const std::vector<int> kIdentity2{0, 1}, kSwapped2{1, 0};

// Ragged 2-D grids of 5 x 5 and 38 x 5 tiles: groups of 2 and 8 tiles leave a partial last
// group; group 8 on 5 tiles is one partial group.
TEST(LoopKnobsGpu, Add2dEveryPidTypeLoopOrderGroupingAndFlattening) {
  TESSEL_REQUIRE_GPU();
  auto make = [](ts::Settings s) { return examples::make_add_2d(s); };
  for (auto [shape, blocks] :
       {std::pair{std::vector<int64_t>{77, 131}, std::vector<int64_t>{16, 32}},
        std::pair{std::vector<int64_t>{300, 70}, std::vector<int64_t>{8, 16}}}) {
    ts::Buffer x = small_ints(shape, 1), y = small_ints(shape, 2);
    // The interpreter's reference against the host: x + y.
    std::vector<double> xv = x.to_vector(), yv = y.to_vector(),
                        ov = examples::make_add_2d()(x, y).to_vector();
    for (size_t i = 0; i < xv.size(); ++i) ASSERT_EQ(ov[i], xv[i] + yv[i]);
    for (ts::PidType pid : {kFlat, kXyz, kBlocked, kInterleaved})
      for (const std::vector<int>& order : {kIdentity2, kSwapped2}) {
        for (int l2 : {1, 2, 8}) {
          if (pid == kXyz && l2 > 1) continue;  // rejected (needs one flat program id)
          expect_same_as_interpreter(make, config(blocks, pid, {order}, {false}, l2), x, y);
        }
        expect_same_as_interpreter(make, config(blocks, pid, {order}, {true}, 1), x, y);
      }
  }
}

// 5 x 3 x 3 tiles: grouping the two fastest dims of every order, the third decomposed after.
TEST(LoopKnobsGpu, Add3dEveryLoopOrderWithGroupingAndFlattening) {
  TESSEL_REQUIRE_GPU();
  auto make = [](ts::Settings s) { return make_add1_3d(s); };
  ts::Buffer x = small_ints({9, 10, 11}, 3);
  std::vector<double> xv = x.to_vector(), ov = make_add1_3d()(x).to_vector();
  for (size_t i = 0; i < xv.size(); ++i) ASSERT_EQ(ov[i], xv[i] + 1);
  std::vector<int64_t> blocks{2, 4, 4};
  for (int64_t rank = 0; rank < 6; ++rank) {
    std::vector<int> order = ts::passes::permutation_of_rank(3, rank);
    for (ts::PidType pid : {kFlat, kInterleaved})
      for (int l2 : {1, 4})
        expect_same_as_interpreter(make, config(blocks, pid, {order}, {false}, l2), x);
    expect_same_as_interpreter(make, config(blocks, kFlat, {order}, {true}, 1), x);
  }
}

// A persistent loop over device-resident bounds: tile counts and the flattened extent
// are computed on the GPU.
TEST(LoopKnobsGpu, DeviceBoundsPersistentLoopWithGroupingAndFlattening) {
  TESSEL_REQUIRE_GPU();
  auto make = [](ts::Settings s) { return make_add1_device_bounds(s); };
  ts::Buffer x = small_ints({100, 90}, 4);
  ts::Buffer mb = ts::Buffer::scalar(61, ts::i32), nb = ts::Buffer::scalar(77, ts::i32);
  std::vector<double> xv = x.to_vector(), ov = make_add1_device_bounds()(x, mb, nb).to_vector();
  for (int64_t i = 0; i < 100; ++i)
    for (int64_t j = 0; j < 90; ++j)
      ASSERT_EQ(ov[i * 90 + j], i < 61 && j < 77 ? xv[i * 90 + j] + 1 : 0.0);
  std::vector<int64_t> blocks{8, 16};
  for (ts::PidType pid : {kBlocked, kInterleaved})
    for (const std::vector<int>& order : {kIdentity2, kSwapped2}) {
      for (int l2 : {1, 2, 4})
        expect_same_as_interpreter(make, config(blocks, pid, {order}, {false}, l2), x, mb, nb);
      expect_same_as_interpreter(make, config(blocks, pid, {order}, {true}, 1), x, mb, nb);
    }
}

// A 2-D device loop inside a 2-D grid, elementwise: every order of both loops, each
// loop flattened or not.
TEST(LoopKnobsGpu, NestedElementwiseLoopOrdersAndFlattening) {
  TESSEL_REQUIRE_GPU();
  auto make = [](ts::Settings s) { return make_scale_4d(s); };
  ts::Buffer x = small_ints({3, 5, 37, 45}, 5);
  std::vector<double> xv = x.to_vector(), ov = make_scale_4d()(x).to_vector();
  for (size_t i = 0; i < xv.size(); ++i) ASSERT_EQ(ov[i], xv[i] * 2 + 1);
  std::vector<int64_t> blocks{2, 4, 8, 16};
  for (ts::PidType pid : {kFlat, kBlocked})
    for (const std::vector<int>& outer : {kIdentity2, kSwapped2})
      for (const std::vector<int>& inner : {kIdentity2, kSwapped2})
        for (bool flat_outer : {false, true})
          for (bool flat_inner : {false, true})
            for (int l2 : {1, 2}) {
              if (flat_outer && l2 > 1) continue;  // rejected (one flattened dim to order)
              expect_same_as_interpreter(
                  make, config(blocks, pid, {outer, inner}, {flat_outer, flat_inner}, l2), x);
            }
}

// A 2-D device loop reducing into a carried [ta, tb] accumulator: the inner loop's order
// changes the order of the exact integer sums only; the outer loop may be flattened.
TEST(LoopKnobsGpu, NestedReductionLoopOrdersGroupingAndOuterFlattening) {
  TESSEL_REQUIRE_GPU();
  auto make = [](ts::Settings s) { return make_block_sums(s); };
  ts::Buffer x = small_ints({6, 5, 37, 45}, 6);
  std::vector<double> xv = x.to_vector(), ov = make_block_sums()(x).to_vector();
  for (int64_t ab = 0; ab < 30; ++ab) {
    double s = 0;
    for (int64_t cd = 0; cd < 37 * 45; ++cd) s += xv[ab * 37 * 45 + cd];
    ASSERT_EQ(ov[ab], s);
  }
  std::vector<int64_t> blocks{2, 4, 8, 16};
  for (ts::PidType pid : {kFlat, kXyz, kInterleaved})
    for (const std::vector<int>& outer : {kIdentity2, kSwapped2})
      for (const std::vector<int>& inner : {kIdentity2, kSwapped2}) {
        expect_same_as_interpreter(make, config(blocks, pid, {outer, inner}, {true, false}, 1), x);
        for (int l2 : {1, 4}) {
          if (pid == kXyz && l2 > 1) continue;
          expect_same_as_interpreter(make, config(blocks, pid, {outer, inner}, {false, false}, l2),
                                     x);
        }
      }
}

}  // namespace
