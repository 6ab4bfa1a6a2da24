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
#include "user_error_util.hpp"

namespace ts = tessel;
using user_error_test::user_error;

namespace {

int count_matches(const std::string& s, const std::string& re) {
  std::regex r(re);
  return static_cast<int>(std::distance(std::sregex_iterator(s.begin(), s.end(), r), std::sregex_iterator()));
}

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
  ts::Buffer fits = wide_column_slice(65536);  // spans 2^31 - 32752 elements
  ts::Buffer beyond = wide_column_slice(65537);  // spans 2^31 + 16: beyond int32
  ASSERT_LT(fits.span(), int64_t{1} << 31);
  ASSERT_GE(beyond.span(), int64_t{1} << 31);
  ASSERT_LT(beyond.numel(), int64_t{1} << 31);
  std::string small = make_copy_2d().cuda(false, fits).at(0);
  std::string large = make_copy_2d().cuda(false, beyond).at(0);
  EXPECT_NE(small.find("int arg0_stride0"), std::string::npos) << small;
  EXPECT_NE(large.find("long long arg0_stride0"), std::string::npos) << large;
  std::string msg = user_error([&] { make_copy_2d({.index_dtype = ts::i32}).cuda(false, beyond); });
  EXPECT_NE(msg.find("tensor argument 0 spans 2147483664 elements of memory, beyond 32-bit index arithmetic"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("leave Settings::index_dtype unset or set it to ts::i64"), std::string::npos) << msg;
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
  std::string msg =
      user_error([&] { examples::make_padded_sum_host({.index_dtype = ts::i32}).cuda(false, x, int64_t{1} << 33); });
  EXPECT_NE(msg.find("integer argument 1 is 8589934592, beyond 32-bit index arithmetic"), std::string::npos) << msg;
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
  EXPECT_EQ(k(x, 1).to_vector(), std::vector<double>(4, 0.0));
  std::string src = k.cuda(false, x, 1).at(0);
  EXPECT_NE(src.find("const int tid"), std::string::npos) << src;  // 32-bit indices
  // The bounds tests compare the 64-bit values (the scalar s<id>, the gather's v<id>[r]);
  // only the addresses narrow them.
  EXPECT_EQ(count_matches(src, R"(\(\(s\d+\) >= 0 && \(s\d+\) < )"), 1) << src;
  EXPECT_EQ(count_matches(src, R"(\(\(v\d+\[r\]\) >= 0 && \(v\d+\[r\]\) < )"), 1) << src;
  EXPECT_EQ(count_matches(src, R"(\(\(int\)[sv]\d+(\[r\])?\) >= 0)"), 0) << src;
  EXPECT_EQ(count_matches(src, R"(arg0 \+ \(\(int\)[sv]\d+(\[r\])?\))"), 2) << src;
}
