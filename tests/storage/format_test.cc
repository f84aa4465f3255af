#include "storage/format.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "base/crc32c.h"

namespace lavik {
namespace {

// ---- Superblock -------------------------------------------------------------

Superblock SampleSuperblock(uint64_t generation) {
  Superblock sb;
  sb.segment_size = kDefaultSegmentSize;
  sb.data_offset = kDefaultDataOffset;
  sb.segment_count = 1000;
  sb.max_segments = 4096;
  sb.generation = generation;
  sb.created_ms = 1'700'000'000'123;
  sb.flags = kSuperblockClean;
  sb.checkpoint_segment = 17;
  sb.checkpoint_seq = 0x1122334455667788;
  sb.next_segment_seq = 0x0102030405060708;
  sb.grown_by_lavik = 1;
  return sb;
}

std::vector<char> EncodedSuperblock(const Superblock& sb) {
  std::vector<char> block(kBlockSize, '\x5A');  // junk the encoder must overwrite
  EncodeSuperblock(sb, block.data());
  return block;
}

TEST(SuperblockTest, RoundTrip) {
  Superblock sb = SampleSuperblock(42);
  std::vector<char> block = EncodedSuperblock(sb);
  Superblock got;
  ASSERT_EQ(DecodeSuperblock(block.data(), &got), SuperblockStatus::kOk);
  EXPECT_EQ(got, sb);
  EXPECT_TRUE(got.clean());
}

TEST(SuperblockTest, ByteLayoutMatchesDoc) {
  std::vector<char> block = EncodedSuperblock(SampleSuperblock(42));
  const char* b = block.data();
  EXPECT_EQ(std::string_view(b, 8), "LAVIKDAT");
  EXPECT_EQ(DecodeFixed32(b + 8), 1u);
  EXPECT_EQ(DecodeFixed32(b + 12), 4096u);
  EXPECT_EQ(DecodeFixed64(b + 16), kDefaultSegmentSize);
  EXPECT_EQ(DecodeFixed64(b + 24), kDefaultDataOffset);
  EXPECT_EQ(DecodeFixed64(b + 32), 1000u);
  EXPECT_EQ(DecodeFixed64(b + 40), 4096u);
  EXPECT_EQ(DecodeFixed64(b + 48), 42u);
  EXPECT_EQ(DecodeFixed64(b + 56), 1'700'000'000'123u);
  EXPECT_EQ(DecodeFixed32(b + 64), 1u);
  EXPECT_EQ(DecodeFixed32(b + 68), 17u);
  EXPECT_EQ(DecodeFixed64(b + 72), 0x1122334455667788u);
  EXPECT_EQ(DecodeFixed64(b + 80), 0x0102030405060708u);
  EXPECT_EQ(DecodeFixed32(b + 88), 1u);
  EXPECT_EQ(DecodeFixed64(b + 92), 0u);  // flush_seq
  EXPECT_EQ(DecodeFixed32(b + 100), Crc32c(b, 100));
  EXPECT_EQ(static_cast<uint8_t>(b[16]), 0x00);  // little-endian 8 MiB: 00 00 80 00 ...
  EXPECT_EQ(static_cast<uint8_t>(b[18]), 0x80);
  for (size_t i = kSuperblockSize; i < kBlockSize; ++i) ASSERT_EQ(b[i], 0) << i;
}

TEST(SuperblockTest, DecodeStatuses) {
  Superblock got;
  std::vector<char> zero(kBlockSize, 0);
  EXPECT_EQ(DecodeSuperblock(zero.data(), &got), SuperblockStatus::kZero);

  // A stray byte past the used area makes the block not-zero, hence foreign.
  zero[4000] = 1;
  EXPECT_EQ(DecodeSuperblock(zero.data(), &got), SuperblockStatus::kBadMagic);

  std::vector<char> foreign = EncodedSuperblock(SampleSuperblock(1));
  std::memcpy(foreign.data(), "SQLite f", 8);
  EXPECT_EQ(DecodeSuperblock(foreign.data(), &got), SuperblockStatus::kBadMagic);

  Superblock v2 = SampleSuperblock(1);
  v2.format_version = 2;
  std::vector<char> other = EncodedSuperblock(v2);
  EXPECT_EQ(DecodeSuperblock(other.data(), &got), SuperblockStatus::kBadVersion);

  std::vector<char> torn = EncodedSuperblock(SampleSuperblock(1));
  torn[50] ^= 4;
  EXPECT_EQ(DecodeSuperblock(torn.data(), &got), SuperblockStatus::kBadCrc);

  // Padding past the databases extension is not covered: a future field there is tolerated.
  std::vector<char> tail = EncodedSuperblock(SampleSuperblock(1));
  tail[300] = 9;
  EXPECT_EQ(DecodeSuperblock(tail.data(), &got), SuperblockStatus::kOk);
  // A non-zero extension without its crc is damage.
  tail[200] = 9;
  EXPECT_EQ(DecodeSuperblock(tail.data(), &got), SuperblockStatus::kBadCrc);
}

TEST(SuperblockTest, DatabasesExtensionRoundTrips) {
  Superblock sb = SampleSuperblock(3);
  sb.db_flush_seq[5] = 77;
  std::swap(sb.db_map[0], sb.db_map[2]);
  std::vector<char> block = EncodedSuperblock(sb);
  EXPECT_EQ(DecodeFixed64(block.data() + 128 + 8 * 5), 77u);
  EXPECT_EQ(static_cast<uint8_t>(block[256]), 2);
  EXPECT_EQ(DecodeFixed32(block.data() + 272), Crc32c(block.data() + 128, 144));
  Superblock got;
  ASSERT_EQ(DecodeSuperblock(block.data(), &got), SuperblockStatus::kOk);
  EXPECT_EQ(got, sb);
  // The map must be a permutation: two logical databases naming one physical one is refused.
  std::vector<char> bad = block;
  bad[257] = 2;
  EncodeFixed32(bad.data() + 272, Crc32c(bad.data() + 128, 144));
  EXPECT_EQ(DecodeSuperblock(bad.data(), &got), SuperblockStatus::kBadCrc);
  // A default superblock leaves the extension zero and decodes to the identity map.
  std::vector<char> plain = EncodedSuperblock(SampleSuperblock(3));
  ASSERT_EQ(DecodeSuperblock(plain.data(), &got), SuperblockStatus::kOk);
  for (size_t d = 0; d < kMaxDatabases; ++d) EXPECT_EQ(got.db_map[d], d);
}

TEST(SuperblockTest, EveryBitFlipIsDetected) {
  std::vector<char> block = EncodedSuperblock(SampleSuperblock(7));
  for (size_t bit = 0; bit < kSuperblockSize * 8; ++bit) {
    block[bit / 8] ^= static_cast<char>(1 << (bit % 8));
    Superblock got;
    EXPECT_NE(DecodeSuperblock(block.data(), &got), SuperblockStatus::kOk) << bit;
    block[bit / 8] ^= static_cast<char>(1 << (bit % 8));
  }
}

struct Picked {
  SuperblockStatus status;
  int which;
  Superblock sb;
};

Picked Pick(const std::vector<char>& a, const std::vector<char>& b) {
  Picked p;
  p.which = 99;
  p.status = PickSuperblock(a.data(), b.data(), &p.sb, &p.which);
  return p;
}

TEST(SuperblockTest, PickHighestGeneration) {
  std::vector<char> g5 = EncodedSuperblock(SampleSuperblock(5));
  std::vector<char> g6 = EncodedSuperblock(SampleSuperblock(6));
  Picked p = Pick(g5, g6);
  ASSERT_EQ(p.status, SuperblockStatus::kOk);
  EXPECT_EQ(p.which, 1);
  EXPECT_EQ(p.sb.generation, 6u);
  p = Pick(g6, g5);
  ASSERT_EQ(p.status, SuperblockStatus::kOk);
  EXPECT_EQ(p.which, 0);
  EXPECT_EQ(p.sb.generation, 6u);
  p = Pick(g5, g5);
  EXPECT_EQ(p.which, 0);  // a tie picks A
}

TEST(SuperblockTest, PickSurvivesOneTornCopy) {
  std::vector<char> g5 = EncodedSuperblock(SampleSuperblock(5));
  std::vector<char> g6 = EncodedSuperblock(SampleSuperblock(6));
  g6[60] ^= 1;  // the newer write tore
  Picked p = Pick(g5, g6);
  ASSERT_EQ(p.status, SuperblockStatus::kOk);
  EXPECT_EQ(p.which, 0);
  EXPECT_EQ(p.sb.generation, 5u);
  p = Pick(g6, g5);
  ASSERT_EQ(p.status, SuperblockStatus::kOk);
  EXPECT_EQ(p.which, 1);

  // The very first write of a fresh file: the other copy is still zero.
  std::vector<char> zero(kBlockSize, 0);
  p = Pick(zero, g5);
  ASSERT_EQ(p.status, SuperblockStatus::kOk);
  EXPECT_EQ(p.which, 1);
}

TEST(SuperblockTest, PickFailures) {
  std::vector<char> zero(kBlockSize, 0);
  std::vector<char> torn = EncodedSuperblock(SampleSuperblock(3));
  torn[70] ^= 0x10;
  std::vector<char> foreign(kBlockSize, 'x');
  Superblock v2sb = SampleSuperblock(9);
  v2sb.format_version = 2;
  std::vector<char> v2 = EncodedSuperblock(v2sb);

  Picked p = Pick(zero, zero);
  EXPECT_EQ(p.status, SuperblockStatus::kZero);
  EXPECT_EQ(p.which, -1);
  EXPECT_EQ(Pick(foreign, zero).status, SuperblockStatus::kBadMagic);
  EXPECT_EQ(Pick(zero, foreign).status, SuperblockStatus::kBadMagic);
  EXPECT_EQ(Pick(torn, foreign).status, SuperblockStatus::kBadMagic);
  EXPECT_EQ(Pick(v2, foreign).status, SuperblockStatus::kBadMagic);
  EXPECT_EQ(Pick(v2, v2).status, SuperblockStatus::kBadVersion);
  EXPECT_EQ(Pick(torn, v2).status, SuperblockStatus::kBadVersion);
  EXPECT_EQ(Pick(v2, zero).status, SuperblockStatus::kBadVersion);
  EXPECT_EQ(Pick(torn, torn).status, SuperblockStatus::kBadCrc);
  p = Pick(zero, torn);
  EXPECT_EQ(p.status, SuperblockStatus::kBadCrc);
  EXPECT_EQ(p.which, -1);

  // One valid copy wins whatever the other holds.
  std::vector<char> good = EncodedSuperblock(SampleSuperblock(1));
  EXPECT_EQ(Pick(foreign, good).status, SuperblockStatus::kOk);
  EXPECT_EQ(Pick(good, v2).status, SuperblockStatus::kOk);
  EXPECT_STREQ(SuperblockStatusName(SuperblockStatus::kBadVersion), "unsupported format version");
}

TEST(SuperblockTest, GeometryChecks) {
  Superblock sb = SampleSuperblock(1);
  EXPECT_EQ(SuperblockGeometryError(sb), nullptr);
  auto err = [](auto mutate) {
    Superblock s = SampleSuperblock(1);
    mutate(s);
    return SuperblockGeometryError(s) != nullptr;
  };
  EXPECT_TRUE(err([](Superblock& s) { s.block_size = 512; }));
  EXPECT_TRUE(err([](Superblock& s) { s.segment_size = 0; }));
  EXPECT_TRUE(err([](Superblock& s) { s.segment_size = 4096 * 3 + 1; }));
  EXPECT_TRUE(err([](Superblock& s) { s.data_offset = 4096; }));
  EXPECT_TRUE(err([](Superblock& s) { s.data_offset = 8192 + 100; }));
  EXPECT_TRUE(err([](Superblock& s) { s.segment_count = 0xFFFFFFFF; }));
  EXPECT_TRUE(err([](Superblock& s) {
    s.segment_size = uint64_t{1} << 40;
    s.segment_count = uint64_t{1} << 25;
  }));
  EXPECT_TRUE(err([](Superblock& s) { s.checkpoint_segment = 1000; }));
  EXPECT_FALSE(err([](Superblock& s) {
    s.checkpoint_segment = 1000;  // ignored when not clean
    s.flags = 0;
  }));
  EXPECT_TRUE(err([](Superblock& s) { s.grown_by_lavik = 2; }));
}

// ---- Segment header ---------------------------------------------------------

TEST(SegmentHeaderTest, RoundTripEveryKind) {
  for (SegmentKind kind :
       {SegmentKind::kLog, SegmentKind::kLarge, SegmentKind::kCheckpoint, SegmentKind::kFree}) {
    SegmentHeader h;
    h.seq = 0xABCDEF0123456789;
    h.kind = kind;
    h.shard = 3;
    h.run_length = 5;
    h.next = 12;
    h.payload_bytes = 8 * 1024 * 1024 - 4096;
    char buf[kSegmentHeaderSize];
    EncodeSegmentHeader(h, buf);
    SegmentHeader got;
    ASSERT_TRUE(DecodeSegmentHeader(buf, &got));
    EXPECT_EQ(got, h);
    EXPECT_EQ(std::string_view(buf, 8), "LVKSEG01");
    EXPECT_EQ(DecodeFixed64(buf + 8), h.seq);
    EXPECT_EQ(DecodeFixed32(buf + 16), static_cast<uint32_t>(kind));
    EXPECT_EQ(DecodeFixed32(buf + 28), 12u);
    EXPECT_EQ(DecodeFixed64(buf + 32), h.payload_bytes);
    EXPECT_EQ(DecodeFixed32(buf + 40), Crc32c(buf, 40));
  }
}

TEST(SegmentHeaderTest, CorruptionIsRejected) {
  SegmentHeader h;
  h.seq = 99;
  h.kind = SegmentKind::kLog;
  char buf[kSegmentHeaderSize];
  EncodeSegmentHeader(h, buf);
  SegmentHeader got;
  got.seq = 12345;
  for (size_t bit = 0; bit < kSegmentHeaderSize * 8; ++bit) {
    buf[bit / 8] ^= static_cast<char>(1 << (bit % 8));
    EXPECT_FALSE(DecodeSegmentHeader(buf, &got)) << bit;
    buf[bit / 8] ^= static_cast<char>(1 << (bit % 8));
  }
  EXPECT_EQ(got.seq, 12345u);  // untouched on failure

  char zero[kSegmentHeaderSize] = {};
  EXPECT_FALSE(DecodeSegmentHeader(zero, &got));

  // A checksummed header with an unknown kind is treated as free too.
  for (uint32_t kind : {0u, 5u, 0xFFFFFFFFu}) {
    EncodeSegmentHeader(h, buf);
    EncodeFixed32(buf + 16, kind);
    EncodeFixed32(buf + 40, Crc32c(buf, 40));
    EXPECT_FALSE(DecodeSegmentHeader(buf, &got)) << kind;
  }
}

// ---- Record -----------------------------------------------------------------

RecordHeader SampleHeader(uint64_t seq) {
  RecordHeader h;
  h.type = static_cast<uint8_t>(RecordType::kHash);
  h.flags = kRecordRelocated;
  h.slot = 12539;
  h.seq = seq;
  h.expire_ms = 1'800'000'000'000;
  return h;
}

std::vector<char> Encoded(const RecordHeader& h, std::string_view key, std::string_view value,
                          uint64_t segment_seq) {
  std::vector<char> buf(RecordLength(key.size(), value.size()), '\x77');
  size_t n = EncodeRecord(h, key, value, segment_seq, buf.data());
  EXPECT_EQ(n, buf.size());
  return buf;
}

TEST(RecordTest, Length) {
  EXPECT_EQ(RecordLength(0, 0), 32u);
  EXPECT_EQ(RecordLength(1, 0), 40u);
  EXPECT_EQ(RecordLength(3, 5), 40u);
  EXPECT_EQ(RecordLength(3, 6), 48u);
  EXPECT_EQ(RecordLength(0, 8), 40u);
}

TEST(RecordTest, RoundTripAndLayout) {
  RecordHeader h = SampleHeader(77);
  std::vector<char> buf = Encoded(h, "user:1", "hello", 5);
  ASSERT_EQ(buf.size(), 48u);
  const char* b = buf.data();
  EXPECT_EQ(DecodeFixed32(b + 4), 5u);
  EXPECT_EQ(DecodeFixed32(b + 8), 6u);
  EXPECT_EQ(static_cast<uint8_t>(b[12]), 4);
  EXPECT_EQ(static_cast<uint8_t>(b[13]), kRecordRelocated);
  EXPECT_EQ(DecodeFixed16(b + 14), 12539);
  EXPECT_EQ(DecodeFixed64(b + 16), 77u);
  EXPECT_EQ(DecodeFixed64(b + 24), 1'800'000'000'000u);
  EXPECT_EQ(std::string_view(b + 32, 11), "user:1hello");
  for (size_t i = 43; i < 48; ++i) EXPECT_EQ(b[i], 0) << i;
  // crc = crc32c(seq as 8 LE bytes ++ bytes [4, 43)).
  std::string crc_input(8, '\0');
  EncodeFixed64(crc_input.data(), 5);
  crc_input.append(b + 4, 39);
  EXPECT_EQ(DecodeFixed32(b), Crc32c(crc_input.data(), crc_input.size()));

  RecordView v;
  ASSERT_EQ(DecodeRecord(b, buf.size(), 5, &v), RecordStatus::kOk);
  h.key_len = 6;
  h.value_len = 5;
  EXPECT_EQ(v.header, h);
  EXPECT_EQ(v.key, "user:1");
  EXPECT_EQ(v.value, "hello");
  EXPECT_EQ(v.key.data(), b + 32);  // views into the buffer, no copy
  EXPECT_EQ(v.length, 48u);
}

TEST(RecordTest, EmptyKeyAndValue) {
  RecordHeader h = SampleHeader(1);
  std::vector<char> buf = Encoded(h, "", "", 9);
  ASSERT_EQ(buf.size(), 32u);
  RecordView v;
  ASSERT_EQ(DecodeRecord(buf.data(), buf.size(), 9, &v), RecordStatus::kOk);
  EXPECT_TRUE(v.key.empty());
  EXPECT_TRUE(v.value.empty());
  EXPECT_EQ(v.length, 32u);
  // Default-constructed views may have a null data(); encoding must not care.
  std::vector<char> buf2 = Encoded(h, std::string_view(), std::string_view(), 9);
  EXPECT_EQ(buf2, buf);
}

TEST(RecordTest, BigValue) {
  std::string key = "big";
  std::string value(3 * 1024 * 1024 + 5, '\0');
  std::mt19937 rng(1);
  for (char& c : value) c = static_cast<char>(rng());
  RecordHeader h = SampleHeader(1000);
  h.expire_ms = 0;
  std::vector<char> buf = Encoded(h, key, value, 123456789);
  EXPECT_EQ(buf.size(), RecordLength(3, value.size()));
  RecordView v;
  ASSERT_EQ(DecodeRecord(buf.data(), buf.size(), 123456789, &v), RecordStatus::kOk);
  EXPECT_EQ(v.key, key);
  EXPECT_TRUE(v.value == value);
  buf[2 * 1024 * 1024] ^= 0x40;
  EXPECT_EQ(DecodeRecord(buf.data(), buf.size(), 123456789, &v), RecordStatus::kBadCrc);
}

TEST(RecordTest, Tombstone) {
  RecordHeader h = SampleHeader(50);
  h.flags = kRecordTombstone;
  h.expire_ms = 0;
  auto value = EncodeTombstone(0x0000BEEF00001234);
  std::vector<char> buf = Encoded(h, "gone", std::string_view(value.data(), value.size()), 4);
  RecordView v;
  ASSERT_EQ(DecodeRecord(buf.data(), buf.size(), 4, &v), RecordStatus::kOk);
  EXPECT_TRUE(v.header.tombstone());
  uint64_t origin = 0;
  ASSERT_TRUE(DecodeTombstoneOrigin(v.value, &origin));
  EXPECT_EQ(origin, 0x0000BEEF00001234u);
  EXPECT_FALSE(DecodeTombstoneOrigin("short", &origin));

  // A tombstone without its 8-byte origin is not a valid record.
  std::vector<char> bad = Encoded(h, "gone", "1234567", 4);
  EXPECT_EQ(DecodeRecord(bad.data(), bad.size(), 4, &v), RecordStatus::kBadHeader);
}

TEST(RecordTest, SealInPlaceMatchesEncode) {
  RecordHeader h = SampleHeader(8);
  std::vector<char> want = Encoded(h, "key", "some value", 31);
  std::vector<char> buf(want.size(), '\x33');
  std::memcpy(buf.data() + 32, "keysome value", 13);
  h.key_len = 3;
  h.value_len = 10;
  EXPECT_EQ(SealRecord(h, 31, buf.data()), want.size());
  EXPECT_EQ(buf, want);
}

TEST(RecordTest, WrongSegmentSeqFailsCrc) {
  std::vector<char> buf = Encoded(SampleHeader(3), "k", "v", 1000);
  RecordView v;
  EXPECT_EQ(DecodeRecord(buf.data(), buf.size(), 1001, &v), RecordStatus::kBadCrc);
  EXPECT_EQ(DecodeRecord(buf.data(), buf.size(), 0, &v), RecordStatus::kBadCrc);
}

TEST(RecordTest, EveryBitFlipIsDetected) {
  // Lengths chosen to cover no padding, 1 byte and 7 bytes of padding.
  const std::pair<std::string, std::string> cases[] = {
      {"", ""}, {"k", ""}, {"key", "value"}, {"abc", "defgh"}, {"0123456789", "x"}};
  for (const auto& [key, value] : cases) {
    std::vector<char> buf = Encoded(SampleHeader(11), key, value, 42);
    for (size_t bit = 0; bit < buf.size() * 8; ++bit) {
      buf[bit / 8] ^= static_cast<char>(1 << (bit % 8));
      RecordView v;
      EXPECT_NE(DecodeRecord(buf.data(), buf.size(), 42, &v), RecordStatus::kOk)
          << key << "/" << value << " bit " << bit;
      buf[bit / 8] ^= static_cast<char>(1 << (bit % 8));
    }
  }
}

TEST(RecordTest, EveryTruncationIsDetected) {
  std::vector<char> full = Encoded(SampleHeader(11), "some-key", "a value of some length", 42);
  for (size_t n = 0; n < full.size(); ++n) {
    // An exact-size heap copy, so ASan catches any read past `n`.
    std::vector<char> cut(full.begin(), full.begin() + n);
    RecordView v;
    EXPECT_EQ(DecodeRecord(cut.data(), n, 42, &v), RecordStatus::kTruncated) << n;
  }
}

TEST(RecordTest, BadHeaders) {
  RecordView v;
  std::vector<char> zero(64, 0);
  EXPECT_EQ(DecodeRecord(zero.data(), zero.size(), 7, &v), RecordStatus::kBadHeader);

  std::vector<char> buf = Encoded(SampleHeader(1), "k", "v", 7);
  std::vector<char> huge = buf;
  EncodeFixed32(huge.data() + 4, 0xFFFFFFFF);  // value_len
  EncodeFixed32(huge.data() + 8, 0xFFFFFFFF);  // key_len
  EXPECT_EQ(DecodeRecord(huge.data(), huge.size(), 7, &v), RecordStatus::kBadHeader);
  EncodeFixed32(huge.data() + 4, uint32_t{1} << 30);
  EncodeFixed32(huge.data() + 8, 1);
  EXPECT_EQ(DecodeRecord(huge.data(), huge.size(), 7, &v), RecordStatus::kBadHeader);
  EncodeFixed32(huge.data() + 8, 0);  // exactly 1 GiB: plausible, just not here
  EXPECT_EQ(DecodeRecord(huge.data(), huge.size(), 7, &v), RecordStatus::kTruncated);

  // Properly checksummed but outside the version-1 vocabulary.
  RecordHeader h = SampleHeader(1);
  h.type = 7;  // past kChunk (6), the last known type
  std::vector<char> bad_type = Encoded(h, "k", "v", 7);
  EXPECT_EQ(DecodeRecord(bad_type.data(), bad_type.size(), 7, &v), RecordStatus::kBadHeader);
  h = SampleHeader(1);
  h.flags = 0x80;
  std::vector<char> bad_flags = Encoded(h, "k", "v", 7);
  EXPECT_EQ(DecodeRecord(bad_flags.data(), bad_flags.size(), 7, &v), RecordStatus::kBadHeader);
  EXPECT_STREQ(RecordStatusName(RecordStatus::kBadHeader), "bad header");
}

TEST(RecordTest, GarbageNeverCrashes) {
  std::mt19937_64 rng(99);
  int ok = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    size_t n = rng() % 200;
    std::vector<char> buf(n);
    for (char& c : buf) c = static_cast<char>(rng());
    if (n >= 12 && iter % 2 == 0) {
      // Plausible lengths, so decoding gets as far as the crc and padding.
      EncodeFixed32(buf.data() + 4, static_cast<uint32_t>(rng() % 100));
      EncodeFixed32(buf.data() + 8, static_cast<uint32_t>(rng() % 100));
    }
    RecordView v;
    if (DecodeRecord(buf.data(), n, rng(), &v) == RecordStatus::kOk) ++ok;
  }
  EXPECT_EQ(ok, 0);
}

// ---- Scanner ----------------------------------------------------------------

struct Expected {
  std::string key, value;
  RecordHeader header;
};

class ScannerTest : public ::testing::Test {
 protected:
  static constexpr uint64_t kSeq = 0x5E65;

  // Appends 1000 records with varied sizes to buf_ and remembers them.
  void SetUp() override {
    std::mt19937 rng(5);
    for (int i = 0; i < 1000; ++i) {
      Expected e;
      e.key = "key:" + std::to_string(i);
      e.value.assign(rng() % 120, static_cast<char>('a' + i % 26));
      e.header = SampleHeader(i + 1);
      e.header.slot = static_cast<uint16_t>(i);
      if (i % 10 == 3) {
        e.header.flags = kRecordTombstone;
        auto t = EncodeTombstone(i);
        e.value.assign(t.data(), t.size());
      }
      Append(e.header, e.key, e.value, kSeq);
      e.header.key_len = static_cast<uint32_t>(e.key.size());
      e.header.value_len = static_cast<uint32_t>(e.value.size());
      want_.push_back(std::move(e));
    }
    valid_end_ = buf_.size();
  }

  void Append(const RecordHeader& h, std::string_view k, std::string_view v, uint64_t seq) {
    size_t at = buf_.size();
    buf_.resize(at + RecordLength(k.size(), v.size()));
    EncodeRecord(h, k, v, seq, buf_.data() + at);
  }

  // Scans buf_ (as an exact-size allocation), checks every record against
  // want_, and returns the scanner's stop status.
  RecordStatus ScanAll() {
    std::vector<char> data = buf_;
    RecordScanner scan(data.data(), data.size(), kSeq);
    RecordView v;
    size_t i = 0;
    while (scan.Next(&v)) {
      if (i >= want_.size()) {
        ADD_FAILURE() << "record past the valid log at " << scan.end_offset();
        break;
      }
      EXPECT_EQ(v.key, want_[i].key);
      EXPECT_EQ(v.value, want_[i].value);
      EXPECT_EQ(v.header, want_[i].header);
      ++i;
    }
    EXPECT_EQ(i, want_.size());
    EXPECT_EQ(scan.end_offset(), valid_end_);
    EXPECT_FALSE(scan.Next(&v));  // stays stopped
    return scan.stop_status();
  }

  std::vector<char> buf_;
  std::vector<Expected> want_;
  size_t valid_end_ = 0;
};

TEST_F(ScannerTest, EndsExactlyAtBufferEnd) { EXPECT_EQ(ScanAll(), RecordStatus::kOk); }

TEST_F(ScannerTest, StopsAtZeros) {
  buf_.resize(buf_.size() + 8192, 0);
  EXPECT_EQ(ScanAll(), RecordStatus::kBadHeader);
}

TEST_F(ScannerTest, StopsAtTornRecord) {
  // A record whose write stopped halfway: its second half is still zeros.
  std::string value(300, 'v');
  Append(SampleHeader(5000), "torn", value, kSeq);
  std::fill(buf_.begin() + valid_end_ + 170, buf_.end(), 0);
  buf_.resize(buf_.size() + 4096, 0);
  EXPECT_EQ(ScanAll(), RecordStatus::kBadCrc);
}

TEST_F(ScannerTest, StopsAtRecordCutByBufferEnd) {
  Append(SampleHeader(5000), "cut", std::string(300, 'v'), kSeq);
  buf_.resize(buf_.size() - 100);
  EXPECT_EQ(ScanAll(), RecordStatus::kTruncated);
}

TEST_F(ScannerTest, StopsAtShortTail) {
  buf_.resize(buf_.size() + 24, 0);  // less than a header
  EXPECT_EQ(ScanAll(), RecordStatus::kTruncated);
}

TEST_F(ScannerTest, StopsAtRecordsFromPreviousLife) {
  // The segment's previous life left well-formed records behind ours.
  for (int i = 0; i < 50; ++i) {
    Append(SampleHeader(9000 + i), "old:" + std::to_string(i), "stale", kSeq - 1);
  }
  EXPECT_EQ(ScanAll(), RecordStatus::kBadCrc);
}

TEST(RecordScannerTest, EmptyBuffer) {
  RecordScanner scan(nullptr, 0, 1);
  RecordView v;
  EXPECT_FALSE(scan.Next(&v));
  EXPECT_EQ(scan.end_offset(), 0u);
  EXPECT_EQ(scan.stop_status(), RecordStatus::kOk);
}

// ---- Checkpoint -------------------------------------------------------------

TEST(CheckpointTest, HeaderRoundTrip) {
  CheckpointHeader h;
  h.shard_count = 4;
  h.payload_crc = 0xCAFEF00D;
  h.entry_count = 1'000'000;
  h.ttl_count = 1234;
  h.checkpoint_seq = 987654321;
  char buf[kCheckpointHeaderSize];
  std::memset(buf, 0x55, sizeof(buf));
  EncodeCheckpointHeader(h, buf);
  EXPECT_EQ(std::string_view(buf, 8), "LVKCKPT1");
  EXPECT_EQ(DecodeFixed32(buf + 8), 4u);
  EXPECT_EQ(DecodeFixed32(buf + 12), 0xCAFEF00Du);
  EXPECT_EQ(DecodeFixed64(buf + 16), 1'000'000u);
  EXPECT_EQ(DecodeFixed64(buf + 24), 1234u);
  EXPECT_EQ(DecodeFixed64(buf + 32), 987654321u);
  for (size_t i = 40; i < 60; ++i) EXPECT_EQ(buf[i], 0) << i;
  EXPECT_EQ(DecodeFixed32(buf + 60), Crc32c(buf, 60));
  CheckpointHeader got;
  ASSERT_TRUE(DecodeCheckpointHeader(buf, &got));
  EXPECT_EQ(got, h);
  EXPECT_EQ(CheckpointBodyBytes(h), 1'000'000u * 24 + 1234u * 16 + 4u * 8);

  for (size_t bit = 0; bit < kCheckpointHeaderSize * 8; ++bit) {
    buf[bit / 8] ^= static_cast<char>(1 << (bit % 8));
    EXPECT_FALSE(DecodeCheckpointHeader(buf, &got)) << bit;
    buf[bit / 8] ^= static_cast<char>(1 << (bit % 8));
  }
}

TEST(CheckpointTest, HeaderBounds) {
  auto decodes = [](CheckpointHeader h) {
    char buf[kCheckpointHeaderSize];
    EncodeCheckpointHeader(h, buf);
    CheckpointHeader got;
    return DecodeCheckpointHeader(buf, &got);
  };
  CheckpointHeader h;
  h.shard_count = 1;
  EXPECT_TRUE(decodes(h));  // an empty keyspace
  h.shard_count = 0;
  EXPECT_FALSE(decodes(h));
  h.shard_count = kMaxCheckpointShards + 1;
  EXPECT_FALSE(decodes(h));
  h.shard_count = 2;
  h.entry_count = kMaxCheckpointEntries + 1;
  EXPECT_FALSE(decodes(h));
  h.entry_count = 10;
  h.ttl_count = 11;
  EXPECT_FALSE(decodes(h));
}

TEST(CheckpointTest, Entries) {
  CheckpointEntry e{0xFEDCBA9876543210, 0x8000000000000001, 16383};
  char buf[kCheckpointEntrySize];
  std::memset(buf, 0x55, sizeof(buf));
  EncodeCheckpointEntry(e, buf);
  EXPECT_EQ(DecodeFixed64(buf), e.fingerprint);
  EXPECT_EQ(DecodeFixed64(buf + 8), e.location);
  EXPECT_EQ(DecodeFixed16(buf + 16), 16383);
  for (size_t i = 18; i < 24; ++i) EXPECT_EQ(buf[i], 0) << i;
  EXPECT_EQ(DecodeCheckpointEntry(buf), e);

  CheckpointTtlEntry t{0x0123456789ABCDEF, -5};
  char tbuf[kCheckpointTtlEntrySize];
  EncodeCheckpointTtlEntry(t, tbuf);
  EXPECT_EQ(DecodeCheckpointTtlEntry(tbuf), t);
  t.expire_ms = 1'750'000'000'000;
  EncodeCheckpointTtlEntry(t, tbuf);
  EXPECT_EQ(DecodeFixed64(tbuf + 8), 1'750'000'000'000u);
  EXPECT_EQ(DecodeCheckpointTtlEntry(tbuf), t);
}

}  // namespace
}  // namespace lavik
