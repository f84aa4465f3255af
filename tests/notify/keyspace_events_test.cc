#include "notify/keyspace_events.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "base/db_key.h"

namespace lavik {
namespace {

std::string Normalised(std::string_view letters) {
  uint32_t flags = 0;
  EXPECT_TRUE(ParseKeyspaceEventFlags(letters, &flags)) << letters;
  return KeyspaceEventFlagsString(flags);
}

TEST(KeyspaceEventFlagsTest, NormalisesAsRedisConfigGet) {
  EXPECT_EQ(Normalised("KEA"), "AKE");
  EXPECT_EQ(Normalised("g$lshzxetd"), "A");
  EXPECT_EQ(Normalised("g$lshzxetdn"), "A");  // 'n' is hidden under 'A', as in Redis
  EXPECT_EQ(Normalised("AKEmn"), "AKEm");
  EXPECT_EQ(Normalised("ztx$E"), "$zxtE");
  EXPECT_EQ(Normalised("nm"), "nm");
  EXPECT_EQ(Normalised(""), "");
}

TEST(KeyspaceEventFlagsTest, RejectsUnknownLetters) {
  uint32_t flags = 7;
  EXPECT_FALSE(ParseKeyspaceEventFlags("Kb", &flags));
  EXPECT_FALSE(ParseKeyspaceEventFlags("a", &flags));
  EXPECT_FALSE(ParseKeyspaceEventFlags("K E", &flags));
  EXPECT_EQ(flags, 7u);  // untouched on failure
}

std::vector<std::pair<std::string, std::string>>* g_sent = nullptr;

void Collect(void*, std::string_view channel, std::string_view payload) {
  g_sent->emplace_back(channel, payload);
}

TEST(KeyspaceEventsTest, PublishesThroughTheSinkOnlyWhenOn) {
  std::vector<std::pair<std::string, std::string>> sent;
  g_sent = &sent;
  SetKeyspaceEventSink(&Collect, nullptr);
  SetKeyspaceEventFlags(0);
  NotifyKeyspaceEvent(kNotifyString, "set", "k");
  EXPECT_TRUE(sent.empty());

  uint32_t flags;
  ASSERT_TRUE(ParseKeyspaceEventFlags("KE$", &flags));
  SetKeyspaceEventFlags(flags);
  NotifyKeyspaceEvent(kNotifyList, "lpush", "k");  // class off
  NotifyKeyspaceEvent(kNotifyString, "set", "k");
  NotifyKeyspaceEvent(kNotifyString, "set", DbKey(3, "k2"));  // database 3's key
  using P = std::pair<std::string, std::string>;
  EXPECT_EQ(sent, (std::vector<P>{{"__keyspace@0__:k", "set"},
                                  {"__keyevent@0__:set", "k"},
                                  {"__keyspace@3__:k2", "set"},
                                  {"__keyevent@3__:set", "k2"}}));

  sent.clear();
  ASSERT_TRUE(ParseKeyspaceEventFlags("$lshzxetd", &flags));  // neither K nor E: nothing
  SetKeyspaceEventFlags(flags);
  EXPECT_FALSE(KeyspaceEventsOn(kNotifyString));
  NotifyKeyspaceEvent(kNotifyString, "set", "k");
  EXPECT_TRUE(sent.empty());
  SetKeyspaceEventFlags(0);
  SetKeyspaceEventSink(nullptr, nullptr);
  g_sent = nullptr;
}

}  // namespace
}  // namespace lavik
