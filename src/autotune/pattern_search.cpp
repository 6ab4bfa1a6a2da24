#include <algorithm>
#include <set>

#include "autotune/search.hpp"

namespace tessel::autotune {

static std::vector<Point> seeds(const ConfigSpace& s, bool wide) {
  const Point& d = s.default_point();
  std::vector<Point> out{d,
                         s.shifted(d, Knob::block_size, 1),
                         s.shifted(d, Knob::block_size, -1),
                         s.shifted(d, Knob::num_warps, 1),
                         s.shifted(d, Knob::num_warps, -1),
                         s.shifted(s.shifted(d, Knob::block_size, 1), Knob::num_warps, 1),
                         s.shifted(s.shifted(d, Knob::block_size, -1), Knob::num_warps, -1)};
  if (wide) {
    out.push_back(s.shifted(d, Knob::block_size, 2));
    out.push_back(s.shifted(d, Knob::block_size, -2));
  }
  for (size_t i = 0; i < s.knobs().size(); ++i) {
    if (s.knobs()[i].kind != Knob::pid_type) continue;
    for (int c = 0; c < static_cast<int>(s.knobs()[i].choices.size()); ++c) {
      Point p = d;
      p[i] = c;
      out.push_back(s.canonical(p));
    }
  }
  std::vector<Point> valid;
  for (const Point& p : out)
    if (s.valid(p)) valid.push_back(p);
  for (const Point& p : s.matmul_points())  // valid already
    if (std::find(valid.begin(), valid.end(), p) == valid.end()) valid.push_back(p);
  return valid;
}

// Hooke-Jeeves' acceleration: after the one-knob moves around `base` are measured, the
// point taking every knob's best improving move at once ("combined"), and the point
// continuing each improving move one more step in its direction ("pattern").
static std::vector<Point> accelerated(const Trials& t, const Point& base) {
  const ConfigSpace& s = t.space();
  double base_time = t.time(base);
  Point combined = base, pattern = base;
  std::vector<double> best(base.size(), base_time);
  for (const Point& q : s.neighbors(base, 1)) {
    size_t knob = 0, moved = 0;
    for (size_t i = 0; i < q.size(); ++i)
      if (q[i] != base[i]) knob = i, ++moved;
    double time = t.time(q);
    if (moved != 1 || !(time < best[knob])) continue;
    best[knob] = time;
    combined[knob] = q[knob];
    int step = s.knobs()[knob].ordered ? q[knob] - base[knob] : 0;
    int last = static_cast<int>(s.knobs()[knob].choices.size()) - 1;
    pattern[knob] = std::clamp(q[knob] + step, 0, last);
  }
  std::vector<Point> out;
  for (Point p : {combined, pattern}) {
    p = s.canonical(p);
    if (p != base && s.valid(p) && !t.measured(p)) out.push_back(p);
  }
  return out;
}

void pattern_search(Trials& t, const PatternSearchOptions& o) {
  const ConfigSpace& s = t.space();
  t.run(seeds(s, o.wide_seeds));
  std::vector<Point> frontier = t.top(o.frontier);
  int radius = 1;
  while (!frontier.empty() && !t.exhausted()) {
    std::vector<Point> candidates;
    std::set<Point> listed;
    for (const Point& f : frontier)
      for (const Point& n : s.neighbors(f, radius))
        if (!t.measured(n) && listed.insert(n).second) candidates.push_back(n);
    if (!candidates.empty()) t.run(candidates);
    if (radius == 1) t.run(accelerated(t, frontier.front()));
    std::vector<Point> next = t.top(o.frontier);
    if (next != frontier) {
      frontier = next;
      radius = 1;
    } else if (radius == 1 && o.two_knob_moves) {
      radius = 2;
    } else {
      break;
    }
  }
}

}  // namespace tessel::autotune
