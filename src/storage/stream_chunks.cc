#include "storage/stream_chunks.h"

#include <cstring>

#include "base/varint.h"

namespace lavik {
namespace {

constexpr size_t kChunkHeader = 4 + 8;

template <typename T>
void Put(std::string* out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));  // little-endian hosts only (as the record format)
  out->append(b, sizeof(T));
}

template <typename T>
T Load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

void PutEntry(std::string* out, uint64_t prev_ms, StreamId id, std::string_view body) {
  AppendVarint(out, id.ms - prev_ms);
  AppendVarint(out, id.seq);
  AppendVarint(out, body.size());
  out->append(body);
}

}  // namespace

std::string EncodeStreamChunk(const StreamEntry* entries, size_t n) {
  size_t estimate = kChunkHeader;
  for (size_t i = 0; i < n; ++i) estimate += entries[i].body.size() + 16;
  std::string out;
  out.reserve(estimate);
  Put<uint32_t>(&out, static_cast<uint32_t>(n));
  Put<uint64_t>(&out, n == 0 ? 0 : entries[n - 1].id.ms);
  uint64_t prev = 0;
  for (size_t i = 0; i < n; ++i) {
    PutEntry(&out, prev, entries[i].id, entries[i].body);
    prev = entries[i].id.ms;
  }
  return out;
}

bool StreamChunkHeader(std::string_view chunk, uint32_t* count, uint64_t* last_ms) {
  if (chunk.size() < kChunkHeader) return false;
  *count = Load<uint32_t>(chunk.data());
  *last_ms = Load<uint64_t>(chunk.data() + 4);
  return true;
}

bool DecodeStreamChunk(std::string_view chunk, std::vector<StreamEntry>* out) {
  if (chunk.size() < kChunkHeader) return false;
  const uint32_t n = Load<uint32_t>(chunk.data());
  const uint64_t last_ms = Load<uint64_t>(chunk.data() + 4);
  // Each entry takes at least 3 bytes, so a damaged count cannot make the reserve huge.
  if (n == 0 || n > chunk.size() / 3) return false;
  const char* p = chunk.data() + kChunkHeader;
  const char* end = chunk.data() + chunk.size();
  out->reserve(out->size() + n);
  const size_t before = out->size();
  uint64_t ms = 0;
  for (uint32_t i = 0; i < n; ++i) {
    uint64_t delta, seq, len;
    if (!ReadVarint(&p, end, &delta) || !ReadVarint(&p, end, &seq) || !ReadVarint(&p, end, &len) ||
        len > static_cast<uint64_t>(end - p)) {
      return false;
    }
    ms += delta;
    StreamEntry e{{ms, seq}, std::string_view(p, len)};
    p += len;
    if (out->size() > before && e.id <= out->back().id) return false;
    out->push_back(e);
  }
  return p == end && ms == last_ms;
}

bool AppendStreamChunk(std::string_view chunk, StreamId id, std::string_view body,
                       std::string* out) {
  if (chunk.size() < kChunkHeader) return false;
  const uint32_t n = Load<uint32_t>(chunk.data());
  const uint64_t last_ms = Load<uint64_t>(chunk.data() + 4);
  if (id.ms < last_ms) return false;
  out->clear();
  out->reserve(chunk.size() + body.size() + 24);
  Put<uint32_t>(out, n + 1);
  Put<uint64_t>(out, id.ms);
  out->append(chunk.substr(kChunkHeader));
  PutEntry(out, last_ms, id, body);
  return true;
}

std::vector<size_t> StreamChunkCuts(const std::vector<StreamEntry>& e, size_t begin, size_t end) {
  std::vector<size_t> starts{begin};
  size_t count = 0, bytes = 0;
  for (size_t i = begin; i < end; ++i) {
    if (StreamChunkFull(static_cast<uint32_t>(count), bytes) && e[i].id.ms != e[i - 1].id.ms) {
      starts.push_back(i);
      count = 0;
      bytes = 0;
    }
    ++count;
    bytes += e[i].body.size() + 4;
  }
  // A small tail joins the previous piece (it stays under twice the chunk size).
  if (starts.size() > 1 && count < kStreamChunkEntries / 4 && bytes < kStreamChunkBytes / 4) {
    starts.pop_back();
  }
  return starts;
}

std::string EncodeStreamMeta(const Stream& s) {
  Stream m;
  m.last_id = s.last_id;
  m.entries_added = s.entries_added;
  m.max_deleted_id = s.max_deleted_id;
  m.master_fields = s.master_fields;
  m.groups = s.groups;
  return EncodeStream(m);
}

bool DecodeStreamMeta(std::string_view tail, Stream* out) {
  Stream m;
  if (!DecodeStream(tail, &m) || !m.entries.empty()) return false;
  out->last_id = m.last_id;
  out->entries_added = m.entries_added;
  out->max_deleted_id = m.max_deleted_id;
  out->master_fields = std::move(m.master_fields);
  out->groups = std::move(m.groups);
  return true;
}

}  // namespace lavik
