// The dtype of index arithmetic in generated code (Settings::index_dtype unset): 64-bit
// when a tensor argument spans 2^31 elements of memory or more (a strided view can span
// far more than it holds) or an integer argument does not fit 32 bits, as Triton types
// such arguments; forcing i32 then is an error. Code generation only (no GPU needed).
#include <gtest/gtest.h>

#include <iterator>
#include <regex>
#include <string>
#include <tessel/tessel.hpp>

#include "examples/kernels/norms.hpp"
#include "interp/host_program.hpp"
#include "ir/clone.hpp"
#include "nvrtc_test_util.hpp"
#include "runtime/kernel_tuning.hpp"
#include "user_error_util.hpp"

namespace ts = tessel;
using user_error_test::user_error;

namespace {

using nvrtc_test::count_matches;

/// out[m, n] = x[m, n] over 2-D tiles.
auto make_copy_2d(ts::Settings s = {}) {
  return ts::kernel(
      "copy_2d",
      [](ts::Tensor x) {
        ts::Tensor out = ts::empty_like(x);
        for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) out(tm, tn) = x(tm, tn);
        return out;
      },
      s);
}

/// A [rows, 16] column slice of a [rows, 32768] bool tensor (rows = 65536: 2 GiB of host
/// memory, allocated but never touched). It spans (rows - 1) * 32768 + 16 elements:
/// 2^31 - 32752 for 65536 rows, 2^31 + 16 for 65537.
ts::Buffer wide_column_slice(int64_t rows) {
  return ts::Buffer::empty({rows, 32768}, ts::boolean).narrow(1, 0, 16);
}

TEST(IndexDtype, SpanOfViews) {
  EXPECT_EQ(ts::Buffer::empty({3, 5}, ts::f32).span(), 15);
  EXPECT_EQ(ts::Buffer::empty({3, 5}, ts::f32).transpose(0, 1).span(), 15);
  EXPECT_EQ(ts::Buffer::empty({3, 5}, ts::f32).narrow(1, 1, 2).span(), 2 * 5 + 2);
  EXPECT_EQ(ts::Buffer::empty({0, 5}, ts::f32).span(), 0);
}

TEST(IndexDtype, AStridedViewSpanningBeyond32BitsIndexesIn64Bits) {
  ts::Buffer fits = wide_column_slice(65536);    // spans 2^31 - 32752 elements
  ts::Buffer beyond = wide_column_slice(65537);  // spans 2^31 + 16: beyond int32
  ASSERT_LT(fits.span(), int64_t{1} << 31);
  ASSERT_GE(beyond.span(), int64_t{1} << 31);
  ASSERT_LT(beyond.numel(), int64_t{1} << 31);
  std::string small = make_copy_2d().cuda(false, fits).at(0);
  std::string large = make_copy_2d().cuda(false, beyond).at(0);
  EXPECT_NE(small.find("int arg0_stride0"), std::string::npos) << small;
  EXPECT_NE(large.find("long long arg0_stride0"), std::string::npos) << large;
  std::string msg = user_error([&] { make_copy_2d({.index_dtype = ts::i32}).cuda(false, beyond); });
  EXPECT_NE(
      msg.find(
          "tensor argument 0 spans 2147483664 elements of memory, beyond 32-bit index arithmetic"),
      std::string::npos)
      << msg;
  EXPECT_NE(msg.find("leave Settings::index_dtype unset or set it to ts::i64"), std::string::npos)
      << msg;
}

TEST(IndexDtype, AnIntegerArgumentBeyond32BitsIndexesIn64Bits) {
  // A host bound beyond int32 (clamped to the tensor by the accesses' masks).
  ts::Buffer x = ts::Buffer::ones({40, 8}, ts::f32);
  auto k = examples::make_padded_sum_host();
  std::string small = k.cuda(false, x, int64_t{30}).at(0);
  std::string large = k.cuda(false, x, int64_t{1} << 33).at(0);
  // Tile indices are computed in the index dtype: 32 bits would wrap past 2^31.
  EXPECT_NE(small.find("int arg0_stride0"), std::string::npos) << small;
  EXPECT_NE(large.find("long long arg0_stride0"), std::string::npos) << large;
  std::string msg = user_error([&] {
    examples::make_padded_sum_host({.index_dtype = ts::i32}).cuda(false, x, int64_t{1} << 33);
  });
  EXPECT_NE(msg.find("integer argument 1 is 8589934592, beyond 32-bit index arithmetic"),
            std::string::npos)
      << msg;
}

}  // namespace

// An i64 index value (a gather or a scalar index) is bounds-tested in 64 bits before it is
// narrowed to a 32-bit index dtype: 2^32 + i must read the masked 0, not element i.
// (GPU values: KernelsGpu.WideIndexValuesAreMaskedBeforeNarrowing.)
TEST(IndexDtype, WideIndexValuesAreTestedBeforeNarrowing) {
  auto k = ts::kernel("shift_gather", [](ts::Tensor x, ts::Value i) {
    ts::Tensor out = ts::empty_like(x);
    const int64_t far = int64_t{1} << 32;
    for (auto t : ts::tile(x.size(0))) out(t) = x(t.index().to(ts::i64) + far) + x(i + far);
    return out;
  });
  ts::Buffer x = ts::Buffer::from_vector({1, 2, 3, 4}, {4}, ts::f32);
  // i + 2^32 is computed on the host: the call refuses it (a narrowed index would be 1).
  EXPECT_NE(user_error_test::user_error([&] {
              k(x, 1);
            }).find("a load's index 4294967297 is out of range for dimension 0"),
            std::string::npos);
  std::string src = k.cuda(false, x, 1).at(0);
  EXPECT_NE(src.find("const int tid"), std::string::npos) << src;  // 32-bit indices
  // The bounds tests compare the 64-bit values (the scalar s<id>, the gather's v<id>[r]);
  // only the addresses narrow them.
  EXPECT_EQ(count_matches(src, R"(\bs\d+ >= 0 && s\d+ < )"), 1) << src;
  EXPECT_EQ(count_matches(src, R"(\bv\d+\[r\] >= 0 && v\d+\[r\] < )"), 1) << src;
  EXPECT_EQ(count_matches(src, R"(\(\(int\)[sv]\d+(\[r\])?\) >= 0)"), 0) << src;
  EXPECT_EQ(count_matches(src, R"(arg0 \+ \(\(int\)[sv]\d+(\[r\])?\))"), 2) << src;
}

namespace {

int tall_copy_alloc_line = 0;

/// out = [x.size(0) * n, x.size(1)] allocated in host code; its first rows copy x.
auto make_tall_copy(ts::Settings s = {}) {
  return ts::kernel(
      "tall_copy",
      [](ts::Tensor x, ts::Value n) {
        ts::Tensor out = ts::empty({x.size(0) * n, x.size(1)}, x.dtype());
        tall_copy_alloc_line = __LINE__ - 1;
        for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) out(tm, tn) = x(tm, tn);
        return out;
      },
      s);
}

bool indexes_in_32_bits(const std::string& src) {
  return src.find("int arg0_stride0") != std::string::npos;
}
bool indexes_in_64_bits(const std::string& src) {
  return src.find("long long arg0_stride0") != std::string::npos;
}

}  // namespace

// A tensor allocated in host code with sizes from the arguments decides the index dtype on
// every call: 2^28 * 4 * 8 = 2^33 elements need 64 bits; a later small call is 32-bit
// again, and a large call after a small one does not reuse the 32-bit code.
TEST(IndexDtype, AHostAllocationBeyond32BitsIndexesIn64BitsOnEveryCall) {
  auto k = make_tall_copy();
  ts::Buffer x = ts::Buffer::ones({4, 8}, ts::f32);
  const int64_t big = int64_t{1} << 28, small = 3;
  for (int round = 0; round < 2; ++round) {
    std::string s = k.cuda(false, x, small).at(0), l = k.cuda(false, x, big).at(0);
    EXPECT_TRUE(indexes_in_32_bits(s)) << s;
    EXPECT_TRUE(indexes_in_64_bits(l)) << l;
    EXPECT_NE(l.find("long long buf"), std::string::npos) << l;  // the allocation's own sizes
  }
  // Small calls run (and write the copy).
  ts::Buffer out = k(x, small);
  ASSERT_EQ(out.shape(), (std::vector<int64_t>{12, 8}));
  EXPECT_EQ(out.narrow(0, 0, 4).to_vector(), std::vector<double>(32, 1.0));
  // Forcing i32 names the allocation.
  std::string msg =
      user_error([&] { make_tall_copy({.index_dtype = ts::i32}).cuda(false, x, big); });
  user_error_test::expect_message(
      msg, "tall_copy", "index_dtype_test.cpp", 0,
      "the tensor allocated at line " + std::to_string(tall_copy_alloc_line) +
          " has shape [1073741824, 8] (8589934592 elements), beyond 32-bit index "
          "arithmetic (Settings::index_dtype i32)",
      "leave Settings::index_dtype unset or set it to ts::i64");
  EXPECT_TRUE(
      indexes_in_32_bits(make_tall_copy({.index_dtype = ts::i32}).cuda(false, x, small).at(0)));
}

// A loop bound computed in host code beyond 32 bits (masked at the tensor's end) makes the
// call's tile indices 64-bit.
TEST(IndexDtype, AHostComputedLoopBoundBeyond32BitsIndexesIn64Bits) {
  auto make = [](ts::Settings s) {
    return ts::kernel(
        "far_bound",
        [](ts::Tensor x, ts::Value n) {
          ts::Tensor out = ts::zeros_like(x);
          for (auto t : ts::tile(x.size(0) * n)) out(t) = x(t) + 1;
          return out;
        },
        s);
  };
  ts::Buffer x = ts::Buffer::from_vector({1, 2, 3}, {3}, ts::f32);
  auto k = make({});
  EXPECT_NE(k.cuda(false, x, 2).at(0).find("const int lim"), std::string::npos);
  std::string wide = k.cuda(false, x, int64_t{1} << 30).at(0);  // 3 * 2^30 > 2^31
  EXPECT_NE(wide.find("const long long lim"), std::string::npos) << wide;
  std::string msg =
      user_error([&] { make({.index_dtype = ts::i32}).cuda(false, x, int64_t{1} << 30); });
  EXPECT_NE(msg.find("a loop bound or extent computed in host code is 3221225472, beyond 32-bit "
                     "index arithmetic"),
            std::string::npos)
      << msg;
}

// A zero-stride view with 2^32 + 1 elements spans one element of memory, but its indices do
// not fit 32 bits: 64-bit indices (the tile index and the size parameter would wrap).
TEST(IndexDtype, AZeroStrideViewWithSizesBeyond32BitsIndexesIn64Bits) {
  auto k = ts::kernel("pick", [](ts::Tensor x, ts::Value i) {
    ts::Tensor out = ts::empty({1}, x.dtype());
    for (auto g : ts::grid(1)) out(g) = x(i);
    return out;
  });
  ts::Buffer one = ts::Buffer::full({1}, 7.0, ts::f32);
  ts::Buffer x = one.view_as_strided({(int64_t{1} << 32) + 1}, {0}, 0);
  ASSERT_EQ(x.span(), 1);
  EXPECT_NE(k.cuda(false, x, 5).at(0).find("long long arg0_size0"), std::string::npos);
  EXPECT_EQ(k(x, int64_t{3'000'000'000}).to_vector(), std::vector<double>{7.0});
  std::string msg = user_error([&] {
    ts::kernel(
        "pick32", [](ts::Tensor x) { return x; }, ts::Settings{.index_dtype = ts::i32})(x);
  });
  EXPECT_NE(msg.find("tensor argument 0 has 4294967297 elements along a dimension, beyond 32-bit "
                     "index arithmetic"),
            std::string::npos)
      << msg;
}

namespace {

/// out[t] = x[t] over x's first dim.
auto make_copy_1d() {
  return ts::kernel("copy_1d", [](ts::Tensor x) {
    ts::Tensor out = ts::empty({x.size(0)}, x.dtype());
    for (auto t : ts::tile(x.size(0))) out(t) = x(t);
    return out;
  });
}

/// Runs the specialization `k` traces for the CPU call `args` on the interpreter with its
/// index dtype replaced by i32 (as if tessel, or the user when `forced`, had chosen it).
template <class K, class... A>
std::vector<ts::Buffer> run_with_32_bit_indices(const K& k, bool forced, const A&... a) {
  std::vector<ts::detail::CallArg> args{ts::detail::to_call_arg(a)...};
  const ts::ir::Graph& g = ts::rt::traced_graph(k.impl(), args);
  ts::Config config = ts::rt::specialization_config(k.impl(), args);
  std::unique_ptr<ts::ir::Graph> narrow = ts::ir::clone_graph(g);
  narrow->index_dtype = ts::i32;
  narrow->index_dtype_forced = forced;
  ts::rt::HostEnv env;
  env.graph = narrow.get();
  env.device = ts::cpu();
  env.args.resize(args.size());
  env.arg_buffers.resize(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    if (const ts::Buffer* b = ts::detail::buffer_arg(args[i])) {
      env.arg_buffers[i] = b;
      env.args[i].shape = &b->shape();
      env.args[i].strides = &b->strides();
    } else {
      env.args[i].ivalue = std::get<int64_t>(args[i]);
    }
  }
  return ts::rt::run_host_program(*narrow, config, env, nullptr);
}

std::string internal_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const ts::InternalError& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace

// The interpreter checks the 32-bit offsets generated code would compute (index * stride
// summed in the index dtype). A [2] view with stride 2^31 over one element of memory: its
// element 1 is at offset 2^31, which 32 bits cannot hold; the check refuses it before
// reading (so the test touches no memory past the element). tessel itself picks 64 bits
// for this view (its span is 2^31 + 1), so a 32-bit choice is a tessel bug (InternalError)
// unless the user forced it (UserError).
TEST(IndexDtype, TheInterpreterRefusesOffsetsBeyond32BitIndexArithmetic) {
  float one = 1;
  ts::Buffer x = ts::Buffer::from_blob(&one, {2}, {int64_t{1} << 31}, ts::f32, ts::cpu());
  ASSERT_EQ(x.span(), (int64_t{1} << 31) + 1);
  auto k = make_copy_1d();
  std::string bug = internal_error([&] { run_with_32_bit_indices(k, false, x); });
  EXPECT_NE(bug.find("kernel 'copy_1d'"), std::string::npos) << bug;
  EXPECT_NE(bug.find("an element offset of tensor argument 0 (f32[2] cpu) reaches 2147483648, "
                     "beyond 32-bit index "
                     "arithmetic, but tessel chose 32-bit indices"),
            std::string::npos)
      << bug;
  std::string forced = user_error([&] { run_with_32_bit_indices(k, true, x); });
  EXPECT_NE(
      forced.find(
          "reaches 2147483648, beyond 32-bit index arithmetic (Settings::index_dtype = ts::i32)"),
      std::string::npos)
      << forced;
  EXPECT_NE(forced.find("index_dtype_test.cpp"), std::string::npos) << forced;  // the load's line
  // A [1] view of the same memory reaches offset 0 only: fine in 32 bits.
  ts::Buffer first = ts::Buffer::from_blob(&one, {1}, {int64_t{1} << 31}, ts::f32, ts::cpu());
  EXPECT_EQ(run_with_32_bit_indices(k, false, first).at(0).to_vector(), std::vector<double>{1.0});
}

// A scalar index past 2^31 into a bool tensor of 2^31 + 16 elements (2 GiB of host memory,
// allocated and touched at one element): 64-bit indices read it; 32-bit ones would not.
TEST(IndexDtype, AScalarIndexPast32BitsReadsItsElement) {
  auto k = ts::kernel("pick_bool", [](ts::Tensor x, ts::Value i) {
    ts::Tensor out = x.new_zeros({1});
    for (auto g : ts::grid(1)) out(g) = x(i);
    return out;
  });
  const int64_t n = (int64_t{1} << 31) + 16, i = (int64_t{1} << 31) + 3;
  ts::Buffer x = ts::Buffer::empty({n}, ts::boolean);
  static_cast<uint8_t*>(x.data_ptr())[i] = 1;
  EXPECT_EQ(k(x, i).to_vector(), std::vector<double>{1.0});
  std::string bug = internal_error([&] { run_with_32_bit_indices(k, false, x, i); });
  EXPECT_NE(bug.find("reaches 2147483651, beyond 32-bit index arithmetic"), std::string::npos)
      << bug;
}
