#include "commands/command_table.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "blocking/list_blocking.h"
#include "blocking/stream_blocking.h"
#include "cluster/cluster_commands.h"
#include "commands/families.h"
#include "commands/key_copy.h"
#include "commands/lcs.h"
#include "observability/observability.h"
#include "pubsub/pubsub.h"
#include "replication/replication_commands.h"
#include "scripting/scripting.h"
#include "server/command_registry.h"
#include "server/object_command.h"
#include "server/reset_command.h"
#include "transaction/transaction.h"

namespace lavik {
namespace {

bool IsLowercase(std::string_view s) {
  for (char c : s) {
    if (std::isupper(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// "GeT" style: every other letter upper-case.
std::string Mixed(std::string_view s) {
  std::string out(s);
  for (size_t i = 0; i < out.size(); i += 2) {
    out[i] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[i])));
  }
  return out;
}

// Every spec, top-level and subcommands.
std::vector<const CommandSpec*> AllSpecs(const CommandTable& table) {
  std::vector<const CommandSpec*> out;
  for (const CommandSpec* spec : table.all()) {
    out.push_back(spec);
    for (const CommandSpec& sub : spec->subcommands) out.push_back(&sub);
  }
  return out;
}

class CommandTableTest : public ::testing::Test {
 protected:
  CommandTable table_{AllCommandFamilies()};
};

TEST_F(CommandTableTest, HoldsEveryFamily) {
  size_t expected = StringCommands().size() + KeyCommands().size() + ConnectionCommands().size() +
                    ServerCommands().size() + ObservabilityCommands().size() +
                    AclCommands().size() + PubSubCommands().size() + HashCommands().size() +
                    SetCommands().size() + ListCommands().size() + ListBlockingCommands().size() +
                    TransactionCommands().size() + ZSetSingleKeyCommands().size() +
                    ZSetMultiKeyCommands().size() + ZSetBlockingCommands().size() +
                    ResetCommands().size() + ObjectCommands().size() + CopyCommands().size();
  expected += StreamCommands().size() + StreamGroupCommands().size() + StreamInfoCommands().size() +
              StreamReadCommands().size();
  expected += BitmapCommands().size() + HyperLogLogCommands().size() + GeoCommands().size() +
              SortCommands().size() + LcsCommands().size() + DumpCommands().size();
  expected += MemoryCommands().size() + SaveCommands().size() + LolwutCommands().size();
  expected += ScriptingCommands().size() + DbCommands().size();
  expected += ReplicationCommands().size() + MigrateCommands().size() + ClusterCommands().size();
  EXPECT_EQ(table_.all().size(), expected);
  EXPECT_GT(expected, 50u);
  for (std::string_view name : {"get", "set", "mset", "del", "scan", "ping", "client", "config",
                                "command", "info", "hello", "expire", "rename"}) {
    EXPECT_NE(table_.Find(name), nullptr) << name;
  }
}

TEST_F(CommandTableTest, NamesAreLowercaseAndUnique) {
  std::set<std::string_view> names;
  for (const CommandSpec* spec : table_.all()) {
    EXPECT_FALSE(spec->name.empty());
    EXPECT_TRUE(IsLowercase(spec->name)) << spec->name;
    EXPECT_EQ(spec->name.find('|'), std::string_view::npos) << spec->name;
    EXPECT_TRUE(names.insert(spec->name).second) << "duplicate command " << spec->name;
  }
}

TEST_F(CommandTableTest, FindReturnsTheRegisteredSpec) {
  for (const CommandSpec* spec : table_.all()) {
    EXPECT_EQ(table_.Find(spec->name), spec) << spec->name;
  }
}

TEST_F(CommandTableTest, FindIsCaseInsensitive) {
  for (const CommandSpec* spec : table_.all()) {
    EXPECT_EQ(table_.Find(Upper(spec->name)), spec) << spec->name;
    EXPECT_EQ(table_.Find(Mixed(spec->name)), spec) << spec->name;
  }
}

TEST_F(CommandTableTest, UnknownNamesAreNull) {
  EXPECT_EQ(table_.Find("nosuchcommand"), nullptr);
  EXPECT_EQ(table_.Find(""), nullptr);
  EXPECT_EQ(table_.Find("ge"), nullptr);
  EXPECT_EQ(table_.Find("gett"), nullptr);
  EXPECT_EQ(table_.Find("get "), nullptr);
  EXPECT_EQ(table_.Find(std::string_view("get\0", 4)), nullptr);
  EXPECT_EQ(table_.Find("client|id"), nullptr);  // subcommands are not top-level commands
  EXPECT_EQ(table_.Find(std::string(1000, 'g')), nullptr);
  // Only ASCII letters fold: a byte >= 0x80 must not be mistaken for a letter.
  EXPECT_EQ(table_.Find("g\xC5t"), nullptr);
}

// Every name with one byte changed, or one byte added or removed at either end, finds nothing
// unless the change is a case fold: the short names' packed words and the long names' hash
// index both compare every byte and the length.
TEST_F(CommandTableTest, NamesOneByteAwayAreNotFound) {
  std::set<std::string> names;
  for (const CommandSpec* spec : table_.all()) names.emplace(spec->name);
  // Found exactly when its ASCII-lowercase form is a command's name.
  auto expect_found_iff_named = [&](const std::string& m) {
    std::string folded = m;
    for (char& c : folded) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_EQ(table_.Find(m) != nullptr, names.count(folded) != 0) << m;
  };
  const std::string bytes = std::string("aAzZ_\x7f-|0\x80\xC1 ", 12) + std::string(1, '\0');
  size_t tried = 0;
  for (const std::string& name : names) {
    for (size_t i = 0; i < name.size(); ++i) {
      for (char b : bytes) {
        std::string m = name;
        m[i] = b;
        expect_found_iff_named(m);
        ++tried;
      }
    }
    for (char b : bytes) {
      expect_found_iff_named(name + b);
      expect_found_iff_named(b + name);
    }
    expect_found_iff_named(name.substr(1));
    expect_found_iff_named(name.substr(0, name.size() - 1));
  }
  EXPECT_GT(tried, 10000u);
  // Names around the two indexes' boundary (15 bytes): neither index holds a wrong length.
  for (size_t n = 1; n <= 40; ++n) EXPECT_EQ(table_.Find(std::string(n, 'x')), nullptr) << n;
}

TEST_F(CommandTableTest, ArityRules) {
  const CommandSpec* get = table_.Find("get");  // arity 2: exactly
  ASSERT_NE(get, nullptr);
  ASSERT_EQ(get->arity, 2);
  EXPECT_FALSE(CommandTable::ArityOk(*get, 0));
  EXPECT_FALSE(CommandTable::ArityOk(*get, 1));
  EXPECT_TRUE(CommandTable::ArityOk(*get, 2));
  EXPECT_FALSE(CommandTable::ArityOk(*get, 3));

  const CommandSpec* set = table_.Find("set");  // arity -3: at least 3
  ASSERT_NE(set, nullptr);
  ASSERT_EQ(set->arity, -3);
  EXPECT_FALSE(CommandTable::ArityOk(*set, 2));
  EXPECT_TRUE(CommandTable::ArityOk(*set, 3));
  EXPECT_TRUE(CommandTable::ArityOk(*set, 4));
  EXPECT_TRUE(CommandTable::ArityOk(*set, 1000));

  const CommandSpec* ping = table_.Find("ping");  // arity -1: any
  ASSERT_NE(ping, nullptr);
  ASSERT_EQ(ping->arity, -1);
  EXPECT_TRUE(CommandTable::ArityOk(*ping, 1));
  EXPECT_TRUE(CommandTable::ArityOk(*ping, 2));

  CommandSpec one{};
  one.arity = 1;
  EXPECT_TRUE(CommandTable::ArityOk(one, 1));
  EXPECT_FALSE(CommandTable::ArityOk(one, 2));
}

TEST_F(CommandTableTest, EveryArityIsSet) {
  for (const CommandSpec* spec : AllSpecs(table_)) {
    EXPECT_NE(spec->arity, 0) << spec->name;
    // Subcommands count the container's name and their own.
    if (spec->name.find('|') != std::string_view::npos) {
      EXPECT_GE(std::abs(spec->arity), 2) << spec->name;
    }
  }
}

TEST_F(CommandTableTest, KeyPositionsAreConsistent) {
  for (const CommandSpec* spec : AllSpecs(table_)) {
    SCOPED_TRACE(std::string(spec->name));
    if (spec->first_key == 0) {
      EXPECT_EQ(spec->last_key, 0);
      EXPECT_EQ(spec->key_step, 0);
      // Keyless, unless its keys come from a numkeys argument (SINTERCARD, LMPOP, ZUNION...:
      // Redis reports "0 0 0" with movablekeys too) or follow STREAMS (XREAD, XREADGROUP).
      if (spec->flags & kCmdMovableKeys) {
        const std::set<std::string_view> numkeys = {"sintercard", "lmpop", "blmpop",     "zunion",
                                                    "zinter",     "zdiff", "zintercard", "zmpop",
                                                    "bzmpop",     "eval",  "evalsha",    "eval_ro",
                                                    "evalsha_ro", "fcall", "fcall_ro"};
        const std::set<std::string_view> streams = {"xread", "xreadgroup"};
        EXPECT_TRUE(numkeys.count(spec->name) || streams.count(spec->name)) << spec->name;
      }
      continue;
    }
    EXPECT_GT(spec->first_key, 0);
    EXPECT_GE(spec->key_step, 1);
    const int min_args = std::abs(spec->arity);
    // The first key is always present when the arity check passed.
    EXPECT_LT(spec->first_key, min_args);
    if (spec->last_key > 0) {
      EXPECT_GE(spec->last_key, spec->first_key);
      EXPECT_EQ((spec->last_key - spec->first_key) % spec->key_step, 0);
      if (spec->arity > 0) {
        EXPECT_LT(spec->last_key, spec->arity);
      }
    } else {
      // Counted from the end: -1 is the last argument.
      EXPECT_LT(spec->last_key, 0);
      EXPECT_LT(spec->arity, 0) << "a fixed-arity command names its last key directly";
    }
    // WATCH names keys it neither reads nor writes (Redis's flags say neither).
    if (spec->name == "watch") continue;
    EXPECT_TRUE(spec->flags & (kCmdWrite | kCmdReadOnly)) << "keyed commands read or write";
  }
}

TEST_F(CommandTableTest, WriteAndReadOnlyAreExclusive) {
  for (const CommandSpec* spec : AllSpecs(table_)) {
    EXPECT_FALSE((spec->flags & kCmdWrite) && (spec->flags & kCmdReadOnly)) << spec->name;
  }
}

TEST_F(CommandTableTest, SubcommandsResolve) {
  for (std::string_view container_name : {"client", "config", "command"}) {
    const CommandSpec* container = table_.Find(container_name);
    ASSERT_NE(container, nullptr) << container_name;
    ASSERT_FALSE(container->subcommands.empty()) << container_name;
    std::set<std::string_view> seen;
    const std::string prefix = std::string(container_name) + "|";
    for (const CommandSpec& sub : container->subcommands) {
      SCOPED_TRACE(std::string(sub.name));
      ASSERT_EQ(sub.name.substr(0, prefix.size()), prefix);
      const std::string_view short_name = sub.name.substr(prefix.size());
      EXPECT_FALSE(short_name.empty());
      EXPECT_EQ(short_name.find('|'), std::string_view::npos);
      EXPECT_TRUE(IsLowercase(sub.name));
      EXPECT_TRUE(seen.insert(short_name).second) << "duplicate subcommand";
      EXPECT_TRUE(sub.subcommands.empty()) << "subcommands do not nest";
      EXPECT_EQ(CommandTable::FindSubcommand(*container, short_name), &sub);
      EXPECT_EQ(CommandTable::FindSubcommand(*container, Upper(short_name)), &sub);
      EXPECT_EQ(CommandTable::FindSubcommand(*container, Mixed(short_name)), &sub);
      // The full name is not a subcommand name.
      EXPECT_EQ(CommandTable::FindSubcommand(*container, sub.name), nullptr);
    }
    EXPECT_EQ(CommandTable::FindSubcommand(*container, "nosuchsub"), nullptr);
    EXPECT_EQ(CommandTable::FindSubcommand(*container, ""), nullptr);
  }
  // Each container's subcommands belong to it alone.
  const CommandSpec* client = table_.Find("client");
  const CommandSpec* config = table_.Find("config");
  EXPECT_NE(CommandTable::FindSubcommand(*client, "setname"), nullptr);
  EXPECT_EQ(CommandTable::FindSubcommand(*config, "setname"), nullptr);
  EXPECT_NE(CommandTable::FindSubcommand(*config, "get"), nullptr);
  EXPECT_EQ(CommandTable::FindSubcommand(*client, "get"), nullptr);
  EXPECT_NE(CommandTable::FindSubcommand(*client, "getname"), nullptr);
  EXPECT_EQ(CommandTable::FindSubcommand(*client, "getnam"), nullptr);
  EXPECT_EQ(CommandTable::FindSubcommand(*client, "getnamex"), nullptr);
}

TEST_F(CommandTableTest, OnlyContainersHaveSubcommands) {
  std::set<std::string_view> containers;
  for (const CommandSpec* spec : table_.all()) {
    if (!spec->subcommands.empty()) containers.insert(spec->name);
    // Leaf commands find no subcommand at all.
    if (spec->subcommands.empty()) {
      EXPECT_EQ(CommandTable::FindSubcommand(*spec, "get"), nullptr) << spec->name;
    }
  }
  EXPECT_EQ(containers,
            (std::set<std::string_view>{"acl", "client", "cluster", "config", "command", "latency",
                                        "memory", "object", "pubsub", "script", "function",
                                        "slowlog", "xgroup", "xinfo"}));
}

TEST_F(CommandTableTest, EverySpecWithoutSubcommandsHasAHandler) {
  for (const CommandSpec* spec : AllSpecs(table_)) {
    if (spec->subcommands.empty()) {
      EXPECT_NE(spec->handler, nullptr) << spec->name;
    }
  }
}

TEST_F(CommandTableTest, DocsFieldsAreFilledIn) {
  for (const CommandSpec* spec : AllSpecs(table_)) {
    SCOPED_TRACE(std::string(spec->name));
    EXPECT_FALSE(spec->summary.empty());
    EXPECT_FALSE(spec->since.empty());
    EXPECT_FALSE(spec->group.empty());
    ASSERT_FALSE(spec->acl_categories.empty());
    EXPECT_EQ(spec->acl_categories.front(), '@');
  }
}

TEST_F(CommandTableTest, RenameCommandMovesOrDisablesACommand) {
  const CommandSpec* config = table_.Find("config");
  const CommandSpec* flushall = table_.Find("flushall");
  ASSERT_NE(config, nullptr);
  ASSERT_NE(flushall, nullptr);
  const size_t count = table_.all().size();
  EXPECT_EQ(table_.Rename("CONFIG", "C0nfig"), "");
  EXPECT_EQ(table_.Find("config"), nullptr);
  EXPECT_EQ(table_.Find("c0nFIG"), config);  // the new name, any case; subcommands come along
  EXPECT_NE(CommandTable::FindSubcommand(*table_.Find("c0nfig"), "get"), nullptr);
  EXPECT_EQ(table_.all().size(), count);  // renamed, still listed under its own name
  EXPECT_EQ(table_.Rename("flushall", ""), "");
  EXPECT_EQ(table_.Find("flushall"), nullptr);
  EXPECT_EQ(table_.all().size(), count - 1);
  // The server's own lookups still find both.
  EXPECT_EQ(table_.FindOriginal("config"), config);
  EXPECT_EQ(table_.FindOriginal("flushall"), flushall);
  EXPECT_EQ(table_.Rename("config", "x"), "No such command in rename-command");
  EXPECT_EQ(table_.Rename("get", "set"), "Target command name already exists");
  EXPECT_NE(table_.Find("get"), nullptr);
}

}  // namespace
}  // namespace lavik
