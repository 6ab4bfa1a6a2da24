// CPU tests of element conversions, dtype promotion, Buffer and DLPack.
#include "tessel/buffer.hpp"

#include <dlpack/dlpack.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "common/element.hpp"
#include "runtime/device_utils.hpp"
#include "tessel/error.hpp"
#include "tessel/testing.hpp"
#include "tests/buffer_cases.hpp"
#include "tests/user_error_util.hpp"

namespace ts = tessel;

namespace {

const ts::DType kAll[] = {ts::boolean, ts::i32,  ts::i64, ts::u64,
                          ts::f16,     ts::bf16, ts::f32, ts::f64};
const double kNan = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

TEST(Element, F16RoundsToNearestEven) {
  EXPECT_EQ(ts::float_to_f16_bits(1.0f), 0x3c00);
  EXPECT_EQ(ts::float_to_f16_bits(1.0f + 0x1p-11f), 0x3c00);             // tie -> even (down)
  EXPECT_EQ(ts::float_to_f16_bits(1.0f + 3 * 0x1p-11f), 0x3c02);         // tie -> even (up)
  EXPECT_EQ(ts::float_to_f16_bits(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);  // above the tie
  EXPECT_EQ(ts::float_to_f16_bits(-2.0f), 0xc000);
  EXPECT_EQ(ts::float_to_f16_bits(65504.0f), 0x7bff);  // max
  EXPECT_EQ(ts::float_to_f16_bits(65519.0f), 0x7bff);
  EXPECT_EQ(ts::float_to_f16_bits(65520.0f), 0x7c00);  // tie rounds to even = inf
}

TEST(Element, F16SubnormalsInfNan) {
  EXPECT_EQ(ts::float_to_f16_bits(0x1p-24f), 0x0001);  // smallest subnormal
  EXPECT_EQ(ts::float_to_f16_bits(0x1p-25f), 0x0000);  // tie -> even (zero)
  EXPECT_EQ(ts::float_to_f16_bits(0x1.8p-25f), 0x0001);
  EXPECT_EQ(ts::float_to_f16_bits(3 * 0x1p-25f), 0x0002);  // tie 1.5 ulp -> even (2)
  EXPECT_EQ(ts::float_to_f16_bits(0x1p-14f), 0x0400);      // smallest normal
  EXPECT_EQ(ts::float_to_f16_bits(-0.0f), 0x8000);
  EXPECT_EQ(ts::f16_bits_to_float(0x0001), 0x1p-24f);
  EXPECT_EQ(ts::f16_bits_to_float(0x03ff), 1023 * 0x1p-24f);
  EXPECT_EQ(ts::float_to_f16_bits(INFINITY), 0x7c00);
  EXPECT_EQ(ts::float_to_f16_bits(-INFINITY), 0xfc00);
  EXPECT_EQ(ts::float_to_f16_bits(1e10f), 0x7c00);
  EXPECT_TRUE(std::isnan(ts::f16_bits_to_float(ts::float_to_f16_bits(NAN))));
  EXPECT_TRUE(std::isinf(ts::f16_bits_to_float(0x7c00)));
  // Every f16 value survives the round trip through float.
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = ts::f16_bits_to_float(static_cast<uint16_t>(h));
    if (!std::isnan(f)) ASSERT_EQ(ts::float_to_f16_bits(f), h) << h;
  }
}

TEST(Element, Bf16RoundsToNearestEven) {
  EXPECT_EQ(ts::float_to_bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(ts::float_to_bf16_bits(1.0f + 0x1p-8f), 0x3f80);      // tie -> even
  EXPECT_EQ(ts::float_to_bf16_bits(1.0f + 3 * 0x1p-8f), 0x3f82);  // tie -> even (up)
  EXPECT_EQ(ts::float_to_bf16_bits(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
  EXPECT_EQ(ts::float_to_bf16_bits(std::numeric_limits<float>::max()), 0x7f80);  // -> inf
  EXPECT_EQ(ts::float_to_bf16_bits(INFINITY), 0x7f80);
  EXPECT_TRUE(std::isnan(ts::bf16_bits_to_float(ts::float_to_bf16_bits(NAN))));
  EXPECT_EQ(ts::float_to_bf16_bits(0x1p-133f), 0x0001);  // subnormal kept
  EXPECT_EQ(ts::bf16_bits_to_float(0x0001), 0x1p-133f);
}

TEST(Element, ReadWriteAndRound) {
  alignas(8) unsigned char buf[8];
  ts::write_element(buf, ts::i32, -7.9);
  EXPECT_EQ(ts::read_element(buf, ts::i32), -7.0);  // truncation toward zero
  ts::write_element(buf, ts::i32, kNan);
  EXPECT_EQ(ts::read_element(buf, ts::i32), 0.0);
  ts::write_element(buf, ts::boolean, 0.5);
  EXPECT_EQ(ts::read_element(buf, ts::boolean), 1.0);
  ts::write_element_int(buf, ts::i64, (int64_t{1} << 62) + 1);
  EXPECT_EQ(ts::read_element_int(buf, ts::i64), (int64_t{1} << 62) + 1);
  ts::write_element(buf, ts::f16, 1.0 / 3.0);
  EXPECT_EQ(ts::read_element(buf, ts::f16), ts::round_to(ts::f16, 1.0 / 3.0));
  EXPECT_EQ(ts::round_to(ts::bf16, 1.0 + 0x1p-9), 1.0);
  EXPECT_EQ(ts::round_to(ts::f32, 0.1), static_cast<double>(0.1f));
  EXPECT_EQ(ts::round_to(ts::i32, 4294967297.0), 1.0);  // wraps
}

TEST(DType, NamesSizesStorage) {
  const char* names[] = {"bool", "i32", "i64", "u64", "f16", "bf16", "f32", "f64"};
  const int sizes[] = {1, 4, 8, 8, 2, 2, 4, 8};
  const char* storage[] = {"bool",   "int",           "long long", "unsigned long long",
                           "__half", "__nv_bfloat16", "float",     "double"};
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(ts::dtype_name(kAll[i]), names[i]);
    EXPECT_EQ(ts::dtype_size(kAll[i]), sizes[i]);
    EXPECT_EQ(ts::dtype_cuda_storage(kAll[i]), storage[i]);
    EXPECT_EQ(ts::dtype_from_name(names[i]), kAll[i]);
  }
  EXPECT_EQ(ts::dtype_from_name("float32"), ts::f32);
  EXPECT_THROW(ts::dtype_from_name("f8"), ts::UserError);
  EXPECT_TRUE(ts::is_float(ts::bf16));
  EXPECT_FALSE(ts::is_float(ts::i32));
  EXPECT_TRUE(ts::is_integer(ts::u64));
  EXPECT_FALSE(ts::is_integer(ts::boolean));
}

TEST(DType, PromotionTable) {
  using ts::DType;
  struct Case {
    DType a, b, r;
  };
  const Case cases[] = {
      {ts::boolean, ts::boolean, ts::boolean},
      {ts::boolean, ts::i32, ts::i32},
      {ts::boolean, ts::f16, ts::f16},
      {ts::i32, ts::i64, ts::i64},
      {ts::i32, ts::u64, ts::i64},
      {ts::i64, ts::u64, ts::i64},
      {ts::u64, ts::u64, ts::u64},
      {ts::i64, ts::f16, ts::f16},
      {ts::u64, ts::bf16, ts::bf16},
      {ts::f16, ts::bf16, ts::f32},
      {ts::f16, ts::f32, ts::f32},
      {ts::bf16, ts::f64, ts::f64},
      {ts::f32, ts::f64, ts::f64},
      {ts::i32, ts::f32, ts::f32},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ts::promote(c.a, c.b), c.r) << ts::dtype_name(c.a) << "+" << ts::dtype_name(c.b);
    EXPECT_EQ(ts::promote(c.b, c.a), c.r) << ts::dtype_name(c.b) << "+" << ts::dtype_name(c.a);
  }
  for (DType a : kAll)
    for (DType b : kAll) EXPECT_EQ(ts::promote(a, b), ts::promote(b, a));
}

TEST(DType, AnIntegerCastToDTypeIsAUserError) {
  const auto bad = static_cast<ts::DType>(42);
  for (auto f : std::vector<std::function<void()>>{[&] { (void)ts::Buffer::zeros({4}, bad); },
                                                   [&] { (void)ts::dtype_name(bad); },
                                                   [&] { (void)ts::dtype_size(bad); }}) {
    try {
      f();
      ADD_FAILURE() << "no error";
    } catch (const ts::UserError& e) {
      EXPECT_NE(std::string(e.what()).find("42 is not a ts::DType"), std::string::npos) << e.what();
    }
  }
}

TEST(DType, WeakPromotion) {
  EXPECT_EQ(ts::promote_weak(ts::f16, ts::f64), ts::f16);  // x_f16 + 1.0 stays f16
  EXPECT_EQ(ts::promote_weak(ts::bf16, ts::i64), ts::bf16);
  EXPECT_EQ(ts::promote_weak(ts::i32, ts::f64), ts::f32);  // x_i32 + 1.5 -> f32
  EXPECT_EQ(ts::promote_weak(ts::i32, ts::i64), ts::i32);  // x_i32 + 1 stays i32
  EXPECT_EQ(ts::promote_weak(ts::boolean, ts::i64), ts::i64);
  EXPECT_EQ(ts::promote_weak(ts::boolean, ts::i32), ts::i64);
  EXPECT_EQ(ts::promote_weak(ts::boolean, ts::f32), ts::f32);
  EXPECT_EQ(ts::promote_weak(ts::u64, ts::f64), ts::f32);
  EXPECT_EQ(ts::promote_weak(ts::f64, ts::f32), ts::f64);
  EXPECT_EQ(ts::promote_weak(ts::i64, ts::boolean), ts::i64);
}

TEST(Buffer, CreationAndValues) {
  auto z = ts::Buffer::zeros({2, 3}, ts::f32);
  EXPECT_EQ(z.str(), "f32[2, 3] cpu");
  EXPECT_EQ(z.numel(), 6);
  EXPECT_EQ(z.to_vector(), std::vector<double>(6, 0.0));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(z.data_ptr()) % 64, 0u);
  EXPECT_EQ(ts::Buffer::ones({4}, ts::i32).to_vector(), std::vector<double>(4, 1.0));
  EXPECT_EQ(ts::Buffer::full({2}, 2.5, ts::bf16).to_vector(), (std::vector<double>{2.5, 2.5}));
  EXPECT_EQ(ts::Buffer::arange(4, ts::i64).to_vector(), (std::vector<double>{0, 1, 2, 3}));
  auto s = ts::Buffer::scalar(7, ts::i32);
  EXPECT_EQ(s.shape(), std::vector<int64_t>{1});
  EXPECT_EQ(s.item(), 7.0);
  auto v = ts::Buffer::from_vector({1, 2, 3, 4, 5, 6}, {2, 3}, ts::f16);
  EXPECT_EQ(v.strides(), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(v.size(-1), 3);
  EXPECT_EQ(v.stride(0), 3);
  EXPECT_EQ(v.to_vector(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(ts::Buffer::empty({0, 5}, ts::f32).is_contiguous());
  EXPECT_FALSE(ts::Buffer().defined());
  EXPECT_EQ(ts::Buffer().numel(), 0);
}

TEST(Buffer, BadShapesAreUserErrors) {
  EXPECT_THROW(ts::Buffer::empty({2, -1}, ts::f32), ts::UserError);
  EXPECT_THROW(ts::Buffer::from_vector({1, 2, 3}, {2, 2}, ts::f32), ts::UserError);
  auto b = ts::Buffer::zeros({2, 3}, ts::f32);
  EXPECT_THROW(b.size(2), ts::UserError);
  EXPECT_THROW(b.transpose(0, 5), ts::UserError);
  EXPECT_THROW(b.narrow(1, 2, 2), ts::UserError);
  EXPECT_THROW(b.view_as_strided({3, 3}, {3, 1}, 0), ts::UserError);
  EXPECT_THROW(b.copy_from(ts::Buffer::zeros({3, 2}, ts::f32)), ts::UserError);
  EXPECT_THROW(ts::Buffer::randn({2}, ts::i32), ts::UserError);
  EXPECT_THROW(ts::Buffer::zeros({0}, ts::f32).item(), ts::UserError);
  // The errors of reads name the caller's line.
  for (auto& [what, read] : std::vector<std::pair<std::string, std::function<void()>>>{
           {"size", [&] { b.size(5); }},
           {"stride", [&] { b.stride(-3); }},
           {"item", [&] { b.item(); }},
           {"to_vector", [&] { ts::Buffer().to_vector(); }}}) {
    try {
      read();
      ADD_FAILURE() << what;
    } catch (const ts::UserError& e) {
      EXPECT_NE(std::string(e.what()).find("buffer_test.cpp:"), std::string::npos) << e.what();
    }
  }
  try {  // torch's item() likewise refuses a tensor of several elements
    b.item();
    FAIL();
  } catch (const ts::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("exactly one element (this one has 6)"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(ts::Buffer::from_vector({0, 1, 2, 3, 4, 5}, {2, 3}, ts::f32)
                .narrow(0, 1, 1)
                .narrow(1, 2, 1)
                .item(),
            5.0);
  try {
    b.size(7);
    FAIL();
  } catch (const ts::UserError& e) {
    EXPECT_NE(std::string(e.what()).find(": dimension 7 is out of range for f32[2, 3] cpu"),
              std::string::npos)
        << e.what();
  }
}

// A byte count past 2^63 - 1 is a UserError saying so, never a wrapped or negative size;
// one that fits but exceeds memory is a RuntimeError stating the exact count.
// A Buffer function's UserError names the caller's file and line (the function's
// std::source_location argument), also where it fails inside another Buffer function.
TEST(Buffer, ErrorsNameTheCallersLine) {
  auto message = [](auto&& f) { return user_error_test::error_message<ts::UserError>(f); };
  auto expect_line = [](const std::string& msg, int line, const std::string& what) {
    EXPECT_NE(msg.find("buffer_test.cpp:" + std::to_string(line) + ": "), std::string::npos) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  };
  ts::Buffer b = ts::Buffer::zeros({2, 3}, ts::f32);
  int line = __LINE__ + 1;
  std::string msg = message([&] { ts::Buffer::from_vector({1, 2, 3}, {2, 2}, ts::f32); });
  expect_line(msg, line, "from_vector got 3 values for shape [2, 2]");
  line = __LINE__ + 1;
  msg = message([&] { b.narrow(1, 2, 2); });
  expect_line(msg, line, "narrow(1, 2, 2)");
  line = __LINE__ + 1;
  msg = message([&] { ts::Buffer::zeros({-3}, ts::f32); });  // fails in empty(), called by zeros
  expect_line(msg, line, "negative size in shape [-3]");
  line = __LINE__ + 1;
  msg = message([&] { ts::Buffer::full({2}, 1.5e10, ts::i32); });
  expect_line(msg, line, "cannot be converted to i32 without overflow");
  line = __LINE__ + 1;
  msg = message([&] { b.copy_from(ts::Buffer::zeros({3, 2}, ts::f32)); });
  expect_line(msg, line, "copy_from: cannot copy");
  // An undefined Buffer's errors name the operation the caller called, and which side.
  line = __LINE__ + 1;
  msg = message([&] { ts::Buffer().to(ts::cpu()); });
  expect_line(msg, line, "to(cpu) of an undefined Buffer (default-constructed or moved from)");
  line = __LINE__ + 1;
  msg = message([&] { ts::Buffer().copy_from(b); });
  expect_line(msg, line, "copy_from into an undefined Buffer");
  line = __LINE__ + 1;
  msg = message([&] { b.copy_from(ts::Buffer()); });
  expect_line(msg, line, "copy_from of an undefined Buffer");
}

TEST(Buffer, ByteCountsPast2To63AreErrors) {
  auto message = [](auto&& f) { return user_error_test::error_message<ts::Error>(f); };
  const int64_t big = int64_t{1} << 31;
  const int line = __LINE__ + 1;
  std::string msg = message([&] { ts::Buffer::empty({big, big}, ts::f32); });
  EXPECT_EQ(msg.substr(0, msg.find('\n')),
            "tessel: buffer_test.cpp:" + std::to_string(line) +
                ": cannot allocate a f32 tensor of shape [2147483648, 2147483648] (more than "
                "2^63 - 1 bytes: its byte count overflows 64 bits). allocate a smaller shape "
                "(check its sizes for a typo or a computation that overflowed)");
  EXPECT_THROW(ts::Buffer::zeros({big, big, 2}, ts::f64), ts::UserError);
  EXPECT_THROW(ts::Buffer::full({big * big / 2}, 1.0, ts::i32), ts::UserError);
  msg = message([&] { ts::Buffer::empty({big, big, big}, ts::u64); });
  EXPECT_NE(msg.find("has 2^63 or more elements. use a smaller shape"), std::string::npos) << msg;
  // 2^62 bytes: a count that fits, memory that does not.
  msg = message([&] { ts::Buffer::empty({big / 2, big / 2}, ts::f32); });
  EXPECT_NE(msg.find("cannot allocate a f32 tensor of shape [1073741824, 1073741824] "
                     "(4611686018427387904 bytes, 4294967296.0 GiB) in host memory"),
            std::string::npos)
      << msg;
  // Views whose furthest element's offset overflows are refused, not wrapped.
  auto b = ts::Buffer::zeros({4}, ts::f32);
  float x = 0;
  msg = message([&] { ts::Buffer::from_blob(&x, {3, 3}, {INT64_MAX / 2, 1}, ts::f32, ts::cpu()); });
  EXPECT_NE(msg.find("from_blob of shape [3, 3] and strides [4611686018427387903, 1] spans more "
                     "than 2^63 - 1 bytes"),
            std::string::npos)
      << msg;
  EXPECT_THROW(ts::Buffer::from_blob(&x, {2}, {INT64_MAX / 4 + 1}, ts::f32, ts::cpu()),
               ts::UserError);
  msg = message([&] { b.view_as_strided({3, 2}, {INT64_MAX / 2 + 1, 1}, 0); });
  EXPECT_NE(msg.find("reaches element 2^63 or further of a storage of 4 elements"),
            std::string::npos)
      << msg;
}

TEST(Buffer, ViewsShareStorage) {
  auto b = ts::Buffer::arange(6, ts::f32).view_as_strided({2, 3}, {3, 1}, 0);
  auto t = b.transpose(0, 1);
  EXPECT_EQ(t.shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(t.strides(), (std::vector<int64_t>{1, 3}));
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.storage(), b.storage());
  EXPECT_EQ(t.to_vector(), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  auto c = t.contiguous();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_NE(c.storage(), b.storage());
  EXPECT_EQ(c.to_vector(), t.to_vector());
  EXPECT_EQ(b.contiguous().storage(), b.storage());  // already contiguous: same storage

  auto col = b.narrow(1, 1, 1);  // column 1
  EXPECT_EQ(col.offset(), 1);
  col.fill(-1);
  EXPECT_EQ(b.to_vector(), (std::vector<double>{0, -1, 2, 3, -1, 5}));
  EXPECT_EQ(b.narrow(0, -1, 1).to_vector(), (std::vector<double>{3, -1, 5}));
  auto diag = b.view_as_strided({2}, {4}, 0);
  EXPECT_EQ(diag.to_vector(), (std::vector<double>{0, -1}));
  EXPECT_EQ(b.view_as_strided({1}, {1}, 5).item(), 5.0);
}

TEST(Buffer, CopyConvertsDtypesAndStrides) {
  auto src = ts::Buffer::from_vector({1.5, -2.5, 3e9, kNan, 65520, 0.1}, {2, 3}, ts::f64);
  auto as_i32 = ts::Buffer::empty({2, 3}, ts::i32);
  as_i32.copy_from(src);
  // Floats to integers truncate toward zero and saturate, NaN -> 0, as a kernel's cast.
  EXPECT_EQ(as_i32.to_vector(), (std::vector<double>{1, -2, 2147483647, 0, 65520, 0}));
  auto as_i8 = ts::Buffer::empty({2, 3}, ts::i8);
  as_i8.copy_from(src);
  EXPECT_EQ(as_i8.to_vector(), (std::vector<double>{1, -2, 127, 0, 127, 0}));
  as_i8.copy_from(
      ts::Buffer::from_vector({-300, -128.9, 127.9, 300, -1e30, 1e30}, {2, 3}, ts::f32));
  EXPECT_EQ(as_i8.to_vector(), (std::vector<double>{-128, -128, 127, 127, -128, 127}));
  auto as_u64 = ts::Buffer::empty({6}, ts::u64);
  as_u64.copy_from(ts::Buffer::from_vector({-5, 1e30, -1e30, 2.5, 1.9e19, kNan}, {6}, ts::f64));
  const auto* u = static_cast<const uint64_t*>(as_u64.data_ptr());
  EXPECT_EQ(std::vector<uint64_t>(u, u + 6),
            (std::vector<uint64_t>{0, UINT64_MAX, 0, 2, UINT64_MAX, 0}));
  auto as_f16 = ts::Buffer::empty({2, 3}, ts::f16);
  as_f16.copy_from(src);
  auto h = as_f16.to_vector();
  EXPECT_EQ(h[0], 1.5);
  EXPECT_TRUE(std::isinf(h[2]) && std::isinf(h[4]));
  EXPECT_TRUE(std::isnan(h[3]));
  EXPECT_EQ(h[5], ts::round_to(ts::f16, 0.1));
  auto as_bool = ts::Buffer::empty({2, 3}, ts::boolean);
  as_bool.copy_from(src);
  EXPECT_EQ(as_bool.to_vector(), (std::vector<double>{1, 1, 1, 1, 1, 1}));

  // Integers beyond 2^53 copy exactly between integer dtypes.
  auto big = ts::Buffer::empty({1}, ts::i64);
  ts::write_element_int(big.data_ptr(), ts::i64, (int64_t{1} << 60) + 3);
  auto big_u = ts::Buffer::empty({1}, ts::u64);
  big_u.copy_from(big);
  EXPECT_EQ(ts::read_element_int(big_u.data_ptr(), ts::u64), (int64_t{1} << 60) + 3);

  // Strided source into a strided destination.
  auto m = ts::Buffer::arange(12, ts::i32).view_as_strided({3, 4}, {4, 1}, 0);
  auto dst_base = ts::Buffer::zeros({4, 6}, ts::f32);
  auto dst = dst_base.narrow(1, 1, 3);  // [4, 3] view, strides {6, 1}
  dst.copy_from(m.transpose(0, 1));
  EXPECT_EQ(dst.to_vector(), (std::vector<double>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  EXPECT_EQ(dst_base.narrow(1, 0, 1).to_vector(), (std::vector<double>{0, 0, 0, 0}));
}

TEST(Buffer, RandIsDeterministicAndUniform) {
  auto a = ts::Buffer::rand({1 << 14}, ts::f32, ts::cpu(), 42);
  auto b = ts::Buffer::rand({1 << 14}, ts::f32, ts::cpu(), 42);
  auto c = ts::Buffer::rand({1 << 14}, ts::f32, ts::cpu(), 43);
  auto va = a.to_vector();
  EXPECT_EQ(va, b.to_vector());
  EXPECT_NE(va, c.to_vector());
  double sum = 0;
  for (double x : va) {
    ASSERT_GE(x, 0.0);
    ASSERT_LT(x, 1.0);
    sum += x;
  }
  EXPECT_NEAR(sum / va.size(), 0.5, 0.01);
  EXPECT_EQ(va[5], ts::rt::random_uniform(42, 5, ts::f32));
  for (ts::DType t : {ts::f16, ts::bf16, ts::f64})
    for (double x : ts::Buffer::rand({4096}, t, ts::cpu(), 1).to_vector()) {
      ASSERT_GE(x, 0.0);
      ASSERT_LT(x, 1.0);
    }
}

TEST(Buffer, RandnHasMeanZeroStdOne) {
  auto v = ts::Buffer::randn({1 << 16}, ts::f32, ts::cpu(), 7).to_vector();
  double sum = 0, sq = 0;
  for (double x : v) {
    ASSERT_TRUE(std::isfinite(x));
    sum += x;
    sq += x * x;
  }
  double mean = sum / v.size(), var = sq / v.size() - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.02);
  EXPECT_NEAR(std::sqrt(var), 1.0, 0.02);
  EXPECT_EQ(v, ts::Buffer::randn({1 << 16}, ts::f32, ts::cpu(), 7).to_vector());
  EXPECT_EQ(static_cast<float>(v[3]), static_cast<float>(ts::rt::random_normal(7, 3)));
}

TEST(Buffer, CountMismatchesOnCpu) {
  auto e = ts::Buffer::from_vector({1, 2, kNan, kInf, 100}, {5}, ts::f32);
  auto a = ts::Buffer::from_vector({1, 2.001, kNan, kInf, 101}, {5}, ts::f64);
  EXPECT_EQ(ts::count_mismatches(a, e, 0, 0), 2);
  EXPECT_EQ(ts::count_mismatches(a, e, 1e-2, 0), 1);
  EXPECT_EQ(ts::count_mismatches(a, e, 1e-2, 1e-2), 0);
  auto neg_inf = ts::Buffer::from_vector({1, 2, kNan, -kInf, 100}, {5}, ts::f32);
  EXPECT_EQ(ts::count_mismatches(neg_inf, e, 1, 1), 1);
  auto nan_one = ts::Buffer::from_vector({kNan, 2, 0, kInf, 100}, {5}, ts::f32);
  EXPECT_EQ(ts::count_mismatches(nan_one, e, 1, 1), 2);
  auto x = ts::Buffer::arange(12, ts::f32).view_as_strided({3, 4}, {4, 1}, 0);
  auto y = ts::Buffer::empty({4, 3}, ts::f16);
  y.copy_from(x.transpose(0, 1));
  EXPECT_EQ(ts::count_mismatches(y.transpose(0, 1), x, 0, 0), 0);
  EXPECT_EQ(ts::count_mismatches(y.transpose(0, 1), x, 0, 0, 1.0), 12);
  y.fill(0);
  EXPECT_EQ(ts::count_mismatches(y, ts::Buffer::zeros({4, 3}, ts::f32), 0, 0, 0.5), 12);
  EXPECT_THROW(ts::count_mismatches(y, x, 0, 0), ts::UserError);
}

TEST(DLPack, RoundTripIsZeroCopy) {
  auto b = ts::Buffer::arange(12, ts::f32).view_as_strided({3, 4}, {4, 1}, 0).transpose(0, 1);
  long uses = b.storage().use_count();
  DLManagedTensor* m = b.to_dlpack();
  EXPECT_EQ(b.storage().use_count(), uses + 1);
  EXPECT_EQ(m->dl_tensor.ndim, 2);
  EXPECT_EQ(m->dl_tensor.device.device_type, kDLCPU);
  EXPECT_EQ(m->dl_tensor.dtype.code, kDLFloat);
  EXPECT_EQ(m->dl_tensor.dtype.bits, 32);
  EXPECT_EQ(m->dl_tensor.strides[0], 1);
  EXPECT_EQ(m->dl_tensor.strides[1], 4);
  {
    auto c = ts::Buffer::from_dlpack(m);
    EXPECT_EQ(c.data_ptr(), b.data_ptr());
    EXPECT_EQ(c.shape(), b.shape());
    EXPECT_EQ(c.strides(), b.strides());
    EXPECT_EQ(c.to_vector(), b.to_vector());
  }
  EXPECT_EQ(b.storage().use_count(), uses);  // the deleter ran

  for (ts::DType t : kAll) {
    auto x = ts::Buffer::ones({3}, t);
    auto y = ts::Buffer::from_dlpack(x.to_dlpack());
    EXPECT_EQ(y.dtype(), t) << ts::dtype_name(t);
    EXPECT_EQ(y.to_vector(), x.to_vector());
  }
}

TEST(DLPack, ImportsForeignTensorAndCallsDeleter) {
  struct Foreign {
    std::vector<double> data{1, 2, 3, 4, 5, 6};
    std::vector<int64_t> shape{2, 3};
    bool* deleted;
    DLManagedTensor m{};
  };
  bool deleted = false;
  auto* f = new Foreign;
  f->deleted = &deleted;
  f->m.dl_tensor.data = f->data.data();
  f->m.dl_tensor.device = {kDLCPU, 0};
  f->m.dl_tensor.ndim = 2;
  f->m.dl_tensor.dtype = {kDLFloat, 64, 1};
  f->m.dl_tensor.shape = f->shape.data();
  f->m.dl_tensor.strides = nullptr;  // contiguous
  f->m.dl_tensor.byte_offset = sizeof(double);
  f->shape = {5};
  f->m.dl_tensor.ndim = 1;
  f->m.dl_tensor.shape = f->shape.data();
  f->m.manager_ctx = f;
  f->m.deleter = [](DLManagedTensor* m) {
    auto* self = static_cast<Foreign*>(m->manager_ctx);
    *self->deleted = true;
    delete self;
  };
  {
    auto b = ts::Buffer::from_dlpack(&f->m);
    EXPECT_EQ(b.to_vector(), (std::vector<double>{2, 3, 4, 5, 6}));
    EXPECT_FALSE(deleted);
  }
  EXPECT_TRUE(deleted);

  // An unsupported dtype is a UserError, and the tensor is still released.
  deleted = false;
  f = new Foreign;
  f->deleted = &deleted;
  f->m.dl_tensor.data = f->data.data();
  f->m.dl_tensor.device = {kDLCPU, 0};
  f->m.dl_tensor.ndim = 1;
  f->m.dl_tensor.shape = f->shape.data();
  f->m.dl_tensor.dtype = {kDLComplex, 64, 1};
  f->m.manager_ctx = f;
  f->m.deleter = [](DLManagedTensor* m) {
    auto* self = static_cast<Foreign*>(m->manager_ctx);
    *self->deleted = true;
    delete self;
  };
  EXPECT_THROW(ts::Buffer::from_dlpack(&f->m), ts::UserError);
  EXPECT_TRUE(deleted);
}

}  // namespace

TEST(Buffer, IntegerValuesOutOfRangeAreErrors) {
  // As torch: "value cannot be converted to type int32 without overflow"; NaN too, and a
  // negative fraction for an unsigned dtype.
  for (auto [v, dt] : {std::pair<double, ts::DType>{1e20, ts::i32},
                       {NAN, ts::i64},
                       {-1.5, ts::u64},
                       {-0.5, ts::u64},
                       {2147483648.0, ts::i32},
                       {2147483647.5, ts::i32},
                       {kInf, ts::i64},
                       {18446744073709551616.0, ts::u64},
                       {-9223372036854777856.0, ts::u64}}) {
    std::string msg;
    try {
      ts::Buffer::scalar(v, dt);
    } catch (const ts::UserError& e) {
      msg = e.what();
    }
    EXPECT_NE(msg.find("without overflow"), std::string::npos)
        << v << " " << ts::dtype_name(dt) << ": " << msg;
    EXPECT_THROW(ts::Buffer::from_vector({0, v}, {2}, dt), ts::UserError);
    EXPECT_THROW(ts::Buffer::zeros({2}, dt).fill(v), ts::UserError);
  }
  // Floats: full and fill refuse a value that would round to infinity, as torch.full and
  // fill_ do; from_vector rounds it, as torch.tensor does.
  for (auto [v, dt] :
       {std::pair<double, ts::DType>{1e6, ts::f16}, {-3.4e38, ts::bf16}, {1e39, ts::f32}}) {
    EXPECT_THROW(ts::Buffer::full({2}, v, dt), ts::UserError) << v;
    EXPECT_THROW(ts::Buffer::zeros({2}, dt).fill(v), ts::UserError) << v;
    EXPECT_TRUE(std::isinf(ts::Buffer::from_vector({v}, {1}, dt).to_vector()[0])) << v;
  }
  EXPECT_TRUE(std::isinf(ts::Buffer::full({1}, kInf, ts::f16).to_vector()[0]));
  EXPECT_EQ(ts::Buffer::full({1}, 65504, ts::f16).to_vector()[0], 65504);
  EXPECT_EQ(ts::Buffer::scalar(2147483647.0, ts::i32).item(), 2147483647.0);
  EXPECT_EQ(ts::Buffer::scalar(-2147483648.0, ts::i32).item(), -2147483648.0);
  EXPECT_EQ(ts::Buffer::scalar(-2.5, ts::i64).item(), -2.0);  // truncation toward 0, as torch
}

TEST(Buffer, NegativeIntegersWrapInUnsignedDtypes) {
  // torch.tensor([-1], dtype=torch.uint64) holds 2^64 - 1: an integer scalar wraps as
  // two's complement (c10::overflows allows it for unsigned targets).
  auto b = ts::Buffer::from_vector({-1, -3, 5}, {3}, ts::u64);
  EXPECT_EQ(static_cast<uint64_t>(ts::read_element_int(b.data_ptr(), ts::u64)), UINT64_MAX);
  EXPECT_EQ(
      static_cast<uint64_t>(ts::read_element_int(static_cast<char*>(b.data_ptr()) + 8, ts::u64)),
      UINT64_MAX - 2);
  auto f = ts::Buffer::full({2}, -2, ts::u64);
  EXPECT_EQ(static_cast<uint64_t>(ts::read_element_int(f.data_ptr(), ts::u64)), UINT64_MAX - 1);
  EXPECT_EQ(ts::Buffer::scalar(18446744073709549568.0, ts::u64).item(), 18446744073709549568.0);
}

// The host side of GpuRuntime.BuffersRoundTripEveryDtype (tests/buffer_cases.hpp).
TEST(Buffer, RoundTripValuesOfEveryDtype) {
  const std::vector<double> v = buffer_cases::round_trip_values();
  for (ts::DType t : buffer_cases::all_dtypes()) {
    auto h = ts::Buffer::from_vector(v, {2, 4}, t);
    std::vector<double> want;
    for (double x : v) {
      if (t == ts::boolean)
        want.push_back(x != 0);
      else if (t == ts::u64 && x < 0)
        want.push_back(18446744073709551616.0 + std::trunc(x));  // 2^64 - |x|, as a double
      else if (ts::is_integer(t))
        want.push_back(std::trunc(x));
      else  // exact in f16, bf16 and wider; the 8-bit floats round 100 to 96
        want.push_back(ts::round_to(t, x));
    }
    EXPECT_EQ(h.to_vector(), want) << ts::dtype_name(t);
    EXPECT_EQ(h.narrow(0, 0, 1).narrow(1, 0, 1).item(), want[0]);
    const int64_t n = t == ts::i8 ? 128 : 1000;  // i8's range ends at 127
    EXPECT_EQ(ts::Buffer::arange(n, t).to_vector()[n - 1],
              t == ts::boolean ? 1 : ts::round_to(t, static_cast<double>(n - 1)))
        << ts::dtype_name(t);
  }
}

// The host side of GpuRuntime.FillOnTheGpuIncludingStridedViews, against a plain model of
// the three views.
TEST(Buffer, FillsStridedViewsOfEveryDtype) {
  for (ts::DType t : buffer_cases::all_dtypes()) {
    auto h = ts::Buffer::zeros({6, 10}, t);
    buffer_cases::fill_pattern(h);
    std::vector<double> want(60, 3.75);
    for (int r = 0; r < 6; ++r)
      for (int c = 2; c < 7; ++c) want[r * 10 + c] = buffer_cases::strided_fill_value(t);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 2; ++j) want[7 + i * 20 + j] = buffer_cases::large_fill_value(t);
    for (double& x : want)
      x = t == ts::boolean ? (x != 0) : ts::is_integer(t) ? std::trunc(x) : ts::round_to(t, x);
    EXPECT_EQ(h.to_vector(), want) << ts::dtype_name(t);
  }
}

// The host side of GpuRuntime.CopyConvertsAcrossDtypesAndStrides: every pair's sources
// build, a strided copy places each element where the contiguous copy does, and a copy
// to f64 or to the same dtype keeps the values.
TEST(Buffer, CopiesEveryDtypePairWithStrides) {
  for (ts::DType st : buffer_cases::all_dtypes()) {
    for (ts::DType dt : buffer_cases::all_dtypes()) {
      std::string what = ts::dtype_name(st) + " -> " + ts::dtype_name(dt);
      auto src = buffer_cases::conversion_source(st);
      auto dst = ts::Buffer::empty({4, 6}, dt);
      dst.copy_from(src);
      if (dt == st || dt == ts::f64) EXPECT_EQ(ts::count_mismatches(dst, src, 0, 0), 0) << what;
      auto base = ts::Buffer::zeros({6, 9}, dt);
      base.narrow(1, 3, 4).copy_from(src.transpose(0, 1));
      std::vector<double> got = base.to_vector(), flat = dst.to_vector();
      for (int r = 0; r < 6; ++r)
        for (int c = 0; c < 9; ++c) {
          double want = c >= 3 && c < 7 ? flat[(c - 3) * 6 + r] : 0.0;
          EXPECT_TRUE(got[r * 9 + c] == want || (std::isnan(want) && std::isnan(got[r * 9 + c])))
              << what << " at [" << r << ", " << c << "]";
        }
    }
  }
}

TEST(Buffer, TheLowestI64IsInRange) {
  // -2^63 is an i64 (its lower bound minus 1 rounds to itself in double: it was refused).
  ts::Buffer b =
      ts::Buffer::from_vector({-9223372036854775808.0, 4611686018427387904.0}, {2}, ts::i64);
  EXPECT_EQ(b.to_vector(), (std::vector<double>{-9223372036854775808.0, 4611686018427387904.0}));
  EXPECT_THROW(ts::Buffer::scalar(-9223372036854777856.0, ts::i64),
               ts::UserError);  // the next double below
}
