// Where the library finds the autotuner's timing worker (src/autotune/worker_process.hpp):
// TESSEL_BENCH_WORKER first, then an installed layout next to the binary holding tessel.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "autotune/worker_process.hpp"

namespace at = tessel::autotune;
namespace fs = std::filesystem;

namespace {

// A temporary install prefix holding <prefix>/libexec/tessel/tessel_bench_worker.
struct FakePrefix {
  fs::path root = fs::temp_directory_path() / ("tessel_prefix_" + std::to_string(::getpid()));
  fs::path worker = root / "libexec" / "tessel" / "tessel_bench_worker";
  FakePrefix() {
    fs::create_directories(worker.parent_path());
    fs::create_directories(root / "lib");
    fs::create_directories(root / "bin");
    std::ofstream(worker) << "#!/bin/sh\n";
  }
  ~FakePrefix() { fs::remove_all(root); }
};

TEST(WorkerLocation, TheInstalledWorkerIsFoundFromTheLibraryAndFromAProgramInBin) {
  FakePrefix p;
  EXPECT_EQ(at::installed_worker_near((p.root / "lib" / "libtessel.so").string()),
            p.worker.string());
  EXPECT_EQ(at::installed_worker_near((p.root / "bin" / "my_program").string()), p.worker.string());
}

TEST(WorkerLocation, NothingIsFoundWithoutAnInstalledWorker) {
  FakePrefix p;
  fs::remove(p.worker);
  EXPECT_EQ(at::installed_worker_near((p.root / "bin" / "my_program").string()), "");
}

TEST(WorkerLocation, TheEnvironmentVariableOverridesAndAMissingFileGivesNone) {
  FakePrefix p;
  std::string saved = std::getenv("TESSEL_BENCH_WORKER") ? std::getenv("TESSEL_BENCH_WORKER") : "";
  ::setenv("TESSEL_BENCH_WORKER", p.worker.c_str(), 1);
  EXPECT_EQ(at::find_worker_executable(), p.worker.string());
  ::setenv("TESSEL_BENCH_WORKER", (p.root / "missing").c_str(), 1);
  EXPECT_EQ(at::find_worker_executable(), "");
  if (saved.empty())
    ::unsetenv("TESSEL_BENCH_WORKER");
  else
    ::setenv("TESSEL_BENCH_WORKER", saved.c_str(), 1);
}

TEST(WorkerLocation, ABuildTreeProgramFindsTheWorkerBuiltWithTheLibrary) {
  if (std::getenv("TESSEL_BENCH_WORKER")) GTEST_SKIP() << "TESSEL_BENCH_WORKER is set";
  std::string path = at::find_worker_executable();
  ASSERT_FALSE(path.empty());
  EXPECT_EQ(fs::path(path).filename(), "tessel_bench_worker");
  EXPECT_TRUE(fs::is_regular_file(path));
}

}  // namespace
