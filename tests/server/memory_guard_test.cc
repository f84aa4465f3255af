#include "server/memory_guard.h"

#include <gtest/gtest.h>

#include "config/config.h"

namespace lavik {
namespace {

TEST(MemoryGuardTest, TheSmallerLimitThatIsSetApplies) {
  MemoryGuard guard(2);
  EXPECT_EQ(guard.limit(), 0u);
  guard.SetMaxMemory(1000);
  EXPECT_EQ(guard.limit(), 1000u);
  guard.SetRedisMaxmemory(500);
  EXPECT_EQ(guard.limit(), 500u);
  guard.SetRedisMaxmemory(5000);
  EXPECT_EQ(guard.limit(), 1000u);
  guard.SetMaxMemory(0);
  EXPECT_EQ(guard.limit(), 5000u);
  guard.SetRedisMaxmemory(0);
  EXPECT_EQ(guard.limit(), 0u);
}

TEST(MemoryGuardTest, NothingPublishedIsNotOom) {
  MemoryGuard guard(4);
  guard.SetMaxMemory(1);
  EXPECT_FALSE(guard.oom());
  EXPECT_EQ(guard.PublishedNonEvictable(), 0u);
}

TEST(MemoryGuardTest, FiguresSplitEvictableFromTheRest) {
  MemoryFigures f{.index = 1, .cache = 10, .buffers = 100, .clients = 1000, .registered = 10000};
  EXPECT_EQ(f.NonEvictable(), 11101u);
  EXPECT_EQ(f.Total(), 11111u);
  f.Add(f);
  EXPECT_EQ(f.Total(), 22222u);
}

TEST(MemoryGuardTest, DefaultsFollowTheAvailableMemory) {
  Config c;
  ResolveMemoryDefaults(&c);
  uint64_t available = AvailableMemoryBytes();
  EXPECT_EQ(c.max_memory, static_cast<int64_t>(available / 10 * 8));
  EXPECT_EQ(c.cache_mb, static_cast<int64_t>(available / 4 / (1u << 20)));
  Config explicit_config;
  explicit_config.max_memory = 0;
  explicit_config.cache_mb = 7;
  ResolveMemoryDefaults(&explicit_config);
  EXPECT_EQ(explicit_config.max_memory, 0);
  EXPECT_EQ(explicit_config.cache_mb, 7);
}

}  // namespace
}  // namespace lavik
