#include "base/hyperloglog.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace lavik::hll {
namespace {

using namespace std::string_literals;

constexpr uint64_t kDefaultMax = 3000;  // hll-sparse-max-bytes' default

std::string Header(uint8_t encoding, bool stale) {
  std::string h("HYLL", 4);
  h.push_back(static_cast<char>(encoding));
  h.append(10, '\0');
  h.push_back(stale ? '\x80' : '\0');
  return h;
}

std::string Build(int from, int to, uint64_t max_bytes = kDefaultMax) {
  std::string h = NewSparse();
  for (int i = from; i < to; ++i) Add(&h, std::to_string(i), max_bytes);
  return h;
}

std::vector<uint8_t> Registers(std::string_view h) {
  std::vector<uint8_t> regs(kRegisters, 0);
  EXPECT_TRUE(MergeInto(h, regs.data()));
  return regs;
}

uint64_t CountOf(std::string_view h) {
  uint64_t card = 0;
  EXPECT_TRUE(Count(h, &card));
  return card;
}

TEST(HyperLogLogTest, NewSparseIsRedisEmptyHll) {
  std::string h = NewSparse();
  EXPECT_EQ(h, Header(kEncodingSparse, false) + std::string("\x7f\xff", 2));
  EXPECT_TRUE(IsHll(h));
  uint64_t card = 1;
  EXPECT_TRUE(CachedCardinality(h, &card));
  EXPECT_EQ(card, 0u);
  EXPECT_EQ(CountOf(h), 0u);
}

// Bytes and counts below were read from redis-server 7.0.15 after the same PFADDs.
TEST(HyperLogLogTest, SparseBytesMatchRedis) {
  std::string h = NewSparse();
  EXPECT_EQ(Add(&h, "a", kDefaultMax), SetResult::kChanged);
  EXPECT_EQ(Add(&h, "b", kDefaultMax), SetResult::kChanged);
  EXPECT_EQ(Add(&h, "c", kDefaultMax), SetResult::kChanged);
  EXPECT_EQ(Add(&h, "a", kDefaultMax), SetResult::kUnchanged);
  InvalidateCache(&h);
  EXPECT_EQ(h, Header(kEncodingSparse, true) +
                   "`\xf3\x80P\xb1\x84K\xfb\x80"
                   "BZ");
  EXPECT_EQ(CountOf(h), 3u);
}

TEST(HyperLogLogTest, CountsMatchRedis) {
  std::string small = Build(0, 1000);
  EXPECT_EQ(Encoding(small), kEncodingSparse);
  EXPECT_EQ(small.size(), 1923u);
  EXPECT_EQ(CountOf(small), 1001u);
  std::string mid = Build(0, 10000);
  EXPECT_EQ(Encoding(mid), kEncodingDense);
  EXPECT_EQ(mid.size(), kDenseSize);
  EXPECT_EQ(CountOf(mid), 9987u);
  EXPECT_EQ(CountOf(Build(0, 100000)), 99565u);

  std::vector<uint8_t> regs(kRegisters, 0);
  ASSERT_TRUE(MergeInto(small, regs.data()));
  ASSERT_TRUE(MergeInto(mid, regs.data()));
  EXPECT_EQ(CountRegisters(regs.data()), 9987u);  // PFCOUNT n1000 n10000
}

TEST(HyperLogLogTest, PatternLengthStaysInRange) {
  for (int i = 0; i < 20000; ++i) {
    uint32_t index;
    uint8_t v = PatternLength(std::to_string(i), &index);
    EXPECT_GE(v, 1);
    EXPECT_LE(v, 51);
    EXPECT_LT(index, kRegisters);
  }
}

TEST(HyperLogLogTest, MurmurHashReadsWordsLittleEndian) {
  // Every tail length, and a value that depends on the seed and the length.
  std::string data = "0123456789abcdefXYZ";
  std::vector<uint64_t> seen;
  for (size_t n = 0; n <= data.size(); ++n) {
    seen.push_back(MurmurHash64A(std::string_view(data).substr(0, n), 0xadc83b19ULL));
  }
  for (size_t i = 0; i < seen.size(); ++i) {
    for (size_t j = i + 1; j < seen.size(); ++j) EXPECT_NE(seen[i], seen[j]);
  }
  EXPECT_NE(MurmurHash64A("abc", 1), MurmurHash64A("abc", 2));
}

TEST(HyperLogLogTest, DenseRegistersRoundTrip) {
  std::string h = NewSparse();
  ASSERT_TRUE(SparseToDense(&h));
  ASSERT_EQ(h.size(), kDenseSize);
  std::mt19937 rng(7);
  std::vector<uint8_t> want(kRegisters, 0);
  for (uint32_t i = 0; i < kRegisters; ++i) {
    want[i] = static_cast<uint8_t>(rng() % 64);
    if (want[i] != 0) {
      EXPECT_EQ(SetRegister(&h, i, want[i], kDefaultMax), SetResult::kChanged);
    }
  }
  EXPECT_EQ(Registers(h), want);
  EXPECT_EQ(SetRegister(&h, 5, want[5], kDefaultMax), SetResult::kUnchanged);
}

TEST(HyperLogLogTest, SparseAndDenseAgree) {
  std::string sparse = NewSparse();
  std::string dense = NewSparse();
  ASSERT_TRUE(SparseToDense(&dense));
  for (int i = 0; i < 1500; ++i) {
    std::string e = "e" + std::to_string(i);
    EXPECT_EQ(Add(&sparse, e, 1u << 20), Add(&dense, e, 1u << 20));
  }
  ASSERT_EQ(Encoding(sparse), kEncodingSparse);
  EXPECT_EQ(Registers(sparse), Registers(dense));
  EXPECT_EQ(CountOf(sparse), CountOf(dense));
  std::string promoted = sparse;
  ASSERT_TRUE(SparseToDense(&promoted));
  EXPECT_EQ(promoted.substr(kHeaderSize), dense.substr(kHeaderSize));
}

TEST(HyperLogLogTest, PromotesAtSparseMaxBytes) {
  std::string h = NewSparse();
  size_t i = 0;
  while (Encoding(h) == kEncodingSparse) {
    ASSERT_LE(h.size(), 200u);
    Add(&h, std::to_string(i++), 200);
  }
  EXPECT_EQ(h.size(), kDenseSize);
  EXPECT_GT(i, 10u);
  // A register over 32 cannot be sparse at any size limit.
  std::string big = NewSparse();
  EXPECT_EQ(SetRegister(&big, 100, 33, 1u << 20), SetResult::kChanged);
  EXPECT_EQ(Encoding(big), kEncodingDense);
  EXPECT_EQ(Registers(big)[100], 33);
}

TEST(HyperLogLogTest, ApplyMaxRaisesRegisters) {
  std::string a = Build(0, 300);
  std::string b = Build(200, 600);
  std::vector<uint8_t> max(kRegisters, 0);
  ASSERT_TRUE(MergeInto(a, max.data()));
  ASSERT_TRUE(MergeInto(b, max.data()));
  ApplyMax(&a, max.data(), kDefaultMax);
  EXPECT_EQ(Registers(a), max);
  EXPECT_EQ(CountOf(a), CountOf(Build(0, 600)));
}

TEST(HyperLogLogTest, CachedCardinality) {
  std::string h = Build(0, 10);
  InvalidateCache(&h);
  uint64_t card;
  EXPECT_FALSE(CachedCardinality(h, &card));
  SetCachedCardinality(&h, 0x0102030405);
  ASSERT_TRUE(CachedCardinality(h, &card));
  EXPECT_EQ(card, 0x0102030405u);
  EXPECT_EQ(h.substr(8, 8), std::string("\x05\x04\x03\x02\x01\x00\x00\x00", 8));
}

TEST(HyperLogLogTest, IsHllChecksHeader) {
  EXPECT_FALSE(IsHll(""));
  EXPECT_FALSE(IsHll("HYLL"));
  EXPECT_FALSE(IsHll(Header(2, false) + "\x7f\xff"));
  EXPECT_FALSE(IsHll("HYLX" + NewSparse().substr(4)));
  EXPECT_FALSE(IsHll(Header(kEncodingDense, false) + "abc"));  // dense needs 12304 bytes
  EXPECT_TRUE(IsHll(Header(kEncodingSparse, false)));          // no opcodes: corrupt, but an HLL
  EXPECT_TRUE(IsHll(Header(kEncodingDense, false) + std::string(kDenseSize - 16, '\0')));
}

TEST(HyperLogLogTest, CorruptSparsePayloads) {
  const std::string h = Header(kEncodingSparse, true);
  const std::vector<std::string> bad = {
      h,                               // no opcodes
      h + "\x7f",                      // XZERO cut short: 16129 registers
      h + "\x7f\xfe",                  // 16383 registers
      h + "\x7f\xff\x00"s,             // one register too many
      h + "\x7f\xfe\x83",              // VAL run of 4 past the end
      h + "\x40\x00\x7f\xff"s,         // zero runs past the end
      h + std::string(300, '\x3f'),    // 300 * 64 zeros
      h + std::string(20000, '\x80'),  // VALs past the end
  };
  for (const std::string& v : bad) {
    ASSERT_TRUE(IsHll(v));
    uint64_t card;
    EXPECT_FALSE(Count(v, &card)) << v.size();
    std::vector<uint8_t> max(kRegisters, 0);
    EXPECT_FALSE(MergeInto(v, max.data()));
    std::string copy = v;
    EXPECT_FALSE(SparseToDense(&copy));
    EXPECT_TRUE(copy == v);
    // Promotion needs a valid payload, so a value over 32 is refused anywhere.
    copy = v;
    EXPECT_EQ(SetRegister(&copy, kRegisters - 1, 40, kDefaultMax), SetResult::kCorrupt);
    EXPECT_TRUE(copy == v);
  }
}

// Random mutations of real HLLs: every operation terminates, keeps the string an HLL, and
// never touches memory outside it (the ASan build checks the last part).
TEST(HyperLogLogTest, FuzzedPayloadsNeverCrash) {
  std::vector<std::string> seeds = {Build(0, 3), Build(0, 40), Build(0, 400), Build(0, 5000)};
  std::mt19937 rng(12345);
  for (int iter = 0; iter < 4000; ++iter) {
    std::string v = seeds[rng() % seeds.size()];
    const int edits = 1 + rng() % 3;
    for (int e = 0; e < edits; ++e) {
      switch (rng() % 4) {
        case 0:
          v[kHeaderSize + rng() % (v.size() - kHeaderSize)] = static_cast<char>(rng());
          break;
        case 1:
          if (v.size() > kHeaderSize + 1) v.resize(kHeaderSize + 1 + rng() % (v.size() - 17));
          break;
        case 2:
          v.insert(v.begin() + kHeaderSize + rng() % (v.size() - kHeaderSize + 1),
                   static_cast<char>(rng()));
          break;
        default:
          v[8 + rng() % 8] = static_cast<char>(rng());  // the cached cardinality
          break;
      }
    }
    if (!IsHll(v)) continue;  // a dense string of the wrong length is not an HLL
    uint64_t card;
    const bool countable = Count(v, &card);
    std::vector<uint8_t> max(kRegisters, 0);
    EXPECT_EQ(MergeInto(v, max.data()), countable);
    std::string dense = v;
    EXPECT_EQ(SparseToDense(&dense), countable);
    std::string added = v;
    for (int i = 0; i < 20; ++i) {
      if (Add(&added, std::to_string(rng()), 1 + rng() % 4000) == SetResult::kCorrupt) break;
      ASSERT_TRUE(IsHll(added));
    }
    if (countable) {
      std::string merged = v;
      ApplyMax(&merged, max.data(), kDefaultMax);
      ASSERT_TRUE(IsHll(merged));
    }
  }
}

}  // namespace
}  // namespace lavik::hll
