// The bookkeeping every search shares: which configs were measured and how fast, the
// budget (configs and seconds), progress updates. A config is measured at most once.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "autotune/backend.hpp"
#include "autotune/config_space.hpp"
#include "autotune/progress.hpp"

namespace tessel::autotune {

/// How much a search may measure: at most max_configs configs, and no new batch after
/// max_seconds (wall clock, since the Trials were made).
struct Budget {
  int max_configs = 40;
  double max_seconds = 60;
};

/// One measured config.
struct Trial {
  Config config;
  std::optional<Point> point;  // when it came from the space
  Measurement result;
};

class Trials {
 public:
  /// `progress` may be null.
  Trials(const ConfigSpace& space, Backend& backend, Budget budget, Progress* progress);

  /// Measures, as one batch, the points of `points` not measured before (deduplicated),
  /// at most remaining() of them, in the given order. Returns how many were measured.
  int run(const std::vector<Point>& points);
  /// The same for explicit configs (measured as given).
  int run_configs(const std::vector<Config>& configs);

  /// Time of a measured point in microseconds (infinity when it failed, was rejected or
  /// was not measured).
  double time(const Point& p) const;
  bool measured(const Point& p) const;
  /// No more configs may be measured (count or time budget used up).
  bool exhausted() const { return remaining() <= 0; }
  int remaining() const;
  /// The `k` fastest successful points, fastest first.
  std::vector<Point> top(int k) const;

  const std::vector<Trial>& all() const { return trials_; }
  /// Index of the fastest successful trial.
  std::optional<size_t> best() const { return best_; }
  int failed() const { return failed_; }
  int rejected() const { return rejected_; }
  const ConfigSpace& space() const { return space_; }

 private:
  int run_batch(std::vector<Trial> batch);

  const ConfigSpace& space_;
  Backend& backend_;
  Budget budget_;
  Progress* progress_;
  std::chrono::steady_clock::time_point start_;
  std::vector<Trial> trials_;
  std::unordered_map<std::string, size_t> by_key_;  // Config::to_json() -> index
  std::optional<size_t> best_;
  int failed_ = 0, rejected_ = 0;
};

}  // namespace tessel::autotune
