// What the collection families (hash_family.cc, set_family.cc) share: reading a collection key
// with its type checked, the read-modify-write loop that rewrites its record (doc/collections.md),
// HSCAN/SSCAN argument parsing and cursor walking, and the random source of SPOP/SRANDMEMBER/
// HRANDFIELD.
//
// Thread safety: the helpers run on the worker that owns the key, like the handlers calling them.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/glob.h"
#include "base/random.h"
#include "commands/collection_read.h"
#include "commands/command.h"
#include "protocol/errors.h"
#include "runtime/task_of.h"
#include "storage/chunked.h"
#include "storage/collection.h"
#include "storage/store.h"

namespace lavik {

// Reads the collection at `key`, which must be of `type` (or missing): false with the error
// text in *error on WRONGTYPE, an I/O error or a damaged encoding. `copy`: keep the bytes past
// later Store calls (read-modify-write); `count_stats`: count a keyspace hit or miss (reads).
// Runs on the key's worker and never touches a reply (multi-key commands call it there).
// `scope`: what a chunked collection's view must hold (the whole collection by default).
TaskOf<bool> ReadCollection(Store& st, std::string_view key, ValueType type, int64_t now_ms,
                            bool count_stats, bool copy, CollectionRead* out, std::string* error,
                            ReadScope scope = {});

// ReadCollection for a handler on the key's worker: replies the error itself.
TaskOf<bool> ReadCollectionOrReply(Context& ctx, Store& st, std::string_view key, ValueType type,
                                   bool count_stats, bool copy, CollectionRead* out,
                                   ReadScope scope = {});

// The common case: the handler's key ctx.args[1], a read that counts a keyspace hit or miss.
TaskOf<bool> ReadCollectionOrReply(Context& ctx, ValueType type, CollectionRead* out,
                                   ReadScope scope = {});

// Writes `encoded` as the key's value if the key is still at `expected` (0: must not exist),
// keeping `expire_ms`; an empty encoding deletes the key (Redis keeps no empty collections).
// False with *error set if the write failed; *applied is false if the key changed meanwhile
// (the caller starts over).
TaskOf<bool> StoreCollection(Store& st, std::string_view key, ValueType type, uint64_t expected,
                             std::string_view encoded, int64_t expire_ms, bool* applied,
                             std::string* error);

// Writes `encoded` — the new contents of what `cur` read (the whole collection, or for a chunked
// one the entries of the chunks cur.covered names) — if the key is still where `cur` found it,
// keeping its TTL. A one-record collection that grows past the chunking threshold becomes
// chunked; for a chunked one only the chunks whose entries changed are written (split when too
// big, dropped when empty) and the root after them (storage/chunked.h CommitChunks).
TaskOf<bool> StoreCollectionRead(Store& st, std::string_view key, ValueType type,
                                 const CollectionRead& cur, std::string_view encoded, bool* applied,
                                 std::string* error);

enum class Rewrite { kError, kUnchanged, kWrite };

// The keyspace events of a write of collection `key` (of `type`): `event` in the type's class,
// then "del" if the write left no key (the collection emptied). Runs on the key's worker.
void NotifyCollectionWrite(Store& st, std::string_view key, ValueType type, std::string_view event,
                           int64_t now_ms);

// Read-modify-write of the collection at `key` on its worker, retried if another write came in
// while it was read; the TTL stays, as in Redis. `modify(view, exists, &encoded)` either failed
// (kError: it replied or set the error itself), needs no write (kUnchanged) or put the new
// encoding in *encoded (kWrite; "" deletes the key). False on failure, with *error set unless
// modify failed. `scope` (kAll or kMembers): with kMembers, a chunked collection's view holds
// only the chunks of those members, so modify may add or remove only those members and must
// not take v.size() for the collection's size. Once written, NotifyCollectionWrite reports
// `event` (unless empty: the caller reports).
template <typename Modify>
TaskOf<bool> RewriteCollection(Store& st, std::string_view key, ValueType type, int64_t now_ms,
                               Modify modify, std::string* error, ReadScope scope = {},
                               std::string_view event = {}) {
  while (true) {
    CollectionRead cur;
    if (!co_await ReadCollection(st, key, type, now_ms, false, true, &cur, error, scope)) {
      co_return false;
    }
    std::string encoded;
    Rewrite what = modify(cur.view, cur.info.exists, &encoded);
    if (what == Rewrite::kError) co_return false;
    if (what == Rewrite::kUnchanged) co_return true;
    bool applied = false;
    if (!co_await StoreCollectionRead(st, key, type, cur, encoded, &applied, error)) {
      co_return false;
    }
    if (applied) {
      if (!event.empty()) NotifyCollectionWrite(st, key, type, event, now_ms);
      co_return true;
    }
  }
}

// RewriteCollection of ctx.args[1] by a handler running on its worker, reporting `event`;
// replies errors.
template <typename Modify>
TaskOf<bool> RewriteCollectionOrReply(Context& ctx, ValueType type, std::string_view event,
                                      Modify modify, ReadScope scope = {}) {
  std::string error;
  bool ok = co_await RewriteCollection(*ctx.store, ctx.args[1], type, ctx.now_ms, std::move(modify),
                                       &error, scope, event);
  if (!ok && !error.empty()) ctx.reply->Error(error);
  co_return ok;
}

// If *value (the value of collection `key`, just read) is a chunk root, replaces it with the
// whole collection as one record: what a copy under another key must hold, since the chunks
// belong to this key's collection id (a second root naming them would lose them to this key's
// next copy-on-write). COPY needs this. O(n).
TaskOf<bool> CollectionAsOneRecord(Store& st, std::string_view key, ValueType type, int64_t now_ms,
                                   std::string* value, std::string* error);

// RENAME of a chunked collection to a key of another hash slot: its chunks must live in the
// new key's slot (so its shard, under any --threads), so *value (the root read from `src`)
// becomes the whole collection in one record (O(n), rechunked by its next write). Anything else
// is left as it is. False with *error if the chunks could not be read.
TaskOf<bool> PrepareCollectionMove(Store& st, std::string_view src, std::string_view dst,
                                   ValueType type, int64_t now_ms, std::string* value,
                                   std::string* error);

// LPOP / RPOP / SPOP / ZPOPMIN / ZPOPMAX key [count]: the count at ctx.args[2] if given (else 1;
// it must be >= 0). More arguments are a wrong-arity error for the list pops (`arity_error`), a
// syntax error for the others, as in Redis. False after replying the error.
bool ParsePopCountOrReply(Context& ctx, bool arity_error, bool* with_count, int64_t* count);

// HDEL / SREM / ZREM key member [member ...]: removes the members, replies how many were there.
Task RemoveMembers(Context& ctx, ValueType type);

// HLEN / SCARD / ZCARD key: the entry count (a chunked collection's root holds it).
Task ReplyCardinality(Context& ctx, ValueType type);

// HRANDFIELD / SRANDMEMBER / ZRANDMEMBER key [count ...], after their arguments are parsed:
// reads ctx.args[1], a collection of `type`. Without a count (one chunk of a chunked collection
// is read) it replies one random member, or nil for a missing key, and returns false; with one,
// true with the whole collection in *out, for the caller to reply what RandomPicks names. False
// too when it replied an error.
TaskOf<bool> ReadRandomMembersOrReply(Context& ctx, ValueType type, bool with_count,
                                      CollectionRead* out);

// The entries a random-member count names in `v`: for count < 0, -count independent picks
// (repetitions allowed); else min(count, size) distinct ones; none for an empty collection.
class RandomPicks {
 public:
  RandomPicks(const CollectionView& v, int64_t count);
  uint64_t size() const { return size_; }
  // The index in `v` of the next pick; call it size() times.
  uint32_t Next();

 private:
  uint64_t range_;  // the collection's size
  uint64_t size_;
  std::vector<uint32_t> distinct_;  // the picks of a positive count
  size_t at_ = 0;
};

struct ScanArgs {
  uint64_t cursor = 0;
  int64_t count = 10;
  std::string_view pattern;
  bool use_pattern = false;
};

// HSCAN/SSCAN key cursor [MATCH pattern] [COUNT count], as Redis 7.0 parses them.
bool ParseScanArgsOrReply(Context& ctx, ScanArgs* a);

// HSCAN / SSCAN / ZSCAN key cursor [MATCH pattern] [COUNT count], up to the entries: parses the
// arguments, reads ctx.args[1] (a collection of `type`, only the chunks the walk needs), walks it
// and replies the first of the reply's two elements, the next cursor. The caller then replies
// the array of the entries at *hits in out->view. False if it replied an error instead.
TaskOf<bool> ScanOrReply(Context& ctx, ValueType type, CollectionRead* out,
                         std::vector<uint32_t>* hits);

// Walks up to a.count entries from a.cursor (a hash position: entries added or removed meanwhile
// never make a walk skip one that stayed), calling keep(i) for those matching the pattern.
// Returns the next cursor (0 = done).
template <typename Keep>
uint64_t ScanCollection(const CollectionView& v, const ScanArgs& a, Keep keep);

// The same over what ReadCollection read with ReadScope::Scan: a chunked collection's walk goes
// on in the next chunk (chunk boundaries never split a run of equal hashes).
template <typename Keep>
uint64_t ScanCollection(const CollectionRead& r, const ScanArgs& a, Keep keep) {
  const uint64_t next = ScanCollection(r.view, a, keep);
  return next != 0 ? next : r.scan_next;
}

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
