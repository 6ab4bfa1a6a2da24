// Kernels with atomics, signals and waits, shared by the interpreter tests
// (tests/atomics_test.cpp, tests/signal_wait_test.cpp) and the GPU tests
// (tests/gpu/atomics_gpu_test.cpp), whose oracle is the interpreter.
#pragma once

#include <tessel/tessel.hpp>

namespace atomic_test {

namespace ts = tessel;

/// One counter, n programs (a grid): each adds 1 to count[0] and records the value it
/// saw in old[p]. Returns (count [1], old [n]), i32.
inline auto make_counter(ts::Sem sem = ts::Sem::relaxed, ts::Scope scope = ts::Scope::gpu,
                         ts::Settings s = {}) {
  return ts::kernel(
      "counter",
      [sem, scope](ts::Tensor x) {
        ts::Tensor count = x.new_zeros({1}, ts::i32);
        ts::Tensor old = x.new_zeros({x.size(0)}, ts::i32);
        for (auto p : ts::grid(x.size(0))) old(p) = ts::atomic_add(count, {0}, 1, sem, scope);
        return std::make_tuple(count, old);
      },
      s);
}

/// The same counter reached by every element of every tile (a gather index of zeros):
/// old[i] is the value element i saw. Returns (count [1], old [n]), i64.
inline auto make_tile_counter(ts::Settings s = {}) {
  return ts::kernel(
      "tile_counter",
      [](ts::Tensor x) {
        ts::Tensor count = x.new_zeros({1}, ts::i64);
        ts::Tensor old = x.new_zeros({x.size(0)}, ts::i64);
        for (auto t : ts::tile(x.size(0))) old(t) = ts::atomic_add(count, {t.index() * 0}, 1);
        return std::make_tuple(count, old);
      },
      s);
}

/// hist[b] = how many elements of bins (i32, values in [0, nbins)) equal b.
inline auto make_histogram(ts::Settings s = {}) {
  return ts::kernel(
      "histogram",
      [](ts::Tensor bins, ts::Tensor like_hist) {
        ts::Tensor hist = ts::zeros_like(like_hist);
        for (auto t : ts::tile(bins.size(0))) ts::atomic_add(hist, {bins(t)}, 1);
        return hist;
      },
      s);
}

/// rows[m] = sum over n of x[m, n], every (tm, tn) program adding its partial sum: the
/// partial sums of one row tile are held by the threads of every tn coordinate (copies),
/// of which only the owner adds.
inline auto make_row_sum(ts::Settings s = {}) {
  return ts::kernel(
      "row_sum",
      [](ts::Tensor x) {
        ts::Tensor rows = x.new_zeros({x.size(0)});
        for (auto [tm, tn] : ts::tile(x.size(0), x.size(1)))
          ts::atomic_add(rows, {tm}, ts::sum(x(tm, tn), 1));
        return rows;
      },
      s);
}

/// The same sum with the old values used (stored per program): they must reach every
/// copy. Returns (rows [m] f32, firsts [m, tiles of n]: the old value each tn program saw).
inline auto make_row_sum_olds(ts::Settings s = {}) {
  return ts::kernel(
      "row_sum_olds",
      [](ts::Tensor x, ts::Tensor olds_like) {
        ts::Tensor rows = x.new_zeros({x.size(0)});
        ts::Tensor olds = ts::zeros_like(olds_like);
        for (auto [tm, tn] : ts::tile(x.size(0), x.size(1))) {
          ts::Value old = ts::atomic_add(rows, {tm}, ts::sum(x(tm, tn), 1));
          olds(tm, tn.id()) = old;
        }
        return std::make_tuple(rows, olds);
      },
      s);
}

/// mx[0] = max of v (i32) by compare-and-swap retries: each program retries n + 1 times
/// (enough: a failed exchange means another program raised the value).
inline auto make_cas_max(ts::Settings s = {}) {
  return ts::kernel(
      "cas_max",
      [](ts::Tensor v) {
        ts::Tensor mx = v.new_full({1}, -1000, ts::i32);
        for (auto p : ts::grid(v.size(0))) {
          ts::Value mine = v(p);
          ts::Value cur = mx(0);
          for (auto k : ts::grid(v.size(0) + 1)) {
            (void)k;
            ts::Value want = ts::maximum(cur, mine);
            ts::Value old = ts::atomic_cas(mx, {0}, cur, want);
            cur = ts::where(old == cur, want, old);
          }
        }
        return mx;
      },
      s);
}

/// slot[0] starts at -1; program p exchanges p in and records what it took out.
/// Returns (slot [1], took [n]), i32.
inline auto make_xchg(ts::Settings s = {}) {
  return ts::kernel(
      "xchg",
      [](ts::Tensor x) {
        ts::Tensor slot = x.new_full({1}, -1, ts::i32);
        ts::Tensor took = x.new_zeros({x.size(0)}, ts::i32);
        for (auto p : ts::grid(x.size(0))) took(p) = ts::atomic_xchg(slot, {0}, p);
        return std::make_tuple(slot, took);
      },
      s);
}

/// r = [max, min, and, or, xor] of the i64 values v over every tile, from [lowest,
/// highest, all ones, 0, 0].
inline auto make_reduce_ops(ts::Settings s = {}) {
  return ts::kernel(
      "reduce_ops",
      [](ts::Tensor v) {
        ts::Tensor r = ts::empty({5}, v.dtype());
        for (auto i : ts::grid(1)) {
          r(i) = INT64_MIN;
          r(i + 1) = INT64_MAX;
          r(i + 2) = -1;
          r(i + 3) = 0;
          r(i + 4) = 0;
        }
        for (auto t : ts::tile(v.size(0))) {
          ts::Value z = t.index() * 0;
          ts::atomic_max(r, {z}, v(t));
          ts::atomic_min(r, {z + 1}, v(t));
          ts::atomic_and(r, {z + 2}, v(t));
          ts::atomic_or(r, {z + 3}, v(t));
          ts::atomic_xor(r, {z + 4}, v(t));
        }
        return r;
      },
      s);
}

/// A chain of programs: program p waits for pad[p] == 1 (pad[0] is set by the caller),
/// writes out[p] = out[p - 1] + 1 (out[-1] reads as 0: masked), then signals pad[p + 1].
/// out = 1, 2, ..., n only when each program ran after its predecessor.
inline auto make_chain(ts::Settings s = {}) {
  return ts::kernel(
      "chain",
      [](ts::Tensor pad) {
        ts::Tensor out = pad.new_zeros({pad.size(0)}, ts::i32);
        for (auto p : ts::grid(pad.size(0))) {
          ts::wait(pad, {p}, 1);
          out(p) = out(p - 1) + 1;
          ts::signal(pad, {p + 1}, 1);
        }
        return out;
      },
      s);
}

/// A ticket lock: program p waits until ticket[0] == p, records order[k] = p at position
/// k = how many came before (done[0], read under the ticket), then passes the ticket on
/// (signal with wait_for). Returns (ticket [1], order [n]).
inline auto make_ticket(ts::Settings s = {}) {
  return ts::kernel(
      "ticket",
      [](ts::Tensor x) {
        ts::Tensor ticket = x.new_zeros({1}, ts::i32);
        ts::Tensor order = x.new_full({x.size(0)}, -1, ts::i32);
        for (auto p : ts::grid(x.size(0))) {
          ts::wait(ticket, {0}, p);
          order(p) = ts::atomic_add(x, {0}, 1);  // x[0] counts the programs served
          ts::signal(ticket, {0}, p + 1, p);
        }
        return std::make_tuple(ticket, order);
      },
      s);
}

}  // namespace atomic_test
