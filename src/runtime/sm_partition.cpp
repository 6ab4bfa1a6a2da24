#include "tessel/sm_partition.hpp"

#include <fmt/format.h>

#include "driver/cuda_api.hpp"
#include "tessel/error.hpp"

namespace tessel {

struct SmPartition::State {
  rt::Partition p;
  int requested = 0;
  ~State() { rt::partition_destroy(p); }
};

namespace {
constexpr const char* kInstead =
    "; without green contexts, cap a persistent kernel's SMs with ts::Settings{.max_sms = N} "
    "(or reserved_sms) instead";
}

SmPartition SmPartition::create(int num_sms, int device) {
  if (num_sms < 1)
    throw UserError(
        "", {},
        fmt::format("SmPartition::create: num_sms = {} is out of range: a partition holds 1 to "
                    "the device's SM count{}",
                    num_sms,
                    rt::cuda_available() && device >= 0 && device < rt::device_count()
                        ? fmt::format(" ({} on cuda:{})", rt::sm_count(device), device)
                        : std::string()),
        "pass a num_sms of at least 1");
  if (!rt::green_contexts_available())
    throw RuntimeError(
        "SmPartition::create: SM partitions (CUDA green contexts) are unavailable: " +
        rt::green_contexts_unavailable_reason() + kInstead);
  if (device < 0 || device >= rt::device_count())
    throw UserError(
        "", {},
        fmt::format("SmPartition::create: cuda:{} does not exist (this machine has {} CUDA "
                    "device(s))",
                    device, rt::device_count()),
        "pass a device index from 0 to the device count - 1");
  int total = rt::sm_count(device);
  if (num_sms > total)
    throw UserError(
        "", {},
        fmt::format("SmPartition::create: num_sms = {} is out of range: cuda:{} has {} SMs, so a "
                    "partition holds 1 to {}",
                    num_sms, device, total, total),
        fmt::format("pass a num_sms from 1 to {}", total));
  auto state = std::make_shared<State>();
  state->p = rt::partition_create(device, num_sms);
  state->requested = num_sms;
  SmPartition part;
  part.state_ = std::move(state);
  return part;
}

bool SmPartition::supported() { return rt::green_contexts_available(); }

std::string SmPartition::unsupported_reason() { return rt::green_contexts_unavailable_reason(); }

Stream SmPartition::stream() const { return Stream{state_ ? state_->p.stream : nullptr}; }
int SmPartition::sm_count() const { return state_ ? state_->p.sms : 0; }
int SmPartition::requested_sms() const { return state_ ? state_->requested : 0; }
int SmPartition::device() const { return state_ ? state_->p.device : 0; }

}  // namespace tessel
