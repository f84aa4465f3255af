#include "commands/stream_chunked.h"

#include <algorithm>
#include <tuple>
#include <vector>

#include "base/slot.h"
#include "commands/typed_read.h"
#include "storage/index.h"
#include "storage/stream_chunks.h"

namespace lavik {
namespace {

enum class Got { kOk, kRetry, kError };

constexpr std::string_view kErrStreamChunkMissing =
    "ERR data corruption: a chunk of this stream is missing";

// Whether `key` still holds the root `info` found: a chunk that root names and that is missing
// was then not replaced by a writer (which writes a new root first) but lost.
bool RootUnchanged(Store& st, std::string_view key, int64_t now_ms, const KeyInfo& info) {
  const KeyInfo now = st.Lookup(key, now_ms);
  return now.exists && now.loc == info.loc;
}

bool ParseStreamRoot(std::string_view value, ChunkRoot* root, Stream* meta) {
  return ParseChunkRoot(value, root) && (root->flags & kRootFlagTail) != 0 &&
         DecodeStreamMeta(root->tail, meta);
}

// The chunks [first, last) that can hold ids of `w` (a COUNT window reads fewer: see
// ReadChunkedStream).
std::pair<size_t, size_t> WindowChunks(const ChunkRoot& root, const StreamWindow& w) {
  if (w.end < w.start) return {0, 0};
  return {root.ChunkOf(w.start.ms), root.ChunkOf(w.end.ms) + 1};
}

size_t InWindow(const std::vector<StreamEntry>& e, const StreamWindow& w) {
  size_t n = 0;
  for (const StreamEntry& x : e) n += w.start <= x.id && x.id <= w.end;
  return n;
}

// Fills out->stream from the root in out->bytes: its metadata, then the entries of the chunks
// `window` (null: all) needs.
TaskOf<Got> ReadChunkedStream(Store& st, std::string_view key, const StreamWindow* window,
                              StreamRead* out, std::string* error) {
  out->chunked = true;
  if (!ParseStreamRoot(out->bytes, &out->root, &out->stream)) {
    *error = kErrStreamCorrupt;
    co_return Got::kError;
  }
  const ChunkRoot& root = out->root;
  // A snapshot's walk reads roots that may be gone: only the current ones teach the registry.
  if (!st.snapshot_reading()) st.chunks().NoteRead(Index::Fingerprint(key), root);
  out->length = root.total;
  size_t lo = 0, hi = root.chunks.size();
  if (window != nullptr) std::tie(lo, hi) = WindowChunks(root, *window);
  // Read from the window's near end until COUNT entries in it are covered.
  std::vector<std::pair<size_t, std::vector<StreamEntry>>> got;
  size_t matched = 0;
  for (size_t k = 0; k < hi - lo; ++k) {
    if (window != nullptr && matched >= window->count) break;
    const size_t i = window != nullptr && window->rev ? hi - 1 - k : lo + k;
    std::string& bytes = out->chunk_bytes.emplace_back();
    const ChunkRead r =
        co_await ReadChunk(st, root.slot, root.id, root.chunks[i].number, &bytes, error);
    if (r == ChunkRead::kError) co_return Got::kError;
    if (r == ChunkRead::kMissing) co_return Got::kRetry;  // replaced under us: re-read the root
    std::vector<StreamEntry> e;
    if (!DecodeStreamChunk(bytes, &e) || e.size() != root.chunks[i].count ||
        e.front().id.ms < root.chunks[i].first ||
        (root.EndOf(i) != 0 && e.back().id.ms >= root.EndOf(i))) {
      *error = kErrStreamCorrupt;
      co_return Got::kError;
    }
    if (window != nullptr) matched += InWindow(e, *window);
    got.emplace_back(i, std::move(e));
  }
  // Entries in id order; chunk_bytes stay in read order (their strings must not move: the
  // entries view them), which only a whole read's writer indexes.
  if (window != nullptr) {
    out->whole = false;
    if (window->rev) std::reverse(got.begin(), got.end());
  }
  for (auto& [i, e] : got) {
    out->covered.push_back(i);
    out->stream.entries.insert(out->stream.entries.end(), e.begin(), e.end());
  }
  co_return Got::kOk;
}

TaskOf<bool> ReadAny(Store& st, std::string_view key, int64_t now_ms, bool count_stats,
                     const StreamWindow* window, StreamRead* out, std::string* error) {
  while (true) {
    ReadResult r;
    const TypedRead got = co_await ReadTypedRecord(st, key, ValueType::kStream, now_ms, count_stats,
                                                   &out->info, &r, error);
    count_stats = false;  // a retry is the same read
    if (got != TypedRead::kFound) co_return got == TypedRead::kMissing;
    out->bytes.assign(r.value.data(), r.value.size());
    if (!IsChunkRoot(out->bytes)) {
      if (!DecodeStream(out->bytes, &out->stream)) {
        *error = kErrStreamCorrupt;
        co_return false;
      }
      out->length = out->stream.entries.size();
      co_return true;
    }
    const Got g = co_await ReadChunkedStream(st, key, window, out, error);
    if (g != Got::kRetry) co_return g == Got::kOk;
    if (RootUnchanged(st, key, now_ms, out->info)) {
      *error = kErrStreamChunkMissing;  // not a writer's replacement: damage; do not spin
      co_return false;
    }
    const KeyInfo info = out->info;
    *out = StreamRead();
    out->info = info;
  }
}

// The chunked form of `s` replacing cur's (or a fresh one): only chunks whose bytes change are
// written.
TaskOf<bool> StoreChunked(Store& st, std::string_view key, const StreamRead& cur, const Stream& s,
                          bool* applied, std::string* error) {
  ChunkCommit commit;
  ChunkRoot& root = commit.root;
  if (cur.chunked) {
    root = cur.root;
  } else {
    commit.NewRoot(key);
    root.chunks.push_back({0, 0, 0});
  }
  root.flags |= kRootFlagTail;
  const std::vector<StreamEntry>& e = s.entries;
  std::vector<ChunkRef> chunks;
  size_t at = 0;
  for (size_t i = 0; i < root.chunks.size(); ++i) {
    const ChunkRef& old = root.chunks[i];
    const uint64_t end_ms = root.EndOf(i);
    const size_t b = at;
    while (at < e.size() && (end_ms == 0 || e[at].id.ms < end_ms)) ++at;
    if (cur.chunked) {
      if (b < at && at - b == old.count &&
          EncodeStreamChunk(e.data() + b, at - b) == cur.chunk_bytes[i]) {
        chunks.push_back(old);  // unchanged: not rewritten
        continue;
      }
      commit.replaced.push_back(old.number);
    }
    if (b == at) continue;  // emptied: the chunk goes (its range joins the previous one)
    const std::vector<size_t> cuts = StreamChunkCuts(e, b, at);
    for (size_t p = 0; p < cuts.size(); ++p) {
      const size_t from = cuts[p], to = p + 1 < cuts.size() ? cuts[p + 1] : at;
      chunks.push_back(commit.AddChunk(p == 0 ? old.first : e[from].id.ms,
                                       static_cast<uint32_t>(to - from),
                                       EncodeStreamChunk(e.data() + from, to - from)));
    }
  }
  if (chunks.empty() || at != e.size()) {
    *error = "ERR internal error: stream entries outside their chunks";  // a caller bug
    co_return false;
  }
  chunks[0].first = 0;  // the first chunk covers the id space from its start
  root.chunks = std::move(chunks);
  root.total = e.size();
  root.tail = EncodeStreamMeta(s);
  co_return co_await CommitChunks(st, key, ValueType::kStream, cur.info.exists ? cur.info.loc : 0,
                                  commit, cur.info.expire_ms, applied, error);
}

TaskOf<bool> WriteOne(Store& st, std::string_view key, const KeyInfo& info,
                      std::string_view encoded, bool* applied, std::string* error) {
  WriteResult w = co_await st.WriteIf(key, info.exists ? info.loc : 0, ValueType::kStream, encoded,
                                      info.expire_ms, applied);
  if (!w.ok()) {
    *error = w.error;
    co_return false;
  }
  co_return true;
}

}  // namespace

TaskOf<bool> ReadStream(Store& st, std::string_view key, int64_t now_ms, bool count_stats,
                        StreamRead* out, std::string* error) {
  co_return co_await ReadAny(st, key, now_ms, count_stats, nullptr, out, error);
}

TaskOf<bool> ReadStreamWindow(Store& st, std::string_view key, int64_t now_ms, bool count_stats,
                              const StreamWindow& window, StreamRead* out, std::string* error) {
  co_return co_await ReadAny(st, key, now_ms, count_stats, &window, out, error);
}

TaskOf<bool> StoreStream(Store& st, std::string_view key, const StreamRead& cur, bool* applied,
                         std::string* error) {
  const Stream& s = cur.stream;
  if (!cur.whole) {
    if (!cur.chunked || !cur.covered.empty()) {
      *error = "ERR internal error: a stream window written back";  // a caller bug
      co_return false;
    }
    // Metadata and groups only: the root alone (XACK on a long stream writes no chunk).
    ChunkCommit commit;
    commit.root = cur.root;
    commit.root.tail = EncodeStreamMeta(s);
    co_return co_await CommitChunks(st, key, ValueType::kStream, cur.info.loc, commit,
                                    cur.info.expire_ms, applied, error);
  }
  if (!cur.chunked) {
    const std::string encoded = EncodeStream(s);
    if (!ShouldChunkStream(s.entries.size(), encoded.size())) {
      co_return co_await WriteOne(st, key, cur.info, encoded, applied, error);
    }
  } else {
    size_t bytes = 0;
    for (const StreamEntry& x : s.entries) bytes += x.body.size() + 4;
    if (ShouldUnchunkStream(s.entries.size(), bytes)) {
      // Small again (or empty, which a root cannot be): one record; the old root's death
      // frees its chunks in the background.
      co_return co_await WriteOne(st, key, cur.info, EncodeStream(s), applied, error);
    }
  }
  co_return co_await StoreChunked(st, key, cur, s, applied, error);
}

bool StreamLengthAndLast(std::string_view value, uint64_t* length, StreamId* last,
                         uint64_t* entries_added) {
  if (!IsChunkRoot(value)) {
    uint32_t n = 0;
    if (!DecodeStreamHeader(value, &n, last, entries_added)) return false;
    *length = n;
    return true;
  }
  ChunkRoot root;
  Stream meta;
  if (!ParseStreamRoot(value, &root, &meta)) return false;
  *length = root.total;
  *last = meta.last_id;
  if (entries_added != nullptr) *entries_added = meta.entries_added;
  return true;
}

TaskOf<bool> AppendStreamValue(Store& st, std::string_view key, const KeyInfo& info,
                               std::string_view value, StreamId id, const std::string_view* fv,
                               size_t fv_count, bool* applied, std::string* error) {
  *applied = false;
  if (!IsChunkRoot(value)) {
    std::string out;
    const std::string empty = value.empty() ? EncodeStream(Stream()) : std::string();
    if (!AppendStreamEntry(value.empty() ? empty : value, id, fv, fv_count, &out)) {
      *error = kErrStreamCorrupt;
      co_return false;
    }
    uint32_t n = 0;
    StreamId last;
    DecodeStreamHeader(out, &n, &last);
    if (!ShouldChunkStream(n, out.size())) {
      co_return co_await WriteOne(st, key, info, out, applied, error);
    }
    // Grown past a chunk's size: becomes chunked (once; later XADDs take the path below).
    StreamRead cur;
    cur.info = info;
    cur.bytes = std::move(out);
    if (!DecodeStream(cur.bytes, &cur.stream)) {
      *error = kErrStreamCorrupt;
      co_return false;
    }
    co_return co_await StoreChunked(st, key, cur, cur.stream, applied, error);
  }
  ChunkCommit commit;
  ChunkRoot& root = commit.root;
  Stream meta;
  const std::string root_bytes(value);  // `value` lives only until the next Store call
  if (!ParseStreamRoot(root_bytes, &root, &meta)) {
    *error = kErrStreamCorrupt;
    co_return false;
  }
  ChunkRef& tail = root.chunks.back();
  std::string chunk;
  const ChunkRead r = co_await ReadChunk(st, root.slot, root.id, tail.number, &chunk, error);
  if (r == ChunkRead::kError) co_return false;
  if (r == ChunkRead::kMissing) {
    if (RootUnchanged(st, key, 0, info)) {
      *error = kErrStreamChunkMissing;
      co_return false;
    }
    co_return true;  // replaced under us: the caller looks again
  }
  uint32_t count = 0;
  uint64_t last_ms = 0;
  if (!StreamChunkHeader(chunk, &count, &last_ms) || count != tail.count || id.ms < last_ms) {
    *error = kErrStreamCorrupt;
    co_return false;
  }
  const std::string body = EncodeEntryBody(meta.master_fields, fv, fv_count);
  std::string next;
  if (StreamChunkFull(count, chunk.size()) && id.ms > last_ms) {
    // The last chunk is full: a new one starts at this entry's ms.
    const StreamEntry entry{id, body};
    root.chunks.push_back(commit.AddChunk(id.ms, 1, EncodeStreamChunk(&entry, 1)));
  } else {
    if (!AppendStreamChunk(chunk, id, body, &next)) {
      *error = kErrStreamCorrupt;
      co_return false;
    }
    commit.replaced.push_back(tail.number);
    tail = commit.AddChunk(tail.first, tail.count + 1, std::move(next));
  }
  ++root.total;
  meta.last_id = id;
  ++meta.entries_added;
  root.tail = EncodeStreamMeta(meta);
  co_return co_await CommitChunks(st, key, ValueType::kStream, info.loc, commit, info.expire_ms,
                                  applied, error);
}

TaskOf<bool> StreamAsOneRecord(Store& st, std::string_view key, int64_t now_ms, std::string* value,
                               std::string* error) {
  if (!IsChunkRoot(*value)) co_return true;
  StreamRead whole;
  if (!co_await ReadStream(st, key, now_ms, false, &whole, error)) co_return false;
  *value = EncodeStream(whole.stream);
  co_return true;
}

TaskOf<bool> PrepareStreamMove(Store& st, std::string_view src, std::string_view dst,
                               ValueType type, int64_t now_ms, std::string* value,
                               std::string* error) {
  ChunkRoot root;
  if (type != ValueType::kStream || !IsChunkRoot(*value) || !ParseChunkRoot(*value, &root) ||
      root.slot == KeyHashSlot(dst)) {
    co_return true;
  }
  co_return co_await StreamAsOneRecord(st, src, now_ms, value, error);
}

}  // namespace lavik
