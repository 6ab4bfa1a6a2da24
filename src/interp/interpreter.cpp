// The interpreter's control flow: loop nests (tile and grid loops, loop-carried values),
// tile attributes, and dispatch of every body node. Values are computed in interp/frame,
// interp/eval_ops and interp/memory_ops.
#include "interp/interpreter.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <exception>
#include <functional>
#include <mutex>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>

#include "common/env_bool.hpp"
#include "interp/atomic_ops.hpp"
#include "interp/frame.hpp"
#include "interp/memory_ops.hpp"
#include "interp/program_sync.hpp"
#include "interp/write_log.hpp"
#include "passes/default_config.hpp"

namespace tessel::interp {

using ir::Node;
using ir::Op;

namespace {

class Runner {
 public:
  Runner(Frame& f, const Config& config, uint64_t seed) : f_(f), config_(config), seed_(seed) {}

  /// Runs `loop` to completion: every tile (grid index) combination of its dims, the
  /// last dim varying fastest, with its carried values threaded through the iterations.
  void run_loop(const Node* loop) {
    if (!top_) top_ = loop;
    LoopState& ls = f_.loop(loop);
    const size_t nd = loop->dims.size();
    ls.begin.assign(nd, 0);
    ls.end.assign(nd, 0);
    ls.block.assign(nd, 1);
    bool empty = false;
    for (size_t d = 0; d < nd; ++d) {
      const ir::LoopDim& ld = loop->dims[d];
      ls.begin[d] = f_.scalar_int(ld.begin);
      ls.end[d] = f_.scalar_int(ld.end);
      ls.block[d] = passes::block_size(ld, config_);
      if (ls.block[d] <= 0) throw InternalError("interpreter: block size <= 0");
      empty |= ls.end[d] <= ls.begin[d];
    }
    for (size_t i = 0; i < loop->carried.size(); ++i)
      f_.slot(loop->carried[i]) = f_.value(loop->inits[i]);
    ls.next.resize(loop->carried.size());
    if (empty) {
      ls.tile_begin.clear();
      ls.tile_end.clear();
      return;
    }
    if (loop == top_ && !loop->persistent) {
      // A non-persistent launch has one program per tile: the GPU refuses a grid of
      // 2^31 programs or more (gpu_program.cpp), and so does the interpreter.
      PidType pid = config_.pid_type.value_or(PidType::flat);
      if (pid != PidType::persistent_blocked && pid != PidType::persistent_interleaved) {
        double total = 1;
        for (size_t d = 0; d < nd; ++d)
          total *= static_cast<double>((ls.end[d] - ls.begin[d] + ls.block[d] - 1) / ls.block[d]);
        if (total >= 2147483648.0)
          throw UserError(
              f_.graph().kernel_name, loop->loc,
              fmt::format("the launch needs {:.0f} programs, more than a grid can hold", total),
              "use larger block sizes, or a persistent pid_type");
      }
    }
    // Tiles that can change nothing are skipped (a bound far past the tensors, as a
    // device-resident bound can be, would otherwise walk masked tiles for hours); the
    // tiles that run keep their extents.
    for (size_t d = 0; d < nd; ++d) {
      std::optional<int64_t> reach = store_reach(loop, d);
      if (!reach || *reach >= ls.end[d]) continue;
      int64_t tiles =
          *reach > ls.begin[d] ? (*reach - ls.begin[d] + ls.block[d] - 1) / ls.block[d] : 0;
      ls.end[d] = std::min(ls.end[d], ls.begin[d] + tiles * ls.block[d]);
      if (ls.end[d] <= ls.begin[d]) {
        ls.tile_begin.clear();
        ls.tile_end.clear();
        return;
      }
    }
    ls.tile_begin = ls.begin;
    ls.tile_end.assign(nd, 0);
    if (loop == top_ && f_.sync()) return run_programs_concurrently(loop, ls);
    if (loop == top_ && f_.write_log() && run_programs_shuffled(loop, ls)) return;
    while (true) {
      for (size_t d = 0; d < nd; ++d)
        ls.tile_end[d] = std::min(ls.tile_begin[d] + ls.block[d], ls.end[d]);
      if (loop == top_ && f_.write_log()) f_.write_log()->start_program(program_);
      run_body(loop);
      if (loop == top_) ++program_;  // one program per tile of the launch
      int d = static_cast<int>(nd) - 1;
      for (; d >= 0; --d) {
        ls.tile_begin[d] += ls.block[d];
        if (ls.tile_begin[d] < ls.end[d]) break;
        ls.tile_begin[d] = ls.begin[d];
      }
      if (d < 0) break;
    }
    ls.tile_begin.clear();  // the loop's tiles are out of scope after it
    ls.tile_end.clear();
  }

 private:
  /// The index along dim d of `loop` from which no tile can change anything: when every
  /// store in the loop (nested loops included) indexes a tensor dimension with that dim's
  /// tile (or grid index), a tile starting at or past the largest such dimension's size has
  /// every store masked. nullopt where skipping tiles could show: a store not indexed by it, a
  /// loop-carried value of `loop`, or a program id (programs would be numbered apart), or
  /// Settings::check_bounds (a tile's lanes past a tensor's end are reported: the first
  /// such tile raises the report, however far the bound goes).
  std::optional<int64_t> store_reach(const Node* loop, size_t d) {
    const ir::LoopDim& dim = loop->dims[d];
    if ((dim.is_tile && !dim.sym) || !loop->carried.empty() || f_.graph().check_bounds)
      return std::nullopt;
    auto indexes_dim = [&](const ir::IndexInfo& info, const Node* index) {
      if (dim.is_tile) return info.kind == ir::IndexKind::tile && info.sym == dim.sym;
      return info.kind == ir::IndexKind::scalar && index->op == Op::LoopIndex &&
             index->args.at(0) == loop && index->ival == static_cast<int64_t>(d);
    };
    int64_t reach = 0;
    bool ok = true;
    std::function<void(const ir::Block&)> walk = [&](const ir::Block& b) {
      for (const Node* n : b) {
        if (n->op == Op::ProgramId) ok = false;
        if (n->op == Op::Loop) walk(n->body);
        // A tile's atomics, signals and waits run even where masked: its old values are
        // results, and a wait orders the program.
        if (ir::writes_memory(n) && n->op != Op::Store) ok = false;
        if (n->op != Op::Store) continue;
        const Buffer& t = f_.env().tensor(ir::addressed_tensor(n));
        bool indexed = false;
        int td = 0;
        size_t k = 2;  // a store's first index argument
        for (const ir::IndexInfo& info : n->access) {
          if (info.kind == ir::IndexKind::newaxis) continue;
          if (indexes_dim(info, n->args.at(k++))) {
            reach = std::max(reach, t.size(td));
            indexed = true;
          }
          ++td;
        }
        ok &= indexed;
      }
    };
    walk(loop->body);
    if (!ok) return std::nullopt;
    return reach;
  }

  /// The race check (TESSEL_CHECK_RACES): runs the launch's programs (tiles of `top`) in
  /// an order shuffled by seed_, each numbered by its position in the natural order (the
  /// last dim varying fastest), as ts::program_id gives it. False (nothing run) past 2^26
  /// programs (a bound far beyond the tensors), where the permutation itself would be
  /// the cost: they run in order, still logged.
  bool run_programs_shuffled(const Node* top, LoopState& ls) {
    const size_t nd = top->dims.size();
    constexpr int64_t kMaxShuffled = int64_t{1} << 26;
    std::vector<int64_t> count(nd);
    int64_t total = 1;
    for (size_t d = 0; d < nd; ++d) {
      count[d] = (ls.end[d] - ls.begin[d] + ls.block[d] - 1) / ls.block[d];
      if (count[d] > kMaxShuffled || total * count[d] > kMaxShuffled) return false;
      total *= count[d];
    }
    std::vector<int64_t> order(static_cast<size_t>(total));
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), std::mt19937_64(seed_));
    for (int64_t p : order) {
      int64_t rest = p;
      for (size_t d = nd; d-- > 0;) {
        ls.tile_begin[d] = ls.begin[d] + (rest % count[d]) * ls.block[d];
        ls.tile_end[d] = std::min(ls.tile_begin[d] + ls.block[d], ls.end[d]);
        rest /= count[d];
      }
      program_ = p;
      f_.write_log()->start_program(p);
      run_body(top);
    }
    ls.tile_begin.clear();
    ls.tile_end.clear();
    return true;
  }

  /// A kernel that waits (Frame::sync): every program of the launch (tile of `top`) runs
  /// on its own thread with its own copy of the frame, so that a wait can be satisfied by
  /// another program. Errors: the first program's error (a wait that can never be
  /// satisfied among them: interp/program_sync.hpp); UserError past kMaxConcurrent
  /// programs.
  void run_programs_concurrently(const Node* top, LoopState& ls) {
    constexpr int64_t kMaxConcurrent = 1024;
    const size_t nd = top->dims.size();
    std::vector<int64_t> count(nd);
    int64_t total = 1;
    for (size_t d = 0; d < nd; ++d) {
      count[d] = (ls.end[d] - ls.begin[d] + ls.block[d] - 1) / ls.block[d];
      total *= count[d];
      if (total > kMaxConcurrent)
        throw UserError(
            f_.graph().kernel_name, top->loc,
            fmt::format("this kernel waits (ts::wait or ts::signal with wait_for), so its "
                        "programs must run at the same time, and the launch has more than {} "
                        "programs; the interpreter runs at most {} at once",
                        kMaxConcurrent, kMaxConcurrent),
            "use larger block sizes or fewer grid indices (a GPU too runs only as many "
            "programs at once as fit on it: a wait for a program not yet started never ends)");
    }
    ProgramSync& sync = *f_.sync();
    sync.start(total);
    std::vector<Frame> frames(static_cast<size_t>(total), f_);
    std::mutex error_m;
    std::exception_ptr error;
    {
      std::vector<std::jthread> threads;
      for (int64_t p = 0; p < total; ++p) {
        Frame& pf = frames[static_cast<size_t>(p)];
        LoopState& pls = pf.loop(top);
        int64_t rest = p;
        for (size_t d = nd; d-- > 0;) {
          pls.tile_begin[d] = ls.begin[d] + (rest % count[d]) * ls.block[d];
          pls.tile_end[d] = std::min(pls.tile_begin[d] + ls.block[d], ls.end[d]);
          rest /= count[d];
        }
        threads.emplace_back([&, p, top] {
          bool failed = false;
          try {
            Runner r(pf, config_, seed_);
            r.top_ = top;
            r.program_ = p;
            r.run_body(top);
          } catch (...) {
            std::lock_guard<std::mutex> g(error_m);
            if (!error) error = std::current_exception();
            failed = true;
          }
          sync.finished(failed);
        });
      }
    }  // joins
    ls.tile_begin.clear();
    ls.tile_end.clear();
    if (error) std::rethrow_exception(error);
  }

  void run_body(const Node* loop) {
    for (const Node* n : loop->body) {
      if (n->op == Op::Yield) {
        yield(loop, n);
      } else {
        run_node(n);
      }
    }
  }

  // The next iteration's carried values; copied first, as one may read another.
  void yield(const Node* loop, const Node* y) {
    LoopState& ls = f_.loop(loop);
    for (size_t i = 0; i < y->args.size(); ++i) ls.next[i] = f_.value(y->args[i]);
    for (size_t i = 0; i < y->args.size(); ++i) std::swap(f_.slot(loop->carried[i]), ls.next[i]);
  }

  const LoopState& open_loop(const Node* n) {
    const Node* loop = n->args.at(0);
    const LoopState& ls = f_.loop(loop);
    if (static_cast<int64_t>(ls.tile_begin.size()) <= n->ival)
      throw InternalError(
          fmt::format("interpreter: %{} reads loop %{} outside it", n->id, loop->id));
    return ls;
  }

  void scalar(const Node* n, int64_t v) { f_.slot(n).set_scalar_int(n->dtype, v); }

  /// The launch's lock where its programs run concurrently.
  std::optional<std::unique_lock<std::mutex>> lock() {
    if (!f_.sync()) return std::nullopt;
    return f_.sync()->lock();
  }

  const Node* top_ = nullptr;  // the launch's top-level loop
  int64_t program_ = 0;        // flat index of the running program (= tile) of top_

  void run_node(const Node* n) {
    switch (n->op) {
      case Op::Loop:
        run_loop(n);
        return;
      case Op::Load: {
        auto lk = lock();
        exec_load(f_, n, f_.slot(n));
        return;
      }
      case Op::Store: {
        auto lk = lock();
        exec_store(f_, n);
        if (f_.sync()) f_.sync()->wrote();
        return;
      }
      case Op::Atomic:
        exec_atomic(f_, n, f_.slot(n));
        return;
      case Op::Signal:
        exec_signal(f_, n, f_.slot(n));
        return;
      case Op::Wait:
        exec_wait(f_, n);
        return;
      case Op::Multicast:  // addressed by its loads and stores (multicast_addresses)
        return;
      case Op::LoopIndex:
      case Op::TileBegin:
        scalar(n, open_loop(n).tile_begin[n->ival]);
        return;
      case Op::TileEnd:
        scalar(n, open_loop(n).tile_end[n->ival]);
        return;
      case Op::ProgramId:
        scalar(n, program_);
        return;
      case Op::TileBlock:
        scalar(n, open_loop(n).block.at(n->ival));
        return;
      case Op::TileId: {
        const LoopState& ls = open_loop(n);
        scalar(n, (ls.tile_begin[n->ival] - ls.begin[n->ival]) / ls.block[n->ival]);
        return;
      }
      case Op::TileIndex: {
        const LoopState& ls = open_loop(n);
        TileValue& out = f_.slot(n);
        out.reset(n->dtype, f_.dims(n));
        int64_t tb = ls.tile_begin[n->ival];
        for (int64_t c = 0; c < out.size(); ++c) {
          if (out.is_float())
            out.f[c] = static_cast<double>(tb + c);
          else
            out.i[c] = tb + c;
        }
        round_in_place(out);
        return;
      }
      case Op::LoopResult: {
        const Node* loop = n->args.at(0);
        f_.slot(n) = f_.value(loop->carried.at(n->ival));
        return;
      }
      // Values: computed by the frame.
      case Op::Arg:
      case Op::Size:
      case Op::Stride:
      case Op::Alloc:
      case Op::DeviceScalar:
      case Op::ShapeCheck:
      case Op::Return:
      case Op::Const:
      case Op::Unary:
      case Op::Binary:
      case Op::Where:
      case Op::Cast:
      case Op::Full:
      case Op::Arange:
      case Op::Permute:
      case Op::View:
      case Op::Reduce:
      case Op::Carried:
      case Op::Yield:
        f_.compute(n, f_.slot(n));
        return;
    }
  }

  Frame& f_;
  const Config& config_;
  uint64_t seed_;  // of the programs' order under the race check
};

// TESSEL_CHECK_RACES: unset, empty, 0, false, off or no = off; a number the seed of the
// programs' order; true, on or yes: seed 1. Anything else is an error at `loop` of g.
std::optional<uint64_t> race_check_seed(const ir::Graph& g, const ir::Node* loop) {
  const char* v = std::getenv("TESSEL_CHECK_RACES");
  const std::string_view text = v ? v : "";
  uint64_t seed = 0;  // digits only, below 2^64 (from_chars: no sign, no space, no wrap)
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seed);
  if (!text.empty() && ec == std::errc() && end == text.data() + text.size())
    return seed == 0 ? std::nullopt : std::optional<uint64_t>(seed);
  const std::optional<bool> on = parse_env_bool(v);
  if (!on)
    throw UserError(g.kernel_name, loop->loc,
                    fmt::format("TESSEL_CHECK_RACES is '{}', neither a boolean nor a seed", v),
                    "set it to 1 or a number below 2^64 (on: the seed of the programs' order), "
                    "or to 0 (off)");
  return *on ? std::optional<uint64_t>(1) : std::nullopt;
}

}  // namespace

void run_loop(const ir::Graph& g, const ir::Node* loop, rt::HostEnv& env, const Config& config,
              UnwrittenMemory& unwritten) {
  if (loop->op != Op::Loop) throw InternalError("interp::run_loop: not a Loop node");
  Frame frame(g, env, config);
  unwritten.track(env);
  frame.set_unwritten(&unwritten);
  frame.mark_body(loop->body);
  std::optional<uint64_t> seed = race_check_seed(g, loop);
  std::optional<WriteLog> log;
  // A kernel that waits runs its programs concurrently, without the race check: the
  // order of their writes is the waits' to give, not a race.
  bool waits = false;
  ir::walk(loop->body, [&](const Node* n) {
    waits |= n->op == Op::Wait || (n->op == Op::Signal && n->ival == 2);
  });
  ProgramSync sync;
  if (waits) {
    frame.set_sync(&sync);
  } else if (seed) {
    log.emplace(g, loop, env);
    frame.set_write_log(&*log);
  }
  Runner(frame, config, seed.value_or(0)).run_loop(loop);
}

}  // namespace tessel::interp
