// TESSEL_DUMP_DIR on the GPU: a call writes the IR, the CUDA it compiled, and the PTX and
// cubin NVRTC made for the device's architecture (compiled past the cubin cache, so the PTX
// exists), and the kernel it launches from that cubin is correct.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tessel/testing.hpp>

#include "examples/kernels/basic.hpp"
#include "gpu_test_util.hpp"

namespace ts = tessel;
namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(GpuCodeDump, ACallWritesIrCudaPtxAndCubinForTheDevice) {
  TESSEL_REQUIRE_GPU();
  fs::path dir = fs::temp_directory_path() / ("tessel_gpu_dump_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  ::setenv("TESSEL_DUMP_DIR", dir.c_str(), 1);
  ts::Buffer x = ts::Buffer::randn({5000}, ts::f32, ts::cuda(0));
  ts::Buffer y = ts::Buffer::randn({5000}, ts::f32, ts::cuda(0));
  ts::Buffer out = examples::make_add()(x, y);
  ::unsetenv("TESSEL_DUMP_DIR");
  ts::Buffer expected = examples::make_add()(x.to(ts::cpu()), y.to(ts::cpu()));
  EXPECT_EQ(ts::count_mismatches(out.to(ts::cpu()), expected, 0, 0), 0);
  std::string arch = "sm_" + std::to_string(ts::rt::compute_capability(0));
  int ir = 0, cu = 0, ptx = 0, cubin = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string(), text = read(e.path());
    if (name.ends_with(".ir"))
      ir += name.starts_with("add-spec_") && text.find("// x") != std::string::npos;
    if (name.ends_with(".cu")) cu += text.find("add_loop0(") != std::string::npos;
    if (name.ends_with("." + arch + ".ptx"))
      ptx += text.find(".entry add_loop0(") != std::string::npos;
    if (name.ends_with("." + arch + ".cubin"))
      cubin += text.rfind(
                   "\x7f"
                   "ELF",
                   0) == 0;
  }
  EXPECT_EQ(ir, 1);
  EXPECT_EQ(cu, 1);
  EXPECT_EQ(ptx, 1);
  EXPECT_EQ(cubin, 1);
  fs::remove_all(dir);
}

// The GPU path runs the compile pipeline with its IR recorded: one file per stage, in the
// stage order of codegen::compile_pipeline, beside the specialization's .ir file.
TEST(GpuCodeDump, ACallWritesTheIrAfterEachStage) {
  TESSEL_REQUIRE_GPU();
  fs::path dir = fs::temp_directory_path() / ("tessel_gpu_stages_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  ::setenv("TESSEL_DUMP_DIR", dir.c_str(), 1);
  ts::Buffer x = ts::Buffer::randn({4, 100000}, ts::f32, ts::cuda(0));
  ts::Buffer out = examples::make_softmax_basic()(x);  // rows long enough to be rolled
  ::unsetenv("TESSEL_DUMP_DIR");
  ts::Buffer expected = examples::make_softmax_basic()(x.to(ts::cpu()));
  EXPECT_EQ(ts::count_mismatches(out.to(ts::cpu()), expected, 1e-5, 1e-6), 0);
  std::vector<fs::path> stages;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory()) stages.push_back(e.path());
  ASSERT_EQ(stages.size(), 1u);
  EXPECT_EQ(stages[0].filename().string().rfind("softmax-spec_", 0), 0u) << stages[0];
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(stages[0]))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"01-traced.ir", "02-complete_config.ir",
                                             "03-roll_reductions.ir", "04-unit_tiles.ir",
                                             "05-index_bounds.ir", "06-layout.ir",
                                             "07-kernel_ir.ir", "08-emit.ir"}));
  EXPECT_NE(read(stages[0] / "08-emit.ir").find("// stage 8: emit\n"), std::string::npos);
  fs::remove_all(dir);
}

// TESSEL_OVERRIDE_DIR on the GPU: a dumped CUDA or PTX file, edited, is what the call
// launches (x + y becomes x - y, or x * y), and the call says so on stderr.
class GpuCodeOverride : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessel_gpu_override_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override {
    ::unsetenv("TESSEL_DUMP_DIR");
    ::unsetenv("TESSEL_OVERRIDE_DIR");
    fs::remove_all(dir_);
  }
  /// Runs add on x = 3, y = 1 ([5000] f32) with a new kernel object (one compilation).
  std::vector<double> run_add() {
    ts::Buffer x = ts::Buffer::full({5000}, 3.0, ts::f32, ts::cuda(0));
    ts::Buffer y = ts::Buffer::full({5000}, 1.0, ts::f32, ts::cuda(0));
    return examples::make_add()(x, y).to(ts::cpu()).to_vector();
  }
  /// Dumps add's files; returns the dumped file whose name ends in `suffix`.
  fs::path dump(const std::string& suffix) {
    ::setenv("TESSEL_DUMP_DIR", (dir_ / "dump").c_str(), 1);
    EXPECT_EQ(run_add().at(4999), 4.0);
    ::unsetenv("TESSEL_DUMP_DIR");
    for (const auto& e : fs::directory_iterator(dir_ / "dump"))
      if (e.path().filename().string().ends_with(suffix)) return e.path();
    ADD_FAILURE() << "no dumped file ends in " << suffix;
    return {};
  }
  /// Writes `file` with every `from` replaced by `to` into the override directory.
  fs::path edit(const fs::path& file, const std::string& from, const std::string& to) {
    std::string text = read(file);
    size_t n = 0;
    for (size_t p = text.find(from); p != std::string::npos; p = text.find(from, p + to.size())) {
      text.replace(p, from.size(), to);
      ++n;
    }
    EXPECT_GT(n, 0u) << from << " is not in " << file;
    fs::create_directories(dir_ / "override");
    fs::path out = dir_ / "override" / file.filename();
    std::ofstream(out, std::ios::binary) << text;
    ::setenv("TESSEL_OVERRIDE_DIR", (dir_ / "override").c_str(), 1);
    return out;
  }
  fs::path dir_;
};

TEST_F(GpuCodeOverride, AnEditedCudaFileIsWhatTheCallRuns) {
  TESSEL_REQUIRE_GPU();
  fs::path used = edit(dump(".cu"), "[r] + ", "[r] - ");  // v = x[r] + y[r] -> x[r] - y[r]
  testing::internal::CaptureStderr();
  std::vector<double> out = run_add();
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(out.at(0), 2.0);
  EXPECT_EQ(out.at(4999), 2.0);
  EXPECT_NE(err.find("TESSEL_OVERRIDE_DIR: compiling " + used.string()), std::string::npos) << err;
}

TEST_F(GpuCodeOverride, AnEditedPtxFileIsWhatTheCallRuns) {
  TESSEL_REQUIRE_GPU();
  std::string arch = "sm_" + std::to_string(ts::rt::compute_capability(0));
  fs::path used = edit(dump("." + arch + ".ptx"), "add.f32", "mul.f32");
  testing::internal::CaptureStderr();
  std::vector<double> out = run_add();
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(out.at(0), 3.0);
  EXPECT_EQ(out.at(4999), 3.0);
  EXPECT_NE(err.find("TESSEL_OVERRIDE_DIR: loading " + used.string()), std::string::npos) << err;
}

TEST_F(GpuCodeOverride, APtxFileTheDriverRefusesNamesTheFile) {
  TESSEL_REQUIRE_GPU();
  std::string arch = "sm_" + std::to_string(ts::rt::compute_capability(0));
  fs::path used = edit(dump("." + arch + ".ptx"), "add.f32", "not_an_instruction.f32");
  try {
    run_add();
    ADD_FAILURE() << "the broken PTX was loaded";
  } catch (const ts::UserError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("TESSEL_OVERRIDE_DIR: the driver could not load " + used.string()),
              std::string::npos)
        << msg;
  }
}

}  // namespace
