// How the interpreter runs the programs of a launch that waits (ts::wait, or ts::signal
// with wait_for): concurrently, one thread per program, so that a wait can be satisfied
// by another program (interp/interpreter.cpp). Their memory accesses are serialized by
// one lock; a wait that finds its element not yet signalled sleeps until some program
// writes. When every program still running is asleep in a wait and nothing was written
// since they fell asleep, no wait can ever be satisfied: the waits report it (a
// UserError) instead of hanging.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace tessel::interp {

class ProgramSync {
 public:
  /// Before the programs start: how many there are.
  void start(int64_t programs) { live_ = programs; }

  /// Held by every memory access of the launch's programs.
  std::unique_lock<std::mutex> lock() { return std::unique_lock<std::mutex>(m_); }
  /// After a write (lock held): wakes the waiting programs to look again.
  void wrote() {
    ++generation_;
    asleep_ = 0;
    cv_.notify_all();
  }
  /// With the lock held: sleeps until some program writes. False (at once, or on waking)
  /// when no program can write any more: every program still running is asleep, or one
  /// failed (its error is the launch's).
  bool sleep_until_write(std::unique_lock<std::mutex>& lk) {
    if (stuck_) return false;
    const uint64_t seen = generation_;
    if (++asleep_ >= live_) {
      stuck_ = true;
      cv_.notify_all();
      return false;
    }
    cv_.wait(lk, [&] { return generation_ != seen || stuck_; });
    return generation_ != seen;
  }
  /// A program ended; `failed`: by an error, so the others stop waiting.
  void finished(bool failed) {
    std::unique_lock<std::mutex> lk(m_);
    --live_;
    if (failed || (live_ > 0 && asleep_ >= live_)) {
      stuck_ = true;
      cv_.notify_all();
    }
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  int64_t live_ = 0;         // programs not finished
  int64_t asleep_ = 0;       // programs asleep since the last write
  uint64_t generation_ = 0;  // writes so far
  bool stuck_ = false;       // no wait can be satisfied any more
};

}  // namespace tessel::interp
