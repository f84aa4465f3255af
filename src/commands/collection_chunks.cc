#include "commands/collection_chunks.h"

#include <algorithm>
#include <vector>

#include "base/slot.h"
#include "storage/index.h"

namespace lavik {
namespace {

constexpr uint8_t kFlagValues = 1;  // the encoding's flags byte (storage/collection.h)

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

TaskOf<ChunkedRead> ReadChunked(Store& st, std::string_view key, bool with_values,
                                const ReadScope& scope, CollectionRead* out, std::string* error) {
  ChunkRoot& root = out->root;
  if (!ParseChunkRoot(out->record.value, &root) ||
      (root.flags & kFlagValues) != (with_values ? kFlagValues : 0)) {
    *error = kErrCollectionCorrupt;
    co_return ChunkedRead::kError;
  }
  st.chunks().NoteRead(Index::Fingerprint(key), root);
  out->chunked = true;
  out->size = root.total;
  std::vector<size_t>& covered = out->covered;
  switch (scope.kind) {
    case ReadScope::Kind::kAll:
      for (size_t i = 0; i < root.chunks.size(); ++i) covered.push_back(i);
      break;
    case ReadScope::Kind::kMembers:
      for (std::string_view m : scope.members) covered.push_back(root.ChunkOf(MemberHash(m)));
      std::sort(covered.begin(), covered.end());
      covered.erase(std::unique(covered.begin(), covered.end()), covered.end());
      break;
    case ReadScope::Kind::kCount:
      break;
    case ReadScope::Kind::kRandom: {
      uint64_t pick = RandomBelow(root.total);
      size_t i = 0;
      while (i + 1 < root.chunks.size() && pick >= root.chunks[i].count) {
        pick -= root.chunks[i].count;
        ++i;
      }
      covered.push_back(i);
      break;
    }
    case ReadScope::Kind::kScan: {
      int64_t entries = 0;
      for (size_t i = root.ChunkOf(scope.cursor); i < root.chunks.size(); ++i) {
        covered.push_back(i);
        entries += root.chunks[i].count;
        if (entries >= scope.count) break;
      }
      const size_t next = covered.empty() ? root.chunks.size() : covered.back() + 1;
      out->scan_next = next < root.chunks.size() ? root.chunks[next].first : 0;
      break;
    }
  }
  out->chunk_bytes.resize(covered.size());
  for (size_t k = 0; k < covered.size(); ++k) {
    const ChunkRef& c = root.chunks[covered[k]];
    const ChunkRead r =
        co_await ReadChunk(st, root.slot, root.id, c.number, &out->chunk_bytes[k], error);
    if (r == ChunkRead::kError) co_return ChunkedRead::kError;
    if (r == ChunkRead::kMissing) co_return ChunkedRead::kRetry;
  }
  if (covered.size() == 1) {
    if (!out->view.Parse(out->chunk_bytes[0], with_values)) {
      *error = kErrCollectionCorrupt;
      co_return ChunkedRead::kError;
    }
  } else if (covered.size() > 1) {
    std::vector<CollectionView> views(covered.size());
    std::vector<CollectionRange> parts;
    for (size_t k = 0; k < covered.size(); ++k) {
      if (!views[k].Parse(out->chunk_bytes[k], with_values)) {
        *error = kErrCollectionCorrupt;
        co_return ChunkedRead::kError;
      }
      parts.push_back({&views[k], 0, views[k].size()});
    }
    out->copy = ConcatRanges(parts, with_values);
    if (!out->view.Parse(out->copy, with_values)) {
      *error = kErrCollectionCorrupt;
      co_return ChunkedRead::kError;
    }
  }
  co_return ChunkedRead::kOk;
}

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
    root.flags = with_values ? kFlagValues : 0;
    root.slot = KeyHashSlot(key);
    root.id = NewChunkedId();
    root.next_number = 1;
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
      ChunkRef c;
      c.first = p == 0 ? old[i].first : MemberHash(next.field(from));
      c.number = root.TakeNumber();
      c.count = to - from;
      if (starts.size() == 1) {
        commit.written.emplace_back(c.number, std::move(bytes));
      } else {
        const CollectionRange piece{&next, from, to};
        commit.written.emplace_back(c.number, ConcatRanges({&piece, 1}, with_values));
      }
      chunks.push_back(c);
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
