#include "rdb/object.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "rdb/codec.h"
#include "rdb/packed.h"
#include "rdb/payload.h"
#include "storage/collection.h"
#include "storage/list_record.h"
#include "storage/stream_record.h"

namespace lavik::rdb {
namespace {

std::string Score(double d) {
  std::string out(8, '\0');
  std::memcpy(out.data(), &d, 8);
  return out;
}

std::string Collection(const std::vector<std::pair<std::string, std::string>>& kv, bool values) {
  std::vector<CollectionChange> c;
  for (const auto& [k, v] : kv) c.push_back({k, v, false});
  return EncodeCollection(std::move(c), values);
}

std::string StreamRecord() {
  Stream s;
  std::vector<std::string> bodies;
  const std::vector<std::vector<std::string_view>> fvs = {
      {"a", "1", "b", "2"}, {"a", "3", "b", "4"}, {"z", "x"}, {"a", "5", "b", "six"}};
  s.master_fields = {"a", "b"};
  for (size_t i = 0; i < fvs.size(); ++i) {
    bodies.push_back(EncodeEntryBody(s.master_fields, fvs[i].data(), fvs[i].size()));
  }
  for (size_t i = 0; i < fvs.size(); ++i) s.entries.push_back({{10 + i, i}, bodies[i]});
  s.last_id = {20, 0};
  s.entries_added = 6;
  s.max_deleted_id = {15, 0};
  StreamGroup g;
  g.name = "grp";
  g.last_id = {11, 1};
  g.entries_read = 2;
  g.consumers = {{"alice", 1000, 1000}, {"bob", 2000, 2000}};
  g.pending = {{{10, 0}, 1, 500, 2}, {{11, 1}, 0, 600, 1}};
  s.groups.push_back(g);
  return EncodeStream(s);
}

struct Value {
  ValueType type;
  std::string record;
};

std::vector<Value> SampleValues() {
  std::vector<Value> v;
  v.push_back({ValueType::kString, "hello"});
  v.push_back({ValueType::kString, "12345"});
  v.push_back({ValueType::kList, EncodeList({"a", "1", "", "xyz"})});
  std::vector<std::string> many;
  for (int i = 0; i < 3000; ++i) many.push_back("element" + std::to_string(i));
  v.push_back(
      {ValueType::kList, EncodeList(std::vector<std::string_view>(many.begin(), many.end()))});
  v.push_back({ValueType::kSet, Collection({{"1", ""}, {"-7", ""}, {"100000", ""}}, false)});
  v.push_back({ValueType::kSet, Collection({{"a", ""}, {"b", ""}}, false)});
  v.push_back({ValueType::kZSet, Collection({{"a", Score(1)}, {"b", Score(-2.5)}}, true)});
  v.push_back(
      {ValueType::kZSet, Collection({{std::string(80, 'm'), Score(3)}, {"n", Score(0.1)}}, true)});
  v.push_back({ValueType::kHash, Collection({{"f", "v"}, {"n", "10"}}, true)});
  v.push_back({ValueType::kHash, Collection({{"f", std::string(70, 'v')}}, true)});
  v.push_back({ValueType::kStream, StreamRecord()});
  return v;
}

TEST(RdbObject, EveryTypeRoundTripsAndPicksRedisEncoding) {
  const uint8_t want_type[] = {kTypeString,         kTypeString,          kTypeListQuicklist2,
                               kTypeListQuicklist2, kTypeSetIntset,       kTypeSet,
                               kTypeZSetListpack,   kTypeZSet2,           kTypeHashListpack,
                               kTypeHash,           kTypeStreamListpacks2};
  const std::vector<Value> values = SampleValues();
  for (size_t i = 0; i < values.size(); ++i) {
    std::string obj;
    ASSERT_TRUE(EncodeObject(values[i].type, values[i].record, EncodeLimits(), &obj)) << i;
    EXPECT_EQ(static_cast<uint8_t>(obj[0]), want_type[i]) << i;
    StringSource src(obj);
    ValueType t;
    std::string rec;
    ASSERT_TRUE(DecodeObject(src, &t, &rec)) << i;
    EXPECT_EQ(t, values[i].type);
    EXPECT_EQ(src.remaining(), 0u) << i;
    // Collections come back as the same encoding (it is canonical: sorted by member hash).
    EXPECT_EQ(rec, values[i].record) << i;
  }
}

TEST(RdbObject, OlderEncodingsLoad) {
  // LIST (1): two plain strings.
  std::string o = "\x01";
  PutLength(2, &o);
  PutString("x", &o);
  PutString("77", &o);
  StringSource s1(o);
  ValueType t;
  std::string rec;
  ASSERT_TRUE(DecodeObject(s1, &t, &rec));
  ListView lv;
  ASSERT_TRUE(lv.Parse(rec));
  ASSERT_EQ(lv.size(), 2u);
  EXPECT_EQ(lv.element(1), "77");

  // ZSET (3): text doubles.
  o = "\x03";
  PutLength(1, &o);
  PutString("m", &o);
  o += std::string(
      "\x03"
      "2.5",
      4);
  StringSource s2(o);
  ASSERT_TRUE(DecodeObject(s2, &t, &rec));
  EXPECT_EQ(t, ValueType::kZSet);
  EXPECT_EQ(rec, Collection({{"m", Score(2.5)}}, true));

  // HASH_ZIPMAP (9).
  o = "\x09";
  PutString(std::string("\x01\x01"
                        "f"
                        "\x01\x00"
                        "v"
                        "\xff",
                        7),
            &o);
  StringSource s3(o);
  ASSERT_TRUE(DecodeObject(s3, &t, &rec));
  EXPECT_EQ(t, ValueType::kHash);
  EXPECT_EQ(rec, Collection({{"f", "v"}}, true));

  // Duplicates, empty values and NaN scores are refused.
  o = "\x02";
  PutLength(2, &o);
  PutString("a", &o);
  PutString("a", &o);
  StringSource s4(o);
  EXPECT_FALSE(DecodeObject(s4, &t, &rec));
  o = "\x05";
  PutLength(1, &o);
  PutString("a", &o);
  PutBinaryDouble(std::nan(""), &o);
  StringSource s5(o);
  EXPECT_FALSE(DecodeObject(s5, &t, &rec));
  o = "\x04";
  PutLength(0, &o);
  StringSource s6(o);
  EXPECT_FALSE(DecodeObject(s6, &t, &rec));
}

TEST(RdbPayload, FooterIsChecked) {
  std::string p;
  ASSERT_TRUE(CreateDumpPayload(ValueType::kString, "v", EncodeLimits(), &p));
  ValueType t;
  std::string rec;
  ASSERT_EQ(DecodeDumpPayload(p, &t, &rec), PayloadStatus::kOk);
  EXPECT_EQ(rec, "v");
  std::string bad = p;
  bad.back() ^= 1;
  EXPECT_EQ(DecodeDumpPayload(bad, &t, &rec), PayloadStatus::kBadVersionOrChecksum);
  EXPECT_EQ(DecodeDumpPayload(p.substr(0, 9), &t, &rec), PayloadStatus::kBadVersionOrChecksum);
}

// Random damage to valid objects: decoding must fail or produce a record that parses as its
// type; it must never read out of bounds or crash (the ASan build runs this too).
TEST(RdbObject, FuzzedObjectsNeverCrash) {
  std::mt19937_64 rng(12345);
  size_t decoded = 0, runs = 0;
  for (const Value& v : SampleValues()) {
    std::string obj;
    ASSERT_TRUE(EncodeObject(v.type, v.record, EncodeLimits(), &obj));
    for (int round = 0; round < 600; ++round, ++runs) {
      std::string m = obj;
      const int edits = 1 + rng() % 4;
      for (int e = 0; e < edits && !m.empty(); ++e) {
        const size_t at = rng() % m.size();
        switch (rng() % 4) {
          case 0:
            m[at] = static_cast<char>(rng());
            break;
          case 1:
            m[at] ^= static_cast<char>(1 << (rng() % 8));
            break;
          case 2:
            m.resize(at);
            break;
          default:
            m.insert(at, 1, static_cast<char>(rng()));
        }
      }
      StringSource src(m);
      ValueType t;
      std::string rec;
      if (!DecodeObject(src, &t, &rec)) continue;
      ++decoded;
      std::string again;
      EXPECT_TRUE(EncodeObject(t, rec, EncodeLimits(), &again));
    }
  }
  EXPECT_GT(runs, 6000u);
  EXPECT_LT(decoded, runs);
}

}  // namespace
}  // namespace lavik::rdb
