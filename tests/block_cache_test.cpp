// The cache of freed device blocks (driver/block_cache.hpp), as a host structure: size
// classes, reuse by device and class, the per-device cap, and draining.
#include "driver/block_cache.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace rt = tessel::rt;

namespace {

void* fake(uintptr_t p) { return reinterpret_cast<void*>(p); }

TEST(BlockCache, ClassesRoundUpTo512BytesOnTheLegacyStreamOnly) {
  EXPECT_EQ(rt::BlockCache::size_class(1, nullptr), 512);
  EXPECT_EQ(rt::BlockCache::size_class(512, nullptr), 512);
  EXPECT_EQ(rt::BlockCache::size_class(513, nullptr), 1024);
  EXPECT_EQ(rt::BlockCache::size_class(rt::BlockCache::kMaxBlockBytes, nullptr),
            rt::BlockCache::kMaxBlockBytes);
  EXPECT_EQ(rt::BlockCache::size_class(rt::BlockCache::kMaxBlockBytes + 1, nullptr), 0);
  EXPECT_EQ(rt::BlockCache::size_class(0, nullptr), 0);
  int stream = 0;
  EXPECT_EQ(rt::BlockCache::size_class(4096, &stream), 0);  // another stream: not kept
}

TEST(BlockCache, ABlockServesItsClassOnItsDeviceOnce) {
  rt::BlockCache c;
  EXPECT_EQ(c.take(0, 1024), nullptr);
  EXPECT_TRUE(c.give(0, 1024, fake(0x1000)));
  EXPECT_EQ(c.cached_bytes(0), 1024);
  EXPECT_EQ(c.take(1, 1024), nullptr);  // another device
  EXPECT_EQ(c.take(0, 512), nullptr);   // another class
  EXPECT_EQ(c.take(0, 1024), fake(0x1000));
  EXPECT_EQ(c.take(0, 1024), nullptr);  // taken
  EXPECT_EQ(c.cached_bytes(0), 0);
}

TEST(BlockCache, ADeviceKeepsAtMostItsCapAndDrainsItsOwnBlocks) {
  rt::BlockCache c;
  const int64_t big = rt::BlockCache::kMaxBlockBytes;
  int64_t kept = 0;
  for (uintptr_t i = 1; c.give(0, big, fake(i << 24)); ++i) kept += big;
  EXPECT_EQ(kept, rt::BlockCache::kMaxCachedBytes);
  EXPECT_TRUE(c.give(1, 512, fake(0x42)));  // other devices have caps of their own
  std::vector<void*> drained = c.drain(0);
  EXPECT_EQ(static_cast<int64_t>(drained.size()), kept / big);
  EXPECT_EQ(c.cached_bytes(0), 0);
  EXPECT_EQ(c.cached_bytes(1), 512);
  EXPECT_EQ(c.take(1, 512), fake(0x42));
  EXPECT_TRUE(c.give(0, big, fake(0x5)));  // room again after the drain
}

}  // namespace
