// CPU tests of ts::SmPartition (green contexts): argument errors, and the error without a
// GPU or without green contexts in the driver. tests/gpu/green_context_gpu_test.cpp runs
// kernels on partitions.
#include "tessel/sm_partition.hpp"

#include <gtest/gtest.h>

#include <string>

#include "driver/cuda_api.hpp"
#include "tessel/error.hpp"

namespace ts = tessel;
namespace rt = tessel::rt;

namespace {

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

std::string user_error_of(int num_sms, int device = 0) {
  try {
    ts::SmPartition::create(num_sms, device);
  } catch (const ts::UserError& e) {
    return e.what();
  } catch (const ts::RuntimeError& e) {
    return std::string("<RuntimeError> ") + e.what();
  }
  return "<no error>";
}

TEST(SmPartition, ZeroSmsIsAUserErrorNamingTheValueAndTheRange) {
  std::string msg = user_error_of(0);
  EXPECT_TRUE(contains(msg, "num_sms = 0 is out of range")) << msg;
  EXPECT_TRUE(contains(msg, "a partition holds 1 to the device's SM count")) << msg;
  EXPECT_TRUE(contains(msg, "pass a num_sms of at least 1")) << msg;
}

TEST(SmPartition, NegativeSmsIsAUserError) {
  std::string msg = user_error_of(-8);
  EXPECT_TRUE(contains(msg, "num_sms = -8 is out of range")) << msg;
}

TEST(SmPartition, WithoutAGpuSaysSoAndPointsToMaxSms) {
  if (rt::cuda_available())
    GTEST_SKIP() << "a CUDA GPU is present (the GPU tests cover partitions)";
  EXPECT_FALSE(ts::SmPartition::supported());
  EXPECT_TRUE(contains(ts::SmPartition::unsupported_reason(), "no CUDA driver/GPU"));
  try {
    ts::SmPartition::create(16);
    FAIL() << "expected a RuntimeError";
  } catch (const ts::RuntimeError& e) {
    std::string msg = e.what();
    EXPECT_EQ(
        msg.rfind(
            "tessel: SmPartition::create: SM partitions (CUDA green contexts) are unavailable: ",
            0),
        0u)
        << msg;
    EXPECT_TRUE(contains(msg, rt::cuda_unavailable_reason())) << msg;
    EXPECT_TRUE(contains(msg, "ts::Settings{.max_sms = N}")) << msg;
  }
}

TEST(SmPartition, ForeignStreamsAreNoPartitions) {
  // A null or foreign stream is no partition's: calls on it run in the primary context.
  EXPECT_FALSE(rt::stream_partition(nullptr, nullptr));
  int dummy = 0;
  EXPECT_FALSE(rt::stream_partition(&dummy, nullptr));
  rt::ContextScope scope(&dummy);
  EXPECT_EQ(scope.device(), -1);
  EXPECT_EQ(rt::current_context_id(0), 1u);  // the primary context of cuda:0
}

TEST(SmPartition, GreenContextReasonIsEmptyExactlyWhenSupported) {
  EXPECT_EQ(ts::SmPartition::supported(), ts::SmPartition::unsupported_reason().empty());
  EXPECT_EQ(rt::green_contexts_available(), ts::SmPartition::supported());
}

}  // namespace
