#include <random>
#include <set>

#include "autotune/search.hpp"

namespace tessel::autotune {

void random_search(Trials& t, uint64_t seed, int batch) {
  std::mt19937_64 rng(seed);
  const ConfigSpace& s = t.space();
  while (!t.exhausted()) {
    std::vector<Point> points;
    std::set<Point> picked;
    int want = std::min(batch, t.remaining());
    for (int attempt = 0; attempt < 50 * want && static_cast<int>(points.size()) < want;
         ++attempt) {
      Point p = s.random_point(rng);
      if (!t.measured(p) && picked.insert(p).second) points.push_back(p);
    }
    if (points.empty() || t.run(points) == 0) break;
  }
}

}  // namespace tessel::autotune
