// TESSEL_PRINT_CODE and TESSEL_DUMP_DIR on the interpreter (no GPU): the CUDA a GPU would
// compile for the specialization's config is printed, or the reason there is none; the
// dump directory receives the IR, the CUDA, and (NVRTC present) the PTX and cubin for sm_90.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tessel/tessel.hpp>

#include "examples/kernels/basic.hpp"
#include "examples/kernels/matmul.hpp"
#include "examples/kernels/norms.hpp"
#include "tests/nvrtc_test_util.hpp"
#include "tests/user_error_util.hpp"

namespace ts = tessel;
namespace fs = std::filesystem;

namespace {

ts::Buffer f32(std::vector<int64_t> shape) { return ts::Buffer::ones(shape, ts::f32); }

bool has(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A fresh directory per test; the environment variables are unset after it.
class CodeDump : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessel_dump_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    ::unsetenv("TESSEL_PRINT_CODE");
    ::unsetenv("TESSEL_DUMP_DIR");
    ::unsetenv("TESSEL_OVERRIDE_DIR");
  }
  void TearDown() override {
    ::unsetenv("TESSEL_PRINT_CODE");
    ::unsetenv("TESSEL_DUMP_DIR");
    ::unsetenv("TESSEL_OVERRIDE_DIR");
    fs::remove_all(dir_);
  }
  /// The files of the dump directory (or of `in`) whose names end with `suffix`.
  std::vector<fs::path> files(const std::string& suffix, fs::path in = {}) const {
    std::vector<fs::path> out;
    if (in.empty()) in = dir_;
    if (!fs::exists(in)) return out;
    for (const auto& e : fs::directory_iterator(in)) {
      std::string name = e.path().filename().string();
      if (name.size() >= suffix.size() &&
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
        out.push_back(e.path());
    }
    return out;
  }
  fs::path dir_;
};

TEST_F(CodeDump, PrintCodeOnTheInterpreterPrintsWhatAGpuWouldCompileOnce) {
  ::setenv("TESSEL_PRINT_CODE", "1", 1);
  auto k = examples::make_rms_norm();
  ts::Buffer x = f32({37, 1000}), w = f32({1000});
  testing::internal::CaptureStderr();
  ts::Buffer out = k(x, w, 1e-5);
  std::string first = testing::internal::GetCapturedStderr();
  testing::internal::CaptureStderr();
  k(x, w, 1e-5);
  std::string second = testing::internal::GetCapturedStderr();
  EXPECT_NEAR(out.to_vector()[0], 1.0, 1e-5);  // the interpreter ran it
  EXPECT_TRUE(has(first, "kernel 'rms_norm' runs on the interpreter; a GPU would compile"))
      << first;
  EXPECT_TRUE(has(first, "extern \"C\" __global__ void __launch_bounds__(256) rms_norm_loop0("))
      << first;
  EXPECT_TRUE(has(first, "const float* __restrict__ x,")) << first;
  // The printed code is the code kernel.cuda() gives for these arguments.
  EXPECT_TRUE(has(first, k.cuda(false, x, w, 1e-5).at(0))) << first;
  EXPECT_EQ(second, "");  // once per specialization
}

TEST_F(CodeDump, PrintCodeOnTheInterpreterSaysWhyThereIsNoCuda) {
  ::setenv("TESSEL_PRINT_CODE", "1", 1);
  // An outer product of a tile with itself: the interpreter runs it, the CUDA backend
  // cannot lower it.
  auto outer = ts::kernel("tile_outer", [](ts::Tensor y) {
    ts::Tensor out = ts::empty_like(y);
    for (auto tm : ts::tile(y.size(0)))
      out(tm) = ts::max(y(tm)(ts::newaxis, ts::all) - y(tm)(ts::all, ts::newaxis), 1);
    return out;
  });
  auto no_loop = ts::kernel("no_loop", [](ts::Tensor y) { return ts::zeros_like(y); });
  testing::internal::CaptureStderr();
  outer(ts::Buffer::from_vector({0, 1, 2, 3}, {4}, ts::f32));
  no_loop(f32({4}));
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(has(err, "// no CUDA for the loop at code_dump_test.cpp:")) << err;
  EXPECT_TRUE(has(err, "the CUDA backend cannot lower this yet")) << err;
  EXPECT_TRUE(has(err, "kernel 'no_loop' has no top-level loop: a GPU would compile nothing"))
      << err;
  // TESSEL_DUMP_DIR: the stages and the reason, in failure.txt, as a GPU call would write them.
  ::unsetenv("TESSEL_PRINT_CODE");
  ::setenv("TESSEL_DUMP_DIR", dir_.c_str(), 1);
  outer(ts::Buffer::from_vector({0, 1, 2, 3, 4}, {5}, ts::f32));
  std::vector<fs::path> stages = files(".stages");
  ASSERT_EQ(stages.size(), 1u);
  const std::string failure = read(stages[0] / "failure.txt");
  EXPECT_TRUE(has(failure, "the CUDA backend cannot lower this yet")) << failure;
  EXPECT_TRUE(has(failure, "the loop at code_dump_test.cpp:")) << failure;
}

// The CUDA differs by target (TESSEL_TARGET_ARCH, else GPU 0): each target's is a file of
// its own, headed by the target, beside its PTX and cubin.
TEST_F(CodeDump, TheCudaOfEachTargetIsAFileOfItsOwn) {
  ::setenv("TESSEL_DUMP_DIR", dir_.c_str(), 1);
  ::setenv("TESSEL_PRINT_CODE", "1", 1);
  std::string err;
  for (const char* arch : {"80", "90"}) {
    ::setenv("TESSEL_TARGET_ARCH", arch, 1);
    testing::internal::CaptureStderr();
    examples::make_add()(f32({1000}), f32({1000}));  // a new kernel: shown again
    err += testing::internal::GetCapturedStderr();
  }
  ::unsetenv("TESSEL_TARGET_ARCH");
  for (int arch : {80, 90}) {
    std::vector<fs::path> cu = files(fmt::format(".sm_{}.cu", arch));
    ASSERT_EQ(cu.size(), 1u) << arch;
    EXPECT_TRUE(has(read(cu[0]), fmt::format("// Generated by tessel for kernel 'add', loop at "
                                             "basic.hpp:")))
        << read(cu[0]);
    EXPECT_TRUE(has(read(cu[0]), fmt::format(", lowered for sm_{}.\n", arch))) << read(cu[0]);
    EXPECT_TRUE(has(err, fmt::format(", lowered for sm_{}).", arch))) << err;
    if (ts::rt::nvrtc_available())
      EXPECT_EQ(files(fmt::format(".sm_{}.ptx", arch)).size(), 1u) << arch;
  }
  EXPECT_EQ(files(".cu").size(), 2u);
}

// kernel.cuda() writes what a GPU call of its arguments would: the IR and the CUDA, and
// compiled (cuda(true, ...)) the PTX and cubin too, under the GPU call's names.
TEST_F(CodeDump, KernelCudaWritesTheDumpOfAGpuCall) {
  ::setenv("TESSEL_DUMP_DIR", dir_.c_str(), 1);
  auto k = examples::make_add();
  const std::string cu = k.cuda(false, f32({1000}), f32({1000})).at(0);
  ASSERT_EQ(files(".ir").size(), 1u);
  ASSERT_EQ(files(".sm_90.cu").size(), 1u);
  EXPECT_EQ(read(files(".sm_90.cu")[0]), cu);
  EXPECT_EQ(files(".ptx").size(), 0u);
  EXPECT_TRUE(
      fs::is_regular_file(dir_ / (files(".ir")[0].stem().string() + ".stages") / "08-emit.ir"));
  REQUIRE_NVRTC();
  k.cuda(true, f32({1000}), f32({1000}));
  EXPECT_EQ(files(".sm_90.cu").size(), 1u);  // the same specialization and config
  EXPECT_EQ(files(".sm_90.ptx").size(), 1u);
  EXPECT_EQ(files(".sm_90.cubin").size(), 1u);
}

TEST_F(CodeDump, DumpDirWritesTheIrCudaPtxAndCubinOfEachSpecialization) {
  ::setenv("TESSEL_DUMP_DIR", dir_.c_str(), 1);
  auto k = examples::make_add();
  k(f32({1000}), f32({1000}));
  k(f32({1000}), f32({1000}));  // same specialization: nothing new
  k(f32({3000}), f32({3000}));  // another size bucket: a new specialization
  std::vector<fs::path> ir = files(".ir"), cu = files(".cu");
  ASSERT_EQ(ir.size(), 2u);
  ASSERT_EQ(cu.size(), 2u);
  for (const fs::path& p : ir) {
    std::string name = p.filename().string(), text = read(p);
    EXPECT_EQ(name.rfind("add-spec_", 0), 0u) << name;
    EXPECT_TRUE(has(name, "-config_")) << name;
    // Filed as a GPU call of these arguments would file it (TESSEL_OVERRIDE_DIR finds it).
    EXPECT_TRUE(has(text, "// specialization key: g|")) << text;
    EXPECT_TRUE(has(text, "// config: {\"block_sizes\"")) << text;
    EXPECT_TRUE(has(text, "kernel add\n")) << text;
    EXPECT_TRUE(has(text, "= arg 0 : f32 tensor rank 1  // x")) << text;
    EXPECT_TRUE(has(text, "= loop tile(")) << text;
  }
  for (const fs::path& p : cu) {
    std::string name = p.filename().string(), text = read(p);
    EXPECT_EQ(name.rfind("add_loop0-spec_", 0), 0u) << name;
    EXPECT_TRUE(has(text, "__global__ void __launch_bounds__(128) add_loop0(")) << text;
    EXPECT_TRUE(has(text, "float* out")) << text;
  }
  if (!ts::rt::nvrtc_available()) GTEST_SKIP() << "NVRTC not found: no PTX or cubin";
  std::vector<fs::path> ptx = files(".sm_90.ptx"), cubin = files(".sm_90.cubin");
  ASSERT_EQ(ptx.size(), 2u);
  ASSERT_EQ(cubin.size(), 2u);
  for (const fs::path& p : ptx) {
    std::string text = read(p);
    EXPECT_TRUE(has(text, ".target sm_90")) << text;
    EXPECT_TRUE(has(text, ".entry add_loop0(")) << text;
    EXPECT_TRUE(has(text, "ld.global")) << text;
  }
  for (const fs::path& p : cubin) {
    std::string bytes = read(p);
    ASSERT_GT(bytes.size(), 1000u);
    EXPECT_EQ(bytes.substr(0, 4), std::string("\x7f"
                                              "ELF"))
        << p;
    EXPECT_TRUE(has(bytes, "add_loop0")) << p;  // the symbol table names the kernel
  }
}

// A kernel name past file-name limits (255 bytes) is cut to 80 characters and a hash in
// the generated function's name and the dump's files; two such names differ.
TEST_F(CodeDump, LongKernelNamesGiveShortDistinctFileNames) {
  ::setenv("TESSEL_DUMP_DIR", dir_.c_str(), 1);
  for (char last : {'a', 'b'}) {
    std::string name = std::string(300, 'n') + last;
    auto k = ts::kernel(name, [](ts::Tensor x) {
      ts::Tensor out = ts::empty_like(x);
      for (auto t : ts::tile(x.size(0))) out(t) = x(t) + 1.0;
      return out;
    });
    EXPECT_EQ(k(f32({10})).to_vector(), std::vector<double>(10, 2.0));
    std::vector<std::string> src = k.cuda(false, f32({10}));
    ASSERT_EQ(src.size(), 1u);
    EXPECT_TRUE(std::regex_search(src[0], std::regex(" n{80}_[0-9a-f]{8}_loop0\\(")))
        << src[0].substr(0, 600);
  }
  // Per kernel one set of files: the interpreter call and kernel.cuda() file them under the
  // key of a GPU call.
  std::vector<fs::path> ir = files(".ir"), cu = files(".cu");
  ASSERT_EQ(ir.size(), 2u);
  ASSERT_EQ(cu.size(), 2u);
  std::set<std::string> names;
  for (const fs::path& p : ir) names.insert(p.filename().string());
  EXPECT_EQ(names.size(), 2u);
  for (const fs::path& p : ir) EXPECT_LT(p.filename().string().size(), 160u) << p;
  for (const fs::path& p : cu) EXPECT_LT(p.filename().string().size(), 160u) << p;
}

TEST_F(CodeDump, NothingIsPrintedOrWrittenWithoutTheVariables) {
  auto k = examples::make_add();
  testing::internal::CaptureStderr();
  k(f32({100}), f32({100}));
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_FALSE(fs::exists(dir_));
}

// An unwritable TESSEL_DUMP_DIR (a file, or a directory without write permission) is a
// UserError naming the kernel, the path and the OS error, and saying what to set.
TEST_F(CodeDump, ADumpDirThatIsAFileNamesTheKernelThePathAndTheOsError) {
  auto k = examples::make_add();
  std::ofstream(dir_.string()) << "a file, not a directory";
  ::setenv("TESSEL_DUMP_DIR", dir_.c_str(), 1);
  std::string msg = user_error_test::user_error([&] { k(f32({100}), f32({100})); });
  EXPECT_NE(msg.find("kernel 'add', basic.hpp:"), std::string::npos) << msg;  // its loop
  EXPECT_TRUE(
      has(msg, "TESSEL_DUMP_DIR=" + dir_.string() + " cannot be written: Not a directory") ||
      has(msg, "TESSEL_DUMP_DIR=" + dir_.string() + " cannot be written: File exists"))
      << msg;
  EXPECT_NE(msg.find("set TESSEL_DUMP_DIR to a writable directory, or unset it"), std::string::npos)
      << msg;
}

TEST_F(CodeDump, ADumpDirWithoutWritePermissionNamesTheKernelAndTheOsError) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes into read-only directories";
  auto k = examples::make_add();
  fs::create_directories(dir_);
  fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec);
  ::setenv("TESSEL_DUMP_DIR", dir_.c_str(), 1);
  std::string msg = user_error_test::user_error([&] { k(f32({100}), f32({100})); });
  fs::permissions(dir_, fs::perms::owner_all);
  EXPECT_NE(msg.find("kernel 'add'"), std::string::npos) << msg;
  EXPECT_TRUE(has(msg, "Permission denied")) << msg;
  EXPECT_TRUE(has(msg, "set TESSEL_DUMP_DIR to a writable directory")) << msg;
}

// TESSEL_OVERRIDE_DIR: a dumped file, edited and put in a directory of its own, is compiled
// in place of the generated one (here on the interpreter's dump path, which compiles what a
// GPU call would: rt::compile_kernel).
class CodeOverride : public CodeDump {
 protected:
  /// Dumps add's files for x = [1000] into dir_/dump; returns the one ending in `suffix`.
  fs::path dump_add(const std::string& suffix) {
    ::setenv("TESSEL_DUMP_DIR", (dir_ / "dump").c_str(), 1);
    examples::make_add()(f32({1000}), f32({1000}));
    std::vector<fs::path> found = files(suffix, dir_ / "dump");
    EXPECT_EQ(found.size(), 1u) << suffix;
    return found.empty() ? fs::path() : found[0];
  }
  /// Writes `text` as `file`'s name in dir_/override and points TESSEL_OVERRIDE_DIR there;
  /// later dumps go to dir_/dump2.
  fs::path override_with(const fs::path& file, const std::string& text) {
    fs::create_directories(dir_ / "override");
    fs::path p = dir_ / "override" / file.filename();
    std::ofstream(p, std::ios::binary) << text;
    ::setenv("TESSEL_OVERRIDE_DIR", (dir_ / "override").c_str(), 1);
    ::setenv("TESSEL_DUMP_DIR", (dir_ / "dump2").c_str(), 1);
    return p;
  }
};

TEST_F(CodeOverride, AnEditedCudaFileIsCompiledInPlaceOfTheGeneratedOne) {
  REQUIRE_NVRTC();
  fs::path cu = dump_add(".cu");
  fs::path used = override_with(cu, read(cu) + "\n__device__ int tessel_edited_marker = 7;\n");
  testing::internal::CaptureStderr();
  ts::Buffer out = examples::make_add()(f32({1000}), f32({1000}));
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(out.to_vector()[0], 2.0);  // the interpreter still runs the traced program
  EXPECT_TRUE(has(err, "tessel: kernel 'add': TESSEL_OVERRIDE_DIR: compiling " + used.string() +
                           " in place of the generated add_loop0"))
      << err;
  std::vector<fs::path> ptx = files(".sm_90.ptx", dir_ / "dump2");
  std::vector<fs::path> cubin = files(".sm_90.cubin", dir_ / "dump2");
  ASSERT_EQ(ptx.size(), 1u);
  ASSERT_EQ(cubin.size(), 1u);
  EXPECT_TRUE(has(read(ptx[0]), "tessel_edited_marker")) << read(ptx[0]);
  EXPECT_TRUE(has(read(cubin[0]), "tessel_edited_marker"));
  // The dump's CUDA stays what tessel generated.
  EXPECT_FALSE(has(read(files(".cu", dir_ / "dump2").at(0)), "tessel_edited_marker"));
  // kernel.cuda() (what a GPU call compiles) takes the same file: dumped on a machine without
  // a GPU, edited, used on one.
  testing::internal::CaptureStderr();
  std::vector<std::string> sources = examples::make_add().cuda(true, f32({1000}), f32({1000}));
  err = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(has(err, "TESSEL_OVERRIDE_DIR: compiling " + used.string())) << err;
  ASSERT_EQ(sources.size(), 1u);
  EXPECT_EQ(sources[0], read(used));  // what it compiled
  EXPECT_FALSE(has(examples::make_add().cuda(false, f32({1000}), f32({1000})).at(0),
                   "tessel_edited_marker"));  // not compiled: the generated CUDA
}

TEST_F(CodeOverride, AnEditedPtxFileIsTakenInPlaceOfNvrtcsPtx) {
  REQUIRE_NVRTC();
  fs::path ptx = dump_add(".sm_90.ptx");
  std::string edited = "// edited by hand\n" + read(ptx);
  fs::path used = override_with(ptx, edited);
  testing::internal::CaptureStderr();
  examples::make_add()(f32({1000}), f32({1000}));
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(has(err, "TESSEL_OVERRIDE_DIR: loading " + used.string() +
                           " in place of the PTX of the generated add_loop0"))
      << err;
  std::vector<fs::path> dumped = files(".sm_90.ptx", dir_ / "dump2");
  ASSERT_EQ(dumped.size(), 1u);
  EXPECT_EQ(read(dumped[0]), edited);
  // The driver of a GPU compiles PTX: without one there is no cubin to dump.
  EXPECT_TRUE(files(".sm_90.cubin", dir_ / "dump2").empty());
  EXPECT_EQ(examples::make_add().cuda(true, f32({1000}), f32({1000})).at(0), edited);
}

TEST_F(CodeOverride, ACudaOverrideThatDoesNotCompileNamesTheFileAndNvrtcsLog) {
  REQUIRE_NVRTC();
  fs::path cu = dump_add(".cu");
  fs::path used = override_with(cu, read(cu) + "\nthis is not CUDA\n");
  std::string msg =
      user_error_test::user_error([&] { examples::make_add()(f32({1000}), f32({1000})); });
  // The kernel and the line of its loop.
  EXPECT_TRUE(std::regex_search(msg, std::regex("kernel 'add', [a-z_]+\\.hpp:[0-9]+: "))) << msg;
  EXPECT_TRUE(has(msg, "TESSEL_OVERRIDE_DIR: NVRTC could not compile " + used.string() +
                           " (in place of the generated add_loop0)"))
      << msg;
  EXPECT_TRUE(has(msg, "error")) << msg;  // NVRTC's log
  EXPECT_TRUE(has(msg, "fix the file, or remove it (or unset TESSEL_OVERRIDE_DIR)")) << msg;
}

TEST_F(CodeOverride, TheDumpDirectoryCannotBeTheOverrideDirectory) {
  fs::path cu = dump_add(".cu");
  ::setenv("TESSEL_OVERRIDE_DIR", (dir_ / "dump").c_str(), 1);
  std::string msg =
      user_error_test::user_error([&] { examples::make_add()(f32({1000}), f32({1000})); });
  EXPECT_TRUE(has(msg, "TESSEL_OVERRIDE_DIR and TESSEL_DUMP_DIR are one directory")) << msg;
  EXPECT_TRUE(has(msg, "copy the dumped files to edit into a directory of their own")) << msg;
}

TEST_F(CodeOverride, FilesOfOtherNamesChangeNothing) {
  REQUIRE_NVRTC();
  fs::path cu = dump_add(".cu");
  fs::path other = cu.parent_path() / ("other_loop0" + cu.filename().string().substr(9));
  override_with(other, "this is not CUDA\n");
  testing::internal::CaptureStderr();
  examples::make_add()(f32({1000}), f32({1000}));
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(has(err, "TESSEL_OVERRIDE_DIR")) << err;
  EXPECT_EQ(files(".sm_90.cubin", dir_ / "dump2").size(), 1u);
}

// Two kernels of one name whose bodies differ file apart: each keeps its dump, and an edit of
// one is not compiled in place of the other.
TEST_F(CodeOverride, TwoKernelsOfOneNameFileApart) {
  REQUIRE_NVRTC();
  auto kernel = [](bool add) {
    return ts::kernel("twin", {"x"}, [add](ts::Tensor x) {
      ts::Tensor out = ts::empty_like(x);
      for (auto t : ts::tile(x.size(0))) out(t) = add ? x(t) + 1 : x(t) * 2;
      return out;
    });
  };
  auto a = kernel(true), b = kernel(false);
  ::setenv("TESSEL_DUMP_DIR", (dir_ / "dump").c_str(), 1);
  a.cuda(false, f32({1000}));
  b.cuda(false, f32({1000}));
  std::vector<fs::path> dumped = files(".cu", dir_ / "dump");
  ASSERT_EQ(dumped.size(), 2u);
  const fs::path of_a = has(read(dumped[0]), "+ 1.0f") ? dumped[0] : dumped[1];
  fs::path used = override_with(of_a, read(of_a) + "\n__device__ int tessel_edited_marker = 7;\n");
  EXPECT_TRUE(has(a.cuda(true, f32({1000})).at(0), "tessel_edited_marker"));
  testing::internal::CaptureStderr();
  EXPECT_FALSE(has(b.cuda(true, f32({1000})).at(0), "tessel_edited_marker"));
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(has(err, "compiling " + used.string())) << err;
}

// A CUDA override without extern "C" compiles to a mangled name the launch cannot find.
TEST_F(CodeOverride, ACudaOverrideWithoutExternCIsAnError) {
  REQUIRE_NVRTC();
  fs::path dumped = dump_add(".cu");
  std::string text = read(dumped);
  const size_t at = text.find("extern \"C\" __global__");
  ASSERT_NE(at, std::string::npos) << text;
  text.erase(at, std::string("extern \"C\" ").size());
  fs::path used = override_with(dumped, text);
  std::string msg =
      user_error_test::user_error([&] { examples::make_add()(f32({1000}), f32({1000})); });
  EXPECT_TRUE(has(msg, "TESSEL_OVERRIDE_DIR: " + used.string() +
                           " does not declare the kernel add_loop0 extern \"C\" __global__"))
      << msg;
  EXPECT_TRUE(has(msg, "keep the generated kernel's declaration")) << msg;
}

// An override whose kernel was renamed would compile and then fail to load on a GPU: an
// error names the file and the name the launch calls.
TEST_F(CodeOverride, AnOverrideThatRenamesTheKernelIsAnError) {
  REQUIRE_NVRTC();
  for (const char* suffix : {".sm_90.ptx", ".cu"}) {
    fs::path dumped = dump_add(suffix);
    std::string text = read(dumped);
    for (size_t at = text.find("add_loop0("); at != std::string::npos;
         at = text.find("add_loop0(", at))
      text.replace(at, 9, "renamed_loop0");
    fs::path used = override_with(dumped, text);
    std::string msg =
        user_error_test::user_error([&] { examples::make_add()(f32({1000}), f32({1000})); });
    EXPECT_TRUE(
        has(msg, "TESSEL_OVERRIDE_DIR: " + used.string() + " does not define the kernel add_loop0"))
        << msg;
    EXPECT_TRUE(has(msg, "keep the generated kernel's name and parameters")) << msg;
    fs::remove_all(dir_);
    ::unsetenv("TESSEL_OVERRIDE_DIR");
  }
}

// A file named for another target (dumped under another TESSEL_TARGET_ARCH or GPU) is not
// compiled for this one, and stderr says so.
TEST_F(CodeOverride, AFileForAnotherTargetIsSaidAndPassedBy) {
  REQUIRE_NVRTC();
  fs::path cu = dump_add(".cu");
  std::string name = cu.filename().string();
  ASSERT_NE(name.find(".sm_90.cu"), std::string::npos) << name;
  name.replace(name.find(".sm_90.cu"), 9, ".sm_80.cu");
  fs::path used = override_with(cu.parent_path() / name, "this is not CUDA\n");
  testing::internal::CaptureStderr();
  examples::make_add()(f32({1000}), f32({1000}));
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(has(err, "tessel: kernel 'add': TESSEL_OVERRIDE_DIR: " + used.string() +
                           " is for sm_80, not the sm_90 this call compiles for: the generated "
                           "code is used"))
      << err;
  EXPECT_EQ(files(".sm_90.cubin", dir_ / "dump2").size(), 1u);
}

// The launch passes the generated kernel's arguments: a CUDA override with other parameters
// (dumped for sm_80, renamed for sm_90, say) is an error, not a launch reading them wrongly;
// one that only reflows them compiles.
TEST_F(CodeOverride, ACudaOverrideWithOtherParametersIsAnError) {
  REQUIRE_NVRTC();
  fs::path cu = dump_add(".cu");
  std::string text = read(cu);
  const size_t at = text.find("const float* __restrict__ x");
  ASSERT_NE(at, std::string::npos) << text;
  std::string other = text;
  other.replace(at, 11, "const double*");
  fs::path used = override_with(cu, other);
  std::string msg =
      user_error_test::user_error([&] { examples::make_add()(f32({1000}), f32({1000})); });
  EXPECT_TRUE(has(msg, "TESSEL_OVERRIDE_DIR: the parameters of add_loop0 in " + used.string() +
                           " differ from the generated kernel's, which the launch passes: ("))
      << msg;
  std::string reflowed = text;
  reflowed.replace(at, 11, "const\n     float");
  override_with(cu, reflowed);
  testing::internal::CaptureStderr();
  examples::make_add()(f32({1000}), f32({1000}));
  EXPECT_TRUE(has(testing::internal::GetCapturedStderr(), "compiling " + used.string()));
}

// A file for another specialization or config of the kernel (another size bucket, other
// block sizes) is said and passed by, as one for another target is.
TEST_F(CodeOverride, AFileForAnotherSpecializationIsSaidAndPassedBy) {
  REQUIRE_NVRTC();
  fs::path cu = dump_add(".cu");
  fs::path used = override_with(cu, "this is not CUDA\n");
  testing::internal::CaptureStderr();
  examples::make_add()(f32({300000}), f32({300000}));  // another size bucket
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(has(err, "TESSEL_OVERRIDE_DIR: " + used.string() +
                           " is for another specialization or config of add_loop0"))
      << err;
  EXPECT_TRUE(has(err, "the generated code is used")) << err;
}

TEST_F(CodeOverride, AnOverrideDirectoryThatDoesNotExistIsAnError) {
  dump_add(".cu");
  ::setenv("TESSEL_OVERRIDE_DIR", (dir_ / "no_such_dir").c_str(), 1);
  std::string msg =
      user_error_test::user_error([&] { examples::make_add()(f32({1000}), f32({1000})); });
  EXPECT_TRUE(has(msg, "kernel 'add'")) << msg;
  EXPECT_TRUE(
      has(msg, "TESSEL_OVERRIDE_DIR: " + (dir_ / "no_such_dir").string() + " is not a directory"))
      << msg;
}

}  // namespace

// A config the pipeline refuses (here a matmul whose K block needs more shared memory and
// registers than a program has) still leaves its trail in TESSEL_DUMP_DIR: the IR of each
// stage before the failing one, and the error in failure.txt; the call throws the error.
TEST_F(CodeDump, AFailingConfigDumpsItsStagesAndTheError) {
  ::setenv("TESSEL_DUMP_DIR", dir_.c_str(), 1);
  auto k = examples::make_matmul(ts::Settings{
      .config = ts::Config{.block_sizes = std::vector<int64_t>{64, 64, 512}, .num_warps = 4}});
  const std::string msg = user_error_test::user_error([&] {
    k(ts::Buffer::ones({256, 4096}, ts::f32), ts::Buffer::ones({4096, 256}, ts::f32));
  });
  EXPECT_TRUE(has(msg, "need 257 KiB of shared memory")) << msg;
  std::vector<fs::path> stages = files(".stages");
  ASSERT_EQ(stages.size(), 1u);
  EXPECT_EQ(stages[0].filename().string().rfind("matmul-spec_", 0), 0u) << stages[0];
  const std::string failure = read(stages[0] / "failure.txt");
  EXPECT_TRUE(has(failure, "// kernel 'matmul'")) << failure;
  EXPECT_TRUE(has(failure, "need 257 KiB of shared memory")) << failure;
  EXPECT_TRUE(has(read(stages[0] / "05-index_bounds.ir"), "// stage 5: index_bounds"));
  EXPECT_FALSE(fs::exists(stages[0] / "06-layout.ir"));
  // Named by the call's specialization, as a config that works for the same arguments is.
  auto works = examples::make_matmul(ts::Settings{
      .config = ts::Config{.block_sizes = std::vector<int64_t>{64, 64, 32}, .num_warps = 4}});
  works(ts::Buffer::ones({256, 4096}, ts::f32), ts::Buffer::ones({4096, 256}, ts::f32));
  const std::string failed = stages[0].filename().string();
  const std::string spec = failed.substr(0, failed.find("-config_"));
  std::vector<fs::path> both = files(".stages");
  ASSERT_EQ(both.size(), 2u);
  for (const fs::path& p : both) EXPECT_EQ(p.filename().string().rfind(spec, 0), 0u) << p;
}
