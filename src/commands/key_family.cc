// Keyspace commands: DEL, EXISTS, TYPE, the EXPIRE/TTL family, RENAME, KEYS, SCAN, RANDOMKEY,
// DBSIZE, FLUSHDB/FLUSHALL. Commands over the whole keyspace visit every shard in turn.
#include <strings.h>

#include <climits>
#include <string>
#include <vector>

#include "base/ascii.h"
#include "base/db_key.h"
#include "base/glob.h"
#include "base/numbers.h"
#include "commands/collection_access.h"
#include "commands/families.h"
#include "commands/flush.h"
#include "commands/list_chunks.h"
#include "commands/multi_shard.h"
#include "commands/stream_chunked.h"
#include "commands/stream_wait.h"
#include "notify/keyspace_events.h"
#include "protocol/errors.h"
#include "runtime/shard_hop.h"
#include "storage/snapshot_gate.h"
#include "storage/store.h"

namespace lavik {
namespace {

template <typename Fn>
auto OnShard(Context& ctx, int id, Fn fn) {
  Shard* s = &ctx.shards->at(id);
  return ShardHop(s->worker, [s, fn = std::move(fn)]() mutable { fn(s->store); });
}

// fn(Store&) returns a Task that runs on shard `id`'s worker.
template <typename Fn>
auto RunOnShard(Context& ctx, int id, Fn fn) {
  Shard* s = &ctx.shards->at(id);
  return ShardCall(s->worker, [s, fn = std::move(fn)]() mutable { return fn(s->store); });
}

bool WriteOkOrReply(Context& ctx, const WriteResult& w) {
  if (w.ok()) return true;
  ctx.reply->Error(w.error);
  return false;
}

// DEL / UNLINK: deletes keys that may span shards, under their shards' locks.
Task Del(Context& ctx) {
  KeyPlan plan(ctx, ctx.args.subspan(1));
  int64_t count = 0;
  std::string error;
  co_await plan.Lock();
  for (int s : plan.shards()) {
    co_await plan.Run(s, [&, s](Store& st) -> Task {
      for (size_t i = 0; i < plan.keys().size() && error.empty(); ++i) {
        if (plan.shard_of(i) != s) continue;
        bool existed = false;
        WriteResult w = co_await st.Delete(plan.keys()[i], ctx.now_ms, &existed);
        if (!w.ok()) error = w.error;
        if (existed) ++count;
        if (existed) NotifyKeyspaceEvent(kNotifyGeneric, "del", plan.keys()[i]);
      }
    });
  }
  co_await plan.Unlock();
  if (!error.empty()) {
    ctx.reply->Error(error);
  } else {
    ctx.reply->Integer(count);
  }
}

// EXISTS / TOUCH: index lookups only.
Task Exists(Context& ctx) {
  KeyPlan plan(ctx, ctx.args.subspan(1));
  int64_t count = 0;
  for (int s : plan.shards()) {
    co_await plan.On(s, [&](Store& st) {
      for (size_t i = 0; i < plan.keys().size(); ++i) {
        if (plan.shard_of(i) == s && st.LookupRead(plan.keys()[i], ctx.now_ms).exists) ++count;
      }
    });
  }
  ctx.reply->Integer(count);
}

Task Type(Context& ctx) {
  KeyInfo info = ctx.store->LookupRead(ctx.args[1], ctx.now_ms);
  ctx.reply->Simple(info.exists ? TypeName(info.type) : "none");
  co_return;
}

// Gives a key a new TTL (0 = none) by rewriting its record (the value is read first). Deletes it
// if the new expiry is already past. *applied is false if the key changed meanwhile (retry).
TaskOf<bool> RewriteExpireOrReply(Context& ctx, const KeyInfo& info, int64_t expire_ms,
                                  bool* applied) {
  Store& st = *ctx.store;
  WriteResult w;
  const bool past = expire_ms != 0 && expire_ms <= ctx.now_ms;
  if (past) {
    w = co_await st.DeleteIf(ctx.args[1], info.loc, applied);
  } else {
    ReadResult r = co_await st.ReadValue(ctx.args[1], info);
    if (r.status == ReadResult::Status::kError) {
      ctx.reply->Error(r.error);
      co_return false;
    }
    if (!r.ok()) {
      *applied = false;
      co_return true;
    }
    std::string value(r.value);
    w = co_await st.WriteIf(ctx.args[1], info.loc, info.type, value, expire_ms, applied);
  }
  if (w.ok() && *applied) {
    NotifyKeyspaceEvent(kNotifyGeneric,
                        past             ? "del"
                        : expire_ms != 0 ? "expire"
                                         : "persist",
                        ctx.args[1]);
  }
  co_return WriteOkOrReply(ctx, w);
}

enum ExpireFlag : uint32_t { kExpNx = 1, kExpXx = 2, kExpGt = 4, kExpLt = 8 };

// EXPIRE / PEXPIRE / EXPIREAT / PEXPIREAT (Redis 7.0 expireGenericCommand).
Task ExpireGeneric(Context& ctx, int64_t basetime, bool seconds) {
  uint32_t flags = 0;
  for (size_t i = 3; i < ctx.args.size(); ++i) {
    std::string_view o = ctx.args[i];
    if (EqualsNoCase(o, "nx")) {
      flags |= kExpNx;
    } else if (EqualsNoCase(o, "xx")) {
      flags |= kExpXx;
    } else if (EqualsNoCase(o, "gt")) {
      flags |= kExpGt;
    } else if (EqualsNoCase(o, "lt")) {
      flags |= kExpLt;
    } else {
      ctx.reply->Error("ERR Unsupported option " + std::string(o));
      co_return;
    }
  }
  if ((flags & kExpNx) && (flags & (kExpXx | kExpGt | kExpLt))) {
    ctx.reply->Error("ERR NX and XX, GT or LT options at the same time are not compatible");
    co_return;
  }
  if ((flags & kExpGt) && (flags & kExpLt)) {
    ctx.reply->Error("ERR GT and LT options at the same time are not compatible");
    co_return;
  }
  int64_t when;
  if (!ParseInt64(ctx.args[2], &when)) {
    ctx.reply->Error(kErrNotInteger);
    co_return;
  }
  if (seconds) {
    if (when > LLONG_MAX / 1000 || when < LLONG_MIN / 1000) {
      ctx.reply->Error(InvalidExpireTimeError(ctx.spec->name));
      co_return;
    }
    when *= 1000;
  }
  if (when > LLONG_MAX - basetime) {
    ctx.reply->Error(InvalidExpireTimeError(ctx.spec->name));
    co_return;
  }
  when += basetime;
  while (true) {
    KeyInfo info = ctx.store->Lookup(ctx.args[1], ctx.now_ms);
    if (!info.exists) {
      ctx.reply->Integer(0);
      co_return;
    }
    const int64_t cur = info.expire_ms == 0 ? -1 : info.expire_ms;
    if (((flags & kExpNx) && cur != -1) || ((flags & kExpXx) && cur == -1) ||
        ((flags & kExpGt) && (cur == -1 || when <= cur)) ||
        ((flags & kExpLt) && cur != -1 && when >= cur)) {
      ctx.reply->Integer(0);
      co_return;
    }
    // A non-positive absolute time still deletes (Redis treats it as already expired).
    bool applied = false;
    if (!co_await RewriteExpireOrReply(ctx, info, when <= ctx.now_ms ? 1 : when, &applied)) {
      co_return;
    }
    if (!applied) continue;
    ctx.reply->Integer(1);
    co_return;
  }
}

Task Expire(Context& ctx) { co_await ExpireGeneric(ctx, ctx.now_ms, true); }
Task PExpire(Context& ctx) { co_await ExpireGeneric(ctx, ctx.now_ms, false); }
Task ExpireAt(Context& ctx) { co_await ExpireGeneric(ctx, 0, true); }
Task PExpireAt(Context& ctx) { co_await ExpireGeneric(ctx, 0, false); }

// TTL / PTTL / EXPIRETIME / PEXPIRETIME.
Task TtlGeneric(Context& ctx, bool ms, bool absolute) {
  KeyInfo info = ctx.store->LookupRead(ctx.args[1], ctx.now_ms);
  if (!info.exists) {
    ctx.reply->Integer(-2);
    co_return;
  }
  if (info.expire_ms == 0) {
    ctx.reply->Integer(-1);
    co_return;
  }
  int64_t t = absolute ? info.expire_ms : info.expire_ms - ctx.now_ms;
  if (t < 0) t = 0;
  ctx.reply->Integer(ms ? t : (t + 500) / 1000);
}

Task Ttl(Context& ctx) { co_await TtlGeneric(ctx, false, false); }
Task PTtl(Context& ctx) { co_await TtlGeneric(ctx, true, false); }
Task ExpireTime(Context& ctx) { co_await TtlGeneric(ctx, false, true); }
Task PExpireTime(Context& ctx) { co_await TtlGeneric(ctx, true, true); }

Task Persist(Context& ctx) {
  while (true) {
    KeyInfo info = ctx.store->Lookup(ctx.args[1], ctx.now_ms);
    if (!info.exists || info.expire_ms == 0) {
      ctx.reply->Integer(0);
      co_return;
    }
    bool applied = false;
    if (!co_await RewriteExpireOrReply(ctx, info, 0, &applied)) co_return;
    if (!applied) continue;
    ctx.reply->Integer(1);
    co_return;
  }
}

// RENAME / RENAMENX: under both shards' locks, the value is read on the source's worker,
// written under the new name on the destination's, and the source deleted.
Task RenameGeneric(Context& ctx, bool nx) {
  std::string_view src = ctx.args[1];
  std::string_view dst = ctx.args[2];
  KeyPlan plan(ctx, ctx.args.subspan(1, 2));
  const int ss = plan.shard_of(0);
  const int ds = plan.shard_of(1);
  KeyInfo src_info;
  std::string value;
  std::string error;
  bool dst_found = false;
  co_await plan.Lock();
  co_await plan.Run(ss, [&](Store& st) -> Task {
    src_info = st.Lookup(src, ctx.now_ms);
    if (!src_info.exists || src == dst) co_return;
    ReadResult r = co_await st.ReadValue(src, src_info);
    if (r.ok()) {
      value.assign(r.value.data(), r.value.size());
      // A chunked value moving to another slot takes its entries along (collections.md): its
      // chunks are routed by the source's slot.
      if (src_info.type == ValueType::kList) {
        co_await PrepareListMove(st, src, dst, ctx.now_ms, &value, &error);
      } else if (src_info.type == ValueType::kStream) {
        co_await PrepareStreamMove(st, src, dst, src_info.type, ctx.now_ms, &value, &error);
      } else {
        co_await PrepareCollectionMove(st, src, dst, src_info.type, ctx.now_ms, &value, &error);
      }
    } else {
      error = r.status == ReadResult::Status::kError ? r.error : std::string(kErrNoSuchKey);
    }
  });
  if (error.empty() && src_info.exists && src != dst) {
    co_await plan.On(ds, [&](Store& st) { dst_found = st.Lookup(dst, ctx.now_ms).exists; });
    if (!(dst_found && nx)) {
      co_await plan.Run(ds, [&](Store& st) -> Task {
        WriteResult w = co_await st.Write(dst, src_info.type, value, src_info.expire_ms);
        if (!w.ok()) error = w.error;
        // Redis deletes the old destination and adds the key anew (the store saw a rewrite).
        if (w.ok() && dst_found) NotifyKeyspaceEvent(kNotifyNew, "new", dst);
      });
      if (error.empty()) {
        co_await plan.Run(ss, [&](Store& st) -> Task {
          bool applied;
          WriteResult w = co_await st.DeleteIf(src, src_info.loc, &applied);
          if (!w.ok()) error = w.error;
          // Both from here, so they arrive in this order wherever the destination lives.
          NotifyKeyspaceEvent(kNotifyGeneric, "rename_from", src);
          if (w.ok()) NotifyKeyspaceEvent(kNotifyGeneric, "rename_to", dst);
        });
      }
    }
  }
  co_await plan.Unlock();
  if (!error.empty()) {
    ctx.reply->Error(error);
  } else if (!src_info.exists) {
    ctx.reply->Error(kErrNoSuchKey);
  } else if (src == dst || (dst_found && nx)) {
    if (nx) {
      ctx.reply->Integer(0);
    } else {
      ctx.reply->Ok();
    }
  } else if (nx) {
    ctx.reply->Integer(1);
  } else {
    ctx.reply->Ok();
  }
}

Task Rename(Context& ctx) { co_await RenameGeneric(ctx, false); }
Task RenameNx(Context& ctx) { co_await RenameGeneric(ctx, true); }

bool MatchAll(std::string_view pattern) { return pattern == "*"; }

// Reads the keys of index entries (keys live in the records on the device) and passes the live
// ones to `keep`. The first read error is kept in *error.
TaskOf<bool> KeysOf(Store& st, std::vector<std::pair<uint64_t, uint64_t>> entries, int64_t now,
                    const std::function<void(std::string_view key, uint64_t loc)>& keep,
                    std::string* error) {
  for (const auto& [fp, l] : entries) {
    if (st.ExpiredFp(fp, now)) continue;
    ReadResult r = co_await st.ReadAt(fp, l);
    if (r.ok()) {
      keep(r.key, l);
    } else if (r.status == ReadResult::Status::kError && error->empty()) {
      *error = r.error;
    }
  }
  co_return true;
}

Task Keys(Context& ctx) {
  std::string_view pattern = ctx.args[1];
  std::vector<std::string> keys;
  std::string error;
  for (int s = 0; s < ctx.shards->size(); ++s) {
    co_await RunOnShard(ctx, s, [&](Store& st) -> Task {
      std::vector<std::pair<uint64_t, uint64_t>> entries;
      st.ForEachEntry([&](uint64_t fp, uint64_t l) {
        // Chunk records are not keys; other databases' keys are not this one's.
        if (loc::Type(l) != ValueType::kChunk && Index::FpDb(fp) == ctx.db) {
          entries.emplace_back(fp, l);
        }
      });
      co_await KeysOf(
          st, std::move(entries), ctx.now_ms,
          [&](std::string_view stored, uint64_t) {
            const std::string_view key = ClientKey(stored);
            if (MatchAll(pattern) || GlobMatch(pattern, key)) keys.emplace_back(key);
          },
          &error);
    });
  }
  if (!error.empty()) {
    ctx.reply->Error(error);
    co_return;
  }
  ctx.reply->Array(keys.size());
  for (const std::string& k : keys) ctx.reply->Bulk(k);
}

// SCAN cursor: the low 8 bits name the shard, the rest is that shard's index cursor (a
// fingerprint position) rounded down to a multiple of 256 — which can only repeat a few keys,
// never skip one.
constexpr uint64_t kShardMask = 0xFF;

Task Scan(Context& ctx) {
  uint64_t cursor;
  if (!ParseUint64(ctx.args[1], &cursor)) {
    ctx.reply->Error(kErrInvalidCursor);
    co_return;
  }
  int64_t count = 10;
  std::string_view pattern;
  bool use_pattern = false;
  std::string_view type;
  bool use_type = false;
  for (size_t i = 2; i < ctx.args.size(); i += 2) {
    std::string_view o = ctx.args[i];
    bool has_value = i + 1 < ctx.args.size();
    if (EqualsNoCase(o, "count") && has_value) {
      if (!ParseInt64(ctx.args[i + 1], &count)) {
        ctx.reply->Error(kErrNotInteger);
        co_return;
      }
      if (count < 1) {
        ctx.reply->Error(kErrSyntax);
        co_return;
      }
    } else if (EqualsNoCase(o, "match") && has_value) {
      pattern = ctx.args[i + 1];
      use_pattern = !MatchAll(pattern);
    } else if (EqualsNoCase(o, "type") && has_value) {
      type = ctx.args[i + 1];
      use_type = true;
    } else {
      ctx.reply->Error(kErrSyntax);
      co_return;
    }
  }
  int shard = static_cast<int>(cursor & kShardMask);
  uint64_t inner = cursor & ~kShardMask;
  std::vector<std::string> keys;
  std::string error;
  uint64_t next = 0;
  // Walk shard after shard until COUNT is met, so a small keyspace ends in one call as in Redis.
  while (shard < ctx.shards->size()) {
    co_await RunOnShard(ctx, shard, [&](Store& st) -> Task {
      std::vector<std::pair<uint64_t, uint64_t>> entries;
      inner = st.ScanIndex(inner, static_cast<size_t>(count), ctx.db, [&](uint64_t fp, uint64_t l) {
        if (!use_type || EqualsNoCase(type, TypeName(loc::Type(l)))) {
          entries.emplace_back(fp, l);
        }
      });
      co_await KeysOf(
          st, std::move(entries), ctx.now_ms,
          [&](std::string_view stored, uint64_t) {
            const std::string_view key = ClientKey(stored);
            if (!use_pattern || GlobMatch(pattern, key)) keys.emplace_back(key);
          },
          &error);
    });
    if (inner != 0) {
      next = (inner & ~kShardMask) | static_cast<uint64_t>(shard);
      break;
    }
    ++shard;
    if (static_cast<int64_t>(keys.size()) >= count) {
      next = shard < ctx.shards->size() ? static_cast<uint64_t>(shard) : 0;
      break;
    }
  }
  if (!error.empty()) {
    ctx.reply->Error(error);
    co_return;
  }
  ctx.reply->Array(2);
  ctx.reply->Bulk(std::to_string(next));  // unsigned: cursors use all 64 bits
  ctx.reply->Array(keys.size());
  for (const std::string& k : keys) ctx.reply->Bulk(k);
}

Task RandomKey(Context& ctx) {
  std::vector<size_t> sizes(ctx.shards->size());
  size_t total = 0;
  for (int s = 0; s < ctx.shards->size(); ++s) {
    co_await OnShard(ctx, s, [&](Store& st) { sizes[s] = st.db_size(ctx.db); });
    total += sizes[s];
  }
  std::string key;
  bool found = false;
  uint64_t rnd = static_cast<uint64_t>(ctx.now_ms) * 0x9E3779B97F4A7C15ULL ^ ctx.client_id;
  for (int attempt = 0; attempt < 100 && total > 0 && !found; ++attempt) {
    rnd = rnd * 6364136223846793005ULL + 1442695040888963407ULL;
    size_t pick = (rnd >> 17) % total;
    int s = 0;
    while (pick >= sizes[s]) pick -= sizes[s++];
    co_await RunOnShard(ctx, s, [&](Store& st) -> Task {
      uint64_t fp, l;
      if (!st.RandomEntry(rnd, ctx.db, &fp, &l) || st.ExpiredFp(fp, ctx.now_ms)) co_return;
      ReadResult r = co_await st.ReadAt(fp, l);
      if (r.ok()) {
        key = ClientKey(r.key);
        found = true;
      }
    });
  }
  if (found) {
    ctx.reply->Bulk(key);
  } else {
    ctx.reply->Null();
  }
}

Task DbSize(Context& ctx) {
  int64_t total = 0;
  for (int s = 0; s < ctx.shards->size(); ++s) {
    co_await OnShard(ctx, s, [&](Store& st) { total += static_cast<int64_t>(st.db_size(ctx.db)); });
  }
  ctx.reply->Integer(total);
}

// FLUSHALL (and FLUSHDB when no other database has keys): every shard drops its keys and closes
// its segment; then the superblock's flush_seq makes every older segment dead for recovery, and
// the segments are freed. *error is set on failure.
Task FlushEverything(Context& ctx, std::string_view name, std::string* error) {
  const uint64_t flush_seq = ctx.shards->at(0).store.BeginFlush();
  for (int s = 0; s < ctx.shards->size(); ++s) {
    co_await RunOnShard(ctx, s, [&](Store& st) -> Task {
      bool ok = false;
      co_await st.PrepareFlush(&ok);
      if (!ok && error->empty())
        *error = "ERR " + std::string(name) + " failed: " + st.log().error();
    });
  }
  if (error->empty() && !ctx.shards->at(0).store.CommitFlush(flush_seq, error)) {
    *error = "ERR " + std::string(name) + " failed: " + *error;
  }
  for (int s = 0; s < ctx.shards->size(); ++s) {
    co_await OnShard(ctx, s, [&](Store& st) {
      st.ReleaseFlushed(flush_seq);
      SignalAllStreamWaiters();  // blocked XREADGROUP readers fail, as in Redis
    });
  }
}

// FLUSHDB while other databases hold keys: every shard drops the database's keys and closes its
// segment; then the superblock's flush seq for the database makes its older records dead.
Task FlushOneDb(Context& ctx, std::string* error) {
  Store& first = ctx.shards->at(0).store;
  const uint64_t flush_seq = first.BeginFlush();
  for (int s = 0; s < ctx.shards->size(); ++s) {
    co_await RunOnShard(ctx, s, [&](Store& st) -> Task {
      bool ok = false;
      co_await st.FlushDb(ctx.db, &ok);
      if (!ok && error->empty()) *error = "ERR FLUSHDB failed: " + st.log().error();
      SignalAllStreamWaiters();  // blocked XREADGROUP readers of the database fail
    });
  }
  if (error->empty() && !first.file().SetDbFlushSeq(ctx.db, flush_seq, error)) {
    *error = "ERR FLUSHDB failed: " + *error;
  }
}

Task Flush(Context& ctx) {
  if (ctx.args.size() > 2 || (ctx.args.size() == 2 && !EqualsNoCase(ctx.args[1], "async") &&
                              !EqualsNoCase(ctx.args[1], "sync"))) {
    ctx.reply->Error(kErrSyntax);
    co_return;
  }
  std::string error;
  if (ctx.spec->name == "flushall") {
    co_await FlushAllDatabases(ctx, &error);
  } else {
    // An open snapshot (a BGSAVE or a replica's full sync walking the data) could keep a flushed
    // database only by saving every entry: the flush waits until the walk ends.
    co_await SnapshotGate::EnterFlush();
    // Every shard held: no write to another database slips in between the check and the flush.
    KeyPlan plan(ctx, std::vector<std::string_view>{});
    plan.CoverAllShards();
    co_await plan.Lock();
    bool others = false;
    for (int s = 0; s < ctx.shards->size(); ++s) {
      co_await OnShard(ctx, s, [&](Store& st) { others = others || st.OtherDbsHaveKeys(ctx.db); });
    }
    if (others) {
      co_await FlushOneDb(ctx, &error);
    } else {
      co_await FlushEverything(ctx, "FLUSHDB", &error);
    }
    co_await plan.Unlock();
    SnapshotGate::LeaveFlush();
  }
  if (!error.empty()) {
    ctx.reply->Error(error);
  } else {
    ctx.reply->Ok();
  }
}

constexpr uint32_t kW = kCmdWrite;
constexpr uint32_t kR = kCmdReadOnly;

const CommandSpec kKeyCommands[] = {
    {"del", -2, kW, 1, -1, 1, &Del, "@keyspace @write @slow", "generic",
     "Deletes one or more keys.", "1.0.0"},
    {"unlink", -2, kW | kCmdFast, 1, -1, 1, &Del, "@keyspace @write @fast", "generic",
     "Asynchronously deletes one or more keys.", "4.0.0"},
    {"exists", -2, kR | kCmdFast, 1, -1, 1, &Exists, "@keyspace @read @fast", "generic",
     "Determines whether one or more keys exist.", "1.0.0"},
    {"touch", -2, kR | kCmdFast, 1, -1, 1, &Exists, "@keyspace @read @fast", "generic",
     "Returns the number of existing keys out of those specified after updating the time they "
     "were last accessed.",
     "3.2.1"},
    {"type", 2, kR | kCmdFast, 1, 1, 1, &Type, "@keyspace @read @fast", "generic",
     "Determines the type of value stored at a key.", "1.0.0"},
    {"expire", -3, kW | kCmdFast, 1, 1, 1, &Expire, "@keyspace @write @fast", "generic",
     "Sets the expiration time of a key in seconds.", "1.0.0"},
    {"pexpire", -3, kW | kCmdFast, 1, 1, 1, &PExpire, "@keyspace @write @fast", "generic",
     "Sets the expiration time of a key in milliseconds.", "2.6.0"},
    {"expireat", -3, kW | kCmdFast, 1, 1, 1, &ExpireAt, "@keyspace @write @fast", "generic",
     "Sets the expiration time of a key to a Unix timestamp.", "1.2.0"},
    {"pexpireat", -3, kW | kCmdFast, 1, 1, 1, &PExpireAt, "@keyspace @write @fast", "generic",
     "Sets the expiration time of a key to a Unix milliseconds timestamp.", "2.6.0"},
    {"ttl", 2, kR | kCmdFast, 1, 1, 1, &Ttl, "@keyspace @read @fast", "generic",
     "Returns the expiration time in seconds of a key.", "1.0.0"},
    {"pttl", 2, kR | kCmdFast, 1, 1, 1, &PTtl, "@keyspace @read @fast", "generic",
     "Returns the expiration time in milliseconds of a key.", "2.6.0"},
    {"expiretime", 2, kR | kCmdFast, 1, 1, 1, &ExpireTime, "@keyspace @read @fast", "generic",
     "Returns the expiration time of a key as a Unix timestamp.", "7.0.0"},
    {"pexpiretime", 2, kR | kCmdFast, 1, 1, 1, &PExpireTime, "@keyspace @read @fast", "generic",
     "Returns the expiration time of a key as a Unix milliseconds timestamp.", "7.0.0"},
    {"persist", 2, kW | kCmdFast, 1, 1, 1, &Persist, "@keyspace @write @fast", "generic",
     "Removes the expiration time of a key.", "2.2.0"},
    {"rename", 3, kW, 1, 2, 1, &Rename, "@keyspace @write @slow", "generic",
     "Renames a key and overwrites the destination.", "1.0.0"},
    {"renamenx", 3, kW | kCmdFast, 1, 2, 1, &RenameNx, "@keyspace @write @fast", "generic",
     "Renames a key only when the target key name doesn't exist.", "1.0.0"},
    {"keys", 2, kR, 0, 0, 0, &Keys, "@keyspace @read @slow @dangerous", "generic",
     "Returns all key names that match a pattern.", "1.0.0"},
    {"scan", -2, kR, 0, 0, 0, &Scan, "@keyspace @read @slow", "generic",
     "Iterates over the key names in the database.", "2.8.0"},
    {"randomkey", 1, kR, 0, 0, 0, &RandomKey, "@keyspace @read @slow", "generic",
     "Returns a random key name from the database.", "1.0.0"},
    {"dbsize", 1, kR | kCmdFast, 0, 0, 0, &DbSize, "@keyspace @read @fast", "server",
     "Returns the number of keys in the database.", "1.0.0"},
    {"flushdb", -1, kW, 0, 0, 0, &Flush, "@keyspace @write @slow @dangerous", "server",
     "Remove all keys from the current database.", "1.0.0"},
    {"flushall", -1, kW, 0, 0, 0, &Flush, "@keyspace @write @slow @dangerous", "server",
     "Removes all keys from all databases.", "1.0.0"},
};

}  // namespace

Task FlushAllDatabases(Context& ctx, std::string* error) {
  co_await SnapshotGate::EnterFlush();  // as FLUSHDB above
  co_await FlushEverything(ctx, "FLUSHALL", error);
  SnapshotGate::LeaveFlush();
}

std::span<const CommandSpec> KeyCommands() { return kKeyCommands; }

}  // namespace lavik
