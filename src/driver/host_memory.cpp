#include "driver/host_memory.hpp"

#include <map>
#include <mutex>

namespace tessel::rt {

namespace {

struct Registry {
  std::mutex mu;
  std::multimap<uintptr_t, uintptr_t> ranges;  // lo -> hi
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: Buffers may outlive static objects
  return *r;
}

}  // namespace

void register_host_memory(const void* ptr, int64_t nbytes) {
  if (!ptr || nbytes <= 0) return;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  uintptr_t lo = reinterpret_cast<uintptr_t>(ptr);
  r.ranges.emplace(lo, lo + static_cast<uintptr_t>(nbytes));
}

void unregister_host_memory(const void* ptr, int64_t nbytes) {
  if (!ptr || nbytes <= 0) return;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  uintptr_t lo = reinterpret_cast<uintptr_t>(ptr), hi = lo + static_cast<uintptr_t>(nbytes);
  auto [b, e] = r.ranges.equal_range(lo);
  for (auto it = b; it != e; ++it)
    if (it->second == hi) {
      r.ranges.erase(it);
      return;
    }
}

std::pair<uintptr_t, uintptr_t> live_host_range(uintptr_t p, int64_t nbytes) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  const uintptr_t end = p + static_cast<uintptr_t>(nbytes);
  // Ranges may nest (a from_blob over part of an allocation): the widest holding [p, end).
  std::pair<uintptr_t, uintptr_t> best{0, 0};
  for (auto it = r.ranges.begin(); it != r.ranges.end() && it->first <= p; ++it)
    if (end <= it->second && it->second - it->first > best.second - best.first) best = *it;
  return best;
}

}  // namespace tessel::rt
