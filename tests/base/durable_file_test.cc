#include "base/durable_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace lavik {
namespace {

std::string TempDir() {
  char tmpl[] = "/tmp/lavik-durable-XXXXXX";
  return mkdtemp(tmpl);
}

TEST(DurableFile, WritesReplacesAndReads) {
  const std::string dir = TempDir();
  const std::string path = dir + "/f";
  std::string data, error;
  bool exists = true;
  ASSERT_TRUE(ReadWholeFile(path, &data, &exists, &error)) << error;
  EXPECT_FALSE(exists);
  ASSERT_TRUE(WriteFileDurably(path, "first", &error)) << error;
  ASSERT_TRUE(WriteFileDurably(path, std::string(200000, 'x'), &error)) << error;
  ASSERT_TRUE(ReadWholeFile(path, &data, &exists, &error)) << error;
  EXPECT_TRUE(exists);
  EXPECT_EQ(data, std::string(200000, 'x'));
  EXPECT_NE(access((path + ".tmp").c_str(), F_OK), 0);  // the temp file was renamed away
  unlink(path.c_str());
  rmdir(dir.c_str());
}

TEST(DurableFile, AFailedWriteLeavesNothingAndSaysWhy) {
  std::string error;
  EXPECT_FALSE(WriteFileDurably("/nonexistent-dir/f", "x", &error));
  EXPECT_EQ(error.rfind("Creating /nonexistent-dir/f.tmp: ", 0), 0u) << error;
}

TEST(DurableFile, InPlaceWritesGrowAndShrinkTheSameFile) {
  const std::string dir = TempDir();
  const std::string path = dir + "/nodes.conf";
  std::string data, error;
  bool exists = false;
  ASSERT_TRUE(WriteFileInPlace(path, "a longer first version\n", &error)) << error;
  ASSERT_TRUE(ReadWholeFile(path, &data, &exists, &error)) << error;
  EXPECT_EQ(data, "a longer first version\n");
  struct stat before {};
  ASSERT_EQ(stat(path.c_str(), &before), 0);
  ASSERT_TRUE(WriteFileInPlace(path, "short\n", &error)) << error;  // padded, then truncated
  ASSERT_TRUE(ReadWholeFile(path, &data, &exists, &error)) << error;
  EXPECT_EQ(data, "short\n");
  ASSERT_TRUE(WriteFileInPlace(path, std::string(100000, 'y'), &error)) << error;
  ASSERT_TRUE(ReadWholeFile(path, &data, &exists, &error)) << error;
  EXPECT_EQ(data, std::string(100000, 'y'));
  struct stat after {};
  ASSERT_EQ(stat(path.c_str(), &after), 0);
  EXPECT_EQ(before.st_ino, after.st_ino);  // no temp file, no new inode
  EXPECT_FALSE(WriteFileInPlace("/nonexistent-dir/f", "x", &error));
  EXPECT_EQ(error.rfind("Opening /nonexistent-dir/f: ", 0), 0u) << error;
  unlink(path.c_str());
  rmdir(dir.c_str());
}

}  // namespace
}  // namespace lavik
