#include "storage/stream_record.h"

#include <algorithm>
#include <cstring>

#include "base/varint.h"

namespace lavik {
namespace {

constexpr uint8_t kVersion = 1;
constexpr char kKind = 'X';

void PutU32(std::string* out, uint32_t v) { out->append(reinterpret_cast<const char*>(&v), 4); }
void PutU64(std::string* out, uint64_t v) { out->append(reinterpret_cast<const char*>(&v), 8); }
void PutString(std::string* out, std::string_view s) {
  AppendVarint(out, s.size());
  out->append(s);
}
void PutId(std::string* out, StreamId id) {
  PutU64(out, id.ms);
  PutU64(out, id.seq);
}

// A bounded reader: every getter fails (and stays failed) instead of reading past the end.
class Reader {
 public:
  explicit Reader(std::string_view s) : p_(s.data()), end_(s.data() + s.size()) {}
  bool ok() const { return ok_; }
  bool done() const { return p_ == end_; }
  const char* pos() const { return p_; }

  uint32_t U32() {
    uint32_t v = 0;
    Fixed(&v, 4);
    return v;
  }
  uint64_t U64() {
    uint64_t v = 0;
    Fixed(&v, 8);
    return v;
  }
  StreamId Id() {
    StreamId id;
    id.ms = U64();
    id.seq = U64();
    return id;
  }
  uint64_t Varint() {
    uint64_t v;
    if (ReadVarint(&p_, end_, &v)) return v;
    ok_ = false;
    p_ = end_;
    return 0;
  }
  std::string_view Bytes(uint64_t n) {
    if (!ok_ || static_cast<uint64_t>(end_ - p_) < n) {
      ok_ = false;
      p_ = end_;
      return {};
    }
    std::string_view s(p_, n);
    p_ += n;
    return s;
  }
  std::string_view String() { return Bytes(Varint()); }

 private:
  void Fixed(void* v, size_t n) {
    if (!ok_ || static_cast<size_t>(end_ - p_) < n) {
      ok_ = false;
      p_ = end_;
      return;
    }
    std::memcpy(v, p_, n);  // little-endian hosts only (as the record format)
    p_ += n;
  }

  const char* p_;
  const char* end_;
  bool ok_ = true;
};

constexpr size_t kHeaderSize = 8 + 16 + 8 + 16 + 8 + 4;

}  // namespace

bool StreamId::Incr(StreamId* out) const {
  if (seq != UINT64_MAX) {
    *out = {ms, seq + 1};
  } else if (ms != UINT64_MAX) {
    *out = {ms + 1, 0};
  } else {
    return false;
  }
  return true;
}

bool StreamId::Decr(StreamId* out) const {
  if (seq != 0) {
    *out = {ms, seq - 1};
  } else if (ms != 0) {
    *out = {ms - 1, UINT64_MAX};
  } else {
    return false;
  }
  return true;
}

std::string StreamId::ToString() const { return std::to_string(ms) + "-" + std::to_string(seq); }

int StreamGroup::FindConsumer(std::string_view n) const {
  for (size_t i = 0; i < consumers.size(); ++i) {
    if (consumers[i].name == n) return static_cast<int>(i);
  }
  return -1;
}

size_t StreamGroup::PendingLowerBound(StreamId id) const {
  return std::lower_bound(pending.begin(), pending.end(), id,
                          [](const StreamPending& p, StreamId v) { return p.id < v; }) -
         pending.begin();
}

int StreamGroup::FindPending(StreamId id) const {
  const size_t i = PendingLowerBound(id);
  return i < pending.size() && pending[i].id == id ? static_cast<int>(i) : -1;
}

uint64_t StreamGroup::PendingOf(uint32_t c) const {
  uint64_t n = 0;
  for (const StreamPending& p : pending) n += p.consumer == c;
  return n;
}

uint64_t StreamGroup::RemoveConsumer(uint32_t c) {
  uint64_t removed = 0;
  std::vector<StreamPending> kept;
  kept.reserve(pending.size());
  for (StreamPending p : pending) {
    if (p.consumer == c) {
      ++removed;
      continue;
    }
    if (p.consumer > c) --p.consumer;
    kept.push_back(p);
  }
  pending = std::move(kept);
  consumers.erase(consumers.begin() + c);
  return removed;
}

size_t Stream::LowerBound(StreamId id) const {
  return std::lower_bound(entries.begin(), entries.end(), id,
                          [](const StreamEntry& e, StreamId v) { return e.id < v; }) -
         entries.begin();
}

size_t Stream::UpperBound(StreamId id) const {
  return std::upper_bound(entries.begin(), entries.end(), id,
                          [](StreamId v, const StreamEntry& e) { return v < e.id; }) -
         entries.begin();
}

int Stream::Find(StreamId id) const {
  const size_t i = LowerBound(id);
  return i < entries.size() && entries[i].id == id ? static_cast<int>(i) : -1;
}

StreamGroup* Stream::FindGroup(std::string_view name) {
  for (StreamGroup& g : groups) {
    if (g.name == name) return &g;
  }
  return nullptr;
}

int64_t Stream::EstimateEntriesRead(StreamId id) const {
  if (entries_added == 0) return 0;
  const int64_t added = static_cast<int64_t>(entries_added);
  if (entries.empty() && id <= last_id) return added;
  if (id == last_id) return added;
  if (id > last_id) return kEntriesReadUnknown;
  const StreamId first = entries.empty() ? StreamId{} : entries.front().id;
  if (max_deleted_id.IsZero() || max_deleted_id < first) {
    // No deletion inside the stream: the position follows from the count.
    const int64_t len = static_cast<int64_t>(entries.size());
    if (id < first) return added - len;
    if (id == first) return added - len + 1;
  }
  return kEntriesReadUnknown;
}

bool Stream::RangeHasTombstones(StreamId start, StreamId end) const {
  if (entries.empty() || max_deleted_id.IsZero()) return false;
  return start <= max_deleted_id && max_deleted_id <= end;
}

std::string EncodeEntryBody(const std::vector<std::string_view>& master, const std::string_view* fv,
                            size_t fv_count) {
  const size_t n = fv_count / 2;
  bool same = n == master.size();
  for (size_t i = 0; same && i < n; ++i) same = fv[2 * i] == master[i];
  std::string out;
  AppendVarint(&out, (uint64_t{n} << 1) | (same ? 1 : 0));
  for (size_t i = 0; i < n; ++i) {
    if (!same) PutString(&out, fv[2 * i]);
    PutString(&out, fv[2 * i + 1]);
  }
  return out;
}

bool EntryFields(const std::vector<std::string_view>& master, std::string_view body,
                 std::vector<std::string_view>* out) {
  Reader r(body);
  const uint64_t head = r.Varint();
  const uint64_t n = head >> 1;
  const bool same = head & 1;
  if (!r.ok() || n > body.size() || (same && n != master.size())) return false;
  for (uint64_t i = 0; i < n; ++i) {
    out->push_back(same ? master[i] : r.String());
    out->push_back(r.String());
  }
  return r.ok() && r.done();
}

bool DecodeStreamHeader(std::string_view encoded, uint32_t* length, StreamId* last_id,
                        uint64_t* entries_added) {
  Reader r(encoded);
  if (encoded.size() < kHeaderSize || static_cast<uint8_t>(encoded[0]) != kVersion ||
      encoded[1] != kKind || encoded[2] != 0 || encoded[3] != 0) {
    return false;
  }
  r.U32();
  *length = r.U32();
  *last_id = r.Id();
  if (entries_added != nullptr) *entries_added = r.U64();
  return r.ok();
}

bool DecodeStream(std::string_view encoded, Stream* out) {
  *out = Stream();
  uint32_t count;
  if (!DecodeStreamHeader(encoded, &count, &out->last_id)) return false;
  Reader r(encoded.substr(8 + 16));
  out->entries_added = r.U64();
  out->max_deleted_id = r.Id();
  const uint64_t tail_ms = r.U64();
  const uint32_t area_len = r.U32();
  Reader a(r.Bytes(area_len));
  if (!r.ok()) return false;
  if (area_len > 0) {
    const uint64_t nmaster = a.Varint();
    if (nmaster > area_len) return false;
    for (uint64_t i = 0; i < nmaster; ++i) out->master_fields.push_back(a.String());
  }
  // Each entry takes at least 3 bytes, so a damaged count cannot make this reserve huge.
  if (count > area_len / 3) return false;
  out->entries.reserve(count);
  uint64_t ms = 0;
  for (uint32_t i = 0; i < count; ++i) {
    StreamEntry e;
    ms += a.Varint();
    e.id.ms = ms;
    e.id.seq = a.Varint();
    e.body = a.String();
    if (!a.ok() || (i > 0 && e.id <= out->entries.back().id)) return false;
    out->entries.push_back(e);
  }
  if (!a.ok() || !a.done()) return false;
  if (tail_ms != (out->entries.empty() ? 0 : out->entries.back().id.ms)) return false;
  const uint32_t ngroups = r.U32();
  if (ngroups > encoded.size()) return false;
  out->groups.resize(ngroups);
  for (StreamGroup& g : out->groups) {
    g.name = r.String();
    g.last_id = r.Id();
    g.entries_read = static_cast<int64_t>(r.U64());
    const uint32_t nc = r.U32();
    if (!r.ok() || nc > encoded.size()) return false;
    g.consumers.resize(nc);
    for (StreamConsumer& c : g.consumers) {
      c.name = r.String();
      c.seen_ms = static_cast<int64_t>(r.U64());
      c.active_ms = static_cast<int64_t>(r.U64());
    }
    const uint32_t np = r.U32();
    if (!r.ok() || np > encoded.size()) return false;
    g.pending.resize(np);
    for (StreamPending& p : g.pending) {
      p.id = r.Id();
      p.consumer = r.U32();
      p.delivery_ms = static_cast<int64_t>(r.U64());
      p.delivery_count = r.U64();
      if (p.consumer >= nc) return false;
    }
  }
  return r.ok() && r.done();
}

std::string EncodeStream(const Stream& s) {
  std::string area;
  size_t estimate = 16;
  for (std::string_view f : s.master_fields) estimate += f.size() + 5;
  for (const StreamEntry& e : s.entries) estimate += e.body.size() + 16;
  area.reserve(estimate);
  if (!s.entries.empty() || !s.master_fields.empty()) {
    AppendVarint(&area, s.master_fields.size());
    for (std::string_view f : s.master_fields) PutString(&area, f);
  }
  uint64_t prev_ms = 0;
  for (const StreamEntry& e : s.entries) {
    AppendVarint(&area, e.id.ms - prev_ms);
    AppendVarint(&area, e.id.seq);
    PutString(&area, e.body);
    prev_ms = e.id.ms;
  }
  std::string out;
  out.reserve(kHeaderSize + area.size() + 64);
  out.push_back(static_cast<char>(kVersion));
  out.push_back(kKind);
  out.push_back(0);
  out.push_back(0);
  PutU32(&out, static_cast<uint32_t>(s.entries.size()));
  PutId(&out, s.last_id);
  PutU64(&out, s.entries_added);
  PutId(&out, s.max_deleted_id);
  PutU64(&out, s.entries.empty() ? 0 : s.entries.back().id.ms);
  PutU32(&out, static_cast<uint32_t>(area.size()));
  out.append(area);
  PutU32(&out, static_cast<uint32_t>(s.groups.size()));
  for (const StreamGroup& g : s.groups) {
    PutString(&out, g.name);
    PutId(&out, g.last_id);
    PutU64(&out, static_cast<uint64_t>(g.entries_read));
    PutU32(&out, static_cast<uint32_t>(g.consumers.size()));
    for (const StreamConsumer& c : g.consumers) {
      PutString(&out, c.name);
      PutU64(&out, static_cast<uint64_t>(c.seen_ms));
      PutU64(&out, static_cast<uint64_t>(c.active_ms));
    }
    PutU32(&out, static_cast<uint32_t>(g.pending.size()));
    for (const StreamPending& p : g.pending) {
      PutId(&out, p.id);
      PutU32(&out, p.consumer);
      PutU64(&out, static_cast<uint64_t>(p.delivery_ms));
      PutU64(&out, p.delivery_count);
    }
  }
  return out;
}

bool AppendStreamEntry(std::string_view encoded, StreamId id, const std::string_view* fv,
                       size_t fv_count, std::string* out) {
  uint32_t count;
  StreamId last_id;
  if (!DecodeStreamHeader(encoded, &count, &last_id)) return false;
  Reader r(encoded.substr(8 + 16));
  const uint64_t entries_added = r.U64();
  const StreamId max_deleted = r.Id();
  const uint64_t tail_ms = r.U64();
  const uint32_t area_len = r.U32();
  const std::string_view area = r.Bytes(area_len);
  if (!r.ok() || (count > 0 && id.ms < tail_ms) || (count == 0 && tail_ms != 0)) return false;
  const std::string_view groups(r.pos(), encoded.data() + encoded.size() - r.pos());
  // The master fields open the area; a new area takes this entry's field names.
  std::vector<std::string_view> master;
  std::string head;
  if (area_len > 0) {
    Reader a(area);
    const uint64_t nmaster = a.Varint();
    if (nmaster > area_len) return false;
    for (uint64_t i = 0; i < nmaster; ++i) master.push_back(a.String());
    if (!a.ok()) return false;
  } else {
    for (size_t i = 0; i < fv_count; i += 2) master.push_back(fv[i]);
    AppendVarint(&head, master.size());
    for (std::string_view f : master) PutString(&head, f);
  }
  std::string entry;
  AppendVarint(&entry, id.ms - (count > 0 ? tail_ms : 0));
  AppendVarint(&entry, id.seq);
  PutString(&entry, EncodeEntryBody(master, fv, fv_count));
  out->clear();
  out->reserve(encoded.size() + head.size() + entry.size());
  out->push_back(static_cast<char>(kVersion));
  out->push_back(kKind);
  out->push_back(0);
  out->push_back(0);
  PutU32(out, count + 1);
  PutId(out, id);
  PutU64(out, entries_added + 1);
  PutId(out, max_deleted);
  PutU64(out, id.ms);
  PutU32(out, static_cast<uint32_t>(area_len + head.size() + entry.size()));
  out->append(head);
  out->append(area);
  out->append(entry);
  out->append(groups);
  return true;
}

}  // namespace lavik
