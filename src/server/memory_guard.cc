#include "server/memory_guard.h"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <string_view>

#include "client/client_state.h"
#include "config/config.h"
#include "config/config_registry.h"
#include "server/server.h"
#include "storage/store.h"

namespace lavik {

uint64_t ProcessRssBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

uint64_t AllocatorBytes() {
  struct mallinfo2 mi = mallinfo2();
  uint64_t used = mi.uordblks + mi.hblkhd;
  return used != 0 ? used : ProcessRssBytes();
}

MemoryFigures MeasureWorker(Server& server, int id) {
  Store& st = server.shards().at(id).store;
  MemoryFigures f;
  f.index = st.index_memory() + st.ttl_memory();
  f.cache = st.cache().bytes();
  f.buffers = st.log().heap_buffer_memory();
  for (ClientState* cl = server.clients_of(id); cl != nullptr; cl = cl->next) {
    f.clients += cl->conn->input_capacity() + cl->conn->output_pending();
  }
  f.registered = server.registered_buffer_bytes(id);
  return f;
}

void ResolveMemoryDefaults(Config* config) {
  const uint64_t available = AvailableMemoryBytes();
  if (config->cache_mb < 0) config->cache_mb = static_cast<int64_t>(available / 4 / (1u << 20));
  if (config->max_memory < 0) config->max_memory = static_cast<int64_t>(available / 10 * 8);
}

namespace {

uint64_t Bytes(std::string_view value) {
  uint64_t n = 0;
  ConfigRegistry::ParseMemory(value, &n);  // the registry stores plain byte counts
  return n;
}

}  // namespace

void InstallMemoryLimits(ConfigRegistry& registry, MemoryGuard* guard) {
  if (const std::string* v = registry.Value("max-memory")) guard->SetMaxMemory(Bytes(*v));
  if (const std::string* v = registry.Value("maxmemory")) guard->SetRedisMaxmemory(Bytes(*v));
  registry.OnChange("max-memory", [guard](std::string_view v) {
    guard->SetMaxMemory(Bytes(v));
    return Status::Ok();
  });
  registry.OnChange("maxmemory", [guard](std::string_view v) {
    guard->SetRedisMaxmemory(Bytes(v));
    return Status::Ok();
  });
}

MemoryGuard::MemoryGuard(int workers)
    : workers_(workers), slots_(std::make_unique<Slot[]>(static_cast<size_t>(workers))) {}

void MemoryGuard::SetMaxMemory(uint64_t bytes) {
  max_memory_.store(bytes, std::memory_order_relaxed);
  UpdateLimit();
}

void MemoryGuard::SetRedisMaxmemory(uint64_t bytes) {
  redis_maxmemory_.store(bytes, std::memory_order_relaxed);
  UpdateLimit();
}

void MemoryGuard::UpdateLimit() {
  uint64_t a = max_memory_.load(std::memory_order_relaxed);
  uint64_t b = redis_maxmemory_.load(std::memory_order_relaxed);
  limit_.store(a == 0 ? b : b == 0 ? a : std::min(a, b), std::memory_order_relaxed);
  Recompute();
}

uint64_t MemoryGuard::PublishedNonEvictable() const {
  uint64_t sum = 0;
  for (int i = 0; i < workers_; ++i) sum += slots_[i].non_evictable.load(std::memory_order_relaxed);
  return sum;
}

void MemoryGuard::Recompute() {
  uint64_t max = limit();
  oom_.store(max != 0 && PublishedNonEvictable() > max, std::memory_order_relaxed);
}

void MemoryGuard::Refresh(Server& server, int id, int64_t cache_mb) {
  MemoryFigures f = MeasureWorker(server, id);
  Slot& slot = slots_[id];
  slot.non_evictable.store(f.NonEvictable(), std::memory_order_relaxed);
  uint64_t non_evictable = PublishedNonEvictable();
  uint64_t max = limit();
  oom_.store(max != 0 && non_evictable > max, std::memory_order_relaxed);
  // The cache is what gives way: it gets what the non-evictable part leaves, up to cache-mb.
  uint64_t cache_total = static_cast<uint64_t>(std::max<int64_t>(cache_mb, 0)) << 20;
  if (max != 0) cache_total = std::min(cache_total, max > non_evictable ? max - non_evictable : 0);
  size_t share = static_cast<size_t>(cache_total / static_cast<uint64_t>(workers_));
  if (share != slot.applied_cache) {
    server.shards().at(id).store.cache().SetCapacity(share);
    slot.applied_cache = share;
  }
}

}  // namespace lavik
