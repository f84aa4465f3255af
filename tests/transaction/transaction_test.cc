#include "transaction/transaction.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "storage/test_data_file.h"

namespace lavik {
namespace {

using storage_test::Del;
using storage_test::Put;

std::shared_ptr<WatchFlag> NewFlag() { return std::make_shared<WatchFlag>(); }
bool Dirty(const std::shared_ptr<WatchFlag>& f) { return f->dirty.load(); }

TEST(WatchTableTest, ChangeFlagsEveryWatcherOfThatKeyOnly) {
  WatchTable t(nullptr);
  auto a = NewFlag(), b = NewFlag(), c = NewFlag();
  t.Add("k", a);
  t.Add("k", b);
  t.Add("other", c);
  t.KeyChanged("nosuch");
  EXPECT_FALSE(Dirty(a));
  t.KeyChanged("k");
  EXPECT_TRUE(Dirty(a));
  EXPECT_TRUE(Dirty(b));
  EXPECT_FALSE(Dirty(c));
  EXPECT_EQ(t.size(), 1u);  // a changed key is forgotten: its watchers are all flagged
}

TEST(WatchTableTest, RemoveForgetsOneWatcher) {
  WatchTable t(nullptr);
  auto a = NewFlag(), b = NewFlag();
  t.Add("k", a);
  t.Add("k", b);
  t.Remove("k", a.get());
  t.Remove("k", a.get());       // twice: no-op
  t.Remove("nosuch", a.get());  // unknown key: no-op
  t.KeyChanged("k");
  EXPECT_FALSE(Dirty(a));
  EXPECT_TRUE(Dirty(b));
  t.Remove("k", b.get());  // after the change forgot the key
  EXPECT_EQ(t.size(), 0u);
}

TEST(WatchTableTest, FlushFlagsOnlyExistingKeys) {
  WatchTable t(nullptr);
  auto a = NewFlag(), b = NewFlag();
  t.Add("there", a);
  t.Add("missing", b);
  t.Flush([](std::string_view k) { return k == "there"; });
  EXPECT_TRUE(Dirty(a));
  EXPECT_FALSE(Dirty(b));
  EXPECT_EQ(t.size(), 1u);
}

TEST(WatchTableTest, StoreHasTheObserverOnlyWhileSomethingIsWatched) {
  TestDataFile file;
  ASSERT_TRUE(file.ok()) << file.error();
  std::unique_ptr<Store> store = std::move(file.MakeStores(1, StoreOptions{})[0]);
  {
    WatchTable t(store.get());
    EXPECT_EQ(store->key_observer(), nullptr);
    auto a = NewFlag();
    t.Add("k", a);
    EXPECT_EQ(store->key_observer(), &t);
    ASSERT_TRUE(Put(*store, "unwatched", "v").ok());
    EXPECT_FALSE(Dirty(a));
    ASSERT_TRUE(Put(*store, "k", "v").ok());
    EXPECT_TRUE(Dirty(a));
    EXPECT_EQ(store->key_observer(), nullptr);  // nothing left to watch

    auto b = NewFlag();
    t.Add("k", b);
    bool existed = false;
    ASSERT_TRUE(Del(*store, "missing", &existed).ok());
    EXPECT_FALSE(Dirty(b));  // deleting a missing key changes nothing
    ASSERT_TRUE(Del(*store, "k", &existed).ok());
    EXPECT_TRUE(existed);
    EXPECT_TRUE(Dirty(b));

    auto c = NewFlag();
    t.Add("gone", c);
    EXPECT_EQ(store->key_observer(), &t);
  }
  EXPECT_EQ(store->key_observer(), nullptr);  // the table detaches when it goes
}

CommandSpec Spec(uint32_t flags, int first, int last, int step) {
  return CommandSpec{"x", -1, flags, first, last, step, nullptr, "", "", "", ""};
}

std::set<int> Shards(const CommandSpec& spec, std::vector<std::string_view> args, int n = 4) {
  std::vector<int> out;
  AddCommandShards(
      spec, args, n, [](std::string_view k) { return k[0] - '0'; }, &out);
  return std::set<int>(out.begin(), out.end());
}

TEST(AddCommandShardsTest, KeysFromTheSpec) {
  EXPECT_EQ(Shards(Spec(kCmdWrite, 1, 1, 1), {"set", "2k", "v"}), (std::set<int>{2}));
  EXPECT_EQ(Shards(Spec(kCmdWrite, 1, -1, 2), {"mset", "1a", "3v", "2b", "0v"}),
            (std::set<int>{1, 2}));
  EXPECT_EQ(Shards(Spec(kCmdReadOnly, 1, -1, 1), {"mget", "3a", "0b", "3c"}),
            (std::set<int>{0, 3}));
  EXPECT_EQ(Shards(Spec(kCmdWrite, 1, 2, 1), {"rename", "1a", "2b"}), (std::set<int>{1, 2}));
}

TEST(AddCommandShardsTest, KeylessKeyspaceCommandsTakeEveryShard) {
  EXPECT_EQ(Shards(Spec(kCmdWrite, 0, 0, 0), {"flushall"}), (std::set<int>{0, 1, 2, 3}));
  EXPECT_EQ(Shards(Spec(kCmdReadOnly, 0, 0, 0), {"dbsize"}), (std::set<int>{0, 1, 2, 3}));
  EXPECT_EQ(Shards(Spec(kCmdReadOnly | kCmdMovableKeys, 2, 2, 1), {"x", "n", "1a"}),
            (std::set<int>{0, 1, 2, 3}));
}

TEST(AddCommandShardsTest, ConnectionCommandsTakeNone) {
  EXPECT_TRUE(Shards(Spec(kCmdHome | kCmdFast, 0, 0, 0), {"ping"}).empty());
  EXPECT_TRUE(Shards(Spec(kCmdHome, 0, 0, 0), {"client", "setname", "x"}).empty());
}

}  // namespace
}  // namespace lavik
