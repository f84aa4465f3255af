#include "rdb/file_format.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/crc64.h"
#include "rdb/codec.h"
#include "rdb/object.h"
#include "storage/collection.h"

namespace lavik::rdb {
namespace {

std::string Object(ValueType type, std::string_view record) {
  std::string out;
  EXPECT_TRUE(EncodeObject(type, record, EncodeLimits{}, &out));
  return out;
}

// A file with aux fields, a function, two databases, a TTL and a hash.
std::string SampleFile() {
  FileWriter w;
  w.Aux("redis-ver", "7.0.15");
  w.Aux("redis-bits", "64");
  w.Function("#!lua name=lib\nredis.register_function('f', function() return 1 end)");
  w.SelectDb(0, 2, 1);
  EXPECT_TRUE(w.Key("plain", 0, Object(ValueType::kString, "value")));
  EXPECT_TRUE(w.Key("ttl", 1893456000000, Object(ValueType::kString, "12345")));
  w.SelectDb(3, 1, 0);
  std::vector<CollectionChange> c = {{"f1", "v1", false}, {"f2", "v2", false}};
  EXPECT_TRUE(w.Key("h", 0, Object(ValueType::kHash, EncodeCollection(std::move(c), true))));
  w.Finish();
  return w.Take();
}

struct Read {
  std::vector<FileReader::Entry> keys;
  std::vector<std::string> functions;
  FileReader::Item last = FileReader::Item::kError;
  std::string error;
};

Read ReadAll(std::string_view bytes, uint64_t max_db = 16) {
  StringSource src(bytes);
  FileReader r(src, max_db);
  Read out;
  if (!r.ReadHeader()) {
    out.error = r.error();
    return out;
  }
  for (;;) {
    FileReader::Entry e;
    out.last = r.Next(&e);
    if (out.last == FileReader::Item::kKey) {
      out.keys.push_back(e);
    } else if (out.last == FileReader::Item::kFunction) {
      out.functions.push_back(e.code);
    } else {
      out.error = r.error();
      return out;
    }
  }
}

TEST(RdbFileFormat, HeaderAndTrailer) {
  FileWriter w;
  w.Finish();
  const std::string f = w.Take();
  ASSERT_EQ(f.size(), 9u + 1 + 8);
  EXPECT_EQ(f.substr(0, 9), "REDIS0010");
  EXPECT_EQ(static_cast<uint8_t>(f[9]), kOpEof);
  uint64_t crc = 0;
  for (int i = 7; i >= 0; --i) crc = (crc << 8) | static_cast<uint8_t>(f[10 + i]);
  EXPECT_EQ(crc, Crc64(0, f.data(), 10));
}

TEST(RdbFileFormat, AuxFieldsAreKeptInOrder) {
  FileWriter w;
  w.Aux("redis-ver", "7.0.15");
  w.Aux("repl-stream-db", "3");  // an integer: written int-encoded, read back as text
  w.Aux("repl-id", std::string(40, 'a'));
  w.Aux("repl-offset", "123456789");
  w.Finish();
  const std::string bytes = w.Take();
  StringSource src(bytes);
  FileReader r(src, 16);
  ASSERT_TRUE(r.ReadHeader());
  FileReader::Entry e;
  ASSERT_EQ(r.Next(&e), FileReader::Item::kEof) << r.error();
  const std::vector<std::pair<std::string, std::string>> want = {{"redis-ver", "7.0.15"},
                                                                 {"repl-stream-db", "3"},
                                                                 {"repl-id", std::string(40, 'a')},
                                                                 {"repl-offset", "123456789"}};
  EXPECT_EQ(r.aux(), want);
}

TEST(RdbFileFormat, TakeInPiecesKeepsOneChecksum) {
  FileWriter a, b;
  std::string pieces;
  a.Aux("x", "y");
  pieces += a.Take();
  a.SelectDb(0, 1, 0);
  a.Key("k", 0, Object(ValueType::kString, "v"));
  pieces += a.Take();
  a.Finish();
  pieces += a.Take();
  b.Aux("x", "y");
  b.SelectDb(0, 1, 0);
  b.Key("k", 0, Object(ValueType::kString, "v"));
  b.Finish();
  EXPECT_EQ(pieces, b.Take());
}

TEST(RdbFileFormat, RoundTrip) {
  Read r = ReadAll(SampleFile());
  ASSERT_EQ(r.last, FileReader::Item::kEof) << r.error;
  ASSERT_EQ(r.functions.size(), 1u);
  EXPECT_EQ(r.functions[0].substr(0, 13), "#!lua name=li");
  ASSERT_EQ(r.keys.size(), 3u);
  EXPECT_EQ(r.keys[0].key, "plain");
  EXPECT_EQ(r.keys[0].db, 0u);
  EXPECT_EQ(r.keys[0].record, "value");
  EXPECT_EQ(r.keys[0].expire_ms, 0);
  EXPECT_EQ(r.keys[1].key, "ttl");
  EXPECT_EQ(r.keys[1].record, "12345");  // int-encoded in the file, text again
  EXPECT_EQ(r.keys[1].expire_ms, 1893456000000);
  EXPECT_EQ(r.keys[2].key, "h");
  EXPECT_EQ(r.keys[2].db, 3u);
  EXPECT_EQ(r.keys[2].type, ValueType::kHash);
}

TEST(RdbFileFormat, EveryTruncationIsAnErrorWithItsOffset) {
  const std::string f = SampleFile();
  for (size_t n = 0; n < f.size(); ++n) {
    Read r = ReadAll(std::string_view(f).substr(0, n));
    ASSERT_NE(r.last, FileReader::Item::kEof) << n;
    EXPECT_NE(r.error.find("at offset "), std::string::npos) << n << ": " << r.error;
  }
}

TEST(RdbFileFormat, EveryFlippedByteIsCaught) {
  const std::string f = SampleFile();
  for (size_t i = 9; i < f.size(); ++i) {
    std::string bad = f;
    bad[i] = static_cast<char>(bad[i] ^ 0x20);
    Read r = ReadAll(bad);
    EXPECT_NE(r.last, FileReader::Item::kEof) << "byte " << i;
  }
}

TEST(RdbFileFormat, ChecksumMismatchNamesTheTrailerOffset) {
  std::string f = SampleFile();
  f[f.size() - 1] ^= 1;
  Read r = ReadAll(f);
  EXPECT_EQ(r.last, FileReader::Item::kError);
  EXPECT_NE(r.error.find("Wrong RDB checksum"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("at offset " + std::to_string(f.size() - 8)), std::string::npos)
      << r.error;
}

TEST(RdbFileFormat, ZeroChecksumMeansNoneAsInRedis) {
  std::string f = SampleFile();
  for (size_t i = f.size() - 8; i < f.size(); ++i) f[i] = 0;
  EXPECT_EQ(ReadAll(f).last, FileReader::Item::kEof);
}

TEST(RdbFileFormat, DatabaseOutOfRange) {
  Read r = ReadAll(SampleFile(), 2);  // the file selects db 3
  EXPECT_EQ(r.last, FileReader::Item::kError);
  EXPECT_NE(r.error.find("selects database 3"), std::string::npos) << r.error;
}

TEST(RdbFileFormat, BadHeader) {
  EXPECT_NE(ReadAll("REDIX0010").error.find("Wrong signature"), std::string::npos);
  EXPECT_NE(ReadAll("REDIS0011\xff").error.find("version 11"), std::string::npos);
}

TEST(RdbFileFormat, SecondsExpireAndIdleFreq) {
  std::string f = "REDIS0009";
  f.push_back(static_cast<char>(kOpExpireTime));
  f.append("\x10\x00\x00\x00", 4);  // 16 s
  f.push_back(static_cast<char>(kOpIdle));
  f.push_back(5);
  f.push_back(static_cast<char>(kOpFreq));
  f.push_back(7);
  f.push_back(0);  // string
  PutString("k", &f);
  PutString("v", &f);
  f.push_back(static_cast<char>(kOpEof));
  const uint64_t crc = Crc64(0, f.data(), f.size());
  PutMillis(static_cast<int64_t>(crc), &f);
  Read r = ReadAll(f);
  ASSERT_EQ(r.last, FileReader::Item::kEof) << r.error;
  ASSERT_EQ(r.keys.size(), 1u);
  EXPECT_EQ(r.keys[0].expire_ms, 16000);
}

}  // namespace
}  // namespace lavik::rdb
