// Readable generated CUDA: the user's names (ts::kernel parameter names, Tensor::named,
// Value::named) made valid, unique identifiers; no constant-folding noise; one index
// expression per line; names kept out of the tuned-config key. Every source is compiled
// with NVRTC for sm_90 (no GPU needed).
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <tessel/tessel.hpp>

#include "autotune/cache_key.hpp"
#include "codegen/fold.hpp"
#include "codegen/names.hpp"
#include "examples/kernels/basic.hpp"
#include "examples/kernels/norms.hpp"
#include "examples/kernels/seed002.hpp"
#include "runtime/kernel_tuning.hpp"
#include "tests/nvrtc_test_util.hpp"
#include "tests/user_error_util.hpp"

namespace ts = tessel;

namespace {

using nvrtc_test::compile;

ts::Buffer f32(std::vector<int64_t> shape) { return ts::Buffer::zeros(shape, ts::f32); }

bool has(const std::string& src, const std::string& what) {
  return src.find(what) != std::string::npos;
}

// The constant-folding noise generated code must not carry: `(true && ...)`, `1 * n`,
// `n * 1`, `+ 0`, `>> 0` (integer literals 0 and 1 as operands of the identity).
std::vector<std::string> noise(const std::string& src) {
  static const std::vector<std::pair<std::string, std::regex>> patterns = {
      {"true &&", std::regex(R"(\btrue &&)")},
      {"&& true", std::regex(R"(&& true\b)")},
      {"1 *", std::regex(R"((^|[^0-9A-Za-z_.])1(LL)? \*)")},
      {"* 1", std::regex(R"(\* 1(LL)?([^0-9A-Za-z_.x]|$))")},
      {"+ 0", std::regex(R"(\+ 0(LL)?([^0-9A-Za-z_.x]|$))")},
      {">> 0", std::regex(R"(>> 0([^0-9A-Za-z_.x]|$))")},
      {"0 |", std::regex(R"((^|[^0-9A-Za-z_.])0 \|)")}};
  std::vector<std::string> found;
  std::istringstream in(src);
  for (std::string line; std::getline(in, line);)
    for (const auto& [what, re] : patterns)
      if (std::regex_search(line, re)) found.push_back(what + " in: " + line);
  return found;
}

// Lines of vector loads and stores, which must take their indices from named locals.
std::vector<std::string> vector_access_lines(const std::string& src) {
  std::vector<std::string> out;
  std::istringstream in(src);
  for (std::string line; std::getline(in, line);)
    if (has(line, "ts::ld_vec<") || has(line, "ts::st_vec<")) out.push_back(line);
  return out;
}

// The folding helpers drop identities and parenthesize by C++ precedence only.
TEST(ReadableCode, FoldDropsIdentitiesAndParenthesizesByPrecedence) {
  namespace fold = ts::codegen::fold;
  EXPECT_EQ(fold::add("tb", "0"), "tb");
  EXPECT_EQ(fold::add("0LL", "n"), "n");
  EXPECT_EQ(fold::add("a", "b * c"), "a + b * c");
  EXPECT_EQ(fold::add("a ? b : c", "d"), "(a ? b : c) + d");
  EXPECT_EQ(fold::sub("a", "b + c"), "a - (b + c)");
  EXPECT_EQ(fold::mul("1", "nt0"), "nt0");
  EXPECT_EQ(fold::mul("((int)1)", "s"), "s");
  EXPECT_EQ(fold::mul("a + b", "s"), "(a + b) * s");
  EXPECT_EQ(fold::mul("a", "b / c"), "a * (b / c)");
  EXPECT_EQ(fold::mul("10", "nt0"), "10 * nt0");  // 10 is not 1
  EXPECT_EQ(fold::land({"true", "(i < n)"}), "i < n");
  EXPECT_EQ(fold::land({"true", "true"}), "true");
  EXPECT_EQ(fold::land({"a", "false", "b"}), "false");
  EXPECT_EQ(fold::land({"(a || b)", "c"}), "(a || b) && c");
  EXPECT_EQ(fold::lor({"false", "i < n"}), "(i < n)");
  EXPECT_EQ(fold::lor({"false", "(false)"}), "false");
  EXPECT_EQ(fold::lor({"a", "true", "b"}), "true");
  EXPECT_EQ(fold::lor({"a && b", "c"}), "(a && b) || c");
  EXPECT_EQ(fold::bits("TS_FLAT(r)", 0, 1023), "(TS_FLAT(r) & 1023)");
  EXPECT_EQ(fold::bits("TS_FLAT(r)", 10, 3), "((TS_FLAT(r) >> 10) & 3)");
  EXPECT_EQ(fold::bit_or("0", fold::shl("(tid & 7)", 0)), "(tid & 7)");
  EXPECT_EQ(fold::cmp("tb + c", "<", "te"), "tb + c < te");
  EXPECT_EQ(fold::cmp("x & 3", "<", "n"), "(x & 3) < n");
}

TEST(ReadableCode, IdentifiersAreValidAndClearOfReservedNames) {
  using ts::codegen::Names;
  EXPECT_EQ(Names::identifier("my x"), "my_x");
  EXPECT_EQ(Names::identifier("a__b"), "a_b");
  EXPECT_EQ(Names::identifier("2nd"), "u_2nd");
  EXPECT_EQ(Names::identifier("_x"), "u_x");
  EXPECT_EQ(Names::identifier("TS_N"), "u_TS_N");
  EXPECT_EQ(Names::identifier("float"), "float_");
  EXPECT_EQ(Names::identifier("tid"), "tid_");
  EXPECT_EQ(Names::identifier("v12"), "v12_");
  EXPECT_EQ(Names::identifier("lb7_0"), "lb7_0_");
  EXPECT_EQ(Names::identifier("weight"), "weight");
  EXPECT_EQ(Names::identifier(""), "u_");
}

TEST(ReadableCode, RmsNormUsesTheUsersNames) {
  REQUIRE_NVRTC();
  std::string src = compile(examples::make_rms_norm(), f32({37, 1000}), f32({1000}), 1e-5);
  for (const char* name : {"const float* __restrict__ x,", "int x_size1", "int x_stride0",
                           "const float* __restrict__ weight,", "float eps", "float* out,",
                           "int out_stride0", "float row[TS_N]", "float inv_rms[TS_N]", "weight_"})
    EXPECT_TRUE(has(src, name)) << name << "\n" << src;
  EXPECT_FALSE(std::regex_search(src, std::regex(R"(\b(arg|buf)[0-9]+)"))) << src;
  EXPECT_EQ(noise(src), std::vector<std::string>{}) << src;
}

TEST(ReadableCode, AddUsesTheUsersNames) {
  REQUIRE_NVRTC();
  std::string src = compile(examples::make_add(), f32({1000}), f32({1000}));
  for (const char* name :
       {"const float* __restrict__ x", "const float* __restrict__ y", "float* out", "int x_size0"})
    EXPECT_TRUE(has(src, name)) << name << "\n" << src;
  EXPECT_TRUE(has(src, "ts::st_vec<float, TS_V, false, true>(out + idx0,")) << src;
  EXPECT_EQ(noise(src), std::vector<std::string>{}) << src;
}

// Kernels of several shapes (2-D tiles, reductions, a persistent loop over a device bound,
// unnamed arguments, a flattened loop, a grouped pid mapping) carry no folding noise, and
// their vector accesses index through locals (idx<d>, off), one expression per line.
TEST(ReadableCode, NoFoldingNoiseAndIndicesOnLinesOfTheirOwn) {
  REQUIRE_NVRTC();
  ts::Settings flat{.config = ts::Config{.block_sizes = std::vector<int64_t>{16, 16},
                                         .flatten_loops = std::vector<bool>{true}}};
  ts::Settings grouped{.config = ts::Config{.block_sizes = std::vector<int64_t>{16, 16},
                                            .l2_groupings = std::vector<int>{4}}};
  std::vector<std::string> sources = {
      compile(examples::make_softmax(), f32({37, 1000})),
      compile(examples::make_layer_norm(), f32({37, 1000}), f32({1000}), f32({1000}), 1e-5),
      compile(examples::make_rms_norm(), f32({64, 4096}), f32({4096}), 1e-5),
      compile(examples::make_add_2d(), f32({100, 300}), f32({100, 300})),
      compile(examples::make_add_2d(flat), f32({100, 300}), f32({100, 300})),
      compile(examples::make_add_2d(grouped), f32({100, 300}), f32({100, 300})),
      compile(examples::make_padded_sum(), f32({100, 100}),
              ts::Buffer::from_vector({80}, {1}, ts::i32))};
  for (const std::string& src : sources) {
    EXPECT_EQ(noise(src), std::vector<std::string>{}) << src;
    for (const std::string& line : vector_access_lines(src))
      EXPECT_FALSE(has(line, "TS_FLAT")) << line << "\n" << src;
  }
}

// A user's name becomes a C identifier, clear of keywords and of tessel's own names
// (letters then digits, such as v12), and unique in the kernel.
TEST(ReadableCode, NamesAreMadeValidAndUnique) {
  REQUIRE_NVRTC();
  auto k =
      ts::kernel("names", {"my x", "int", "v12"}, [](ts::Tensor a, ts::Tensor b, ts::Tensor c) {
        ts::Tensor o1 = ts::empty_like(a).named("out");
        ts::Tensor o2 = ts::empty_like(a).named("out");
        ts::Tensor o3 = ts::empty_like(a).named("2nd-out");
        for (auto t : ts::tile(a.size(0))) {
          ts::Value s = (a(t) + b(t)).named("tid");
          o1(t) = s;
          o2(t) = s * c(t);
          o3(t) = s + 1;
        }
        return std::make_tuple(o1, o2, o3);
      });
  std::string src = compile(k, f32({100}), f32({100}), f32({100}));
  for (const char* name :
       {"__restrict__ my_x,", "__restrict__ int_,", "int int_size0", "__restrict__ v12_,",
        "float* out,", "float* out_2,", "float* u_2nd_out", "float tid_[TS_N]"})
    EXPECT_TRUE(has(src, name)) << name << "\n" << src;
  EXPECT_FALSE(has(src, "__size")) << src;  // a doubled '_' is reserved in C++
}

// A Value carried through a device loop takes its initial value's name.
TEST(ReadableCode, CarriedValuesTakeTheirInitialName) {
  REQUIRE_NVRTC();
  auto k = ts::kernel("row_sums", {"x"}, [](ts::Tensor x) {
    ts::Tensor out = ts::empty({x.size(0)}, x.dtype()).named("sums");
    for (auto tm : ts::tile(x.size(0))) {
      ts::Value acc = ts::zeros({tm}).named("acc");
      for (auto tn : ts::tile(x.size(1))) acc = acc + ts::sum(x(tm, tn), 1);
      out(tm) = acc;
    }
    return out;
  });
  std::string src = compile(k, f32({30, 70}));
  EXPECT_TRUE(has(src, "float acc[TS_N];")) << src;
  EXPECT_TRUE(has(src, "float acc_init[TS_N];")) << src;
  EXPECT_TRUE(has(src, "acc_next")) << src;
  EXPECT_TRUE(has(src, "float* sums")) << src;
  EXPECT_EQ(noise(src), std::vector<std::string>{}) << src;
}

TEST(ReadableCode, AWrongNumberOfParameterNamesIsAnError) {
  int line = __LINE__ + 2;
  std::string msg = user_error_test::user_error([] {
    ts::kernel("two", {"a"}, [](ts::Tensor a, ts::Tensor b) {
      ts::Tensor out = ts::empty_like(a);
      for (auto t : ts::tile(a.size(0))) out(t) = a(t) + b(t);
      return out;
    });
  });
  user_error_test::expect_message(msg, "two", "readable_code_test.cpp", line,
                                  "1 parameter names are given for a lambda of 2 parameters",
                                  "give one name per parameter");
}

// Names change identifiers only: the tuned-config key (kernel_content_hash) is the same
// with and without them, while the IR text shows them.
TEST(ReadableCode, NamesStayOutOfTheConfigKey) {
  auto named = examples::make_add();
  auto plain = ts::kernel("add", [](ts::Tensor x, ts::Tensor y) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = x(t) + y(t);
    return out;
  });
  ts::Buffer x = f32({1000});
  const ts::ir::Graph& g1 = ts::rt::traced_graph(named.impl(), ts::detail::call_args(x, x));
  const ts::ir::Graph& g2 = ts::rt::traced_graph(plain.impl(), ts::detail::call_args(x, x));
  EXPECT_EQ(ts::autotune::kernel_content_hash(g1), ts::autotune::kernel_content_hash(g2));
  EXPECT_EQ(ts::ir::print(g1, false), ts::ir::print(g2, false));
  EXPECT_TRUE(has(ts::ir::print(g1), "// out")) << ts::ir::print(g1);
  EXPECT_FALSE(has(ts::ir::print(g2), "// out")) << ts::ir::print(g2);
  EXPECT_FALSE(has(ts::ir::print(g1, /*names=*/false), "//")) << ts::ir::print(g1, false);
}

// Errors name a named tensor.
TEST(ReadableCode, ErrorsNameNamedTensors) {
  auto k = ts::kernel("racy", {"x"}, [](ts::Tensor x) {
    ts::Tensor out = ts::empty({1}, x.dtype()).named("total");
    for (auto t : ts::tile(x.size(0))) out(0) = ts::sum(x(t), 0);
    return out;
  });
  std::string msg = user_error_test::user_error([&] { k(f32({100})); });
  EXPECT_TRUE(has(msg, "the tensor 'total' allocated at line")) << msg;
}

// A float argument next to an f16 tile value is converted on the host: its parameter is
// named after the argument and the dtype (scale_f16), not s<id>.
TEST(ReadableCode, AConvertedScalarParameterKeepsTheArgumentsName) {
  auto k = ts::kernel("scale_f16", {"x", "scale"}, [](ts::Tensor x, ts::Value scale) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) out(t) = ts::where(x(t) > 0, x(t), scale);
    return out;
  });
  std::string src = compile(k, ts::Buffer::zeros({100}, ts::f16), 0.1);
  EXPECT_TRUE(has(src, "float scale_f16")) << src;
  EXPECT_FALSE(std::regex_search(src, std::regex(R"(float s[0-9]+\b)"))) << src;
}

}  // namespace
