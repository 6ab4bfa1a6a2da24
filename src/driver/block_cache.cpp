#include "driver/block_cache.hpp"

namespace tessel::rt {

namespace {
uint64_t key(int device, int64_t bytes) {
  return (static_cast<uint64_t>(device) << 48) | static_cast<uint64_t>(bytes);
}
}  // namespace

int64_t BlockCache::size_class(int64_t nbytes, const void* stream) {
  if (stream != nullptr || nbytes <= 0 || nbytes > kMaxBlockBytes) return 0;
  return (nbytes + kClassBytes - 1) / kClassBytes * kClassBytes;
}

void* BlockCache::take(int device, int64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = blocks_.find(key(device, bytes));
  if (it == blocks_.end() || it->second.empty()) return nullptr;
  void* p = it->second.back();
  it->second.pop_back();
  bytes_[device] -= bytes;
  return p;
}

bool BlockCache::give(int device, int64_t bytes, void* ptr) {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t& held = bytes_[device];
  if (held + bytes > kMaxCachedBytes) return false;
  blocks_[key(device, bytes)].push_back(ptr);
  held += bytes;
  return true;
}

std::vector<void*> BlockCache::drain(int device) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<void*> out;
  for (auto it = blocks_.begin(); it != blocks_.end();) {
    if (static_cast<int>(it->first >> 48) == device) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      it = blocks_.erase(it);
    } else {
      ++it;
    }
  }
  bytes_[device] = 0;
  return out;
}

int64_t BlockCache::cached_bytes(int device) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = bytes_.find(device);
  return it == bytes_.end() ? 0 : it->second;
}

}  // namespace tessel::rt
