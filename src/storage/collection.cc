#include "storage/collection.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>

#include "base/varint.h"

namespace lavik {
namespace {

constexpr uint8_t kVersion = 1;
constexpr uint8_t kFlagValues = 1;
constexpr size_t kHeaderSize = 8;

uint32_t LoadU32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);  // little-endian hosts only (as the record format)
  return v;
}

void StoreU32(char* p, uint32_t v) { std::memcpy(p, &v, 4); }

// Reads one length-prefixed string; false if it does not fit before `end`.
bool GetString(const char** p, const char* end, std::string_view* out) {
  uint32_t len;
  if (!ReadVarint32(p, end, &len) || static_cast<size_t>(end - *p) < len) return false;
  *out = std::string_view(*p, len);
  *p += len;
  return true;
}

struct Keyed {
  uint64_t hash;
  std::string_view field;
};

bool Less(uint64_t ha, std::string_view a, uint64_t hb, std::string_view b) {
  return ha != hb ? ha < hb : a < b;
}

}  // namespace

uint64_t MemberHash(std::string_view member) {
  return XXH3_64bits(member.data(), member.size()) | 1;
}

bool CollectionView::Parse(std::string_view encoded, bool with_values) {
  *this = CollectionView();
  with_values_ = with_values;
  if (encoded.empty()) return true;
  if (encoded.size() < kHeaderSize || static_cast<uint8_t>(encoded[0]) != kVersion ||
      static_cast<uint8_t>(encoded[1]) != (with_values ? kFlagValues : 0) || encoded[2] != 0 ||
      encoded[3] != 0) {
    return false;
  }
  const uint32_t count = LoadU32(encoded.data() + 4);
  if ((encoded.size() - kHeaderSize) / 4 < count) return false;
  const char* offsets = encoded.data() + kHeaderSize;
  std::string_view data = encoded.substr(kHeaderSize + size_t{count} * 4);
  // O(1) checks, so a lookup in a big collection stays O(log n): the first entry starts the
  // area and the last one ends it exactly (a truncated or padded value fails here). Entry()
  // bounds every read, so a damaged middle offset cannot read outside the value; the record's
  // CRC is what guards the bytes themselves.
  if (count > 0) {
    if (LoadU32(offsets) != 0) return false;
    const uint32_t last = LoadU32(offsets + (size_t{count} - 1) * 4);
    if (last >= data.size()) return false;
    const char* p = data.data() + last;
    const char* end = data.data() + data.size();
    std::string_view s;
    if (!GetString(&p, end, &s) || (with_values && !GetString(&p, end, &s)) || p != end) {
      return false;
    }
  } else if (!data.empty()) {
    return false;
  }
  offsets_ = offsets;
  data_ = data;
  count_ = count;
  return true;
}

std::string_view CollectionView::Entry(uint32_t i, std::string_view* value) const {
  const uint32_t off = LoadU32(offsets_ + size_t{i} * 4);
  std::string_view f, v;
  if (off < data_.size()) {  // else damaged: an empty entry rather than a read out of bounds
    const char* p = data_.data() + off;
    const char* end = data_.data() + data_.size();
    if (GetString(&p, end, &f) && with_values_) GetString(&p, end, &v);
  }
  if (value != nullptr) *value = v;
  return f;
}

std::string_view CollectionView::field(uint32_t i) const { return Entry(i, nullptr); }

std::string_view CollectionView::value(uint32_t i) const {
  std::string_view v;
  Entry(i, &v);
  return v;
}

uint32_t CollectionView::LowerBound(uint64_t h) const {
  uint32_t lo = 0, hi = count_;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (MemberHash(field(mid)) < h) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

int64_t CollectionView::Find(std::string_view f) const {
  const uint64_t h = MemberHash(f);
  for (uint32_t i = LowerBound(h); i < count_; ++i) {
    std::string_view cur = field(i);
    if (cur == f) return i;
    if (MemberHash(cur) != h) break;  // past the (rarely longer than one) run of equal hashes
  }
  return -1;
}

std::string ApplyChanges(const CollectionView& base, std::vector<CollectionChange> changes,
                         bool with_values) {
  // Sort the batch by (hash, field), keeping the last change of each field.
  std::vector<std::pair<Keyed, uint32_t>> order;
  order.reserve(changes.size());
  for (uint32_t i = 0; i < changes.size(); ++i) {
    order.push_back({Keyed{MemberHash(changes[i].field), changes[i].field}, i});
  }
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return Less(a.first.hash, a.first.field, b.first.hash, b.first.field);
  });
  size_t kept = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    if (i + 1 < order.size() && order[i + 1].first.hash == order[i].first.hash &&
        order[i + 1].first.field == order[i].first.field) {
      continue;  // a later change of the same field follows
    }
    order[kept++] = order[i];
  }
  order.resize(kept);

  // Merge the base (already sorted) with the batch into entry bytes plus offsets.
  std::vector<uint32_t> offsets;
  offsets.reserve(base.size() + order.size());
  std::string entries;
  auto emit = [&](std::string_view f, std::string_view v) {
    offsets.push_back(static_cast<uint32_t>(entries.size()));
    AppendVarint(&entries, static_cast<uint32_t>(f.size()));
    entries.append(f);
    if (with_values) {
      AppendVarint(&entries, static_cast<uint32_t>(v.size()));
      entries.append(v);
    }
  };
  uint32_t b = 0;
  uint64_t base_hash = base.size() > 0 ? MemberHash(base.field(0)) : 0;
  auto next_base = [&] {
    ++b;
    if (b < base.size()) base_hash = MemberHash(base.field(b));
  };
  for (size_t c = 0; b < base.size() || c < order.size();) {
    if (c == order.size() || (b < base.size() && Less(base_hash, base.field(b), order[c].first.hash,
                                                      order[c].first.field))) {
      emit(base.field(b), with_values ? base.value(b) : std::string_view());
      next_base();
      continue;
    }
    const CollectionChange& ch = changes[order[c].second];
    const bool replaces = b < base.size() && base_hash == order[c].first.hash &&
                          base.field(b) == order[c].first.field;
    if (!ch.erase) emit(ch.field, ch.value);
    ++c;
    if (replaces) next_base();
  }
  if (offsets.empty()) return std::string();
  std::string out;
  out.resize(kHeaderSize + offsets.size() * 4);
  out[0] = static_cast<char>(kVersion);
  out[1] = static_cast<char>(with_values ? kFlagValues : 0);
  out[2] = out[3] = 0;
  StoreU32(out.data() + 4, static_cast<uint32_t>(offsets.size()));
  for (size_t i = 0; i < offsets.size(); ++i)
    StoreU32(out.data() + kHeaderSize + i * 4, offsets[i]);
  out.append(entries);
  return out;
}

std::string ConcatRanges(std::span<const CollectionRange> parts, bool with_values) {
  size_t count = 0, bytes = 0;
  // The byte span of each range: entries are laid out in order, entry i+1 right after entry i.
  auto span_of = [](const CollectionRange& r) {
    const CollectionView& v = *r.view;
    const size_t from = LoadU32(v.offsets_ + size_t{r.begin} * 4);
    const size_t to = r.end < v.count_ ? LoadU32(v.offsets_ + size_t{r.end} * 4) : v.data_.size();
    return std::pair<size_t, size_t>(std::min(from, v.data_.size()),
                                     std::min(std::max(from, to), v.data_.size()));
  };
  for (const CollectionRange& r : parts) {
    if (r.end <= r.begin) continue;
    count += r.end - r.begin;
    auto [from, to] = span_of(r);
    bytes += to - from;
  }
  if (count == 0) return std::string();
  std::string out(kHeaderSize + count * 4 + bytes, '\0');
  out[0] = static_cast<char>(kVersion);
  out[1] = static_cast<char>(with_values ? kFlagValues : 0);
  StoreU32(out.data() + 4, static_cast<uint32_t>(count));
  char* offsets = out.data() + kHeaderSize;
  char* data = offsets + count * 4;
  size_t n = 0, at = 0;
  for (const CollectionRange& r : parts) {
    if (r.end <= r.begin) continue;
    const CollectionView& v = *r.view;
    auto [from, to] = span_of(r);
    for (uint32_t i = r.begin; i < r.end; ++i) {
      const size_t off = std::min<size_t>(LoadU32(v.offsets_ + size_t{i} * 4), v.data_.size());
      StoreU32(offsets + 4 * n++, static_cast<uint32_t>(at + (std::max(off, from) - from)));
    }
    std::memcpy(data + at, v.data_.data() + from, to - from);
    at += to - from;
  }
  return out;
}

}  // namespace lavik
