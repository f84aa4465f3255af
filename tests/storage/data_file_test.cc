#include "storage/data_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "storage/device.h"
#include "storage/format.h"
#include "storage/test_data_file.h"

namespace lavik {
namespace {

constexpr uint64_t kSeg = kDefaultSegmentSize;
constexpr uint64_t kData = kDefaultDataOffset;
using SegState = DataFile::SegState;

// A temporary directory removed at the end of the test.
class DataFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("lavik-df-test-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Path(const std::string& name = "data") const { return (dir_ / name).string(); }
  static DataFile::Options Opts(const std::string& path, uint64_t max_size = 0,
                                uint32_t shards = 1) {
    DataFile::Options o;
    o.path = path;
    o.max_size = max_size;
    o.shards = shards;
    return o;
  }
  static uint64_t FileSize(const std::string& path) {
    struct stat st;
    EXPECT_EQ(stat(path.c_str(), &st), 0);
    return static_cast<uint64_t>(st.st_size);
  }
  static std::string Slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  static void WriteFile(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  // The two superblock copies as stored, decoded one by one.
  static void ReadCopies(DataFile* f, SuperblockStatus* sa, Superblock* a, SuperblockStatus* sb,
                         Superblock* b) {
    AlignedBuffer buf(2 * kBlockSize);
    std::string error;
    ASSERT_TRUE(f->ReadAt(buf.data(), buf.size(), 0, &error)) << error;
    *sa = DecodeSuperblock(buf.data(), a);
    *sb = DecodeSuperblock(buf.data() + kBlockSize, b);
  }

  std::filesystem::path dir_;
};

TEST_F(DataFileTest, NewFileIsCreatedFormattedAndGrowable) {
  std::string error;
  auto f = DataFile::Open(Opts(Path("sub/dir/data")), &error);
  ASSERT_NE(f, nullptr) << error;
  EXPECT_TRUE(f->fresh());
  EXPECT_TRUE(f->growable());
  EXPECT_EQ(f->segment_count(), 0u);
  EXPECT_EQ(f->segment_size(), kSeg);
  EXPECT_EQ(f->data_offset(), kData);
  EXPECT_EQ(f->free_segments(), 0u);
  EXPECT_GT(f->available_segments(), 1000u);  // no cap: the file system is the limit
  EXPECT_EQ(f->file_size(), kData);
  EXPECT_EQ(FileSize(Path("sub/dir/data")), kData);
  // Both copies are written at generation 1, so an old copy of another file can never win.
  SuperblockStatus sa, sb;
  Superblock a, b;
  ReadCopies(f.get(), &sa, &a, &sb, &b);
  ASSERT_EQ(sa, SuperblockStatus::kOk);
  ASSERT_EQ(sb, SuperblockStatus::kOk);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.generation, 1u);
  EXPECT_EQ(a.grown_by_lavik, 1u);
  EXPECT_EQ(a.max_segments, 0u);
  EXPECT_EQ(a.next_segment_seq, 1u);
  EXPECT_FALSE(a.clean());
  EXPECT_GT(a.created_ms, 0);
  EXPECT_EQ(f->MinLiveSeq(), UINT64_MAX);

  f.reset();
  f = DataFile::Open(Opts(Path("sub/dir/data")), &error);
  ASSERT_NE(f, nullptr) << error;
  EXPECT_FALSE(f->fresh());
  EXPECT_TRUE(f->growable());
  EXPECT_EQ(f->superblock(), a);
}

// A restart right after a SIGKILL finds the lock still held until the kernel has released the
// dead process's file (io_uring teardown waits for in-flight I/O): Open waits for it.
TEST_F(DataFileTest, OpenWaitsForALockThatIsReleasedSoon) {
  std::string error;
  ASSERT_NE(DataFile::Open(Opts(Path()), &error), nullptr) << error;  // formats, then closes
  const int holder = open(Path().c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(holder, 0);
  ASSERT_EQ(flock(holder, LOCK_EX | LOCK_NB), 0);
  std::thread release([holder] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    close(holder);
  });
  auto f = DataFile::Open(Opts(Path()), &error);
  release.join();
  EXPECT_NE(f, nullptr) << error;
}

TEST_F(DataFileTest, GrowsByWholeSegmentsOnDemand) {
  std::string error;
  auto f = DataFile::Open(Opts(Path()), &error);
  ASSERT_NE(f, nullptr) << error;
  uint32_t first = f->AllocateSegment(SegState::kLog, 3, false);
  ASSERT_EQ(first, 0u);
  EXPECT_EQ(f->state(0), SegState::kLog);
  EXPECT_EQ(f->owner(0), 3u);
  // Growth comes in whole segments, several at a time.
  const uint32_t grown = f->segment_count();
  EXPECT_GE(grown, 2u);
  EXPECT_EQ(FileSize(Path()), kData + grown * kSeg);
  EXPECT_EQ(f->file_size(), kData + grown * kSeg);
  EXPECT_EQ(f->free_segments(), grown - 1);
  // Segments are handed out in ascending order; the last (shards + 1) free ones are the reserve
  // that triggers the next growth.
  std::vector<uint32_t> got{first};
  while (f->segment_count() == grown) {
    uint32_t s = f->AllocateSegment(SegState::kLog, 0, false);
    ASSERT_NE(s, DataFile::kNoSegment);
    got.push_back(s);
  }
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], i);
  EXPECT_EQ(got.size(), grown - 2 + 1u);  // grew when only the reserve (2) was left
  EXPECT_EQ(f->segment_count(), 2 * grown);
  EXPECT_EQ(FileSize(Path()), kData + 2 * grown * kSeg);

  // A reopened grown file has the segments the file holds, whatever the superblock said.
  f.reset();
  f = DataFile::Open(Opts(Path()), &error);
  ASSERT_NE(f, nullptr) << error;
  EXPECT_FALSE(f->fresh());
  EXPECT_EQ(f->segment_count(), 2 * grown);
  EXPECT_EQ(f->free_segments(), 2 * grown);  // nothing is in use until recovery marks it
}

TEST_F(DataFileTest, MaxSizeCapsGrowthButTheReserveGetsTheLastSegments) {
  std::string error;
  auto f = DataFile::Open(Opts(Path(), kData + 4 * kSeg + 100), &error);
  ASSERT_NE(f, nullptr) << error;
  EXPECT_EQ(f->superblock().max_segments, 4u);
  EXPECT_EQ(f->available_segments(), 4u);
  EXPECT_NE(f->AllocateSegment(SegState::kLog, 0, false), DataFile::kNoSegment);
  EXPECT_EQ(f->segment_count(), 4u);
  EXPECT_NE(f->AllocateSegment(SegState::kLog, 0, false), DataFile::kNoSegment);
  // Two left: that is the reserve of a one-shard file, foreground writes get nothing.
  EXPECT_EQ(f->AllocateSegment(SegState::kLog, 0, false), DataFile::kNoSegment);
  EXPECT_EQ(f->available_segments(), 2u);
  EXPECT_NE(f->AllocateSegment(SegState::kLog, 0, true), DataFile::kNoSegment);
  EXPECT_NE(f->AllocateSegment(SegState::kLog, 0, true), DataFile::kNoSegment);
  EXPECT_EQ(f->AllocateSegment(SegState::kLog, 0, true), DataFile::kNoSegment);
  EXPECT_EQ(f->available_segments(), 0u);
  EXPECT_EQ(f->segment_count(), 4u);
  EXPECT_EQ(FileSize(Path()), kData + 4 * kSeg);
}

TEST_F(DataFileTest, ReserveGrowsWithTheShardCount) {
  std::string error;
  auto f = DataFile::Open(Opts(Path(), kData + 6 * kSeg, /*shards=*/3), &error);
  ASSERT_NE(f, nullptr) << error;
  int foreground = 0;
  while (f->AllocateSegment(SegState::kLog, 0, false) != DataFile::kNoSegment) ++foreground;
  EXPECT_EQ(foreground, 2);  // 6 segments, 4 (shards + 1) kept back
  int reserve = 0;
  while (f->AllocateSegment(SegState::kLog, 0, true) != DataFile::kNoSegment) ++reserve;
  EXPECT_EQ(reserve, 4);
}

TEST_F(DataFileTest, PreallocatedZeroFileIsFormattedInPlaceAndNeverGrown) {
  const uint64_t size = kData + 5 * kSeg;
  {
    int fd = open(Path().c_str(), O_RDWR | O_CREAT, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(fallocate(fd, 0, 0, static_cast<off_t>(size)), 0);
    close(fd);
  }
  std::string error;
  auto f = DataFile::Open(Opts(Path(), /*max_size=*/kData + 100 * kSeg), &error);
  ASSERT_NE(f, nullptr) << error;
  EXPECT_TRUE(f->fresh());
  EXPECT_FALSE(f->growable());
  EXPECT_EQ(f->segment_count(), 5u);
  EXPECT_EQ(f->superblock().segment_count, 5u);
  EXPECT_EQ(f->superblock().grown_by_lavik, 0u);
  EXPECT_EQ(f->available_segments(), 5u);  // max_size does not apply to a preallocated file
  int got = 0;
  while (f->AllocateSegment(SegState::kLog, 0, false) != DataFile::kNoSegment) ++got;
  EXPECT_EQ(got, 3);
  while (f->AllocateSegment(SegState::kLog, 0, true) != DataFile::kNoSegment) ++got;
  EXPECT_EQ(got, 5);
  EXPECT_EQ(f->AllocateRun(1, 0), DataFile::kNoSegment);
  EXPECT_EQ(f->segment_count(), 5u);
  EXPECT_EQ(FileSize(Path()), size);

  f.reset();
  f = DataFile::Open(Opts(Path()), &error);
  ASSERT_NE(f, nullptr) << error;
  EXPECT_FALSE(f->fresh());
  EXPECT_FALSE(f->growable());
  EXPECT_EQ(f->segment_count(), 5u);
  EXPECT_EQ(FileSize(Path()), size);
}

TEST_F(DataFileTest, SparseZeroFileOfOddSizeUsesWholeSegmentsAndKeepsItsSize) {
  const uint64_t size = kData + 4 * kSeg + 12345;
  {
    int fd = open(Path().c_str(), O_RDWR | O_CREAT, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(ftruncate(fd, static_cast<off_t>(size)), 0);
    close(fd);
  }
  std::string error;
  auto f = DataFile::Open(Opts(Path()), &error);
  ASSERT_NE(f, nullptr) << error;
  EXPECT_FALSE(f->growable());
  EXPECT_EQ(f->segment_count(), 4u);
  while (f->AllocateSegment(SegState::kLog, 0, true) != DataFile::kNoSegment) {
  }
  EXPECT_EQ(FileSize(Path()), size);
}

TEST_F(DataFileTest, TooSmallZeroFileIsRefusedAndNotModified) {
  const std::string zeros(kData + 2 * kSeg, '\0');
  WriteFile(Path(), zeros);
  std::string error;
  auto f = DataFile::Open(Opts(Path()), &error);
  EXPECT_EQ(f, nullptr);
  EXPECT_NE(error.find("too small"), std::string::npos) << error;
  EXPECT_EQ(Slurp(Path()), zeros);
}

TEST_F(DataFileTest, ForeignBytesAreRefusedAndTheFileIsNotModified) {
  std::mt19937_64 rng(7);
  std::string junk(256 << 10, '\0');
  for (char& c : junk) c = static_cast<char>(rng());
  WriteFile(Path(), junk);
  std::string error;
  EXPECT_EQ(DataFile::Open(Opts(Path()), &error), nullptr);
  EXPECT_NE(error.find("not a Lavik data file"), std::string::npos) << error;
  EXPECT_NE(error.find("not modified"), std::string::npos) << error;
  EXPECT_EQ(Slurp(Path()), junk);

  // Shorter than the two superblock copies, and not empty.
  WriteFile(Path("short"), "hello");
  error.clear();
  EXPECT_EQ(DataFile::Open(Opts(Path("short")), &error), nullptr);
  EXPECT_NE(error.find("too small"), std::string::npos) << error;
  EXPECT_EQ(Slurp(Path("short")), "hello");
}

TEST_F(DataFileTest, OtherFormatVersionAndTornSuperblocksAreRefused) {
  // A Lavik superblock of another format version in both copies.
  Superblock sb;
  sb.format_version = 2;
  sb.segment_count = 4;
  std::string file(64 << 10, '\0');
  EncodeSuperblock(sb, file.data());
  EncodeSuperblock(sb, file.data() + kBlockSize);
  WriteFile(Path("v2"), file);
  std::string error;
  EXPECT_EQ(DataFile::Open(Opts(Path("v2")), &error), nullptr);
  EXPECT_NE(error.find("unsupported format version"), std::string::npos) << error;
  EXPECT_EQ(Slurp(Path("v2")), file);

  // Version 1 but both copies fail their crc.
  sb.format_version = kFormatVersion;
  EncodeSuperblock(sb, file.data());
  EncodeSuperblock(sb, file.data() + kBlockSize);
  file[40] ^= 1;
  file[kBlockSize + 40] ^= 1;
  WriteFile(Path("torn"), file);
  error.clear();
  EXPECT_EQ(DataFile::Open(Opts(Path("torn")), &error), nullptr);
  EXPECT_NE(error.find("bad checksum"), std::string::npos) << error;
  EXPECT_EQ(Slurp(Path("torn")), file);

  // A valid superblock with impossible geometry.
  sb.block_size = 512;
  EncodeSuperblock(sb, file.data());
  EncodeSuperblock(sb, file.data() + kBlockSize);
  WriteFile(Path("geometry"), file);
  error.clear();
  EXPECT_EQ(DataFile::Open(Opts(Path("geometry")), &error), nullptr);
  EXPECT_NE(error.find("block_size"), std::string::npos) << error;
  EXPECT_EQ(Slurp(Path("geometry")), file);
}

TEST_F(DataFileTest, SuperblockWritesAlternateBetweenTheCopies) {
  std::string error;
  auto f = DataFile::Open(Opts(Path()), &error);
  ASSERT_NE(f, nullptr) << error;
  SuperblockStatus sa, sb;
  Superblock a, b;
  // Generation 1 in both; the tie picks A, so the first write goes to B.
  ASSERT_TRUE(f->WriteSuperblock(&error)) << error;
  ReadCopies(f.get(), &sa, &a, &sb, &b);
  ASSERT_EQ(sa, SuperblockStatus::kOk);
  ASSERT_EQ(sb, SuperblockStatus::kOk);
  EXPECT_EQ(a.generation, 1u);
  EXPECT_EQ(b.generation, 2u);
  f->superblock().checkpoint_seq = 77;
  ASSERT_TRUE(f->WriteSuperblock(&error)) << error;
  ReadCopies(f.get(), &sa, &a, &sb, &b);
  EXPECT_EQ(a.generation, 3u);
  EXPECT_EQ(a.checkpoint_seq, 77u);
  EXPECT_EQ(b.generation, 2u);
  ASSERT_TRUE(f->WriteSuperblock(&error)) << error;
  ReadCopies(f.get(), &sa, &a, &sb, &b);
  EXPECT_EQ(a.generation, 3u);
  EXPECT_EQ(b.generation, 4u);
  EXPECT_EQ(f->superblock().generation, 4u);

  // A torn write of the newest copy (B) leaves A, one generation older, in charge.
  f.reset();
  {
    std::fstream io(Path(), std::ios::binary | std::ios::in | std::ios::out);
    io.seekp(kBlockSize + 20);
    io.put('\x55');
  }
  f = DataFile::Open(Opts(Path()), &error);
  ASSERT_NE(f, nullptr) << error;
  EXPECT_EQ(f->superblock().generation, 3u);
  EXPECT_EQ(f->superblock().checkpoint_seq, 77u);
  // The next write repairs B (it does not hold the newest valid generation).
  ASSERT_TRUE(f->WriteSuperblock(&error)) << error;
  ReadCopies(f.get(), &sa, &a, &sb, &b);
  ASSERT_EQ(sb, SuperblockStatus::kOk);
  EXPECT_EQ(b.generation, 4u);
  EXPECT_EQ(a.generation, 3u);
}

TEST_F(DataFileTest, FlushSeqAndNextSegmentSeqPersist) {
  std::string error;
  auto f = DataFile::Open(Opts(Path()), &error);
  ASSERT_NE(f, nullptr) << error;
  EXPECT_EQ(f->NextSegmentSeq(), 1u);
  EXPECT_EQ(f->NextSegmentSeq(), 2u);
  EXPECT_EQ(f->peek_next_segment_seq(), 3u);
  ASSERT_TRUE(f->SetFlushSeq(2, &error)) << error;
  ASSERT_TRUE(f->SetFlushSeq(1, &error)) << error;  // never goes back
  f.reset();
  f = DataFile::Open(Opts(Path()), &error);
  ASSERT_NE(f, nullptr) << error;
  EXPECT_EQ(f->superblock().flush_seq, 2u);
  EXPECT_EQ(f->peek_next_segment_seq(), 3u);
}

TEST_F(DataFileTest, AllocateRunTakesContiguousFreeSegments) {
  std::string error;
  auto f = DataFile::Open(Opts(Path()), &error);
  ASSERT_NE(f, nullptr) << error;
  uint32_t run = f->AllocateRun(3, 5);
  ASSERT_EQ(run, 0u);
  EXPECT_EQ(f->state(0), SegState::kLarge);
  EXPECT_EQ(f->state(1), SegState::kLargeTail);
  EXPECT_EQ(f->state(2), SegState::kLargeTail);
  EXPECT_EQ(f->owner(2), 5u);
  EXPECT_EQ(f->state(3), SegState::kFree);
  const size_t free_after = f->free_segments();
  EXPECT_EQ(free_after, f->segment_count() - 3u);
  // Log segments never come out of the run.
  uint32_t log = f->AllocateSegment(SegState::kLog, 0, false);
  EXPECT_EQ(log, 3u);
  uint32_t run2 = f->AllocateRun(2, 0);
  EXPECT_EQ(run2, 4u);
  for (uint32_t s = 0; s < 3; ++s) f->ReleaseSegment(s);
  // The released run is the first contiguous fit again.
  EXPECT_EQ(f->AllocateRun(3, 0), 0u);
}

TEST_F(DataFileTest, AllocateRunGrowsWhenTheFreeSegmentsAreScattered) {
  std::string error;
  auto f = DataFile::Open(Opts(Path()), &error);
  ASSERT_NE(f, nullptr) << error;
  ASSERT_NE(f->AllocateSegment(SegState::kLog, 0, false), DataFile::kNoSegment);
  const uint32_t n = f->segment_count();
  // Every other segment in use: plenty free, but no two in a row.
  for (uint32_t s = 1; s < n; ++s) f->MarkUsed(s, SegState::kLog, 0);
  for (uint32_t s = 1; s + 1 < n; s += 2) f->ReleaseSegment(s);
  const size_t scattered = f->free_segments();
  EXPECT_GE(scattered, 3u);
  uint32_t run = f->AllocateRun(2, 0);
  ASSERT_NE(run, DataFile::kNoSegment);
  EXPECT_GE(run, n);  // from the newly grown end
  EXPECT_GT(f->segment_count(), n);
  EXPECT_EQ(f->state(run + 1), SegState::kLargeTail);
}

TEST_F(DataFileTest, AllocateRunFailsWhenCappedOrOnlyTheReserveIsLeft) {
  std::string error;
  auto f = DataFile::Open(Opts(Path(), kData + 6 * kSeg), &error);
  ASSERT_NE(f, nullptr) << error;
  EXPECT_EQ(f->AllocateRun(7, 0), DataFile::kNoSegment);  // larger than the file may ever be
  // 6 segments, reserve 2: a run of 4 still leaves the reserve, a run of 5 does not.
  EXPECT_EQ(f->AllocateRun(5, 0), DataFile::kNoSegment);
  uint32_t run = f->AllocateRun(4, 0);
  ASSERT_NE(run, DataFile::kNoSegment);
  EXPECT_EQ(f->free_segments(), 2u);
  EXPECT_EQ(f->AllocateRun(1, 0), DataFile::kNoSegment);
}

TEST_F(DataFileTest, ReleaseSegmentReturnsItToThePool) {
  std::string error;
  auto f = DataFile::Open(Opts(Path(), kData + 4 * kSeg), &error);
  ASSERT_NE(f, nullptr) << error;
  uint32_t a = f->AllocateSegment(SegState::kLog, 0, false);
  uint32_t b = f->AllocateSegment(SegState::kLog, 0, false);
  ASSERT_NE(b, DataFile::kNoSegment);
  ASSERT_EQ(f->AllocateSegment(SegState::kLog, 0, false), DataFile::kNoSegment);
  f->seq(a).store(9);
  f->live_bytes(a).store(1234);
  f->ReleaseSegment(a);
  EXPECT_EQ(f->state(a), SegState::kFree);
  EXPECT_EQ(f->seq(a).load(), 0u);
  EXPECT_EQ(f->live_bytes(a).load(), 0);
  EXPECT_EQ(f->free_segments(), 3u);
  EXPECT_EQ(f->available_segments(), 3u);
  // The released segment is the next one handed out.
  EXPECT_EQ(f->AllocateSegment(SegState::kLog, 0, false), a);
}

TEST_F(DataFileTest, MinLiveSeqCountsOnlyLogAndLargeSegments) {
  std::string error;
  auto f = DataFile::Open(Opts(Path()), &error);
  ASSERT_NE(f, nullptr) << error;
  EXPECT_EQ(f->MinLiveSeq(), UINT64_MAX);
  uint32_t log1 = f->AllocateSegment(SegState::kLog, 0, false);
  uint32_t log2 = f->AllocateSegment(SegState::kLog, 0, false);
  uint32_t ckpt = f->AllocateSegment(SegState::kCheckpoint, 0, true);
  uint32_t large = f->AllocateRun(2, 0);
  ASSERT_NE(large, DataFile::kNoSegment);
  f->seq(log1).store(40);
  f->seq(log2).store(30);
  f->seq(ckpt).store(5);
  f->seq(large).store(20);
  f->seq(large + 1).store(1);  // a run's tail has no seq of its own
  EXPECT_EQ(f->MinLiveSeq(), 20u);
  f->ReleaseSegment(large);
  f->ReleaseSegment(large + 1);
  EXPECT_EQ(f->MinLiveSeq(), 30u);
  f->ReleaseSegment(log2);
  EXPECT_EQ(f->MinLiveSeq(), 40u);
  f->ReleaseSegment(log1);
  EXPECT_EQ(f->MinLiveSeq(), UINT64_MAX);
}

TEST_F(DataFileTest, SecondOpenOfAFileInUseIsRefused) {
  std::string error;
  auto f = DataFile::Open(Opts(Path()), &error);
  ASSERT_NE(f, nullptr) << error;
  DataFile::Options o = Opts(Path());
  o.lock_wait_ms = 100;  // the default waits 10 s for the holder to let go
  auto g = DataFile::Open(o, &error);
  EXPECT_EQ(g, nullptr);
  EXPECT_EQ(error, "data file '" + Path() + "' is in use by another process");
}

TEST_F(DataFileTest, SegmentSizeOptionFormatsANewFileAndTheFileKeepsIt) {
  DataFile::Options o = Opts(Path());
  o.segment_size = 1 << 20;
  std::string error;
  auto f = DataFile::Open(o, &error);
  ASSERT_NE(f, nullptr) << error;
  EXPECT_EQ(f->segment_size(), uint64_t{1} << 20);
  ASSERT_EQ(f->AllocateSegment(SegState::kLog, 0, false), 0u);
  EXPECT_EQ(f->SegmentOffset(3), kData + 3 * (uint64_t{1} << 20));
  EXPECT_EQ(FileSize(Path()), kData + f->segment_count() * (uint64_t{1} << 20));
  f.reset();
  // An existing file keeps its geometry whatever the option says now.
  f = DataFile::Open(Opts(Path()), &error);
  ASSERT_NE(f, nullptr) << error;
  EXPECT_EQ(f->segment_size(), uint64_t{1} << 20);
}

}  // namespace
}  // namespace lavik
