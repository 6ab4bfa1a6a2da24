// Scratch entries for a call's hot path: on the stack up to N, on the heap past that (the
// per-call host path keeps a few entries per argument and must not allocate for them).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace tessel {

/// `n` default-initialized entries of T (a trivial T's are indeterminate: fill them all),
/// inline when n <= N, else in a vector. Not copyable (the span points into it).
template <class T, size_t N>
class StackSpan {
 public:
  explicit StackSpan(size_t n) {
    if (n > N) heap_.resize(n);
    span_ = n > N ? std::span<T>(heap_) : std::span<T>(inline_, n);
  }
  StackSpan(const StackSpan&) = delete;
  StackSpan& operator=(const StackSpan&) = delete;
  std::span<T> span() { return span_; }

 private:
  T inline_[N];
  std::vector<T> heap_;
  std::span<T> span_;
};

}  // namespace tessel
