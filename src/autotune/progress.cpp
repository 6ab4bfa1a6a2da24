#include "autotune/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <iostream>

namespace tessel::autotune {

Progress::Progress(std::string kernel, std::ostream& out, bool live)
    : kernel_(std::move(kernel)),
      out_(out),
      live_(live),
      start_(std::chrono::steady_clock::now()),
      last_(start_ - std::chrono::seconds(1)) {}

Progress::Progress(std::string kernel) : Progress(std::move(kernel), std::cerr, ::isatty(2) == 1) {}

double Progress::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

static std::string time_str(double us) {
  return std::isfinite(us) ? fmt::format("{:.1f} us", us) : std::string("-");
}

void Progress::update(int tried, int failed, int rejected, double best_us, bool force) {
  if (!live_) return;
  auto now = std::chrono::steady_clock::now();
  if (!force && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  out_ << fmt::format(
              "\r\033[K[tessel] autotuning '{}': {} configs, {} failed, {} rejected, "
              "best {}, {:.1f} s",
              kernel_, tried, failed, rejected, time_str(best_us), elapsed())
       << std::flush;
  drawn_ = true;
}

void Progress::finish(const Config* best, double best_us, int tried, int failed, int rejected,
                      const std::string& note) {
  if (drawn_) out_ << "\r\033[K";
  std::string counts = fmt::format("{} configs ({} failed, {} rejected) in {:.1f} s", tried, failed,
                                   rejected, elapsed());
  if (best)
    out_ << fmt::format("[tessel] autotuned '{}': {} ({}, {}){}\n", kernel_, best->to_cpp(),
                        time_str(best_us), counts, note.empty() ? "" : "; " + note);
  else
    out_ << fmt::format("[tessel] autotuning '{}' found no working config: {}{}\n", kernel_, counts,
                        note.empty() ? "" : "; " + note);
  out_ << std::flush;
}

}  // namespace tessel::autotune
