// What the collection families (hash_family.cc, set_family.cc) share: reading a collection key
// with its type checked, the read-modify-write loop that rewrites its record (doc/collections.md),
// HSCAN/SSCAN argument parsing and cursor walking, and the random source of SPOP/SRANDMEMBER/
// HRANDFIELD.
//
// Thread safety: the helpers run on the worker that owns the key, like the handlers calling them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/glob.h"
#include "commands/command.h"
#include "protocol/errors.h"
#include "runtime/task_of.h"
#include "storage/collection.h"
#include "storage/store.h"

namespace lavik {

struct CollectionRead {
  KeyInfo info;         // info.exists false: no such key (view is then empty)
  ReadResult record;    // the bytes, valid until the next call on the Store
  std::string copy;     // the bytes, when the caller asked for a copy
  CollectionView view;  // over `copy` if copied, else over `record`
};

// Reads the collection at `key`, which must be of `type` (or missing): false with the error
// text in *error on WRONGTYPE, an I/O error or a damaged encoding. `copy`: keep the bytes past
// later Store calls (read-modify-write); `count_stats`: count a keyspace hit or miss (reads).
// Runs on the key's worker and never touches a reply (multi-key commands call it there).
TaskOf<bool> ReadCollection(Store& st, std::string_view key, ValueType type, int64_t now_ms,
                            bool count_stats, bool copy, CollectionRead* out, std::string* error);

// ReadCollection for a handler on the key's worker: replies the error itself.
TaskOf<bool> ReadCollectionOrReply(Context& ctx, Store& st, std::string_view key, ValueType type,
                                   bool count_stats, bool copy, CollectionRead* out);

// Writes `encoded` as the key's value if the key is still at `expected` (0: must not exist),
// keeping `expire_ms`; an empty encoding deletes the key (Redis keeps no empty collections).
// False with *error set if the write failed; *applied is false if the key changed meanwhile
// (the caller starts over).
TaskOf<bool> StoreCollection(Store& st, std::string_view key, ValueType type, uint64_t expected,
                             std::string_view encoded, int64_t expire_ms, bool* applied,
                             std::string* error);

enum class Rewrite { kError, kUnchanged, kWrite };

// Read-modify-write of the collection at `key` on its worker, retried if another write came in
// while it was read; the TTL stays, as in Redis. `modify(view, exists, &encoded)` either failed
// (kError: it replied or set the error itself), needs no write (kUnchanged) or put the new
// encoding in *encoded (kWrite; "" deletes the key). False on failure, with *error set unless
// modify failed.
template <typename Modify>
TaskOf<bool> RewriteCollection(Store& st, std::string_view key, ValueType type, int64_t now_ms,
                               Modify modify, std::string* error) {
  while (true) {
    CollectionRead cur;
    if (!co_await ReadCollection(st, key, type, now_ms, false, true, &cur, error)) {
      co_return false;
    }
    std::string encoded;
    Rewrite what = modify(cur.view, cur.info.exists, &encoded);
    if (what == Rewrite::kError) co_return false;
    if (what == Rewrite::kUnchanged) co_return true;
    bool applied = false;
    if (!co_await StoreCollection(st, key, type, cur.info.exists ? cur.info.loc : 0, encoded,
                                  cur.info.expire_ms, &applied, error)) {
      co_return false;
    }
    if (applied) co_return true;
  }
}

// RewriteCollection of ctx.args[1] by a handler running on its worker; replies errors.
template <typename Modify>
TaskOf<bool> RewriteCollectionOrReply(Context& ctx, ValueType type, Modify modify) {
  std::string error;
  bool ok = co_await RewriteCollection(*ctx.store, ctx.args[1], type, ctx.now_ms, std::move(modify),
                                       &error);
  if (!ok && !error.empty()) ctx.reply->Error(error);
  co_return ok;
}

struct ScanArgs {
  uint64_t cursor = 0;
  int64_t count = 10;
  std::string_view pattern;
  bool use_pattern = false;
};

// HSCAN/SSCAN key cursor [MATCH pattern] [COUNT count], as Redis 7.0 parses them.
bool ParseScanArgsOrReply(Context& ctx, ScanArgs* a);

// Walks up to a.count entries from a.cursor (a hash position: entries added or removed meanwhile
// never make a walk skip one that stayed), calling keep(i) for those matching the pattern.
// Returns the next cursor (0 = done).
template <typename Keep>
uint64_t ScanCollection(const CollectionView& v, const ScanArgs& a, Keep keep);

// A uniformly distributed value below n (n > 0); per-thread generator.
uint64_t RandomBelow(uint64_t n);

// `count` distinct indices below n (count <= n), in random order.
std::vector<uint32_t> DistinctRandomIndices(uint32_t n, uint32_t count);

template <typename Keep>
uint64_t ScanCollection(const CollectionView& v, const ScanArgs& a, Keep keep) {
  uint32_t i = a.cursor == 0 ? 0 : v.LowerBound(a.cursor);
  uint32_t taken = 0;
  uint64_t last_hash = 0;
  while (i < v.size()) {
    const std::string_view f = v.field(i);
    const uint64_t h = MemberHash(f);
    // Stop between two hash values only: the cursor names a hash, so a run of equal hashes
    // (a 64-bit collision) must be returned whole.
    if (taken >= static_cast<uint64_t>(a.count) && h != last_hash) break;
    if (!a.use_pattern || GlobMatch(a.pattern, f)) keep(i);
    last_hash = h;
    ++taken;
    ++i;
  }
  return i < v.size() ? MemberHash(v.field(i)) : 0;
}

}  // namespace lavik
