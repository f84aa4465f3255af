#include "base/log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace lavik {
namespace {

std::string Slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("lavik-log-test-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    std::string error;
    ASSERT_TRUE(OpenLog(dir_.string(), LogSeverity::kNotice, &error)) << error;
  }
  void TearDown() override {
    SetLogLevel(LogSeverity::kNotice);
    std::filesystem::remove_all(dir_);
  }
  std::filesystem::path dir_;
};

TEST_F(LogTest, LevelsFilterLines) {
  EXPECT_FALSE(LogEnabled(LogSeverity::kVerbose));
  EXPECT_TRUE(LogEnabled(LogSeverity::kNotice));
  LogVerbose("hidden verbose");
  LogNotice("shown notice");
  SetLogLevel(LogSeverity::kWarning);
  EXPECT_FALSE(LogEnabled(LogSeverity::kNotice));
  LogNotice("hidden notice");
  LogWarning("shown warning");
  SetLogLevel(LogSeverity::kDebug);
  LogDebug("shown debug");
  std::string text = Slurp(dir_ / "lavik.log");
  EXPECT_EQ(text.find("hidden"), std::string::npos) << text;
  EXPECT_NE(text.find(" * shown notice"), std::string::npos) << text;
  EXPECT_NE(text.find(" # shown warning"), std::string::npos) << text;
  EXPECT_NE(text.find(" . shown debug"), std::string::npos) << text;
}

TEST_F(LogTest, ReopenStartsAFreshFileAfterARename) {
  LogNotice("before rotation");
  std::filesystem::rename(dir_ / "lavik.log", dir_ / "lavik.log.1");
  LogNotice("still to the renamed file");
  std::string error;
  ASSERT_TRUE(ReopenLog(&error)) << error;
  LogNotice("after rotation");
  std::string old_text = Slurp(dir_ / "lavik.log.1");
  std::string new_text = Slurp(dir_ / "lavik.log");
  EXPECT_NE(old_text.find("still to the renamed file"), std::string::npos);
  EXPECT_EQ(old_text.find("after rotation"), std::string::npos);
  EXPECT_NE(new_text.find("after rotation"), std::string::npos);
  EXPECT_EQ(new_text.find("before rotation"), std::string::npos);
}

}  // namespace
}  // namespace lavik
