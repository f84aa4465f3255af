#include "base/durable_file.h"

#include <gtest/gtest.h>
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

}  // namespace
}  // namespace lavik
