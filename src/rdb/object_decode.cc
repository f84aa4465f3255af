// RDB objects → Lavik records. Every collection is gathered as views into the strings read,
// then encoded once; Redis's load-time refusals (empty values, duplicates, NaN scores) are
// refusals here too.
#include <bit>
#include <cmath>
#include <deque>
#include <vector>

#include "base/numbers.h"
#include "rdb/codec.h"
#include "rdb/object.h"
#include "rdb/packed.h"
#include "storage/collection.h"
#include "storage/list_record.h"

namespace lavik::rdb {
namespace {

// Caps what a claimed element count may reserve up front; a longer value grows as it is read.
constexpr uint64_t kMaxReserve = 1 << 16;

std::string ScoreBytes(double score) {
  const uint64_t bits = std::bit_cast<uint64_t>(score);
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(bits >> (8 * i));
  return out;
}

// Owns the strings a decode reads, so views into them stay valid while the value is built.
class Strings {
 public:
  std::string_view Keep(std::string s) { return store_.emplace_back(std::move(s)); }
  std::string_view Keep(const PackedItem& item) {
    return item.is_int ? Keep(item.ToString()) : item.str;
  }

 private:
  std::deque<std::string> store_;
};

bool ReadStrings(ByteSource& src, uint64_t n, Strings* keep, std::vector<std::string_view>* out) {
  out->reserve(std::min(n, kMaxReserve));
  std::string s;
  for (uint64_t i = 0; i < n; ++i) {
    if (!GetString(src, &s)) return false;
    out->push_back(keep->Keep(std::move(s)));
  }
  return true;
}

// A blob (ziplist, listpack...) read as an RDB string and kept.
bool ReadBlob(ByteSource& src, Strings* keep, std::string_view* blob) {
  std::string s;
  if (!GetString(src, &s)) return false;
  *blob = keep->Keep(std::move(s));
  return true;
}

bool ReadPacked(ByteSource& src, bool listpack, Strings* keep, std::vector<std::string_view>* out) {
  std::string_view blob;
  std::vector<PackedItem> items;
  if (!ReadBlob(src, keep, &blob)) return false;
  if (!(listpack ? ParseListpack(blob, &items) : ParseZiplist(blob, &items))) return false;
  for (const PackedItem& it : items) out->push_back(keep->Keep(it));
  return true;
}

bool DecodeList(ByteSource& src, uint8_t t, std::string* record) {
  Strings keep;
  std::vector<std::string_view> elems;
  uint64_t n = 1;
  if (t == kTypeList) {
    if (!GetLength(src, &n) || !ReadStrings(src, n, &keep, &elems)) return false;
  } else if (t == kTypeListZiplist) {
    if (!ReadPacked(src, false, &keep, &elems)) return false;
  } else {
    if (!GetLength(src, &n)) return false;
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t container = kContainerPacked;
      if (t == kTypeListQuicklist2 && !GetLength(src, &container)) return false;
      if (container == kContainerPlain) {
        std::string s;
        if (!GetString(src, &s)) return false;
        elems.push_back(keep.Keep(std::move(s)));
      } else if (container != kContainerPacked ||
                 !ReadPacked(src, t == kTypeListQuicklist2, &keep, &elems)) {
        return false;
      }
    }
  }
  if (elems.empty() || elems.size() > UINT32_MAX) return false;
  *record = EncodeList(elems);
  return true;
}

// Encodes distinct fields (with values); false if a field repeats or there are none.
bool EncodeDistinct(std::vector<CollectionChange> entries, bool with_values, std::string* record) {
  const size_t n = entries.size();
  if (n == 0 || n > UINT32_MAX) return false;
  *record = EncodeCollection(std::move(entries), with_values);
  CollectionView v;
  return v.Parse(*record, with_values) && v.size() == n;
}

bool DecodeSet(ByteSource& src, uint8_t t, std::string* record) {
  Strings keep;
  std::vector<std::string_view> members;
  if (t == kTypeSetIntset) {
    std::string_view blob;
    std::vector<int64_t> ints;
    if (!ReadBlob(src, &keep, &blob) || !ParseIntset(blob, &ints)) return false;
    char buf[kMaxInt64Chars];
    for (int64_t v : ints) members.push_back(keep.Keep(std::string(buf, FormatInt64(v, buf))));
  } else {
    uint64_t n;
    if (!GetLength(src, &n) || !ReadStrings(src, n, &keep, &members)) return false;
  }
  std::vector<CollectionChange> entries;
  entries.reserve(members.size());
  for (std::string_view m : members) entries.push_back({m, {}, false});
  return EncodeDistinct(std::move(entries), false, record);
}

// Field/value pairs (a hash, or member/score text pairs) from a packed blob or a zipmap.
bool ReadPairs(ByteSource& src, uint8_t t, Strings* keep, std::vector<std::string_view>* fv) {
  if (t == kTypeHashZipmap) {
    std::string_view blob;
    return ReadBlob(src, keep, &blob) && ParseZipmap(blob, fv);
  }
  const bool listpack = t == kTypeHashListpack || t == kTypeZSetListpack;
  return ReadPacked(src, listpack, keep, fv) && fv->size() % 2 == 0;
}

bool DecodeHash(ByteSource& src, uint8_t t, std::string* record) {
  Strings keep;
  std::vector<std::string_view> fv;
  if (t == kTypeHash) {
    uint64_t n;
    if (!GetLength(src, &n) || n > UINT64_MAX / 2 || !ReadStrings(src, 2 * n, &keep, &fv)) {
      return false;
    }
  } else if (!ReadPairs(src, t, &keep, &fv)) {
    return false;
  }
  std::vector<CollectionChange> entries;
  entries.reserve(fv.size() / 2);
  for (size_t i = 0; i < fv.size(); i += 2) entries.push_back({fv[i], fv[i + 1], false});
  return EncodeDistinct(std::move(entries), true, record);
}

bool DecodeZSet(ByteSource& src, uint8_t t, std::string* record) {
  Strings keep;
  std::vector<std::string_view> members;
  std::vector<double> scores;
  if (t == kTypeZSet || t == kTypeZSet2) {
    uint64_t n;
    if (!GetLength(src, &n)) return false;
    std::string m;
    for (uint64_t i = 0; i < n; ++i) {
      double s;
      if (!GetString(src, &m)) return false;
      if (!(t == kTypeZSet2 ? GetBinaryDouble(src, &s) : GetTextDouble(src, &s))) return false;
      members.push_back(keep.Keep(std::move(m)));
      scores.push_back(s);
    }
  } else {
    std::vector<std::string_view> fv;
    if (!ReadPairs(src, t, &keep, &fv)) return false;
    for (size_t i = 0; i < fv.size(); i += 2) {
      double s;
      if (!ParseDouble(fv[i + 1], &s)) return false;
      members.push_back(fv[i]);
      scores.push_back(s);
    }
  }
  std::vector<CollectionChange> entries;
  std::vector<std::string> score_bytes;
  score_bytes.reserve(scores.size());
  for (size_t i = 0; i < members.size(); ++i) {
    if (std::isnan(scores[i])) return false;
    score_bytes.push_back(ScoreBytes(scores[i]));
  }
  entries.reserve(members.size());
  for (size_t i = 0; i < members.size(); ++i)
    entries.push_back({members[i], score_bytes[i], false});
  return EncodeDistinct(std::move(entries), true, record);
}

}  // namespace

bool DecodeObject(ByteSource& src, ValueType* type, std::string* record) {
  uint8_t t;
  if (!GetByte(src, &t)) return false;
  switch (t) {
    case kTypeString:
      *type = ValueType::kString;
      return GetString(src, record);
    case kTypeList:
    case kTypeListZiplist:
    case kTypeListQuicklist:
    case kTypeListQuicklist2:
      *type = ValueType::kList;
      return DecodeList(src, t, record);
    case kTypeSet:
    case kTypeSetIntset:
      *type = ValueType::kSet;
      return DecodeSet(src, t, record);
    case kTypeZSet:
    case kTypeZSet2:
    case kTypeZSetZiplist:
    case kTypeZSetListpack:
      *type = ValueType::kZSet;
      return DecodeZSet(src, t, record);
    case kTypeHash:
    case kTypeHashZipmap:
    case kTypeHashZiplist:
    case kTypeHashListpack:
      *type = ValueType::kHash;
      return DecodeHash(src, t, record);
    case kTypeStreamListpacks:
    case kTypeStreamListpacks2:
      *type = ValueType::kStream;
      return DecodeStreamObject(src, t, record);
    default:
      return false;
  }
}

}  // namespace lavik::rdb
