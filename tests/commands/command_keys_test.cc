#include "commands/command_keys.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace lavik {
namespace {

// The keys of a call as "arg:spec" pairs, or "invalid".
std::string Keys(const CommandSpec& spec, std::vector<std::string_view> args) {
  std::vector<KeyRef> keys;
  if (!CommandKeys(spec, args, &keys)) return "invalid";
  std::string out;
  for (const KeyRef& k : keys) {
    if (!out.empty()) out += ' ';
    out += std::string(args[k.arg]) + ":" + std::to_string(k.spec);
  }
  return out;
}

// Specs as Redis's COMMAND INFO has them (first, last, step, movablekeys).
constexpr CommandSpec Spec(std::string_view name, int arity, uint32_t flags, int first, int last,
                           int step) {
  return {name, arity, flags, first, last, step, nullptr, "", "", "", ""};
}
constexpr CommandSpec kGet = Spec("get", 2, kCmdReadOnly, 1, 1, 1);
constexpr CommandSpec kMset = Spec("mset", -3, kCmdWrite, 1, -1, 2);
constexpr CommandSpec kLmove = Spec("lmove", 5, kCmdWrite, 1, 2, 1);
constexpr CommandSpec kZunionstore = Spec("zunionstore", -4, kCmdWrite | kCmdMovableKeys, 1, 1, 1);
constexpr CommandSpec kZunion = Spec("zunion", -3, kCmdReadOnly | kCmdMovableKeys, 0, 0, 0);
constexpr CommandSpec kXread = Spec("xread", -4, kCmdReadOnly | kCmdMovableKeys, 0, 0, 0);
constexpr CommandSpec kEval = Spec("eval", -3, kCmdMovableKeys, 0, 0, 0);
constexpr CommandSpec kSort = Spec("sort", -2, kCmdWrite | kCmdMovableKeys, 1, 1, 1);
constexpr CommandSpec kGeoradius = Spec("georadius", -6, kCmdWrite | kCmdMovableKeys, 1, 1, 1);
constexpr CommandSpec kMigrate = Spec("migrate", -6, kCmdWrite | kCmdMovableKeys, 3, 3, 1);
constexpr CommandSpec kPing = Spec("ping", -1, 0, 0, 0, 0);
constexpr CommandSpec kSet = Spec("set", -3, kCmdWrite, 1, 1, 1);

TEST(CommandKeysTest, FixedPositions) {
  EXPECT_EQ(Keys(kGet, {"get", "a"}), "a:0");
  EXPECT_EQ(Keys(kMset, {"mset", "a", "1", "b", "2"}), "a:0 b:0");
  EXPECT_EQ(Keys(kLmove, {"lmove", "s", "d", "left", "right"}), "s:0 d:1");
  EXPECT_EQ(Keys(kPing, {"ping"}), "");
}

TEST(CommandKeysTest, Numkeys) {
  EXPECT_EQ(Keys(kZunionstore, {"zunionstore", "d", "2", "a", "b", "weights", "1", "2"}),
            "d:0 a:1 b:1");
  EXPECT_EQ(Keys(kZunionstore, {"zunionstore", "d", "0", "a"}), "invalid");
  EXPECT_EQ(Keys(kZunion, {"zunion", "2", "a", "b"}), "a:0 b:0");
  EXPECT_EQ(Keys(kZunion, {"zunion", "3", "a"}), "invalid");
  EXPECT_EQ(Keys(kXread, {"xread", "count", "1", "streams", "a", "b", "0", "0"}), "a:0 b:0");
}

TEST(CommandKeysTest, ScriptsCountTheirKeys) {
  EXPECT_EQ(Keys(kEval, {"eval", "return 1", "2", "a", "b", "arg"}), "a:0 b:0");
  EXPECT_EQ(Keys(kEval, {"eval", "return 1", "0"}), "");
  EXPECT_EQ(Keys(kEval, {"eval", "return 1", "3", "a"}), "invalid");
  EXPECT_EQ(Keys(kEval, {"eval", "return 1", "-1"}), "invalid");
  EXPECT_TRUE(KeysAreOptional(kEval));
  EXPECT_FALSE(KeysAreOptional(kZunion));
}

TEST(CommandKeysTest, SortStoreLastWins) {
  EXPECT_EQ(Keys(kSort, {"sort", "a", "limit", "0", "1", "store", "b"}), "a:0 b:2");
  EXPECT_EQ(Keys(kSort, {"sort", "a", "by", "store", "store", "c"}), "a:0 c:2");
  EXPECT_EQ(Keys(kSort, {"sort", "a", "store", "b", "store", "c"}), "a:0 c:2");
  EXPECT_EQ(KeySpecFlags(kSort, std::vector<std::string_view>{"sort", "a"}, 2), "OW update");
}

TEST(CommandKeysTest, GeoradiusStoreThenStoredist) {
  EXPECT_EQ(
      Keys(kGeoradius, {"georadius", "a", "0", "0", "1", "km", "storedist", "c", "store", "b"}),
      "a:0 b:1 c:2");
  EXPECT_EQ(Keys(kGeoradius, {"georadius", "a", "0", "0", "1", "km", "store", "b", "store", "c"}),
            "a:0 b:1");
  EXPECT_EQ(Keys(kGeoradius, {"georadius", "a", "0", "0", "1", "km", "store"}), "a:0");
}

TEST(CommandKeysTest, MigrateKeyOrKeys) {
  EXPECT_EQ(Keys(kMigrate, {"migrate", "h", "1", "k", "0", "5"}), "k:0");
  EXPECT_EQ(Keys(kMigrate, {"migrate", "h", "1", "", "0", "5", "auth", "keys", "keys", "a", "b"}),
            "a:1 b:1");
  EXPECT_EQ(Keys(kMigrate, {"migrate", "h", "1", "k", "0", "5", "keys", "a"}), "invalid");
}

TEST(CommandKeysTest, Flags) {
  const std::vector<std::string_view> plain = {"set", "a", "b"};
  const std::vector<std::string_view> get = {"set", "a", "b", "GET"};
  EXPECT_EQ(KeySpecFlags(kSet, plain, 0), "OW update");
  EXPECT_EQ(KeySpecFlags(kSet, get, 0), "RW access update");
  const std::vector<std::string_view> lmove = {"lmove", "s", "d", "left", "right"};
  EXPECT_EQ(KeySpecFlags(kLmove, lmove, 0), "RW access delete");
  EXPECT_EQ(KeySpecFlags(kLmove, lmove, 1), "RW insert");
  EXPECT_EQ(KeySpecFlags(kLmove, lmove, 2), "");
  EXPECT_TRUE(CommandHasKeys(kGet));
  EXPECT_TRUE(CommandHasKeys(kEval));
  EXPECT_FALSE(CommandHasKeys(kPing));
}

}  // namespace
}  // namespace lavik
