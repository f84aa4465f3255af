// The commands between databases (base/db_key.h): MOVE and SWAPDB. SELECT is a connection
// command (server/connection_commands.cc); COPY ... DB n is in key_copy.cc.
//
// MOVE key db: the key's value is re-created under its stored name in the other database and
// then deleted here, under both names' shard locks (they may be on different workers).
// SWAPDB a b: every shard held, the logical → physical map is swapped (O(1), no key touched)
// and written to the superblock before the reply.
#include <climits>
#include <string>
#include <vector>

#include "base/db_key.h"
#include "base/numbers.h"
#include "commands/families.h"
#include "commands/key_copy.h"
#include "commands/multi_shard.h"
#include "notify/keyspace_events.h"
#include "protocol/errors.h"
#include "storage/store.h"

namespace lavik {
namespace {

// A database index argument: false (with Redis's reply) if it is not an integer or out of range.
bool DbIndexOrReply(Context& ctx, std::string_view arg, std::string_view not_integer, int* db) {
  int64_t n;
  if (!ParseInt64(arg, &n)) {
    ctx.reply->Error(not_integer);
    return false;
  }
  if (n < INT_MIN || n > INT_MAX) {
    ctx.reply->Error(not_integer == kErrNotInteger ? kErrNotInt32 : not_integer);
    return false;
  }
  if (n < 0 || n >= DbMap::Count()) {
    ctx.reply->Error(kErrDbIndexRange);
    return false;
  }
  *db = static_cast<int>(n);
  return true;
}

Task Move(Context& ctx) {
  if (DbMap::ClusterMode()) {
    ctx.reply->Error("ERR MOVE is not allowed in cluster mode");
    co_return;
  }
  int target;
  if (!DbIndexOrReply(ctx, ctx.args[2], kErrNotInteger, &target)) co_return;
  const int dst_db = DbMap::Physical(target);
  if (dst_db == ctx.db) {
    ctx.reply->Error("ERR source and destination objects are the same");
    co_return;
  }
  const std::string src(ctx.args[1]);
  const std::string dst = DbKey(dst_db, ClientKey(src));
  KeyPlan plan(ctx, std::vector<std::string_view>{src, dst});
  KeyCopy value;
  std::string error;
  bool moved = false;
  co_await plan.Lock();
  // Redis looks both keys up for writing: no keyspace hit, miss or "keymiss".
  bool src_exists = false, dst_exists = false;
  co_await plan.On(plan.shard_of(0),
                   [&](Store& st) { src_exists = st.Lookup(src, ctx.now_ms).exists; });
  if (src_exists) {
    co_await plan.On(plan.shard_of(1),
                     [&](Store& st) { dst_exists = st.Lookup(dst, ctx.now_ms).exists; });
  }
  if (src_exists && !dst_exists) {
    co_await plan.Run(plan.shard_of(0), [&](Store& st) -> Task {
      co_await ReadKeyCopy(st, src, ctx.now_ms, &value, &error);
    });
  }
  if (error.empty() && value.exists) {
    co_await plan.Run(plan.shard_of(1), [&](Store& st) -> Task {
      moved = co_await WriteKeyCopy(st, dst, value, &error);
    });
  }
  if (moved) {
    co_await plan.Run(plan.shard_of(0), [&](Store& st) -> Task {
      bool existed = false;
      WriteResult w = co_await st.Delete(src, ctx.now_ms, &existed);
      if (!w.ok()) error = w.error;
    });
    if (error.empty()) NotifyKeyMoved(src, dst);
  }
  co_await plan.Unlock();
  if (!error.empty()) {
    ctx.reply->Error(error);
  } else {
    ctx.reply->Integer(moved ? 1 : 0);
  }
}

Task SwapDb(Context& ctx) {
  if (DbMap::ClusterMode()) {
    ctx.reply->Error("ERR SWAPDB is not allowed in cluster mode");
    co_return;
  }
  int a, b;
  if (!DbIndexOrReply(ctx, ctx.args[1], "ERR invalid first DB index", &a) ||
      !DbIndexOrReply(ctx, ctx.args[2], "ERR invalid second DB index", &b)) {
    co_return;
  }
  KeyPlan plan(ctx, std::vector<std::string_view>{});
  plan.CoverAllShards();
  co_await plan.Lock();
  const int pa = DbMap::Physical(a), pb = DbMap::Physical(b);
  // WATCH: a watched key that exists in either database now changes (Redis's
  // touchAllWatchedKeysInDb; Lavik flags the watched keys that exist in their own database).
  for (int s = 0; s < ctx.shards->size(); ++s) {
    co_await plan.On(s, [&](Store& st) {
      if (KeyObserver* o = st.key_observer(); o != nullptr && a != b) {
        o->BeforeFlush(st, pa);
        o->BeforeFlush(st, pb);
      }
    });
  }
  DbMap::Swap(a, b);
  std::array<uint8_t, kMaxDatabases> map;
  for (int d = 0; d < kMaxDatabases; ++d) {
    map[static_cast<size_t>(d)] = static_cast<uint8_t>(DbMap::Physical(d));
  }
  std::string error;
  if (!ctx.shards->at(0).store.file().SetDbMap(map, &error)) {
    DbMap::Swap(a, b);  // not durable: not done
    error = "ERR SWAPDB failed: " + error;
  }
  co_await plan.Unlock();
  ReplyErrorOrOk(ctx, error);
}

constexpr uint32_t kW = kCmdWrite;

const CommandSpec kDbCommands[] = {
    {"move", 3, kW | kCmdFast, 1, 1, 1, &Move, "@keyspace @write @fast", "generic",
     "Moves a key to another database.", "1.0.0"},
    {"swapdb", 3, kW | kCmdFast, 0, 0, 0, &SwapDb, "@keyspace @write @fast @dangerous", "server",
     "Swaps two Redis databases.", "4.0.0"},
};

}  // namespace

std::span<const CommandSpec> DbCommands() { return kDbCommands; }

}  // namespace lavik
