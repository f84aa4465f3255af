// Store: the typed operations one shard offers to command handlers. Handlers never see RESP
// here; they call these and format replies themselves.
//
// Completion model: a value read may have to wait for the device (issue #3), so reads are
// awaitables — `const std::string& v = co_await store.ReadValue(e);` — used from a handler
// coroutine (runtime/task.h). While values live in DRAM the awaitable is always ready and costs
// nothing; the device-backed store makes it suspend and resume from the io_uring completion.
// Index-only operations (exists, type, TTL, delete, write) stay synchronous: they never need the
// device before replying (writes go to a write buffer).
//
// Expiry: every lookup removes an expired key first (lazy expiry); ActiveExpireCycle() samples
// keys with a TTL, as Redis does, so untouched keys are reclaimed too.
//
// Thread safety: none; a Store belongs to one worker (shard).
#pragma once

#include <coroutine>
#include <cstdint>
#include <string>
#include <string_view>

#include "storage/keyspace.h"

namespace lavik {

struct StoreStats {
  uint64_t keyspace_hits = 0;
  uint64_t keyspace_misses = 0;
  uint64_t expired_keys = 0;
  uint64_t dirty = 0;  // writes since start (Redis's "changes since last save" analogue)
};

class ValueRead {
 public:
  explicit ValueRead(Entry* e) : e_(e) {}
  bool await_ready() const noexcept { return true; }
  void await_suspend(std::coroutine_handle<>) noexcept {}
  const std::string& await_resume() const noexcept { return e_->value; }

 private:
  Entry* e_;
};

class Store {
 public:
  Store() = default;

  // The live entry for key (an expired one is deleted first), or nullptr.
  Entry* Lookup(std::string_view key, int64_t now_ms);
  // As Lookup, and counts a keyspace hit or miss (for read commands, as Redis does).
  Entry* LookupRead(std::string_view key, int64_t now_ms);
  // The live entry for key, created (empty string, no TTL) if missing; *created says which.
  Entry* LookupOrCreate(std::string_view key, int64_t now_ms, bool* created);

  ValueRead ReadValue(Entry* e) { return ValueRead(e); }
  // Replaces the value (the entry becomes a string). Keeps the TTL; callers clear it if needed.
  void WriteString(Entry* e, std::string_view value);
  void Delete(Entry* e);
  void SetExpire(Entry* e, int64_t expire_ms) { keys_.SetExpire(e, expire_ms); }
  Entry* Rename(Entry* e, std::string_view new_key) { return keys_.Rekey(e, new_key); }
  void Flush() { keys_.Clear(); }

  // Reclaims expired keys for at most budget_us microseconds. Returns how many were deleted.
  size_t ActiveExpireCycle(int64_t now_ms, int64_t budget_us);

  // SCAN step, as Redis: visits buckets until `count` live entries were passed to fn or 10 *
  // count buckets were visited; returns the next cursor (0 = done). Expired entries are skipped,
  // not deleted (SCAN must not write).
  uint64_t Scan(uint64_t cursor, size_t count, int64_t now_ms,
                const std::function<void(Entry*)>& fn) const;

  const Keyspace& keys() const { return keys_; }
  Keyspace& keys() { return keys_; }
  StoreStats& stats() { return stats_; }
  const StoreStats& stats() const { return stats_; }
  void NoteWrite() { ++stats_.dirty; }

 private:
  bool ExpireIfNeeded(Entry* e, int64_t now_ms);

  Keyspace keys_;
  StoreStats stats_;
  uint64_t rnd_ = 0x9E3779B97F4A7C15ULL;
};

}  // namespace lavik
