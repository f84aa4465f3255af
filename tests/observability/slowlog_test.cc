#include "observability/slowlog.h"

#include <gtest/gtest.h>

namespace lavik {
namespace {

std::vector<std::string_view> Views(const std::vector<std::string>& v) {
  return std::vector<std::string_view>(v.begin(), v.end());
}

TEST(SlowLogTest, TrimsLongStringsAndManyArguments) {
  std::vector<std::string> args = {"set", "k", std::string(200, 'x')};
  auto out = SlowLog::TrimArgv(Views(args));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[2], std::string(128, 'x') + "... (72 more bytes)");

  std::vector<std::string> many = {"mset"};
  for (int i = 0; i < 40; ++i) many.push_back(std::to_string(i));
  out = SlowLog::TrimArgv(Views(many));
  ASSERT_EQ(out.size(), 32u);
  EXPECT_EQ(out[30], "29");
  EXPECT_EQ(out[31], "... (10 more arguments)");

  std::vector<std::string> exact(32, "a");
  EXPECT_EQ(SlowLog::TrimArgv(Views(exact)).back(), "a");
}

TEST(SlowLogTest, RedactsSecrets) {
  std::vector<std::string> auth = {"AUTH", "user", "pw"};
  EXPECT_EQ(SlowLog::TrimArgv(Views(auth)),
            (std::vector<std::string>{"AUTH", "(redacted)", "(redacted)"}));
  std::vector<std::string> hello = {"hello", "3", "auth", "u", "p", "setname", "n"};
  EXPECT_EQ(
      SlowLog::TrimArgv(Views(hello)),
      (std::vector<std::string>{"hello", "3", "auth", "(redacted)", "(redacted)", "setname", "n"}));
  std::vector<std::string> cfg = {"config", "set", "maxclients", "10", "requirepass", "secret"};
  EXPECT_EQ(
      SlowLog::TrimArgv(Views(cfg)),
      (std::vector<std::string>{"config", "set", "maxclients", "10", "requirepass", "(redacted)"}));
  std::vector<std::string> tls = {"config", "set", "tls-key-file-pass", "k"};
  EXPECT_EQ(SlowLog::TrimArgv(Views(tls)),
            (std::vector<std::string>{"config", "set", "tls-key-file-pass", "(redacted)"}));
}

TEST(SlowLogTest, NewestFirstTrimmedToMaxLenOnPush) {
  SlowLog log;
  log.set_max_len(3);
  std::vector<std::string> args = {"get", "k"};
  for (int i = 0; i < 5; ++i) log.Push(Views(args), 100 + i, 1000 + i, "1.2.3.4:5", "n");
  EXPECT_EQ(log.Len(), 3u);
  auto all = log.Get(-1);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].id, 4u);
  EXPECT_EQ(all[0].duration_us, 104);
  EXPECT_EQ(all[0].time_s, 1004);
  EXPECT_EQ(all[0].peer, "1.2.3.4:5");
  EXPECT_EQ(all[2].id, 2u);
  EXPECT_EQ(log.Get(1).size(), 1u);
  EXPECT_EQ(log.Get(0).size(), 0u);
  log.set_max_len(1);
  EXPECT_EQ(log.Len(), 3u);  // as Redis: trimmed by the next entry
  log.Push(Views(args), 1, 1, "", "");
  EXPECT_EQ(log.Len(), 1u);
  log.Reset();
  EXPECT_EQ(log.Len(), 0u);
  log.Push(Views(args), 1, 1, "", "");
  EXPECT_EQ(log.Get(-1)[0].id, 6u);  // ids keep counting after RESET
}

}  // namespace
}  // namespace lavik
