#include "autotune/trials.hpp"

#include <algorithm>
#include <limits>

namespace tessel::autotune {

Trials::Trials(const ConfigSpace& space, Backend& backend, Budget budget, Progress* progress)
    : space_(space),
      backend_(backend),
      budget_(budget),
      progress_(progress),
      start_(std::chrono::steady_clock::now()) {}

int Trials::remaining() const {
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (seconds >= budget_.max_seconds) return 0;
  return std::max(0, budget_.max_configs - static_cast<int>(trials_.size()));
}

int Trials::run(const std::vector<Point>& points) {
  std::vector<Trial> batch;
  for (const Point& p : points) batch.push_back(Trial{space_.config(p), p, {}});
  return run_batch(std::move(batch));
}

int Trials::run_configs(const std::vector<Config>& configs) {
  std::vector<Trial> batch;
  for (const Config& c : configs) batch.push_back(Trial{c, std::nullopt, {}});
  return run_batch(std::move(batch));
}

int Trials::run_batch(std::vector<Trial> batch) {
  std::vector<Trial> todo;
  std::unordered_map<std::string, bool> in_batch;
  int room = remaining();
  for (Trial& t : batch) {
    if (static_cast<int>(todo.size()) >= room) break;
    std::string key = t.config.to_json();
    if (by_key_.count(key) || in_batch.count(key)) continue;
    in_batch[key] = true;
    todo.push_back(std::move(t));
  }
  if (todo.empty()) return 0;
  std::vector<Config> configs;
  for (const Trial& t : todo) configs.push_back(t.config);
  size_t base = trials_.size();
  for (Trial& t : todo) {
    by_key_[t.config.to_json()] = trials_.size();
    trials_.push_back(std::move(t));
  }
  std::vector<bool> reported(configs.size(), false);
  int reported_count = 0;
  auto done = [&](size_t i, const Measurement& m) {
    if (i >= configs.size() || reported[i]) return;
    reported[i] = true;
    ++reported_count;
    Trial& t = trials_.at(base + i);
    t.result = m;
    if (m.status == Measurement::failed) ++failed_;
    if (m.status == Measurement::rejected) ++rejected_;
    if (m.status == Measurement::ok && (!best_ || m.time_us < trials_[*best_].result.time_us))
      best_ = base + i;
    if (progress_)
      progress_->update(
          static_cast<int>(base) + reported_count, failed_, rejected_,
          best_ ? trials_[*best_].result.time_us : std::numeric_limits<double>::infinity());
  };
  std::vector<Measurement> results = backend_.measure(configs, done);
  for (size_t i = 0; i < configs.size(); ++i)  // in case a backend did not call `done`
    done(i, i < results.size() ? results[i] : Measurement::failure("not measured"));
  return static_cast<int>(configs.size());
}

double Trials::time(const Point& p) const {
  auto it = by_key_.find(space_.config(p).to_json());
  if (it == by_key_.end()) return std::numeric_limits<double>::infinity();
  return trials_[it->second].result.time_us;
}

bool Trials::measured(const Point& p) const {
  return by_key_.count(space_.config(p).to_json()) > 0;
}

std::vector<Point> Trials::top(int k) const {
  std::vector<size_t> ok;
  for (size_t i = 0; i < trials_.size(); ++i)
    if (trials_[i].point && trials_[i].result.status == Measurement::ok) ok.push_back(i);
  std::stable_sort(ok.begin(), ok.end(), [&](size_t a, size_t b) {
    return trials_[a].result.time_us < trials_[b].result.time_us;
  });
  std::vector<Point> out;
  for (size_t i = 0; i < ok.size() && static_cast<int>(out.size()) < k; ++i)
    out.push_back(*trials_[ok[i]].point);
  return out;
}

}  // namespace tessel::autotune
