#include "client/client_admin.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace lavik {
namespace {

std::string Parse(std::vector<std::string_view> args, KillFilter* f) {
  return ParseKillFilter(args, f);
}

TEST(ClientAdminKillFilter, OldFormTakesAnAddressAndMayKillTheCaller) {
  KillFilter f;
  EXPECT_EQ(Parse({"client", "kill", "127.0.0.1:5000"}, &f), "");
  EXPECT_TRUE(f.old_form);
  EXPECT_EQ(f.addr, "127.0.0.1:5000");
  EXPECT_FALSE(f.skipme);
  ClientFacts me{7, "127.0.0.1:5000", "127.0.0.1:6379", "default", ClientType::kNormal, 0, true};
  EXPECT_TRUE(KillFilterMatches(f, me));
  me.addr = "127.0.0.1:5001";
  EXPECT_FALSE(KillFilterMatches(f, me));
}

TEST(ClientAdminKillFilter, NewFormOptions) {
  KillFilter f;
  EXPECT_EQ(Parse({"client", "kill", "ID", "42", "type", "NORMAL", "user", "default", "ADDR",
                   "1.2.3.4:5", "laddr", "127.0.0.1:6379", "skipme", "NO", "maxage", "10"},
                  &f),
            "");
  EXPECT_FALSE(f.old_form);
  EXPECT_EQ(f.id, 42u);
  EXPECT_TRUE(f.has_type);
  EXPECT_EQ(f.type, ClientType::kNormal);
  EXPECT_EQ(f.user, "default");
  EXPECT_EQ(f.addr, "1.2.3.4:5");
  EXPECT_EQ(f.laddr, "127.0.0.1:6379");
  EXPECT_FALSE(f.skipme);
  EXPECT_EQ(f.max_age_s, 10);
}

TEST(ClientAdminKillFilter, ErrorsAreRedisTexts) {
  KillFilter f;
  EXPECT_EQ(Parse({"client", "kill", "id", "abc"}, &f), "ERR client-id should be greater than 0");
  EXPECT_EQ(Parse({"client", "kill", "id", "0"}, &f), "ERR client-id should be greater than 0");
  EXPECT_EQ(Parse({"client", "kill", "id", "-1"}, &f), "ERR client-id should be greater than 0");
  EXPECT_EQ(Parse({"client", "kill", "type", "foo"}, &f), "ERR Unknown client type 'foo'");
  EXPECT_EQ(Parse({"client", "kill", "skipme", "maybe"}, &f), "ERR syntax error");
  EXPECT_EQ(Parse({"client", "kill", "foo", "bar"}, &f), "ERR syntax error");
  EXPECT_EQ(Parse({"client", "kill", "id", "5", "type"}, &f), "ERR syntax error");
  EXPECT_EQ(Parse({"client", "kill", "maxage", "x"}, &f),
            "ERR value is not an integer or out of range");
}

TEST(ClientAdminKillFilter, Matching) {
  KillFilter f;
  ASSERT_EQ(Parse({"client", "kill", "user", "default"}, &f), "");
  ClientFacts c{3, "127.0.0.1:1", "127.0.0.1:2", "default", ClientType::kNormal, 5, false};
  EXPECT_TRUE(KillFilterMatches(f, c));
  c.is_caller = true;  // SKIPME yes is the default
  EXPECT_FALSE(KillFilterMatches(f, c));
  ASSERT_EQ(Parse({"client", "kill", "type", "pubsub"}, &f), "");
  c.is_caller = false;
  EXPECT_FALSE(KillFilterMatches(f, c));
  ASSERT_EQ(Parse({"client", "kill", "id", "4"}, &f), "");
  EXPECT_FALSE(KillFilterMatches(f, c));
  ASSERT_EQ(Parse({"client", "kill", "maxage", "5"}, &f), "");
  EXPECT_FALSE(KillFilterMatches(f, c));  // age 5 is not older than 5
  c.age_s = 6;
  EXPECT_TRUE(KillFilterMatches(f, c));
  ASSERT_EQ(Parse({"client", "kill", "laddr", "127.0.0.1:9"}, &f), "");
  EXPECT_FALSE(KillFilterMatches(f, c));
}

TEST(ClientAdminMonitor, LineFormatAndQuoting) {
  std::string out;
  std::vector<std::string_view> args = {"set", "k", "v\n\"x\\\x01\xc3\xa9"};
  AppendMonitorLine(&out, 1700000000123456, 0, "127.0.0.1:60866", args);
  EXPECT_EQ(out,
            "+1700000000.123456 [0 127.0.0.1:60866] \"set\" \"k\" "
            "\"v\\n\\\"x\\\\\\x01\\xc3\\xa9\"\r\n");
  out.clear();
  std::vector<std::string_view> esc = {"\r\t\a\b", std::string_view("\0", 1), "~ "};
  AppendMonitorLine(&out, 5, 0, "1.2.3.4:5", esc);
  EXPECT_EQ(out, "+0.000005 [0 1.2.3.4:5] \"\\r\\t\\a\\b\" \"\\x00\" \"~ \"\r\n");
}

TEST(ClientAdminMonitor, SecretsAreRedacted) {
  std::string out;
  std::vector<std::string_view> auth = {"AUTH", "foo", "bar"};
  AppendMonitorLine(&out, 0, 0, "a:1", auth);
  EXPECT_EQ(out, "+0.000000 [0 a:1] \"AUTH\" \"(redacted)\" \"(redacted)\"\r\n");
  out.clear();
  std::vector<std::string_view> hello = {"HELLO", "3", "SETNAME", "n", "AUTH", "u", "p"};
  AppendMonitorLine(&out, 0, 0, "a:1", hello);
  EXPECT_EQ(out,
            "+0.000000 [0 a:1] \"HELLO\" \"3\" \"SETNAME\" \"n\" \"AUTH\" \"(redacted)\" "
            "\"(redacted)\"\r\n");
  out.clear();
  std::vector<std::string_view> named_auth = {"HELLO", "3", "SETNAME", "auth", "AUTH", "u", "p"};
  AppendMonitorLine(&out, 0, 0, "a:1", named_auth);
  EXPECT_EQ(out,
            "+0.000000 [0 a:1] \"HELLO\" \"3\" \"SETNAME\" \"auth\" \"AUTH\" \"(redacted)\" "
            "\"(redacted)\"\r\n");
}

TEST(ClientAdminProtectedMode, Decision) {
  // protected-mode x password x bind x peer.
  EXPECT_TRUE(ProtectedModeDenies(true, false, "0.0.0.0", "10.1.2.3"));
  EXPECT_FALSE(ProtectedModeDenies(true, false, "0.0.0.0", "127.0.0.1"));
  EXPECT_FALSE(ProtectedModeDenies(true, false, "0.0.0.0", "::1"));
  EXPECT_FALSE(ProtectedModeDenies(true, false, "0.0.0.0", "127.4.5.6"));
  EXPECT_FALSE(ProtectedModeDenies(true, false, "0.0.0.0", "::ffff:127.0.0.1"));
  EXPECT_TRUE(ProtectedModeDenies(true, false, "0.0.0.0", "::ffff:10.0.0.1"));
  EXPECT_FALSE(ProtectedModeDenies(false, false, "0.0.0.0", "10.1.2.3"));
  EXPECT_FALSE(ProtectedModeDenies(true, true, "0.0.0.0", "10.1.2.3"));
  EXPECT_FALSE(ProtectedModeDenies(true, false, "127.0.0.1 -::1", "10.1.2.3"));
  EXPECT_TRUE(ProtectedModeDenies(true, false, "127.0.0.1 10.0.0.5", "10.1.2.3"));
  EXPECT_TRUE(ProtectedModeDenies(true, false, "* -::*", "2001:db8::1"));
  EXPECT_TRUE(kProtectedModeDenied.starts_with("DENIED Redis is running in protected mode"));
}

TEST(ClientAdminOutputLimit, ParsesClasses) {
  const char* v = "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60";
  OutputLimit l;
  ASSERT_TRUE(ParseOutputLimitClass(v, ClientType::kNormal, &l));
  EXPECT_FALSE(l.enabled());
  ASSERT_TRUE(ParseOutputLimitClass(v, ClientType::kPubSub, &l));
  EXPECT_EQ(l.hard, 33554432u);
  EXPECT_EQ(l.soft, 8388608u);
  EXPECT_EQ(l.soft_seconds, 60);
  EXPECT_FALSE(ParseOutputLimitClass("normal 1 2", ClientType::kNormal, &l));
}

TEST(ClientAdminOutputLimit, HardAndSoftStateMachine) {
  OutputLimitTracker t;
  OutputLimit hard_only{1000, 0, 0};
  EXPECT_FALSE(t.Exceeded(hard_only, 999, 0));
  EXPECT_TRUE(t.Exceeded(hard_only, 1000, 0));

  OutputLimit soft{0, 100, 2};
  EXPECT_FALSE(t.Exceeded(soft, 150, 10000));  // first time over: clock starts
  EXPECT_EQ(t.soft_since_ms(), 10000);
  EXPECT_FALSE(t.Exceeded(soft, 150, 11000));
  EXPECT_FALSE(t.Exceeded(soft, 150, 12000));  // exactly the allowed seconds
  EXPECT_TRUE(t.Exceeded(soft, 150, 12001));
  EXPECT_FALSE(t.Exceeded(soft, 50, 13000));  // back under: clock reset
  EXPECT_EQ(t.soft_since_ms(), 0);
  EXPECT_FALSE(t.Exceeded(soft, 150, 14000));
  EXPECT_FALSE(t.Exceeded(OutputLimit{}, 1u << 30, 20000));  // 0 0 0 = unlimited
}

}  // namespace
}  // namespace lavik
