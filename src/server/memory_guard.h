// MemoryGuard: --max-memory admission. Lavik keeps its index, value cache and buffers in DRAM
// (values live on the device); this keeps their sum under a limit.
//
// The limit is the smaller of `max-memory` (Lavik's own, default 80% of RAM or of the memory
// cgroup limit) and Redis's `maxmemory` when that is non-zero; 0 in both means no limit.
// Memory is split in two (doc/operations.md):
//   - evictable: the value cache. It gives way first — its target shrinks so the total fits.
//   - non-evictable: index (+ TTL table), heap write buffers, client buffers and the
//     registered io_uring buffers. When this part alone exceeds the limit, commands flagged
//     denyoom get Redis's OOM error; reads and deletes keep working, and writes work again
//     once deletes or FLUSHALL bring it back under.
// INFO's used_memory is the same sum (MeasureWorker), so what INFO shows is what is checked.
//
// Cost on the request path: one relaxed atomic load (oom()). Each worker's ~100 ms timer
// measures its own shard and clients, publishes the figures in its slot and recomputes the
// flag and its cache target from every worker's published figures.
//
// Thread safety: oom(), limit(), Set*() and Recompute() from any thread; Refresh(id) and
// MeasureWorker(id) only on worker id's thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace lavik {

class ConfigRegistry;
class Server;
struct Config;

// What one worker holds in DRAM, in bytes.
struct MemoryFigures {
  uint64_t index = 0;       // key index and TTL table
  uint64_t cache = 0;       // value cache (evictable)
  uint64_t buffers = 0;     // write buffers outside the registered pool
  uint64_t clients = 0;     // connections' input and output buffers
  uint64_t registered = 0;  // registered io_uring buffers (pinned)

  uint64_t NonEvictable() const { return index + buffers + clients + registered; }
  uint64_t Total() const { return NonEvictable() + cache; }
  void Add(const MemoryFigures& o) {
    index += o.index;
    cache += o.cache;
    buffers += o.buffers;
    clients += o.clients;
    registered += o.registered;
  }
};

// Worker `id`'s figures: its shard and the clients it owns. Runs on worker id's thread.
MemoryFigures MeasureWorker(Server& server, int id);

// The process's resident set (/proc/self/statm) and what malloc has handed out (mallinfo2; the
// RSS when a replaced allocator reports nothing). Any thread.
uint64_t ProcessRssBytes();
uint64_t AllocatorBytes();

// Fills the memory defaults a Config leaves open: cache_mb < 0 becomes a quarter of the memory
// available, max_memory < 0 becomes 80% of it (AvailableMemoryBytes()).
void ResolveMemoryDefaults(Config* config);

class MemoryGuard;

// Start-up: gives `guard` the registry's max-memory and maxmemory and follows their CONFIG SET.
void InstallMemoryLimits(ConfigRegistry& registry, MemoryGuard* guard);

class MemoryGuard {
 public:
  explicit MemoryGuard(int workers);

  // CONFIG SET max-memory / maxmemory (and start-up): bytes, 0 = not set.
  void SetMaxMemory(uint64_t bytes);
  void SetRedisMaxmemory(uint64_t bytes);
  // The effective limit: the smaller of the two that are set; 0 = none.
  uint64_t limit() const { return limit_.load(std::memory_order_relaxed); }

  // True while the non-evictable memory exceeds the limit: denyoom commands are refused.
  bool oom() const { return oom_.load(std::memory_order_relaxed); }

  // Worker id's timer: measures the worker, publishes its figures, recomputes the flag and
  // applies the worker's cache capacity: its share of min(cache_mb, limit - non-evictable).
  void Refresh(Server& server, int id, int64_t cache_mb);

  // Recomputes the flag from the published figures (after a limit change).
  void Recompute();

  // Sum of the published non-evictable figures of every worker.
  uint64_t PublishedNonEvictable() const;

 private:
  struct alignas(64) Slot {
    std::atomic<uint64_t> non_evictable{0};
    size_t applied_cache = SIZE_MAX;  // owner worker only
  };
  void UpdateLimit();

  const int workers_;
  std::unique_ptr<Slot[]> slots_;
  std::atomic<uint64_t> max_memory_{0};
  std::atomic<uint64_t> redis_maxmemory_{0};
  std::atomic<uint64_t> limit_{0};
  std::atomic<bool> oom_{false};
};

}  // namespace lavik
