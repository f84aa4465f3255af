// Lavik records → RDB objects.
#include <algorithm>
#include <bit>
#include <cmath>

#include "base/numbers.h"
#include "rdb/codec.h"
#include "rdb/object.h"
#include "rdb/packed.h"
#include "storage/collection.h"
#include "storage/list_record.h"

namespace lavik::rdb {
namespace {

// Elements at least this large get a PLAIN quicklist node of their own (Redis's default
// packed_threshold, 1 GiB).
constexpr uint64_t kPlainThreshold = uint64_t{1} << 30;

double Score(std::string_view bytes) {
  uint64_t bits = 0;
  for (size_t k = 0; k < 8 && k < bytes.size(); ++k) {
    bits |= uint64_t{static_cast<uint8_t>(bytes[k])} << (8 * k);
  }
  return std::bit_cast<double>(bits);
}

void EncodeList(const ListView& list, const EncodeLimits& limits, std::string* out) {
  // Nodes are built first: the node count comes before them.
  struct Node {
    bool plain;
    std::string bytes;
  };
  std::vector<Node> nodes;
  ListpackWriter lp;
  auto flush = [&] {
    if (lp.count() > 0) nodes.push_back({false, lp.Finish()});
  };
  for (uint32_t i = 0; i < list.size(); ++i) {
    const std::string_view e = list.element(i);
    if (e.size() >= kPlainThreshold) {
      flush();
      nodes.push_back({true, std::string(e)});
      continue;
    }
    // Entry overhead: up to 5 encoding bytes and 5 backlen bytes.
    if (lp.count() > 0 && lp.bytes() + e.size() + 10 > limits.list_max_listpack_bytes) flush();
    lp.Add(e);
  }
  flush();
  out->push_back(static_cast<char>(kTypeListQuicklist2));
  PutLength(nodes.size(), out);
  for (const Node& n : nodes) {
    PutLength(n.plain ? kContainerPlain : kContainerPacked, out);
    PutString(n.bytes, out);
  }
}

void EncodeSet(const CollectionView& v, const EncodeLimits& limits, std::string* out) {
  std::vector<int64_t> ints;
  bool all_ints = v.size() <= limits.set_max_intset_entries;
  for (uint32_t i = 0; all_ints && i < v.size(); ++i) {
    int64_t n;
    all_ints = ParseInt64(v.field(i), &n);
    ints.push_back(n);
  }
  if (all_ints) {
    std::sort(ints.begin(), ints.end());
    out->push_back(static_cast<char>(kTypeSetIntset));
    PutString(EncodeIntset(ints), out);
    return;
  }
  out->push_back(static_cast<char>(kTypeSet));
  PutLength(v.size(), out);
  for (uint32_t i = 0; i < v.size(); ++i) PutString(v.field(i), out);
}

bool FitsListpack(const CollectionView& v, uint64_t max_entries, uint64_t max_value,
                  bool check_values) {
  if (v.size() > max_entries) return false;
  for (uint32_t i = 0; i < v.size(); ++i) {
    if (v.field(i).size() > max_value) return false;
    if (check_values && v.value(i).size() > max_value) return false;
  }
  return true;
}

// A listpack score: an integral value as an integer (what Redis's listpack ends up holding for
// it), anything else as its %.17g text.
void AddScore(double s, ListpackWriter* lp) {
  if (std::trunc(s) == s && std::fabs(s) < 9007199254740992.0 && !(s == 0 && std::signbit(s))) {
    lp->AddInt(static_cast<int64_t>(s));
  } else {
    lp->Add(FormatDouble(s));
  }
}

void EncodeZSet(const CollectionView& v, const EncodeLimits& limits, std::string* out) {
  if (FitsListpack(v, limits.zset_max_listpack_entries, limits.zset_max_listpack_value, false)) {
    // A listpack sorted set is in (score, member) order.
    struct E {
      double score;
      std::string_view member;
    };
    std::vector<E> es;
    es.reserve(v.size());
    for (uint32_t i = 0; i < v.size(); ++i) es.push_back({Score(v.value(i)), v.field(i)});
    std::sort(es.begin(), es.end(), [](const E& a, const E& b) {
      return a.score != b.score ? a.score < b.score : a.member < b.member;
    });
    ListpackWriter lp;
    for (const E& e : es) {
      lp.Add(e.member);
      AddScore(e.score, &lp);
    }
    out->push_back(static_cast<char>(kTypeZSetListpack));
    PutString(lp.Finish(), out);
    return;
  }
  out->push_back(static_cast<char>(kTypeZSet2));
  PutLength(v.size(), out);
  for (uint32_t i = 0; i < v.size(); ++i) {
    PutString(v.field(i), out);
    PutBinaryDouble(Score(v.value(i)), out);
  }
}

void EncodeHash(const CollectionView& v, const EncodeLimits& limits, std::string* out) {
  if (FitsListpack(v, limits.hash_max_listpack_entries, limits.hash_max_listpack_value, true)) {
    ListpackWriter lp;
    for (uint32_t i = 0; i < v.size(); ++i) {
      lp.Add(v.field(i));
      lp.Add(v.value(i));
    }
    out->push_back(static_cast<char>(kTypeHashListpack));
    PutString(lp.Finish(), out);
    return;
  }
  out->push_back(static_cast<char>(kTypeHash));
  PutLength(v.size(), out);
  for (uint32_t i = 0; i < v.size(); ++i) {
    PutString(v.field(i), out);
    PutString(v.value(i), out);
  }
}

}  // namespace

bool EncodeObject(ValueType type, std::string_view record, const EncodeLimits& limits,
                  std::string* out) {
  switch (type) {
    case ValueType::kString:
      out->push_back(static_cast<char>(kTypeString));
      PutString(record, out);
      return true;
    case ValueType::kList: {
      ListView list;
      if (!list.Parse(record) || list.empty()) return false;
      EncodeList(list, limits, out);
      return true;
    }
    case ValueType::kSet:
    case ValueType::kZSet:
    case ValueType::kHash: {
      CollectionView v;
      if (!v.Parse(record, type != ValueType::kSet) || v.empty()) return false;
      if (type == ValueType::kSet) {
        EncodeSet(v, limits, out);
      } else if (type == ValueType::kZSet) {
        EncodeZSet(v, limits, out);
      } else {
        EncodeHash(v, limits, out);
      }
      return true;
    }
    case ValueType::kStream:
      return EncodeStreamObject(record, limits, out);
    default:
      return false;
  }
}

}  // namespace lavik::rdb
