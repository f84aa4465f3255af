#include "replication/saved_history.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace lavik {
namespace {

class SavedHistoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/lavik-saved-history-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    data_ = dir_ + "/lavik.data";
    std::ofstream(data_) << "some data";
  }
  void TearDown() override {
    unlink(SavedHistoryPath(data_).c_str());
    unlink(data_.c_str());
    rmdir(dir_.c_str());
  }
  std::string dir_, data_;
  const std::string id_ = "0123456789abcdef0123456789abcdef01234567";
};

TEST_F(SavedHistoryTest, RoundTripThenGone) {
  std::string error, why;
  ASSERT_TRUE(SaveHistory(data_, SavedHistory{id_, 12345, 7}, &error)) << error;
  SavedHistory h;
  ASSERT_TRUE(TakeSavedHistory(data_, &h, &why)) << why;
  EXPECT_EQ(h.replid, id_);
  EXPECT_EQ(h.offset, 12345);
  EXPECT_EQ(h.db, 7);
  // Taken once: a second start (after a run that may have changed the data) has none.
  EXPECT_FALSE(TakeSavedHistory(data_, &h, &why));
  EXPECT_EQ(why, "");
}

TEST_F(SavedHistoryTest, RefusedOnceTheDataFileChanged) {
  std::string error, why;
  ASSERT_TRUE(SaveHistory(data_, SavedHistory{id_, 99, 0}, &error)) << error;
  usleep(20000);
  std::ofstream(data_, std::ios::app) << "more";
  SavedHistory h;
  EXPECT_FALSE(TakeSavedHistory(data_, &h, &why));
  EXPECT_EQ(why, "the data file changed since the replication history was saved");
  EXPECT_NE(access(SavedHistoryPath(data_).c_str(), F_OK), 0);  // removed anyway
}

TEST_F(SavedHistoryTest, RefusedWhenMalformed) {
  std::ofstream(SavedHistoryPath(data_)) << "lavik-replication-history 1\nreplid nothex\n";
  SavedHistory h;
  std::string why;
  EXPECT_FALSE(TakeSavedHistory(data_, &h, &why));
  EXPECT_NE(why.find("malformed"), std::string::npos) << why;
}

}  // namespace
}  // namespace lavik
