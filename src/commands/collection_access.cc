#include "commands/collection_access.h"

#include <algorithm>

#include "base/ascii.h"
#include "base/numbers.h"
#include "base/slot.h"
#include "commands/collection_chunks.h"
#include "commands/typed_read.h"
#include "notify/keyspace_events.h"
#include "storage/chunked.h"

namespace lavik {

TaskOf<bool> ReadCollection(Store& st, std::string_view key, ValueType type, int64_t now_ms,
                            bool count_stats, bool copy, CollectionRead* out, std::string* error,
                            ReadScope scope) {
  const bool with_values = type == ValueType::kHash || type == ValueType::kZSet;
  while (true) {
    *out = CollectionRead();
    const TypedRead got = co_await ReadTypedRecord(st, key, type, now_ms, count_stats, &out->info,
                                                   &out->record, error);
    count_stats = false;  // a retry is the same read
    if (got != TypedRead::kFound) co_return got == TypedRead::kMissing;
    std::string_view bytes = out->record.value;
    if (IsChunkRoot(bytes)) {
      const ChunkedRead r = co_await ReadChunked(st, key, with_values, scope, out, error);
      if (r == ChunkedRead::kRetry) {
        // A writer replaced a chunk under us, and so moved the root (it writes the root before
        // deleting replaced chunks): read again. A root that did not move names a chunk that
        // is gone for good (someone deleted the internal key): report, don't spin.
        const KeyInfo now = st.Lookup(key, now_ms);
        if (now.exists && now.loc == out->info.loc) {
          *error = "ERR data corruption: a chunk of this collection is missing";
          co_return false;
        }
        continue;
      }
      co_return r == ChunkedRead::kOk;
    }
    if (copy) {
      out->copy.assign(bytes.data(), bytes.size());
      bytes = out->copy;
    }
    if (!out->view.Parse(bytes, with_values) || out->view.empty()) {
      *error = kErrCollectionCorrupt;
      co_return false;
    }
    out->size = out->view.size();
    co_return true;
  }
}

TaskOf<bool> ReadCollectionOrReply(Context& ctx, Store& st, std::string_view key, ValueType type,
                                   bool count_stats, bool copy, CollectionRead* out,
                                   ReadScope scope) {
  std::string error;
  if (co_await ReadCollection(st, key, type, ctx.now_ms, count_stats, copy, out, &error, scope)) {
    co_return true;
  }
  ctx.reply->Error(error);
  co_return false;
}

TaskOf<bool> ReadCollectionOrReply(Context& ctx, ValueType type, CollectionRead* out,
                                   ReadScope scope) {
  co_return co_await ReadCollectionOrReply(ctx, *ctx.store, ctx.args[1], type, true, false, out,
                                           scope);
}

void NotifyCollectionWrite(Store& st, std::string_view key, ValueType type, std::string_view event,
                           int64_t now_ms) {
  const uint32_t event_class = type == ValueType::kHash  ? kNotifyHash
                               : type == ValueType::kSet ? kNotifySet
                                                         : kNotifyZset;
  if (!KeyspaceEventsOn(event_class | kNotifyGeneric)) return;  // one branch when off
  NotifyKeyspaceEvent(event_class, event, key);
  if (KeyspaceEventsOn(kNotifyGeneric) && !st.Lookup(key, now_ms).exists) {
    NotifyKeyspaceEvent(kNotifyGeneric, "del", key);
  }
}

Task RemoveMembers(Context& ctx, ValueType type) {
  const bool with_values = type == ValueType::kHash || type == ValueType::kZSet;
  const std::span<const std::string_view> members = ctx.args.subspan(2);
  int64_t removed = 0;
  bool ok = co_await RewriteCollectionOrReply(
      ctx, type,
      type == ValueType::kHash  ? "hdel"
      : type == ValueType::kSet ? "srem"
                                : "zrem",
      [&](const CollectionView& v, bool, std::string* out) {
        std::vector<CollectionChange> changes;
        std::vector<std::string_view> gone;
        for (std::string_view m : members) {
          if (v.Find(m) >= 0) {
            gone.push_back(m);
            changes.push_back({m, {}, true});
          }
        }
        std::sort(gone.begin(), gone.end());
        removed = std::unique(gone.begin(), gone.end()) - gone.begin();
        if (removed == 0) return Rewrite::kUnchanged;
        *out = ApplyChanges(v, std::move(changes), with_values);
        return Rewrite::kWrite;
      },
      ReadScope::Members(members));
  if (ok) ctx.reply->Integer(removed);
}

Task ReplyCardinality(Context& ctx, ValueType type) {
  CollectionRead r;
  if (!co_await ReadCollectionOrReply(ctx, type, &r, ReadScope::Count())) {
    co_return;
  }
  ctx.reply->Integer(static_cast<int64_t>(r.size));
}

TaskOf<bool> ReadRandomMembersOrReply(Context& ctx, ValueType type, bool with_count,
                                      CollectionRead* out) {
  // One random member needs one chunk of a chunked collection; a count needs them all.
  if (!co_await ReadCollectionOrReply(ctx, type, out,
                                      with_count ? ReadScope() : ReadScope::Random())) {
    co_return false;
  }
  if (with_count) co_return true;
  const CollectionView& v = out->view;
  if (v.empty()) {
    ctx.reply->Null();
  } else {
    ctx.reply->Bulk(v.field(static_cast<uint32_t>(RandomBelow(v.size()))));
  }
  co_return false;
}

RandomPicks::RandomPicks(const CollectionView& v, int64_t count) : range_(v.size()), size_(0) {
  if (v.empty() || count == 0) return;
  if (count < 0) {
    size_ = static_cast<uint64_t>(-count);
    return;
  }
  distinct_ =
      DistinctRandomIndices(v.size(), static_cast<uint32_t>(std::min<int64_t>(count, v.size())));
  size_ = distinct_.size();
}

uint32_t RandomPicks::Next() {
  if (!distinct_.empty()) return distinct_[at_++];
  return static_cast<uint32_t>(RandomBelow(range_));
}

TaskOf<bool> StoreCollection(Store& st, std::string_view key, ValueType type, uint64_t expected,
                             std::string_view encoded, int64_t expire_ms, bool* applied,
                             std::string* error) {
  WriteResult w;
  if (encoded.empty()) {
    *applied = true;
    if (expected == 0) co_return true;  // nothing there, nothing to keep
    w = co_await st.DeleteIf(key, expected, applied);
  } else {
    w = co_await st.WriteIf(key, expected, type, encoded, expire_ms, applied);
  }
  if (!w.ok()) {
    *error = w.error;
    co_return false;
  }
  co_return true;
}

TaskOf<bool> ScanOrReply(Context& ctx, ValueType type, CollectionRead* out,
                         std::vector<uint32_t>* hits) {
  ScanArgs a;
  if (!ParseScanArgsOrReply(ctx, &a)) co_return false;
  if (!co_await ReadCollectionOrReply(ctx, type, out, ReadScope::Scan(a.cursor, a.count))) {
    co_return false;
  }
  const uint64_t next = ScanCollection(*out, a, [&](uint32_t i) { hits->push_back(i); });
  ctx.reply->Array(2);
  ctx.reply->Bulk(std::to_string(next));
  co_return true;
}

bool ParsePopCountOrReply(Context& ctx, bool arity_error, bool* with_count, int64_t* count) {
  if (ctx.args.size() > 3) {
    if (arity_error) {
      ctx.reply->Error(WrongArityError(ctx.spec->name));
    } else {
      ctx.reply->Error(kErrSyntax);
    }
    return false;
  }
  *with_count = ctx.args.size() == 3;
  *count = 1;
  if (*with_count && (!ParseInt64(ctx.args[2], count) || *count < 0)) {
    ctx.reply->Error(kErrNotPositive);
    return false;
  }
  return true;
}

bool ParseScanArgsOrReply(Context& ctx, ScanArgs* a) {
  if (!ParseUint64(ctx.args[2], &a->cursor)) {
    ctx.reply->Error(kErrInvalidCursor);
    return false;
  }
  for (size_t i = 3; i < ctx.args.size(); i += 2) {
    std::string_view o = ctx.args[i];
    const bool has_value = i + 1 < ctx.args.size();
    if (EqualsNoCase(o, "count") && has_value) {
      if (!ParseInt64(ctx.args[i + 1], &a->count)) {
        ctx.reply->Error(kErrNotInteger);
        return false;
      }
      if (a->count < 1) {
        ctx.reply->Error(kErrSyntax);
        return false;
      }
    } else if (EqualsNoCase(o, "match") && has_value) {
      a->pattern = ctx.args[i + 1];
      a->use_pattern = a->pattern != "*";
    } else {
      ctx.reply->Error(kErrSyntax);
      return false;
    }
  }
  return true;
}

namespace {

// Cuts view entries [begin, end) into pieces of about kChunkEntries entries / kChunkBytes
// bytes, only where the member hash changes (a scan cursor names a hash: a run of equal hashes
// must stay in one chunk). Returns the piece starts, begin first.
std::vector<uint32_t> PieceStarts(const CollectionView& v, uint32_t begin, uint32_t end,
                                  size_t bytes) {
  std::vector<uint32_t> starts{begin};
  const uint32_t n = end - begin;
  if (n == 0) return starts;
  const size_t per_entry = std::max<size_t>(1, bytes / n);
  const uint32_t target =
      static_cast<uint32_t>(std::clamp<size_t>(kChunkBytes / per_entry, 1, kChunkEntries));
  uint32_t at = begin + target;
  while (at < end) {
    // Move past a run of equal hashes (a 64-bit collision: practically never).
    while (at < end && MemberHash(v.field(at)) == MemberHash(v.field(at - 1))) ++at;
    if (at >= end) break;
    starts.push_back(at);
    at += target;
  }
  // A small tail joins the previous piece.
  if (starts.size() > 1 && end - starts.back() < target / 4) starts.pop_back();
  return starts;
}

}  // namespace

TaskOf<bool> StoreCollectionRead(Store& st, std::string_view key, ValueType type,
                                 const CollectionRead& cur, std::string_view encoded, bool* applied,
                                 std::string* error) {
  const bool with_values = type == ValueType::kHash || type == ValueType::kZSet;
  const uint64_t expected = cur.info.exists ? cur.info.loc : 0;
  CollectionView next;
  if (!next.Parse(encoded, with_values)) {
    *error = kErrCollectionCorrupt;
    co_return false;
  }
  const bool whole = !cur.chunked || cur.covered.size() == cur.root.chunks.size();
  // Stays (or becomes again) one record: small enough, and we hold all of it.
  if (whole && !ShouldChunk(next.size(), encoded.size()) &&
      (!cur.chunked || next.size() < kChunkEntries / 2)) {
    co_return co_await StoreCollection(st, key, type, expected, encoded, cur.info.expire_ms,
                                       applied, error);
  }
  ChunkCommit commit;
  ChunkRoot& root = commit.root;
  if (!cur.chunked) {
    // Becomes chunked: the chunks live in the key's slot (so on its shard under any --threads).
    commit.NewRoot(key);
    root.flags = with_values ? kRootFlagValues : 0;
    for (size_t b : PieceStarts(next, 0, next.size(), encoded.size())) {
      root.chunks.push_back({b == 0 ? 0 : MemberHash(next.field(static_cast<uint32_t>(b))), 0, 0});
    }
  } else {
    root = cur.root;
  }
  // New contents of each covered chunk (or of the new pieces, for a fresh root).
  std::vector<ChunkRef> chunks;
  std::vector<char> changed_cover;
  const std::vector<ChunkRef>& old = root.chunks;
  uint32_t e = 0;  // next entry of `next` to place
  size_t k = 0;    // position in cur.covered
  for (size_t i = 0; i < old.size(); ++i) {
    const bool is_covered = !cur.chunked || (k < cur.covered.size() && cur.covered[k] == i);
    if (!is_covered) {
      chunks.push_back(old[i]);
      continue;
    }
    const uint64_t end_key = root.EndOf(i);
    uint32_t b = e;
    while (e < next.size() && (end_key == 0 || MemberHash(next.field(e)) < end_key)) ++e;
    if (b < next.size() && MemberHash(next.field(b)) < old[i].first) {
      *error = "ERR internal error: a member outside the chunks read";  // a modify bug
      co_return false;
    }
    std::string bytes;
    const CollectionRange range{&next, b, e};
    bytes = ConcatRanges({&range, 1}, with_values);
    if (cur.chunked) {
      if (bytes == cur.chunk_bytes[k]) {
        chunks.push_back(old[i]);  // unchanged: not rewritten
        ++k;
        continue;
      }
      commit.replaced.push_back(old[i].number);
      ++k;
    }
    if (b == e) continue;  // emptied: the chunk goes (its range joins the previous one)
    std::vector<uint32_t> starts = {b};
    if (ShouldChunk(e - b, bytes.size())) starts = PieceStarts(next, b, e, bytes.size());
    for (size_t p = 0; p < starts.size(); ++p) {
      const uint32_t from = starts[p];
      const uint32_t to = p + 1 < starts.size() ? starts[p + 1] : e;
      const CollectionRange piece{&next, from, to};
      chunks.push_back(commit.AddChunk(
          p == 0 ? old[i].first : MemberHash(next.field(from)), to - from,
          starts.size() == 1 ? std::move(bytes) : ConcatRanges({&piece, 1}, with_values)));
    }
  }
  if (e != next.size()) {
    *error = "ERR internal error: a member outside the chunks read";
    co_return false;
  }
  if (chunks.empty()) {
    // Every entry gone: Redis keeps no empty collection (the root's death frees the chunks).
    co_return co_await StoreCollection(st, key, type, expected, "", cur.info.expire_ms, applied,
                                       error);
  }
  chunks[0].first = 0;  // the first chunk covers the key space from its start
  root.chunks = std::move(chunks);
  root.total = 0;
  for (const ChunkRef& c : root.chunks) root.total += c.count;
  if (commit.written.empty() && commit.replaced.empty()) {
    *applied = true;  // nothing changed
    co_return true;
  }
  co_return co_await CommitChunks(st, key, type, expected, commit, cur.info.expire_ms, applied,
                                  error);
}

TaskOf<bool> CollectionAsOneRecord(Store& st, std::string_view key, ValueType type, int64_t now_ms,
                                   std::string* value, std::string* error) {
  if (!IsCollectionType(type) || !IsChunkRoot(*value)) co_return true;
  CollectionRead whole;
  if (!co_await ReadCollection(st, key, type, now_ms, false, true, &whole, error)) {
    co_return false;
  }
  if (whole.covered.size() == 1) {
    *value = std::move(whole.chunk_bytes[0]);
  } else {
    *value = std::move(whole.copy);
  }
  co_return true;
}

TaskOf<bool> PrepareCollectionMove(Store& st, std::string_view src, std::string_view dst,
                                   ValueType type, int64_t now_ms, std::string* value,
                                   std::string* error) {
  ChunkRoot root;
  if (!IsCollectionType(type) || !IsChunkRoot(*value) || !ParseChunkRoot(*value, &root) ||
      root.slot == KeyHashSlot(dst)) {
    co_return true;
  }
  co_return co_await CollectionAsOneRecord(st, src, type, now_ms, value, error);
}

}  // namespace lavik
