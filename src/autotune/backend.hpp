// What measures a config: the GPU (timing in a child process) or, for tests, the CPU
// interpreter. The search only sees times.
#pragma once

#include <cstddef>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "tessel/config.hpp"

namespace tessel::autotune {

/// The outcome of measuring one config.
struct Measurement {
  enum Status : uint8_t { ok, failed, rejected };
  Status status = failed;
  /// Median time of one call of the kernel (all its launches), in microseconds; infinity
  /// unless status is ok.
  double time_us = std::numeric_limits<double>::infinity();
  /// failed: why (compile error, launch error, timeout, crash); rejected: how the
  /// outputs differ from the reference.
  std::string reason;

  static Measurement success(double us) { return {ok, us, ""}; }
  static Measurement failure(std::string why) {
    return {failed, std::numeric_limits<double>::infinity(), std::move(why)};
  }
  static Measurement rejection(std::string why) {
    return {rejected, std::numeric_limits<double>::infinity(), std::move(why)};
  }
};

/// Measures configs of one specialization on its call's arguments.
class Backend {
 public:
  /// Called as each config's measurement is known (index into the batch).
  using Done = std::function<void(size_t index, const Measurement&)>;
  virtual ~Backend() = default;
  /// Measures `configs` (as given; each is compiled by codegen::compile_pipeline from
  /// the kernel traced with its tunables, as a call would) and returns one Measurement per config,
  /// in order. A candidate's failure is its Measurement, never an exception; throws (RuntimeError)
  /// only when measuring itself became impossible.
  virtual std::vector<Measurement> measure(const std::vector<Config>& configs,
                                           const Done& done) = 0;
};

}  // namespace tessel::autotune
