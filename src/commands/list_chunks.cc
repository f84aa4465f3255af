#include "commands/list_chunks.h"

#include <algorithm>

#include "base/slot.h"
#include "commands/list_elements.h"
#include "commands/typed_read.h"

namespace lavik {
namespace {

constexpr size_t kChunkHeader = 8;  // list_record.h header

size_t VarintSize(size_t n) {
  size_t s = 1;
  while (n >= 0x80) {
    n >>= 7;
    ++s;
  }
  return s;
}

size_t EncodedBytes(std::span<const std::string_view> e) {
  size_t b = kChunkHeader;
  for (std::string_view x : e) b += ListElementBytes(x);
  return b;
}

bool SameElements(const std::vector<std::string_view>& a, std::span<const std::string_view> b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

// A chunked list small enough to live in one record again (hysteresis: half the limits).
bool FitsOneRecord(std::span<const std::string_view> e) {
  return e.size() <= kListChunkEntries / 2 && EncodedBytes(e) <= kListChunkBytes / 2;
}

// The window [from, to] of a list of `size` elements for `scope`; false if it holds nothing.
bool ScopeBounds(const ListScope& scope, uint64_t size, uint64_t* from, uint64_t* to) {
  if (size == 0 || scope.kind == ListScope::Kind::kCount) return false;
  if (scope.kind == ListScope::Kind::kAll) {
    *from = 0;
    *to = size - 1;
    return true;
  }
  const auto n = static_cast<int64_t>(size);
  int64_t start = scope.start, stop = scope.stop;
  if (start < 0) start = std::max<int64_t>(start + n, 0);
  if (stop < 0) stop += n;
  if (start > stop || start >= n) return false;
  if (stop >= n) stop = n - 1;
  *from = static_cast<uint64_t>(start);
  *to = static_cast<uint64_t>(stop);
  return true;
}

std::string EncodeSpan(std::span<const std::string_view> e) {
  return EncodeList(std::vector<std::string_view>(e.begin(), e.end()));
}

}  // namespace

size_t ListElementBytes(std::string_view e) { return 4 + VarintSize(e.size()) + e.size(); }

bool ListNeedsChunks(std::span<const std::string_view> e) {
  return e.size() > kListChunkEntries || EncodedBytes(e) > kListChunkBytes;
}

std::vector<size_t> SplitListElements(std::span<const std::string_view> e) {
  std::vector<size_t> ends;
  size_t count = 0, bytes = kChunkHeader;
  for (size_t i = 0; i < e.size(); ++i) {
    const size_t b = ListElementBytes(e[i]);
    if (count > 0 && (count == kListChunkEntries || bytes + b > kListChunkBytes)) {
      ends.push_back(i);
      count = 0;
      bytes = kChunkHeader;
    }
    ++count;
    bytes += b;
  }
  if (count > 0) ends.push_back(e.size());
  return ends;
}

std::vector<WindowPiece> PlanListWindow(std::span<const ChunkRef> old_refs,
                                        std::span<const std::vector<std::string_view>> old,
                                        std::span<const std::string_view> e, bool head_first) {
  const size_t n_old = old.size();
  // Old chunks unchanged at the front of the window (p of them, up to element pos) and at its
  // back (s, from element epos). Which end is matched first matters when elements repeat: for
  // a change at the head (LPUSH of an element equal to its neighbours) matching the front first
  // would keep the full head chunk and start a one-element chunk behind it on every push.
  size_t p = 0, pos = 0, s = 0, epos = e.size();
  auto match_front = [&] {
    while (p + s < n_old && pos + old[p].size() <= epos &&
           SameElements(old[p], e.subspan(pos, old[p].size()))) {
      pos += old[p].size();
      ++p;
    }
  };
  auto match_back = [&] {
    while (p + s < n_old) {
      const auto& c = old[n_old - 1 - s];
      if (epos < pos + c.size() || !SameElements(c, e.subspan(epos - c.size(), c.size()))) break;
      epos -= c.size();
      ++s;
    }
  };
  if (head_first) {
    match_back();
    match_front();
  } else {
    match_front();
    match_back();
  }
  // A changed middle that fits into a kept neighbour joins it: a push then rewrites the edge
  // chunk instead of starting a chunk of one element.
  if (epos > pos) {
    auto fits = [&](size_t extra_begin, size_t extra_end) {
      const std::span<const std::string_view> m = e.subspan(extra_begin, extra_end - extra_begin);
      return m.size() <= kListChunkEntries && EncodedBytes(m) <= kListChunkBytes;
    };
    if (p > 0 && fits(pos - old[p - 1].size(), epos)) {
      --p;
      pos -= old[p].size();
    } else if (s > 0 && fits(pos, epos + old[n_old - s].size())) {
      epos += old[n_old - s].size();
      --s;
    }
  }
  std::vector<WindowPiece> out;
  size_t at = 0;
  for (size_t j = 0; j < p; ++j) {
    out.push_back(WindowPiece{true, old_refs[j].number, at, at + old[j].size()});
    at += old[j].size();
  }
  size_t begin = pos;
  for (size_t end : SplitListElements(e.subspan(pos, epos - pos))) {
    out.push_back(WindowPiece{false, 0, begin, pos + end});
    begin = pos + end;
  }
  at = epos;
  for (size_t j = n_old - s; j < n_old; ++j) {
    out.push_back(WindowPiece{true, old_refs[j].number, at, at + old[j].size()});
    at += old[j].size();
  }
  return out;
}

void RenumberListRoot(ChunkRoot* root) {
  uint64_t first = 0;
  for (ChunkRef& c : root->chunks) {
    c.first = first;
    first += c.count;
  }
  root->total = first;
}

bool ParseListRoot(std::string_view value, ChunkRoot* root) {
  if (!ParseChunkRoot(value, root)) return false;
  uint64_t first = 0;
  for (const ChunkRef& c : root->chunks) {
    if (c.count == 0 || c.first != first) return false;
    first += c.count;
  }
  return true;
}

TaskOf<ListChunkRead> ReadListChunks(Store& st, const ListScope& scope, ListRead* out,
                                     std::string* error) {
  if (!ParseListRoot(out->record.value, &out->root)) {
    *error = kErrListCorrupt;
    co_return ListChunkRead::kError;
  }
  const ChunkRoot& root = out->root;
  out->chunked = true;
  out->size = root.total;
  out->first_chunk = out->end_chunk = 0;
  out->base = 0;
  out->chunk_bytes.clear();
  out->view = ListView();
  uint64_t from, to;
  if (!ScopeBounds(scope, root.total, &from, &to)) co_return ListChunkRead::kOk;
  out->first_chunk = root.ChunkOf(from);
  out->end_chunk = root.ChunkOf(to) + 1;
  out->base = root.chunks[out->first_chunk].first;
  // Reserved up front: views into these strings must not move (short ones live inline).
  out->chunk_bytes.resize(out->end_chunk - out->first_chunk);
  for (size_t i = out->first_chunk; i < out->end_chunk; ++i) {
    std::string& bytes = out->chunk_bytes[i - out->first_chunk];
    ChunkRead r = co_await ReadChunk(st, root.slot, root.id, root.chunks[i].number, &bytes, error);
    if (r == ChunkRead::kError) co_return ListChunkRead::kError;
    if (r == ChunkRead::kMissing) co_return ListChunkRead::kRetry;
    ListView v;
    if (!v.Parse(bytes) || v.size() != root.chunks[i].count) {
      *error = kErrListCorrupt;
      co_return ListChunkRead::kError;
    }
  }
  if (out->chunk_bytes.size() == 1) {
    out->view.Parse(out->chunk_bytes[0]);
    co_return ListChunkRead::kOk;
  }
  std::vector<std::string_view> all;
  for (const std::string& b : out->chunk_bytes) {
    ListView v;
    v.Parse(b);
    for (uint32_t k = 0; k < v.size(); ++k) all.push_back(v.element(k));
  }
  out->copy = EncodeList(all);
  out->view.Parse(out->copy);
  co_return ListChunkRead::kOk;
}

TaskOf<bool> StoreListWindow(Store& st, std::string_view key, const ListRead& cur,
                             const ListScope& scope, const std::vector<std::string_view>& e,
                             bool* applied, std::string* error) {
  const uint64_t expected = cur.info.exists ? cur.info.loc : 0;
  const int64_t expire_ms = cur.info.expire_ms;
  if (!cur.chunked) {
    if (!ListNeedsChunks(e)) {
      co_return co_await StoreCollection(st, key, ValueType::kList, expected, EncodeList(e),
                                         expire_ms, applied, error);
    }
    // Crossing the threshold: written once as root + chunks.
    ChunkCommit c;
    c.NewRoot(key);
    size_t begin = 0;
    for (size_t end : SplitListElements(e)) {
      c.root.chunks.push_back(c.AddChunk(0, static_cast<uint32_t>(end - begin),
                                         EncodeSpan(std::span(e).subspan(begin, end - begin))));
      begin = end;
    }
    RenumberListRoot(&c.root);
    co_return co_await CommitChunks(st, key, ValueType::kList, expected, c, expire_ms, applied,
                                    error);
  }
  const ChunkRoot& old = cur.root;
  const bool trim = scope.kind == ListScope::Kind::kTrim;
  const bool whole = trim || (cur.first_chunk == 0 && cur.end_chunk == old.chunks.size());
  uint64_t window_old = 0;
  for (size_t i = cur.first_chunk; i < cur.end_chunk; ++i) window_old += old.chunks[i].count;
  const uint64_t total = trim ? e.size() : old.total - window_old + e.size();
  // Emptied, or small again and in hand whole: one record (or none). The chunk registry frees
  // the chunks of the replaced root in the background.
  if (total == 0 || (whole && FitsOneRecord(e))) {
    co_return co_await StoreCollection(st, key, ValueType::kList, expected, EncodeList(e),
                                       expire_ms, applied, error);
  }
  std::vector<ChunkRef> old_refs(old.chunks.begin() + cur.first_chunk,
                                 old.chunks.begin() + cur.end_chunk);
  std::vector<std::vector<std::string_view>> old_elems;
  for (const std::string& b : cur.chunk_bytes) {
    ListView v;
    v.Parse(b);
    old_elems.push_back(v.Elements());
  }
  ChunkCommit c;
  c.root = old;
  c.root.chunks.clear();
  for (size_t i = 0; i < cur.first_chunk; ++i) {
    if (trim) {
      c.replaced.push_back(old.chunks[i].number);
    } else {
      c.root.chunks.push_back(old.chunks[i]);
    }
  }
  std::vector<uint64_t> kept;
  // A window that starts at the list's head is changed there (LPUSH, LPOP...).
  const bool head_first = scope.kind == ListScope::Kind::kRange && scope.start == 0;
  for (const WindowPiece& piece : PlanListWindow(old_refs, old_elems, e, head_first)) {
    const auto count = static_cast<uint32_t>(piece.end - piece.begin);
    if (piece.keep) {
      kept.push_back(piece.number);
      c.root.chunks.push_back(ChunkRef{0, piece.number, count});
      continue;
    }
    c.root.chunks.push_back(
        c.AddChunk(0, count, EncodeSpan(std::span(e).subspan(piece.begin, count))));
  }
  for (const ChunkRef& r : old_refs) {
    if (std::find(kept.begin(), kept.end(), r.number) == kept.end()) {
      c.replaced.push_back(r.number);
    }
  }
  for (size_t i = cur.end_chunk; i < old.chunks.size(); ++i) {
    if (trim) {
      c.replaced.push_back(old.chunks[i].number);
    } else {
      c.root.chunks.push_back(old.chunks[i]);
    }
  }
  RenumberListRoot(&c.root);
  co_return co_await CommitChunks(st, key, ValueType::kList, expected, c, expire_ms, applied,
                                  error);
}

TaskOf<bool> FindListPositions(Store& st, std::string_view key, int64_t now_ms,
                               std::string_view element, int64_t rank, int64_t count,
                               int64_t maxlen, std::vector<int64_t>* out, std::string* error) {
  bool count_stats = true;
  uint64_t retried_loc = 0;
  while (true) {
    out->clear();
    ListRead l;
    if (!co_await ReadList(st, key, now_ms, count_stats, false, &l, error, ListScope::Count())) {
      co_return false;
    }
    count_stats = false;
    if (!l.info.exists) co_return true;
    if (!l.chunked) {
      *out = FindPositions(l.view, element, rank, count, maxlen);
      co_return true;
    }
    // The chunks of the root read above form one version of the list (copy-on-write): read one
    // by one they still answer for that version, unless a writer deleted one meanwhile.
    const ChunkRoot& root = l.root;
    const bool forward = rank > 0;
    const uint64_t skip =
        rank > 0 ? uint64_t(rank) - 1 : (rank == INT64_MIN ? UINT64_MAX : uint64_t(-rank) - 1);
    uint64_t matches = 0, seen = 0;
    bool done = false, missing = false;
    std::string bytes;
    for (size_t n = 0; n < root.chunks.size() && !done; ++n) {
      const ChunkRef& c = root.chunks[forward ? n : root.chunks.size() - 1 - n];
      ChunkRead r = co_await ReadChunk(st, root.slot, root.id, c.number, &bytes, error);
      if (r == ChunkRead::kError) co_return false;
      if (r == ChunkRead::kMissing) {
        missing = true;
        break;
      }
      ListView v;
      if (!v.Parse(bytes) || v.size() != c.count) {
        *error = kErrListCorrupt;
        co_return false;
      }
      for (uint32_t k = 0; k < v.size(); ++k) {
        if (maxlen != 0 && seen >= static_cast<uint64_t>(maxlen)) {
          done = true;
          break;
        }
        ++seen;
        const uint32_t at = forward ? k : v.size() - 1 - k;
        if (v.element(at) != element || matches++ < skip) continue;
        out->push_back(static_cast<int64_t>(c.first + at));
        if (count != 0 && static_cast<int64_t>(out->size()) >= count) {
          done = true;
          break;
        }
      }
    }
    if (!missing) co_return true;
    if (l.info.loc == retried_loc) {
      *error = kErrListCorrupt;
      co_return false;
    }
    retried_loc = l.info.loc;
  }
}

TaskOf<bool> ListAsOneRecord(Store& st, std::string_view key, int64_t now_ms, std::string* value,
                             std::string* error) {
  if (!IsChunkRoot(*value)) co_return true;
  ListRead all;
  if (!co_await ReadList(st, key, now_ms, false, true, &all, error)) co_return false;
  if (!all.info.exists) co_return true;
  if (!all.chunked) {
    value->assign(all.copy);
  } else {
    value->assign(all.chunk_bytes.size() == 1 ? all.chunk_bytes[0] : all.copy);
  }
  co_return true;
}

TaskOf<bool> PrepareListMove(Store& st, std::string_view src, std::string_view dst, int64_t now_ms,
                             std::string* value, std::string* error) {
  if (KeyHashSlot(src) == KeyHashSlot(dst)) co_return true;
  co_return co_await ListAsOneRecord(st, src, now_ms, value, error);
}

TaskOf<bool> ReadList(Store& st, std::string_view key, int64_t now_ms, bool count_stats, bool copy,
                      ListRead* out, std::string* error, ListScope scope) {
  uint64_t retried_loc = 0;
  while (true) {
    const TypedRead got = co_await ReadTypedRecord(st, key, ValueType::kList, now_ms, count_stats,
                                                   &out->info, &out->record, error);
    count_stats = false;  // a retry is the same command: count it once
    if (got != TypedRead::kFound) co_return got == TypedRead::kMissing;
    std::string_view bytes = out->record.value;
    if (IsChunkRoot(bytes)) {
      ListChunkRead r = co_await ReadListChunks(st, scope, out, error);
      if (r == ListChunkRead::kError) co_return false;
      if (r == ListChunkRead::kRetry) {
        // A writer replaced a chunk after we read the root: read the root again. The same root
        // twice means the chunk is really gone.
        if (out->info.loc == retried_loc) {
          *error = kErrListCorrupt;
          co_return false;
        }
        retried_loc = out->info.loc;
        continue;
      }
      co_return true;
    }
    if (copy) {
      out->copy.assign(bytes.data(), bytes.size());
      bytes = out->copy;
    }
    if (!out->view.Parse(bytes) || out->view.empty()) {
      *error = kErrListCorrupt;
      co_return false;
    }
    out->size = out->view.size();
    out->base = 0;
    co_return true;
  }
}

}  // namespace lavik
