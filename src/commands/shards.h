// ShardSet: the shards (one per worker) and which one owns a key.
//
// A key belongs to the shard of its Redis hash slot (CRC16 of the key or its {hash tag}, mod
// 16384); slots are split into contiguous ranges, one per worker. Keys with the same hash tag
// therefore always share a shard.
//
// Shard lock: a command whose keys span several shards takes each shard's lock (ascending shard
// order, so two such commands cannot deadlock) for its whole run. While a shard is locked, other
// commands routed to it wait in `waiting` (FIFO) — this is what makes MSET, MSETNX, RENAME across
// workers atomic, as in Redis. Invariant: `waiting` is non-empty only while the shard is locked.
//
// Thread safety: a Shard's members are touched only on its worker's thread, except that any
// thread may read writes_suspended().
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <string_view>
#include <vector>

#include "base/slot.h"
#include "runtime/mailbox.h"
#include "runtime/worker.h"
#include "storage/store.h"

namespace lavik {

struct Shard {
  Shard(int shard_id, Worker* w, std::unique_ptr<Store> s)
      : id(shard_id), worker(w), store_ptr(std::move(s)), store(*store_ptr) {}
  const int id;
  Worker* const worker;
  std::unique_ptr<Store> store_ptr;
  Store& store;

  const void* lock_owner = nullptr;
  std::deque<MailboxItem*> waiting;

  bool locked() const { return lock_owner != nullptr; }

  // Single-shard write commands whose handler is suspended on this shard mid-way (a device
  // read, the sync of appendfsync always), counted by the dispatcher. An RDB snapshot opens only
  // while none is, so it never holds half of one (server/rdb_save.cc). Blocking commands are not
  // counted. One writer (the worker): a plain load and store, no locked instruction.
  void WriteSuspended() { suspended_writes_.store(suspended_writes_.load(kRelaxed) + 1, kRelaxed); }
  void WriteFinished() { suspended_writes_.store(suspended_writes_.load(kRelaxed) - 1, kRelaxed); }
  int writes_suspended() const { return suspended_writes_.load(std::memory_order_acquire); }

  // Releases the lock and runs the waiting items until one of them takes the lock again.
  void Unlock();

 private:
  static constexpr std::memory_order kRelaxed = std::memory_order_relaxed;
  std::atomic<int> suspended_writes_{0};
};

class ShardSet {
 public:
  ShardSet(const std::vector<Worker*>& workers, std::vector<std::unique_ptr<Store>> stores);

  int size() const { return static_cast<int>(shards_.size()); }
  Shard& at(int id) { return *shards_[id]; }
  // The shard of the calling worker thread.
  Shard& local() { return *shards_[Worker::Current()->id()]; }

  int SlotShard(uint16_t slot) const { return lavik::SlotShard(slot, size()); }
  int ShardOf(std::string_view key) const { return size() == 1 ? 0 : SlotShard(KeyHashSlot(key)); }

 private:
  std::vector<std::unique_ptr<Shard>> shards_;
};

}  // namespace lavik
