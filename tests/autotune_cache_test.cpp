// The on-disk cache: keys (stability and invalidation), atomic writes, tuned configs and
// cubins (src/autotune/{cache_key,disk_cache,config_cache,cubin_cache}.hpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "autotune/cache_key.hpp"
#include "autotune/config_cache.hpp"
#include "autotune_test_util.hpp"
#include "common/disk_cache.hpp"
#include "driver/cubin_cache.hpp"
#include "driver/cuda_api.hpp"
#include "examples/kernels/basic.hpp"

namespace ts = tessel;
namespace at = tessel::autotune;
namespace fs = std::filesystem;
using autotune_test::graph_of;

namespace {

class AutotuneCache : public autotune_test::CacheDirTest {};

at::ConfigKeyParts parts_for(const ts::ir::Graph& g) {
  return at::config_key_parts(g, "gpu|f32:2,4096a,4096cA@0|i32", ts::Settings{},
                              "NVIDIA H200 sm_90");
}

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out.push_back(e.path());
  return out;
}

TEST(AutotuneCacheKey, SameKernelFromTwoKernelObjectsHasTheSameKey) {
  ts::Buffer x = ts::Buffer::empty({64, 300}, ts::f32);
  auto a = autotune_test::make_softmax();
  auto b = autotune_test::make_softmax();
  const ts::ir::Graph& ga = graph_of(a, x);
  const ts::ir::Graph& gb = graph_of(b, x);
  EXPECT_NE(&ga, &gb);
  EXPECT_EQ(at::kernel_content_hash(ga), at::kernel_content_hash(gb));
  EXPECT_EQ(at::config_key(parts_for(ga)), at::config_key(parts_for(gb)));
  EXPECT_EQ(at::config_key(parts_for(ga)).size(), 32u);
}

TEST(AutotuneCacheKey, DifferentIrGivesADifferentKernelHash) {
  ts::Buffer x = ts::Buffer::empty({1024}, ts::f32);
  auto add = examples::make_add();
  auto copy = examples::make_copy();
  EXPECT_NE(at::kernel_content_hash(graph_of(add, x, x)),
            at::kernel_content_hash(graph_of(copy, x)));
  // Same code, a fixed block size: the printed IR is the same, the hash is not.
  auto fixed = ts::kernel("add", [](ts::Tensor x, ts::Tensor y) {
    ts::Tensor out = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0), ts::TileOptions{.block_size = 128})) out(t) = x(t) + y(t);
    return out;
  });
  EXPECT_NE(at::kernel_content_hash(graph_of(add, x, x)),
            at::kernel_content_hash(graph_of(fixed, x, x)));
}

TEST(AutotuneCacheKey, EachPartInvalidatesTheKey) {
  ts::Buffer x = ts::Buffer::empty({1024}, ts::f32);
  auto add = examples::make_add();
  at::ConfigKeyParts base = parts_for(graph_of(add, x, x));
  std::string key = at::config_key(base);
  for (int part = 0; part < 6; ++part) {
    at::ConfigKeyParts p = base;
    std::string* field[] = {&p.kernel_hash,    &p.spec_key, &p.gpu,
                            &p.tessel_version, &p.nvrtc,    &p.tuning};
    *field[part] += "x";
    EXPECT_NE(at::config_key(p), key) << "part " << part;
  }
  at::ConfigKeyParts quick =
      at::config_key_parts(graph_of(add, x, x), base.spec_key,
                           ts::Settings{.autotune_effort = ts::AutotuneEffort::quick}, base.gpu);
  at::ConfigKeyParts full =
      at::config_key_parts(graph_of(add, x, x), base.spec_key,
                           ts::Settings{.autotune_effort = ts::AutotuneEffort::full}, base.gpu);
  EXPECT_NE(at::config_key(quick), at::config_key(full));
}

TEST_F(AutotuneCache, CacheDirComesFromTheEnvironment) {
  std::string home = std::getenv("HOME") ? std::getenv("HOME") : "";
  std::string xdg = std::getenv("XDG_CACHE_HOME") ? std::getenv("XDG_CACHE_HOME") : "";
  EXPECT_EQ(ts::cache_dir(), dir_);
  ::unsetenv("TESSEL_CACHE_DIR");
  ::setenv("XDG_CACHE_HOME", "/tmp/xdg_test", 1);
  EXPECT_EQ(ts::cache_dir(), fs::path("/tmp/xdg_test/tessel"));
  ::unsetenv("XDG_CACHE_HOME");
  ::setenv("HOME", "/tmp/home_test", 1);
  EXPECT_EQ(ts::cache_dir(), fs::path("/tmp/home_test/.cache/tessel"));
  ::setenv("HOME", home.c_str(), 1);
  if (!xdg.empty()) ::setenv("XDG_CACHE_HOME", xdg.c_str(), 1);
}

TEST_F(AutotuneCache, AtomicWriteCreatesDirectoriesAndLeavesNoTemporary) {
  fs::path f = dir_ / "a" / "b" / "record.json";
  ASSERT_TRUE(ts::write_file_atomic(f, "first"));
  ASSERT_TRUE(ts::write_file_atomic(f, "second"));
  EXPECT_EQ(ts::read_file(f).value_or(""), "second");
  EXPECT_EQ(files_in(dir_), std::vector<fs::path>{f});
  EXPECT_FALSE(ts::read_file(dir_ / "missing").has_value());
}

TEST_F(AutotuneCache, TunedConfigRoundTripsAndIgnoresPartialTemporaries) {
  ts::Buffer x = ts::Buffer::empty({1024}, ts::f32);
  auto add = examples::make_add();
  at::ConfigKeyParts parts = parts_for(graph_of(add, x, x));
  fs::path final_path = dir_ / "configs" / (at::config_key(parts) + ".json");
  // A writer that died mid-way left a partial temporary: it is never read.
  fs::create_directories(final_path.parent_path());
  std::ofstream(final_path.string() + ".tmp.12345.0") << R"({"key": {"kernel_ha)";
  EXPECT_FALSE(at::load_tuned(parts).has_value());

  at::TunedRecord r{ts::Config{.block_sizes = std::vector<int64_t>{256}, .num_warps = 2}, 12.5, 17,
                    "add"};
  ASSERT_TRUE(at::store_tuned(parts, r));
  std::optional<at::TunedRecord> got = at::load_tuned(parts);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->config, r.config);
  EXPECT_EQ(got->time_us, 12.5);
  EXPECT_EQ(got->configs_tried, 17);

  at::ConfigKeyParts other = parts;
  other.gpu = "NVIDIA H100 sm_90";
  EXPECT_FALSE(at::load_tuned(other).has_value());
}

TEST_F(AutotuneCache, ACorruptRecordIsAMiss) {
  ts::Buffer x = ts::Buffer::empty({1024}, ts::f32);
  auto add = examples::make_add();
  at::ConfigKeyParts parts = parts_for(graph_of(add, x, x));
  ASSERT_TRUE(at::store_tuned(parts, {ts::Config{.num_warps = 2}, 1.0, 1, "add"}));
  fs::path path = dir_ / "configs" / (at::config_key(parts) + ".json");
  std::string text = ts::read_file(path).value();
  std::ofstream(path, std::ios::trunc) << text.substr(0, text.size() / 2);
  EXPECT_FALSE(at::load_tuned(parts).has_value());
}

TEST_F(AutotuneCache, SkipCacheReadsAndWritesNothing) {
  ts::Buffer x = ts::Buffer::empty({1024}, ts::f32);
  auto add = examples::make_add();
  at::ConfigKeyParts parts = parts_for(graph_of(add, x, x));
  ASSERT_TRUE(at::store_tuned(parts, {ts::Config{.num_warps = 2}, 1.0, 1, "add"}));
  ::setenv("TESSEL_SKIP_CACHE", "1", 1);
  EXPECT_TRUE(ts::cache_disabled());
  EXPECT_FALSE(at::load_tuned(parts).has_value());
  EXPECT_FALSE(at::store_tuned(parts, {ts::Config{.num_warps = 4}, 1.0, 1, "add"}));
  ::setenv("TESSEL_SKIP_CACHE", "0", 1);
  EXPECT_FALSE(ts::cache_disabled());
  EXPECT_EQ(at::load_tuned(parts)->config.num_warps, 2);
}

const char* kTiny = "extern \"C\" __global__ void tiny(float* p) { p[threadIdx.x] *= 2.0f; }\n";

TEST_F(AutotuneCache, CubinCacheHitMakesNoNvrtcCall) {
  if (!ts::rt::nvrtc_available()) GTEST_SKIP() << "NVRTC not installed";
  ts::rt::CompileOptions opts;
  opts.arch = 90;
  int64_t before = ts::rt::compile_count();
  std::string a = ts::rt::compile_cached(kTiny, "tiny.cu", opts);
  EXPECT_EQ(ts::rt::compile_count(), before + 1);
  std::string b = ts::rt::compile_cached(kTiny, "tiny.cu", opts);
  EXPECT_EQ(ts::rt::compile_count(), before + 1);
  EXPECT_EQ(a, b);
  opts.arch = 80;  // other options: another key
  ts::rt::compile_cached(kTiny, "tiny.cu", opts);
  EXPECT_EQ(ts::rt::compile_count(), before + 2);
}

TEST_F(AutotuneCache, ACorruptCubinIsCompiledAgain) {
  if (!ts::rt::nvrtc_available()) GTEST_SKIP() << "NVRTC not installed";
  ts::rt::CompileOptions opts;
  std::string good = ts::rt::compile_cached(kTiny, "tiny.cu", opts);
  fs::path path = dir_ / "cubins" / (ts::rt::cubin_key(kTiny, "tiny.cu", opts) + ".cubin");
  ASSERT_TRUE(fs::exists(path));
  std::string text = ts::read_file(path).value();
  text[text.size() - 10] ^= 0x55;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  int64_t before = ts::rt::compile_count();
  EXPECT_EQ(ts::rt::compile_cached(kTiny, "tiny.cu", opts), good);
  EXPECT_EQ(ts::rt::compile_count(), before + 1);
}

TEST(AutotuneCacheKey, CubinKeyCoversSourceOptionsAndHeaders) {
  ts::rt::CompileOptions opts;
  std::string k = ts::rt::cubin_key(kTiny, "tiny.cu", opts);
  EXPECT_NE(ts::rt::cubin_key(std::string(kTiny) + " ", "tiny.cu", opts), k);
  ts::rt::CompileOptions extra = opts;
  extra.extra = {"-lineinfo"};
  EXPECT_NE(ts::rt::cubin_key(kTiny, "tiny.cu", extra), k);
  ts::rt::CompileOptions header = opts;
  header.headers = {{"h.cuh", "int x;"}};
  EXPECT_NE(ts::rt::cubin_key(kTiny, "tiny.cu", header), k);
  EXPECT_EQ(ts::rt::cubin_key(kTiny, "tiny.cu", opts), k);
}

}  // namespace
