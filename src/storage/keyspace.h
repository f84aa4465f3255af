// Keyspace: one shard's keys in DRAM — a chained hash table with power-of-two buckets, plus the
// list of keys that carry an expiry (sampled by active expiry, as Redis samples its expires dict).
//
// This is the in-memory stage of the Store (issue #2); the device-backed index replaces the
// value part (see doc/threading.md, "Store interface"). SCAN uses Redis's reverse-binary cursor,
// so a key present for a whole scan is returned at least once even if the table resizes between
// calls.
//
// Thread safety: none; a Keyspace belongs to one worker.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace lavik {

enum class ValueType : uint8_t { kString = 0, kList, kSet, kZSet, kHash, kStream };
std::string_view TypeName(ValueType t);

// One key. Allocated as a single block: this header followed by the key bytes.
struct Entry {
  Entry* next;
  uint64_t hash;
  int64_t expire_ms;     // absolute unix ms; 0 = no expiry
  uint32_t expire_slot;  // index in Keyspace::expiring_ while expire_ms != 0
  uint32_t key_len;
  ValueType type;
  std::string value;

  std::string_view key() const { return {reinterpret_cast<const char*>(this + 1), key_len}; }
};

class Keyspace {
 public:
  Keyspace();
  ~Keyspace();
  Keyspace(const Keyspace&) = delete;
  Keyspace& operator=(const Keyspace&) = delete;

  static uint64_t Hash(std::string_view key);

  // Returns the entry or nullptr. Does not look at expiry.
  Entry* Find(std::string_view key) const;
  // Inserts a new string entry with an empty value; the key must not be present.
  Entry* Insert(std::string_view key);
  void Erase(Entry* e);
  // Moves e's payload (type, value, expiry) to a new key; e is freed. Returns the new entry.
  Entry* Rekey(Entry* e, std::string_view new_key);
  void SetExpire(Entry* e, int64_t expire_ms);  // 0 removes the expiry
  void Clear();

  size_t size() const { return size_; }
  size_t expires() const { return expiring_.size(); }
  size_t buckets() const { return buckets_.size(); }

  // Calls fn on the entries of the bucket at `cursor`; returns the next cursor (0 = done).
  uint64_t ScanBucket(uint64_t cursor, const std::function<void(Entry*)>& fn) const;
  // A random entry (uniform enough for RANDOMKEY), or nullptr if empty.
  Entry* Random(uint64_t rnd) const;
  // A random entry among those with an expiry, or nullptr.
  Entry* RandomExpiring(uint64_t rnd) const;

 private:
  void Resize(size_t new_buckets);
  void Unlink(Entry* e);

  std::vector<Entry*> buckets_;
  size_t size_ = 0;
  std::vector<Entry*> expiring_;
};

}  // namespace lavik
