// The autotuner's progress line on a terminal: configs tried, failures, best time so
// far and elapsed time, redrawn in place on stderr. Quiet when stderr is not a terminal.
// At the end, one line with the best config as a pasteable C++ initializer (printed
// whether or not stderr is a terminal: tuning is rare and the line is the result).
#pragma once

#include <chrono>
#include <ostream>
#include <string>

#include "tessel/config.hpp"

namespace tessel::autotune {

class Progress {
 public:
  /// Progress of tuning kernel `kernel` written to `out`; `live` enables the redrawn
  /// line (default: isatty(stderr)).
  Progress(std::string kernel, std::ostream& out, bool live);
  /// Progress on std::cerr, live when stderr is a terminal.
  explicit Progress(std::string kernel);

  /// Redraws the line (live only; at most every 100 ms unless `force`). best_us:
  /// microseconds, infinity when nothing succeeded yet.
  void update(int tried, int failed, int rejected, double best_us, bool force = false);
  /// Clears the live line and prints the final line: the best config (Config::to_cpp()),
  /// its time and the counts; `best` null when no config succeeded (then says why).
  void finish(const Config* best, double best_us, int tried, int failed, int rejected,
              const std::string& note = "");
  /// Seconds since construction.
  double elapsed() const;
  bool live() const { return live_; }

 private:
  std::string kernel_;
  std::ostream& out_;
  bool live_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace tessel::autotune
