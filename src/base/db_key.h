// Databases (SELECT 0..15) as stored key bytes (doc/storage-format.md, "Databases").
//
// A key of physical database d is stored as "\xff\xfd" d key, except the plain case: a key of
// database 0 that does not itself start with "\xff\xfd" is stored as is (so database 0 costs
// nothing and data files from before databases read unchanged). The mapping is one-to-one: a
// database-0 key starting with the prefix is stored as "\xff\xfd" "\x00" key.
//
// Logical vs physical: a client's SELECT n names a logical database; SWAPDB swaps which physical
// database two logical ones name, in O(1), without touching a key. DbMap holds that mapping for
// the process (the superblock persists it). Everything below the dispatcher (stores, records,
// blocking, WATCH) sees stored keys; replies, notifications and invalidations show the client
// key and the logical database.
//
// Thread safety: the key functions are pure. DbMap reads are relaxed atomics; DbMap::Swap runs
// while every shard is held (SWAPDB), so no command observes a half-swapped map.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

namespace lavik {

inline constexpr int kMaxDatabases = 16;
inline constexpr std::string_view kDbKeyPrefix = "\xff\xfd";

// True if a key of physical database `db` is stored with the prefix.
inline bool NeedsDbPrefix(int db, std::string_view key) {
  return db != 0 || (key.size() >= 2 && key[0] == '\xff' && key[1] == '\xfd');
}

// The stored bytes of `key` in physical database `db`.
inline std::string DbKey(int db, std::string_view key) {
  if (!NeedsDbPrefix(db, key)) return std::string(key);
  std::string out;
  out.reserve(key.size() + 3);
  out.append(kDbKeyPrefix);
  out.push_back(static_cast<char>(db));
  out.append(key);
  return out;
}

// As DbKey, into `buf` without allocating: a view of `key` itself when no prefix is needed, else
// of buf's first bytes; empty if the stored key would not fit in buf.
inline std::string_view DbKeyInto(int db, std::string_view key, char* buf, size_t cap) {
  if (!NeedsDbPrefix(db, key)) return key;
  if (key.size() + 3 > cap) return {};
  kDbKeyPrefix.copy(buf, 2);
  buf[2] = static_cast<char>(db);
  key.copy(buf + 3, key.size());
  return std::string_view(buf, key.size() + 3);
}

struct SplitKey {
  int db = 0;            // physical database
  std::string_view key;  // the client's key
};

// The physical database and client key of stored key bytes.
inline SplitKey SplitDbKey(std::string_view stored) {
  if (stored.size() >= 3 && stored[0] == '\xff' && stored[1] == '\xfd' &&
      static_cast<uint8_t>(stored[2]) < kMaxDatabases) {
    return {static_cast<uint8_t>(stored[2]), stored.substr(3)};
  }
  return {0, stored};
}

// The client key of stored key bytes (the database dropped).
inline std::string_view ClientKey(std::string_view stored) { return SplitDbKey(stored).key; }

// Logical ↔ physical database numbers (SWAPDB).
class DbMap {
 public:
  static int Physical(int logical) {
    return physical_[static_cast<size_t>(logical)].load(std::memory_order_relaxed);
  }
  static int Logical(int physical) {
    return logical_[static_cast<size_t>(physical)].load(std::memory_order_relaxed);
  }
  // SWAPDB a b (every shard held by the caller).
  static void Swap(int a, int b) {
    const int pa = Physical(a), pb = Physical(b);
    Set(a, pb);
    Set(b, pa);
  }
  // Start-up: logical database `logical` names physical `physical`.
  static void Set(int logical, int physical) {
    physical_[static_cast<size_t>(logical)].store(physical, std::memory_order_relaxed);
    logical_[static_cast<size_t>(physical)].store(logical, std::memory_order_relaxed);
  }
  // `databases`: SELECT accepts 0..Count()-1 (at most kMaxDatabases).
  static int Count() { return count_.load(std::memory_order_relaxed); }
  static void SetCount(int n) { count_.store(n, std::memory_order_relaxed); }
  // `cluster-enabled yes` (immutable, set at start-up): only database 0 may be used, so MOVE,
  // SWAPDB and COPY ... DB n refuse as Redis does.
  static bool ClusterMode() { return cluster_mode_.load(std::memory_order_relaxed); }
  static void SetClusterMode(bool on) { cluster_mode_.store(on, std::memory_order_relaxed); }
  static void Reset() {
    for (int i = 0; i < kMaxDatabases; ++i) Set(i, i);
  }

 private:
  struct Table {
    std::array<std::atomic<int>, kMaxDatabases> physical;
    std::array<std::atomic<int>, kMaxDatabases> logical;
    Table() {
      for (size_t i = 0; i < kMaxDatabases; ++i) {
        physical[i].store(static_cast<int>(i));
        logical[i].store(static_cast<int>(i));
      }
    }
  };
  static inline Table table_;
  static inline std::atomic<int> count_{kMaxDatabases};
  static inline std::atomic<bool> cluster_mode_{false};
  static inline std::array<std::atomic<int>, kMaxDatabases>& physical_ = table_.physical;
  static inline std::array<std::atomic<int>, kMaxDatabases>& logical_ = table_.logical;
};

}  // namespace lavik
