// Streams as STREAM_LISTPACKS_2 (written and read) and STREAM_LISTPACKS (read), Redis 7.0:
//
//   len node count, per node: string 16-byte master id (ms, seq big-endian) | string listpack
//   len entry count | len last id ms | len last id seq
//   [v2: len first id ms, seq | len max deleted id ms, seq | len entries added]
//   len group count, per group: string name | len last id ms, seq | [v2: len entries read]
//     len pending count, per entry: raw 16-byte id | 8-byte delivery ms | len delivery count
//     len consumer count, per consumer: string name | 8-byte seen ms
//       | len count, per entry: raw 16-byte id (one of the group's pending entries)
//
// A node's listpack: the master entry (live count, deleted count, field count, the fields, 0),
// then per entry: flags (1 deleted, 2 same fields as the master), ms and seq as differences from
// the master id, [field count,] fields and values (only values with "same fields"), and the
// number of listpack items the entry took before this one.
#include <algorithm>
#include <deque>
#include <unordered_set>

#include "base/numbers.h"
#include "rdb/codec.h"
#include "rdb/object.h"
#include "rdb/packed.h"
#include "storage/stream_record.h"

namespace lavik::rdb {
namespace {

constexpr int64_t kFlagDeleted = 1, kFlagSameFields = 2;
constexpr uint32_t kNoConsumer = UINT32_MAX;

void PutRawId(StreamId id, std::string* out) {
  for (int i = 7; i >= 0; --i) out->push_back(static_cast<char>((id.ms >> (8 * i)) & 0xff));
  for (int i = 7; i >= 0; --i) out->push_back(static_cast<char>((id.seq >> (8 * i)) & 0xff));
}

bool ParseRawId(std::string_view b, StreamId* id) {
  if (b.size() != 16) return false;
  id->ms = id->seq = 0;
  for (int i = 0; i < 8; ++i) id->ms = (id->ms << 8) | static_cast<uint8_t>(b[i]);
  for (int i = 8; i < 16; ++i) id->seq = (id->seq << 8) | static_cast<uint8_t>(b[i]);
  return true;
}

bool GetRawId(ByteSource& src, StreamId* id) {
  char b[16];
  return src.Read(b, 16) && ParseRawId(std::string_view(b, 16), id);
}

bool GetId(ByteSource& src, StreamId* id) {
  return GetLength(src, &id->ms) && GetLength(src, &id->seq);
}

void PutId(StreamId id, std::string* out) {
  PutLength(id.ms, out);
  PutLength(id.seq, out);
}

struct Entry {
  StreamId id;
  std::vector<std::string_view> fv;
};

// One node of `entries` [begin, end) as a listpack.
std::string NodeListpack(const std::vector<Entry>& entries, size_t begin, size_t end) {
  const Entry& first = entries[begin];
  const StreamId master = first.id;
  ListpackWriter lp;
  lp.AddInt(static_cast<int64_t>(end - begin));
  lp.AddInt(0);
  lp.AddInt(static_cast<int64_t>(first.fv.size() / 2));
  for (size_t i = 0; i < first.fv.size(); i += 2) lp.Add(first.fv[i]);
  lp.AddInt(0);
  for (size_t k = begin; k < end; ++k) {
    const Entry& e = entries[k];
    const size_t n = e.fv.size() / 2;
    bool same = n == first.fv.size() / 2;
    for (size_t i = 0; same && i < n; ++i) same = e.fv[2 * i] == first.fv[2 * i];
    lp.AddInt(same ? kFlagSameFields : 0);
    lp.AddInt(static_cast<int64_t>(e.id.ms - master.ms));
    lp.AddInt(static_cast<int64_t>(e.id.seq - master.seq));
    if (!same) lp.AddInt(static_cast<int64_t>(n));
    for (size_t i = 0; i < n; ++i) {
      if (!same) lp.Add(e.fv[2 * i]);
      lp.Add(e.fv[2 * i + 1]);
    }
    lp.AddInt(static_cast<int64_t>(same ? n + 3 : 2 * n + 4));
  }
  return lp.Finish();
}

bool AsInt(const PackedItem& it, int64_t* v) {
  if (it.is_int) {
    *v = it.num;
    return true;
  }
  return ParseInt64(it.str, v);
}

// Appends the live entries of one node to *out (field/value views kept in *keep).
bool ParseNode(std::string_view key, std::string_view blob, std::deque<std::string>* keep,
               std::vector<Entry>* out) {
  StreamId master;
  std::vector<PackedItem> items;
  if (!ParseRawId(key, &master) || !ParseListpack(blob, &items)) return false;
  size_t i = 0;
  auto next_int = [&](int64_t* v) { return i < items.size() && AsInt(items[i++], v); };
  auto next_str = [&](std::string_view* s) {
    if (i >= items.size()) return false;
    const PackedItem& it = items[i++];
    *s = it.is_int ? std::string_view(keep->emplace_back(it.ToString())) : it.str;
    return true;
  };
  int64_t live, deleted, nmaster, zero;
  if (!next_int(&live) || !next_int(&deleted) || !next_int(&nmaster) || nmaster < 0 ||
      static_cast<uint64_t>(nmaster) > items.size()) {
    return false;
  }
  std::vector<std::string_view> fields(nmaster);
  for (auto& f : fields) {
    if (!next_str(&f)) return false;
  }
  if (!next_int(&zero) || zero != 0) return false;
  int64_t seen_live = 0, seen_deleted = 0;
  while (i < items.size()) {
    const size_t start = i;
    int64_t flags, dms, dseq, nf;
    if (!next_int(&flags) || !next_int(&dms) || !next_int(&dseq)) return false;
    const bool same = flags & kFlagSameFields;
    if (same) {
      nf = nmaster;
    } else if (!next_int(&nf) || nf < 0 || static_cast<uint64_t>(nf) > items.size()) {
      return false;
    }
    Entry e;
    e.id = {master.ms + static_cast<uint64_t>(dms), master.seq + static_cast<uint64_t>(dseq)};
    for (int64_t f = 0; f < nf; ++f) {
      std::string_view field, value;
      if (same) {
        field = fields[f];
      } else if (!next_str(&field)) {
        return false;
      }
      if (!next_str(&value)) return false;
      e.fv.push_back(field);
      e.fv.push_back(value);
    }
    int64_t lp_count;
    if (!next_int(&lp_count) || lp_count != static_cast<int64_t>(i - start - 1)) return false;
    if (flags & kFlagDeleted) {
      ++seen_deleted;
      continue;
    }
    ++seen_live;
    if (!out->empty() && e.id <= out->back().id) return false;
    out->push_back(std::move(e));
  }
  return seen_live == live && seen_deleted == deleted && seen_live + seen_deleted > 0;
}

}  // namespace

bool EncodeStreamObject(std::string_view record, const EncodeLimits& limits, std::string* out) {
  Stream s;
  if (!DecodeStream(record, &s)) return false;
  std::vector<Entry> entries(s.entries.size());
  for (size_t k = 0; k < s.entries.size(); ++k) {
    entries[k].id = s.entries[k].id;
    if (!EntryFields(s.master_fields, s.entries[k].body, &entries[k].fv)) return false;
  }
  // Nodes as Redis fills them: a new one once the entry or the byte budget is spent.
  std::vector<std::pair<size_t, size_t>> nodes;
  for (size_t k = 0; k < entries.size();) {
    size_t end = k, bytes = 0;
    while (end < entries.size() && end - k < limits.stream_node_max_entries &&
           (end == k || bytes < limits.stream_node_max_bytes)) {
      for (std::string_view x : entries[end].fv) bytes += x.size() + 2;
      bytes += 8;
      ++end;
    }
    nodes.push_back({k, end});
    k = end;
  }
  out->push_back(static_cast<char>(kTypeStreamListpacks2));
  PutLength(nodes.size(), out);
  for (auto [b, e] : nodes) {
    std::string key;
    PutRawId(entries[b].id, &key);
    PutString(key, out);
    PutString(NodeListpack(entries, b, e), out);
  }
  PutLength(entries.size(), out);
  PutId(s.last_id, out);
  PutId(entries.empty() ? StreamId{} : entries.front().id, out);
  PutId(s.max_deleted_id, out);
  PutLength(s.entries_added, out);
  PutLength(s.groups.size(), out);
  for (const StreamGroup& g : s.groups) {
    PutString(g.name, out);
    PutId(g.last_id, out);
    PutLength(static_cast<uint64_t>(g.entries_read), out);
    PutLength(g.pending.size(), out);
    for (const StreamPending& p : g.pending) {
      PutRawId(p.id, out);
      PutMillis(p.delivery_ms, out);
      PutLength(p.delivery_count, out);
    }
    PutLength(g.consumers.size(), out);
    for (uint32_t c = 0; c < g.consumers.size(); ++c) {
      PutString(g.consumers[c].name, out);
      PutMillis(g.consumers[c].seen_ms, out);
      PutLength(g.PendingOf(c), out);
      for (const StreamPending& p : g.pending) {
        if (p.consumer == c) PutRawId(p.id, out);
      }
    }
  }
  return true;
}

bool DecodeStreamObject(ByteSource& src, uint8_t rdb_type, std::string* record) {
  const bool v2 = rdb_type == kTypeStreamListpacks2;
  std::deque<std::string> keep;
  std::vector<Entry> entries;
  uint64_t nodes;
  if (!GetLength(src, &nodes)) return false;
  std::string key, blob;
  for (uint64_t n = 0; n < nodes; ++n) {
    if (!GetString(src, &key) || !GetString(src, &blob)) return false;
    const std::string& kept = keep.emplace_back(std::move(blob));
    // ParseNode checks that ids ascend across nodes too.
    if (!ParseNode(key, kept, &keep, &entries)) return false;
  }
  Stream s;
  uint64_t length;
  StreamId first;
  if (!GetLength(src, &length) || length != entries.size() || !GetId(src, &s.last_id)) {
    return false;
  }
  if (!entries.empty() && entries.back().id > s.last_id) return false;
  if (v2) {
    if (!GetId(src, &first) || !GetId(src, &s.max_deleted_id) ||
        !GetLength(src, &s.entries_added)) {
      return false;
    }
  } else {
    s.entries_added = entries.size();
  }
  // Bodies, encoded against the first entry's fields.
  std::vector<std::string> bodies(entries.size());
  if (!entries.empty()) {
    for (size_t i = 0; i < entries.front().fv.size(); i += 2) {
      s.master_fields.push_back(entries.front().fv[i]);
    }
  }
  for (size_t k = 0; k < entries.size(); ++k) {
    bodies[k] = EncodeEntryBody(s.master_fields, entries[k].fv.data(), entries[k].fv.size());
    s.entries.push_back({entries[k].id, bodies[k]});
  }
  uint64_t ngroups;
  if (!GetLength(src, &ngroups)) return false;
  std::unordered_set<std::string> names;
  for (uint64_t gi = 0; gi < ngroups; ++gi) {
    StreamGroup g;
    uint64_t entries_read = 0, npel, ncons;
    if (!GetString(src, &g.name) || !GetId(src, &g.last_id)) return false;
    if (v2 && !GetLength(src, &entries_read)) return false;
    g.entries_read = v2 ? static_cast<int64_t>(entries_read) : s.EstimateEntriesRead(g.last_id);
    if (!names.insert(g.name).second || !GetLength(src, &npel)) return false;
    for (uint64_t i = 0; i < npel; ++i) {
      StreamPending p;
      int64_t when;
      if (!GetRawId(src, &p.id) || !GetMillis(src, &when) || !GetLength(src, &p.delivery_count)) {
        return false;
      }
      if (!g.pending.empty() && p.id <= g.pending.back().id) return false;
      p.delivery_ms = when;
      p.consumer = kNoConsumer;
      g.pending.push_back(p);
    }
    if (!GetLength(src, &ncons)) return false;
    for (uint64_t ci = 0; ci < ncons; ++ci) {
      StreamConsumer c;
      uint64_t owned;
      if (!GetString(src, &c.name) || !GetMillis(src, &c.seen_ms) || !GetLength(src, &owned)) {
        return false;
      }
      if (g.FindConsumer(c.name) >= 0) return false;
      c.active_ms = c.seen_ms;
      const uint32_t index = static_cast<uint32_t>(g.consumers.size());
      g.consumers.push_back(std::move(c));
      for (uint64_t i = 0; i < owned; ++i) {
        StreamId id;
        if (!GetRawId(src, &id)) return false;
        const int at = g.FindPending(id);
        if (at < 0 || g.pending[at].consumer != kNoConsumer) return false;
        g.pending[at].consumer = index;
      }
    }
    for (const StreamPending& p : g.pending) {
      if (p.consumer == kNoConsumer) return false;
    }
    s.groups.push_back(std::move(g));
  }
  *record = EncodeStream(s);
  return true;
}

}  // namespace lavik::rdb
