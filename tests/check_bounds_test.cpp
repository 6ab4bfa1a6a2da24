// Bounds-checking mode (Settings::check_bounds, TESSEL_CHECK_BOUNDS=1): an index outside its
// tensor (a grid index, a gathered value, negative) raises a UserError naming the kernel,
// the access's line, the tensor, the dimension, the index and the size; without it the
// access is masked (reads 0, writes nothing). A scalar index the host computes (a
// constant, a scalar argument, a size) is checked on every call, with or without the mode
// (runtime/host_indices.hpp). Lanes past a tile's end are masked by design and never
// reported; lanes within a tile but past a tensor's end (a ts::tile bound larger than the
// tensor) are. The interpreter is checked
// here; the generated checks compile with NVRTC, and the device record decodes to the
// interpreter's message (tests/gpu/check_bounds_gpu_test.cpp compares the GPU's report).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <tessel/tessel.hpp>

#include "check_bounds_kernels.hpp"
#include "driver/bounds_report.hpp"
#include "nvrtc_test_util.hpp"
#include "runtime/kernel_tuning.hpp"
#include "user_error_util.hpp"

namespace ts = tessel;
using user_error_test::expect_message;
using user_error_test::user_error;

namespace {

using namespace check_bounds_kernels;

const char* kHint = "index within [0, size)";
const char* kEveryCall = "is checked on every call";

}  // namespace

// A constant index is computed on the host: checked on every call, checked mode or not.
TEST(CheckBounds, AConstantIndexOutOfRangeIsReportedOnEveryCall) {
  ts::Buffer x = grid_3x4();
  for (const ts::Settings& s : {ts::Settings{}, kChecked}) {
    EXPECT_EQ(make_column(s)(x, 3).to_vector(), (std::vector<double>{3, 7, 11}));
    std::string msg = user_error([&] { make_column(s)(x, 7); });
    expect_message(msg, "column", "check_bounds_kernels.hpp", column_line,
                   "a load's index 7 is out of range for dimension 1 of tensor argument 0 (size 4)",
                   kEveryCall);
    // A negative constant counts from the end (-1: the last column); past the start, the
    // message shows both numbers.
    EXPECT_EQ(make_column(s)(x, -1).to_vector(), (std::vector<double>{3, 7, 11}));
    msg = user_error([&] { make_column(s)(x, -5); });
    expect_message(
        msg, "column", "check_bounds_kernels.hpp", column_line,
        "a load's index -1 (the constant -5 counted from the end) is out of range for dimension 1",
        kEveryCall);
  }
}

TEST(CheckBounds, HostComputedAndNegativeIndicesAreReportedOnEveryCall) {
  ts::Buffer x = grid_3x4();
  for (const ts::Settings& s : {ts::Settings{}, kChecked}) {
    auto k = make_shifted_column(s);
    EXPECT_EQ(k(x, 0).to_vector(), (std::vector<double>{1, 5, 9}));
    expect_message(user_error([&] { k(x, 3); }), "shifted_column", "check_bounds_kernels.hpp",
                   shift_line,
                   "a load's index 4 is out of range for dimension 1 of tensor argument 0 (size 4)",
                   kEveryCall);
    // A negative index computed on the host is out of range (only constant indices count
    // from the end).
    expect_message(
        user_error([&] { k(x, -3); }), "shifted_column", "check_bounds_kernels.hpp", shift_line,
        "a load's index -2 is out of range for dimension 1 of tensor argument 0 (size 4)",
        kEveryCall);
  }
}

// A store through a constant index past the end, and an index into a kernel's own
// allocation (its size computed on the host), are refused likewise.
TEST(CheckBounds, HostIndicesOfStoresAndAllocationsAreChecked) {
  auto k = ts::kernel("last_column", [](ts::Tensor x, ts::Value c) {
    ts::Tensor out = x.new_zeros({x.size(0), 2});
    for (auto t : ts::tile(x.size(0))) out(t, c) = x(t, 0);
    return out;
  });
  ts::Buffer x = grid_3x4();
  EXPECT_EQ(k(x, 1).to_vector(), (std::vector<double>{0, 0, 0, 4, 0, 8}));
  std::string msg = user_error([&] { k(x, 2); });
  EXPECT_NE(msg.find("a store's index 2 is out of range for dimension 1 of the tensor allocated"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find(kEveryCall), std::string::npos) << msg;
}

TEST(CheckBounds, AGatheredIndexOutOfRangeIsReportedAndRaggedLanesAreNot) {
  ts::Buffer x = ts::Buffer::from_vector({10, 20, 30, 40}, {4}, ts::f32);
  // 5 indices: the tile's lanes past 5 load idx = 0 and index -1, masked.
  ts::Buffer idx = ts::Buffer::from_vector({4, 3, 2, 1, 1}, {5}, ts::i32);
  ts::Config blocks{.block_sizes = std::vector<int64_t>{8}};
  ts::Settings checked{.config = blocks, .check_bounds = true};
  EXPECT_EQ(make_gather(checked)(x, idx).to_vector(), (std::vector<double>{40, 30, 20, 10, 10}));
  ts::Buffer bad = ts::Buffer::from_vector({4, 3, 9, 1, 0}, {5}, ts::i32);
  std::string msg = user_error([&] { make_gather(checked)(x, bad); });
  expect_message(msg, "gather", "check_bounds_kernels.hpp", gather_line,
                 "a load's index 8 is out of range for dimension 0 of tensor argument 0 (size 4)",
                 kHint);
  EXPECT_EQ(make_gather({.config = blocks})(x, bad).to_vector(),
            (std::vector<double>{40, 30, 0, 10, 0}));
}

TEST(CheckBounds, AGatherAlongAnInnerDimensionNamesThatDimension) {
  ts::Buffer x = grid_3x4();
  EXPECT_EQ(make_pick(kChecked)(x, ts::Buffer::from_vector({3, 0, 2}, {3}, ts::i64)).to_vector(),
            (std::vector<double>{3, 4, 10}));
  expect_message(user_error([&] {
                   make_pick(kChecked)(x, ts::Buffer::from_vector({3, -1, 2}, {3}, ts::i64));
                 }),
                 "pick", "check_bounds_kernels.hpp", pick_line,
                 "a load's index -1 is out of range for dimension 1 of tensor argument 0 (size 4)",
                 kHint);
}

TEST(CheckBounds, AGridIndexBeyondATensorIsReported) {
  ts::Buffer x = ts::Buffer::from_vector({1, 2, 3}, {3}, ts::f32);
  EXPECT_EQ(make_grid(kChecked)(x, 3).to_vector(), (std::vector<double>{2, 3, 4}));
  expect_message(user_error([&] { make_grid(kChecked)(x, 4); }), "grid_copy",
                 "check_bounds_kernels.hpp", grid_line,
                 "a load's index 3 is out of range for dimension 0 of tensor argument 0 (size 3)",
                 kHint);
  EXPECT_EQ(make_grid()(x, 4).to_vector(), (std::vector<double>{2, 3, 4, 1}));
}

// A ts::tile bound that is a number, not x's size: the tile's lanes past x's end (but
// within the tile) are reported, as a grid index is; unchecked they read 0.
TEST(CheckBounds, ATileLanePastATensorsEndIsReported) {
  ts::Buffer x = ts::Buffer::from_vector({1, 2, 3}, {3}, ts::f32);
  EXPECT_EQ(make_tile_copy(kChecked)(x, 3).to_vector(), (std::vector<double>{2, 3, 4}));
  expect_message(user_error([&] { make_tile_copy(kChecked)(x, 4); }), "tile_copy",
                 "check_bounds_kernels.hpp", tile_line,
                 "a load's index 3 is out of range for dimension 0 of tensor argument 0 (size 3)",
                 kHint);
  EXPECT_EQ(make_tile_copy()(x, 4).to_vector(), (std::vector<double>{2, 3, 4, 1}));
  // A bound in device memory (read on the GPU) past the end of the tensor written.
  auto into = ts::kernel(
      "tile_into",
      [](ts::Tensor x, ts::Tensor n, ts::Tensor out) {
        for (auto t : ts::tile(n)) out(t) = x(t);
      },
      kChecked);
  ts::Buffer wide = ts::Buffer::zeros({8}, ts::f32), narrow = ts::Buffer::zeros({2}, ts::f32);
  into(x, ts::Buffer::from_vector({2}, {1}, ts::i32), narrow);
  EXPECT_EQ(narrow.to_vector(), (std::vector<double>{1, 2}));
  EXPECT_NE(user_error([&] { into(wide, ts::Buffer::from_vector({3}, {1}, ts::i32), narrow); })
                .find("a store's index 2 is out of range for dimension 0 of tensor argument 2 "
                      "(size 2)"),
            std::string::npos);
  // Tiles wholly past every stored tensor (sizes the blocks divide) are not skipped when
  // checked: the first of them reports.
  ts::Buffer x1k = ts::Buffer::zeros({1024}, ts::f32), out1k = ts::Buffer::zeros({1024}, ts::f32);
  EXPECT_NE(user_error([&] { into(x1k, ts::Buffer::from_vector({2048}, {1}, ts::i32), out1k); })
                .find("a load's index 1024 is out of range for dimension 0 of tensor argument 0 "
                      "(size 1024)"),
            std::string::npos);
  // Lanes of a 2-D tile past a tensor's end along dim 1 only, the rows in range.
  auto rows = ts::kernel(
      "rows",
      [](ts::Tensor x, ts::Value n) {
        ts::Tensor out = x.new_zeros({x.size(0), n});
        for (auto [tm, tn] : ts::tile(x.size(0), n)) out(tm, tn) = x(tm, tn);
        return out;
      },
      kChecked);
  ts::Buffer m = ts::Buffer::zeros({2, 3}, ts::f32);
  EXPECT_EQ(rows(m, 3).to_vector(), std::vector<double>(6, 0.0));
  // Index 3 or 4, whichever program the interpreter meets first.
  EXPECT_NE(user_error([&] {
              rows(m, 5);
            }).find(" is out of range for dimension 1 of tensor argument 0 (size 3)"),
            std::string::npos);
}

TEST(CheckBounds, AStoreIndexOutOfRangeIsReported) {
  ts::Buffer x = ts::Buffer::from_vector({1, 2, 3}, {3}, ts::f32);
  ts::Buffer out = ts::Buffer::zeros({3}, ts::f32);
  ts::Buffer idx = ts::Buffer::from_vector({2, 0, 3}, {3}, ts::i64);
  expect_message(user_error([&] { make_scatter(kChecked)(x, idx, out); }), "scatter",
                 "check_bounds_test.cpp", scatter_line,
                 "a store's index 3 is out of range for dimension 0 of tensor argument 2 (size 3)",
                 kHint);
  make_scatter()(x, idx, out);  // unchecked: the write past the end is skipped
  EXPECT_EQ(out.to_vector(), (std::vector<double>{2, 0, 1}));
}

// TESSEL_CHECK_BOUNDS=1 turns the mode on for every kernel; it is part of the key, so
// the same kernel runs checked and unchecked as the variable changes.
TEST(CheckBounds, TheEnvironmentVariableTurnsTheModeOn) {
  ts::Buffer x = ts::Buffer::from_vector({1, 2, 3}, {3}, ts::f32);
  auto k = make_grid();
  EXPECT_EQ(k(x, 4).to_vector(), (std::vector<double>{2, 3, 4, 1}));
  setenv("TESSEL_CHECK_BOUNDS", "1", 1);
  std::string msg = user_error([&] { k(x, 4); });
  unsetenv("TESSEL_CHECK_BOUNDS");
  EXPECT_NE(msg.find("a load's index 3 is out of range for dimension 0"), std::string::npos) << msg;
  EXPECT_EQ(k(x, 4).to_vector(), (std::vector<double>{2, 3, 4, 1}));
}

// The generated checks compile (sm_90), report through the kernel's record parameter, and
// are absent without the mode.
TEST(CheckBounds, TheGeneratedChecksCompile) {
  REQUIRE_NVRTC();
  ts::Buffer x = ts::Buffer::from_vector({10, 20, 30, 40}, {4}, ts::f32);
  ts::Buffer idx = ts::Buffer::from_vector({1, 2}, {2}, ts::i32);
  std::string checked = nvrtc_test::compile(make_gather(kChecked), x, idx);
  EXPECT_NE(checked.find("long long* ts_check"), std::string::npos) << checked;
  EXPECT_EQ(nvrtc_test::count(checked, "ts::report_oob(ts_check, "), 1) << checked;
  std::string column = nvrtc_test::compile(make_column(kChecked), grid_3x4(), 2);
  EXPECT_EQ(nvrtc_test::count(column, "ts::report_oob(ts_check, "), 1) << column;
  ts::Buffer v3 = ts::Buffer::from_vector({1, 2, 3}, {3}, ts::f32);
  ts::Buffer i3 = ts::Buffer::from_vector({2, 0, 1}, {3}, ts::i64);
  std::string grid = nvrtc_test::compile(make_grid(kChecked), v3, int64_t{3});
  EXPECT_EQ(nvrtc_test::count(grid, "ts::report_oob(ts_check, "), 2)
      << grid;  // the load and the store
  for (const std::string& src :
       {nvrtc_test::compile(make_scatter(kChecked), v3, i3, ts::Buffer::zeros({3}, ts::f32)),
        nvrtc_test::compile(make_pick(kChecked), grid_3x4(), i3)})
    EXPECT_EQ(nvrtc_test::count(src, "ts::report_oob(ts_check, "), 1) << src;
  // A ts::tile bound of the user's own: x's load is checked, not the store into the
  // kernel's allocation of that extent.
  std::string tile = nvrtc_test::compile(make_tile_copy(kChecked), v3, int64_t{3});
  EXPECT_EQ(nvrtc_test::count(tile, "ts::report_oob(ts_check, "), 1) << tile;
  std::string plain = nvrtc_test::compile(make_gather(), x, idx);
  EXPECT_EQ(plain.find("report_oob"), std::string::npos) << plain;
  EXPECT_EQ(plain.find("ts_check"), std::string::npos) << plain;
}

// The device record {access node id + 1, dim, index, size} decodes to the interpreter's
// message for the same violation; an empty record raises nothing.
TEST(CheckBounds, TheDeviceRecordDecodesToTheInterpretersMessage) {
  ts::Buffer x = ts::Buffer::from_vector({1, 2, 3}, {3}, ts::f32);
  auto k = make_grid(kChecked);
  std::string interp = user_error([&] { k(x, 4); });
  const ts::ir::Graph& g = ts::rt::traced_graph(k.impl(), ts::detail::call_args(x, int64_t{4}));
  const ts::ir::Node* load = nullptr;
  for (const auto& n : g.nodes())
    if (n->op == ts::ir::Op::Load && !load) load = n.get();
  ASSERT_NE(load, nullptr);
  EXPECT_NO_THROW(ts::rt::raise_bounds_record(g, {0, 0, 0, 0}));
  std::string device = user_error([&] { ts::rt::raise_bounds_record(g, {load->id + 1, 0, 3, 3}); });
  EXPECT_EQ(device, interp);
  EXPECT_THROW(
      ts::rt::raise_bounds_record(g, {static_cast<int64_t>(g.nodes().size()) + 5, 0, 0, 0}),
      ts::InternalError);
}
