#include "fuzz/compare.hpp"

#include <fmt/format.h>

#include <cmath>

namespace fuzz {

namespace {

double tolerance(DType t, bool gpu) {
  switch (t) {
    case DType::f64:
      return gpu ? 1e-5 : 1e-9;
    case DType::f32:
      return 2e-4;
    case DType::f16:
      return 4e-3;
    default:
      return 3e-2;  // bf16
  }
}

double largest(DType t) {
  switch (t) {
    case DType::f64:
      return 1.79e308;
    case DType::f32:
      return 3.4e38;
    case DType::f16:
      return 65504;
    default:
      return 3.38e38;  // bf16
  }
}

bool close(double e, double a, DType t, bool fuzzy, double tol, double scale) {
  if (std::isnan(e) || std::isnan(a)) return std::isnan(e) && std::isnan(a);
  if (e == a) return true;
  if (!fuzzy || !floating(t)) return false;
  const double big = 0.5 * largest(t);
  if (std::fabs(e) >= big || std::fabs(a) >= big)
    return std::fabs(e) >= big && std::fabs(a) >= big && (e > 0) == (a > 0);
  return std::fabs(a - e) <= tol * std::fmax(std::fabs(e), scale);
}

// The tolerance of output o: that of the narrowest float dtype among the fuzzy values
// it is computed from (an f64 output of an f32 mean is as close as the f32 mean).
double output_tolerance(const Program& p, int o, bool gpu) {
  double tol = tolerance(p.outputs[o].dtype, gpu);
  if (o == p.relaunch_dst) o = p.relaunch_src;
  std::vector<int> todo;
  std::vector<bool> seen(p.nodes.size(), false);
  for (size_t i = 0; i < p.nodes.size(); ++i)
    if (p.nodes[i].op == Op::store && p.nodes[i].input == o) todo.push_back(static_cast<int>(i));
  while (!todo.empty()) {
    int i = todo.back();
    todo.pop_back();
    if (i < 0 || seen[i]) continue;
    seen[i] = true;
    const Node& n = p.nodes[i];
    if (n.fuzzy && floating(n.dtype)) tol = std::fmax(tol, tolerance(n.dtype, gpu));
    todo.insert(todo.end(), {n.a, n.b, n.c});
    if (n.op == Op::reload)
      for (size_t j = 0; j < p.nodes.size(); ++j)
        if (p.nodes[j].op == Op::store && p.nodes[j].input == n.input)
          todo.push_back(static_cast<int>(j));
  }
  return tol;
}

}  // namespace

std::string compare_outputs(const Program& p, const std::vector<std::vector<double>>& expected,
                            const std::vector<std::vector<double>>& actual, bool gpu) {
  std::string msg;
  for (size_t o = 0; o < p.outputs.size(); ++o) {
    const DType t = p.outputs[o].dtype;
    const bool fuzzy = output_fuzzy(p, static_cast<int>(o));
    const std::vector<double>& e = expected.at(o);
    const std::vector<double>& a = actual.at(o);
    if (e.size() != a.size())
      return fmt::format("out{}: {} elements, expected {}", o, a.size(), e.size());
    double sq = 0;
    size_t finite = 0;
    for (double x : e)
      if (std::isfinite(x)) {
        sq += x * x;
        ++finite;
      }
    const double scale = std::fmax(1.0, finite ? std::sqrt(sq / static_cast<double>(finite)) : 0);
    const double tol = floating(t) ? output_tolerance(p, static_cast<int>(o), gpu) : 0;
    int shown = 0, bad = 0;
    const int64_t cols = p.outputs[o].shape == Shape::full ? p.N : 1;
    for (size_t k = 0; k < e.size(); ++k) {
      if (close(e[k], a[k], t, fuzzy, tol, scale)) continue;
      ++bad;
      if (shown++ < 4)
        msg += fmt::format("out{}[{}, {}] ({}{}): got {}, expected {}\n", o,
                           static_cast<int64_t>(k) / cols, static_cast<int64_t>(k) % cols,
                           ts::dtype_name(t), fuzzy ? " fuzzy" : "", a[k], e[k]);
    }
    if (bad) msg += fmt::format("out{}: {} of {} elements differ\n", o, bad, e.size());
  }
  return msg;
}

}  // namespace fuzz
