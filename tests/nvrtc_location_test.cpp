// Where tessel finds NVRTC (src/runtime/nvrtc.cpp): a CUDA_HOME that holds no NVRTC is
// reported as such, never replaced by another toolkit. Each case runs in a fresh process
// (a death test in "threadsafe" style re-executes the test binary), as NVRTC is looked up
// once per process.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <iostream>

#include "driver/cuda_api.hpp"
#include "examples/kernels/basic.hpp"

namespace ts = tessel;

namespace {

// In the child: sets CUDA_HOME, compiles the add kernel, prints the error and exits 0 when
// the compile was refused (1 when it compiled).
void compile_with_cuda_home(const char* home) {
  setenv("CUDA_HOME", home, 1);
  auto x = ts::Buffer::zeros({64}, ts::f32);
  try {
    examples::make_add().cuda(true, x, x);
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    std::exit(0);
  }
  std::exit(1);
}

TEST(NvrtcLocation, ACudaHomeWithoutNvrtcIsAnErrorNamingIt) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(compile_with_cuda_home("/nonexistent/cuda"), testing::ExitedWithCode(0),
              "NVRTC is not available: CUDA_HOME is '/nonexistent/cuda', which holds no "
              "lib64/libnvrtc.so; point CUDA_HOME at a CUDA toolkit");
}

TEST(NvrtcLocation, ACudaHomeWithNvrtcIsUsed) {
  if (!tessel::rt::nvrtc_available()) GTEST_SKIP() << "no NVRTC on this machine";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // The toolkit found without CUDA_HOME, named explicitly, compiles.
  std::string home = tessel::rt::cuda_include_dirs().at(0);
  home = home.substr(0, home.rfind("/include"));
  EXPECT_EXIT(compile_with_cuda_home(home.c_str()), testing::ExitedWithCode(1), "");
}

}  // namespace
