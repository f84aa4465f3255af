#include "acl/acl.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "acl/acl_log.h"
#include "commands/command_table.h"
#include "server/command_registry.h"

namespace lavik {
namespace {

class AclTest : public ::testing::Test {
 protected:
  bool Set(std::string_view name, std::vector<std::string_view> ops, std::string* err = nullptr) {
    std::string ignored;
    return acl_.SetUser(name, ops, err ? err : &ignored);
  }
  AclVerdict Check(std::string_view user, std::vector<std::string_view> args) {
    const CommandSpec* spec = table_.Find(args[0]);
    if (!spec->subcommands.empty()) spec = CommandTable::FindSubcommand(*spec, args[1]);
    return acl_.Check(*acl_.Find(user), *spec, args);
  }
  std::string Line(std::string_view user) { return acl_.Describe(*acl_.Find(user)); }

  CommandTable table_{AllCommandFamilies()};
  Acl acl_{table_};
};

TEST_F(AclTest, DefaultUserIsUnrestricted) {
  auto d = acl_.Find("default");
  ASSERT_NE(d, nullptr);
  EXPECT_TRUE(d->unrestricted);
  EXPECT_FALSE(acl_.default_needs_auth());
  EXPECT_EQ(Line("default"), "on nopass ~* &* +@all");
}

TEST_F(AclTest, PasswordsAreSha256Hex) {
  EXPECT_EQ(Acl::HashPassword("p1"),
            "f64551fcd6f07823cb87971cfb91446425da18286b3ab1ef935e0cbd7a69f68a");
  ASSERT_TRUE(Set("u", {"on", ">p1", ">p1"}));
  EXPECT_EQ(acl_.Find("u")->passwords.size(), 1u);
  EXPECT_NE(acl_.Authenticate("u", "p1"), nullptr);
  EXPECT_EQ(acl_.Authenticate("u", "p2"), nullptr);
  ASSERT_TRUE(Set("u", {"<p1"}));
  EXPECT_EQ(acl_.Authenticate("u", "p1"), nullptr);
  ASSERT_TRUE(Set("u", {"nopass"}));
  EXPECT_NE(acl_.Authenticate("u", "anything"), nullptr);
  ASSERT_TRUE(Set("u", {"off"}));
  EXPECT_EQ(acl_.Authenticate("u", "anything"), nullptr);
}

TEST_F(AclTest, SetUserErrorsAreRedisTexts) {
  std::string err;
  EXPECT_FALSE(Set("u", {"bogus"}, &err));
  EXPECT_EQ(err, "ERR Error in ACL SETUSER modifier 'bogus': Syntax error");
  EXPECT_EQ(acl_.Find("u"), nullptr);  // nothing created on failure
  EXPECT_FALSE(Set("u", {"+nosuch"}, &err));
  EXPECT_EQ(err,
            "ERR Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL");
  EXPECT_FALSE(Set("u", {"-@nosuch"}, &err));
  EXPECT_FALSE(Set("u", {"~*", "~foo"}, &err));
  EXPECT_NE(err.find("'allkeys' flag"), std::string::npos);
  EXPECT_FALSE(Set("u", {"<nope"}, &err));
  EXPECT_NE(err.find("does not exist"), std::string::npos);
  EXPECT_FALSE(Set("u", {"#abc"}, &err));
  EXPECT_NE(err.find("exactly 64 characters"), std::string::npos);
  EXPECT_FALSE(Set("u", {"%X~x"}, &err));
  EXPECT_FALSE(Set("u", {"%~x"}, &err));
  EXPECT_FALSE(Set("u", {"%"}, &err));
  // Redis 7.0 takes "%R" without '~' as an empty pattern.
  ASSERT_TRUE(Set("pr", {"%R"}));
  EXPECT_EQ(Acl::DescribeKeys(*acl_.Find("pr")), "%R~");
  EXPECT_FALSE(Set("u", {"+client|id|x"}, &err));
  EXPECT_NE(err.find("first-arg of a subcommand"), std::string::npos);
  EXPECT_FALSE(Set("u", {"(+get", "~x)"}, &err));
  EXPECT_EQ(err, "ERR Error in ACL SETUSER modifier '(+get ~x)': Syntax error");
  EXPECT_FALSE(Set("u", {"(+get"}, &err));
  EXPECT_EQ(err, "ERR Unmatched parenthesis in acl selector starting at '(+get'.");
  EXPECT_FALSE(Set("a b", {}, &err));
  EXPECT_EQ(err, "ERR Usernames can't contain spaces or null characters");
  // A failed SETUSER leaves an existing user unchanged.
  ASSERT_TRUE(Set("v", {"on"}));
  EXPECT_FALSE(Set("v", {"off", "bogus"}, &err));
  EXPECT_TRUE(acl_.Find("v")->enabled);
}

TEST_F(AclTest, DescribeRoundTrips) {
  ASSERT_TRUE(Set("u1", {"on", ">p1", "~foo*", "%R~r*", "%W~w*", "&ch*", "+@read", "+set", "-get",
                         "+config|get", "resetchannels", "&x"}));
  EXPECT_EQ(Line("u1"),
            "on #f64551fcd6f07823cb87971cfb91446425da18286b3ab1ef935e0cbd7a69f68a ~foo* %R~r* "
            "%W~w* resetchannels &x -@all +@read -get +set +config|get");
  EXPECT_EQ(Acl::DescribeKeys(*acl_.Find("u1")), "~foo* %R~r* %W~w*");
  EXPECT_EQ(Acl::DescribeChannels(*acl_.Find("u1")), "&x");
  ASSERT_TRUE(Set("z", {"+config", "-config|set"}));
  EXPECT_EQ(acl_.DescribeCommands(*acl_.Find("z")), "-@all +config -config|set");
  ASSERT_TRUE(Set("y", {"+@all", "-config|set", "-@dangerous"}));
  EXPECT_EQ(acl_.DescribeCommands(*acl_.Find("y")), "+@all -@dangerous");
  ASSERT_TRUE(Set("f", {"+select|0"}));
  EXPECT_EQ(acl_.DescribeCommands(*acl_.Find("f")), "-@all +select|0");
  ASSERT_TRUE(Set("s", {"skip-sanitize-payload", "nopass", "on"}));
  EXPECT_EQ(Line("s"), "on nopass skip-sanitize-payload resetchannels -@all");
  // Applying a description to a fresh user gives the same description.
  for (std::string_view name : {"u1", "z", "y", "f", "s"}) {
    std::string line = Line(name);
    std::vector<std::string_view> ops;
    size_t pos = 0;
    while (pos <= line.size()) {
      size_t sp = line.find(' ', pos);
      if (sp == std::string::npos) sp = line.size();
      ops.push_back(std::string_view(line).substr(pos, sp - pos));
      pos = sp + 1;
    }
    std::string copy = std::string(name) + "_copy";
    ASSERT_TRUE(Set(copy, ops)) << line;
    EXPECT_EQ(Line(copy), line);
  }
}

TEST_F(AclTest, ResetAndRequirepass) {
  ASSERT_TRUE(Set("u", {"on", ">x", "~*", "&*", "+@all", "reset"}));
  EXPECT_EQ(Line("u"), "off sanitize-payload resetchannels -@all");
  acl_.SetDefaultPassword("secret");
  EXPECT_TRUE(acl_.default_needs_auth());
  EXPECT_NE(acl_.Authenticate("default", "secret"), nullptr);
  EXPECT_EQ(acl_.Authenticate("default", "other"), nullptr);
  acl_.SetDefaultPassword("");
  EXPECT_FALSE(acl_.default_needs_auth());
  EXPECT_TRUE(acl_.Find("default")->nopass);
}

TEST_F(AclTest, CommandChecks) {
  ASSERT_TRUE(Set("u", {"on", "~*", "-@all", "+@string", "-set", "+config|get", "+select|0"}));
  EXPECT_EQ(Check("u", {"get", "k"}).kind, AclVerdict::kOk);
  EXPECT_EQ(Check("u", {"set", "k", "v"}).kind, AclVerdict::kCommand);
  EXPECT_EQ(Check("u", {"config", "get", "x"}).kind, AclVerdict::kOk);
  EXPECT_EQ(Check("u", {"config", "set", "x", "y"}).kind, AclVerdict::kCommand);
  EXPECT_EQ(Check("u", {"select", "0"}).kind, AclVerdict::kOk);
  EXPECT_EQ(Check("u", {"select", "1"}).kind, AclVerdict::kCommand);
  EXPECT_EQ(Check("u", {"del", "k"}).kind, AclVerdict::kCommand);
  // AUTH and HELLO are never refused.
  EXPECT_EQ(Check("u", {"auth", "a", "b"}).kind, AclVerdict::kOk);
}

TEST_F(AclTest, KeyChecks) {
  ASSERT_TRUE(Set("u", {"on", "+@all", "~k*", "%R~r*", "%W~w*"}));
  EXPECT_EQ(Check("u", {"get", "k1"}).kind, AclVerdict::kOk);
  EXPECT_EQ(Check("u", {"get", "r1"}).kind, AclVerdict::kOk);
  AclVerdict v = Check("u", {"get", "w1"});
  EXPECT_EQ(v.kind, AclVerdict::kKey);
  EXPECT_EQ(v.arg, 1);
  EXPECT_EQ(Check("u", {"set", "w1", "v"}).kind, AclVerdict::kOk);
  EXPECT_EQ(Check("u", {"set", "r1", "v"}).kind, AclVerdict::kKey);
  EXPECT_EQ(Check("u", {"incr", "w1"}).kind, AclVerdict::kKey);   // reads and writes
  EXPECT_EQ(Check("u", {"exists", "w1"}).kind, AclVerdict::kOk);  // metadata only
  v = Check("u", {"mset", "k1", "a", "zz", "b"});
  EXPECT_EQ(v.kind, AclVerdict::kKey);
  EXPECT_EQ(v.arg, 3);
  EXPECT_EQ(Check("u", {"mget", "k1", "r2"}).kind, AclVerdict::kOk);
}

TEST_F(AclTest, ChannelChecks) {
  ASSERT_TRUE(Set("u", {"resetchannels", "&ch*", "&news"}));
  const AclUser& u = *acl_.Find("u");
  EXPECT_TRUE(Acl::ChannelAllowed(u, "ch1", false));
  EXPECT_TRUE(Acl::ChannelAllowed(u, "news", false));
  EXPECT_FALSE(Acl::ChannelAllowed(u, "zz", false));
  EXPECT_TRUE(Acl::ChannelAllowed(u, "ch*", true));
  EXPECT_FALSE(Acl::ChannelAllowed(u, "c*", true));
  EXPECT_FALSE(Acl::ChannelAllowed(u, "ch1", true));
  EXPECT_TRUE(Acl::ChannelAllowed(*acl_.Find("default"), "anything", true));
  std::string err;
  EXPECT_FALSE(Set("d", {"&*", "&x"}, &err));
  EXPECT_NE(err.find("'allchannels' flag"), std::string::npos);
}

TEST_F(AclTest, VersionMovesOnEveryChange) {
  uint64_t v = acl_.version();
  ASSERT_TRUE(Set("u", {"on"}));
  EXPECT_GT(acl_.version(), v);
  v = acl_.version();
  std::vector<std::string_view> names = {"u", "nosuch"};
  EXPECT_EQ(acl_.DelUsers(names), 1);
  EXPECT_GT(acl_.version(), v);
  EXPECT_EQ(acl_.Find("u"), nullptr);
}

TEST_F(AclTest, FileSaveLoadRoundTrip) {
  std::string path = ::testing::TempDir() + "acl_test_" + std::to_string(getpid()) + ".acl";
  ASSERT_TRUE(Set("alice", {"on", ">pw", "~a*", "+get"}));
  std::string err;
  ASSERT_TRUE(acl_.SaveFile(path, &err)) << err;
  std::string before = Line("alice");
  ASSERT_TRUE(Set("alice", {"reset"}));
  ASSERT_TRUE(Set("bob", {"on"}));
  ASSERT_TRUE(acl_.LoadFile(path, &err)) << err;
  EXPECT_EQ(Line("alice"), before);
  EXPECT_EQ(acl_.Find("bob"), nullptr);

  // A bad file changes nothing.
  {
    std::ofstream out(path);
    out << "user carol on\n# comment\nuser dave bogus\n";
  }
  EXPECT_FALSE(acl_.LoadFile(path, &err));
  EXPECT_EQ(err, path + ":2 should start with user keyword followed by the username. " + path +
                     ":3: Syntax error. WARNING: ACL errors detected, no change to the previously "
                     "active ACL rules was performed");
  EXPECT_EQ(acl_.Find("carol"), nullptr);
  EXPECT_NE(acl_.Find("alice"), nullptr);
  std::remove(path.c_str());
  EXPECT_FALSE(acl_.LoadFile(path, &err));
  EXPECT_NE(err.find("Error loading ACLs, opening file"), std::string::npos);
}

TEST(AclLogTest, MergesEqualEntries) {
  AclLog log;
  AclLogEntry e{1, "command", "toplevel", "set", "u", 1000, "id=1"};
  log.Add(e);
  e.client_info = "id=2";
  e.created_ms = 2000;
  log.Add(e);
  AclLogEntry other{1, "key", "toplevel", "k", "u", 2500, "id=3"};
  log.Add(other);
  auto entries = log.Newest(10);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].reason, "key");
  e.created_ms = 3000;
  log.Add(e);
  entries = log.Newest(10);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].count, 3u);
  EXPECT_EQ(entries[0].client_info, "id=2");
  log.Reset();
  EXPECT_TRUE(log.Newest(10).empty());
}

}  // namespace
}  // namespace lavik
