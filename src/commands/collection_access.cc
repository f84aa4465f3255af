#include "commands/collection_access.h"

#include <algorithm>
#include <chrono>
#include <unordered_set>

#include "base/ascii.h"
#include "base/numbers.h"
#include "commands/collection_chunks.h"

namespace lavik {

TaskOf<bool> ReadCollection(Store& st, std::string_view key, ValueType type, int64_t now_ms,
                            bool count_stats, bool copy, CollectionRead* out, std::string* error,
                            ReadScope scope) {
  const bool with_values = type == ValueType::kHash || type == ValueType::kZSet;
  while (true) {
    *out = CollectionRead();
    out->info = count_stats ? st.LookupRead(key, now_ms) : st.Lookup(key, now_ms);
    count_stats = false;  // a retry is the same read
    if (!out->info.exists) co_return true;
    if (out->info.type != type) {
      *error = kErrWrongType;
      co_return false;
    }
    out->record = co_await st.ReadValue(key, out->info);
    if (out->record.status == ReadResult::Status::kError) {
      *error = out->record.error;
      co_return false;
    }
    if (!out->record.ok()) {
      out->info = KeyInfo{};  // gone while we read
      co_return true;
    }
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

Task RemoveMembers(Context& ctx, ValueType type) {
  const bool with_values = type == ValueType::kHash || type == ValueType::kZSet;
  const std::span<const std::string_view> members = ctx.args.subspan(2);
  int64_t removed = 0;
  bool ok = co_await RewriteCollectionOrReply(
      ctx, type,
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
  if (!co_await ReadCollectionOrReply(ctx, *ctx.store, ctx.args[1], type, true, false, &r,
                                      ReadScope::Count())) {
    co_return;
  }
  ctx.reply->Integer(static_cast<int64_t>(r.size));
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

uint64_t NextRandom() {
  thread_local uint64_t state =
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
      reinterpret_cast<uintptr_t>(&state);
  // splitmix64: fast, and plenty for picking members.
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace

uint64_t RandomBelow(uint64_t n) {
  // Lemire's multiply-shift; the bias for n far below 2^64 is negligible here.
  return static_cast<uint64_t>((static_cast<unsigned __int128>(NextRandom()) * n) >> 64);
}

std::vector<uint32_t> DistinctRandomIndices(uint32_t n, uint32_t count) {
  std::vector<uint32_t> out;
  out.reserve(count);
  if (count > n / 4) {
    // A large share: partial Fisher-Yates over all indices.
    std::vector<uint32_t> all(n);
    for (uint32_t i = 0; i < n; ++i) all[i] = i;
    for (uint32_t i = 0; i < count; ++i) {
      std::swap(all[i], all[i + RandomBelow(n - i)]);
      out.push_back(all[i]);
    }
    return out;
  }
  // A small share of a large collection: draw until enough distinct ones came up.
  std::unordered_set<uint32_t> seen;
  while (out.size() < count) {
    const auto i = static_cast<uint32_t>(RandomBelow(n));
    if (seen.insert(i).second) out.push_back(i);
  }
  return out;
}

}  // namespace lavik
