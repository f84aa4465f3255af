// String commands: GET, SET and friends, counters, ranges, MGET/MSET/MSETNX.
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "base/numbers.h"
#include "commands/expire_args.h"
#include "commands/families.h"
#include "commands/multi_shard.h"
#include "config/live_settings.h"
#include "notify/keyspace_events.h"
#include "protocol/errors.h"
#include "storage/store.h"

namespace lavik {
namespace {

bool CheckStringLengthOrReply(Context& ctx, int64_t offset, int64_t append) {
  if (offset > LiveSettings::Get(Live().proto_max_bulk_len) - append) {
    ctx.reply->Error(kErrStringTooLong);
    return false;
  }
  return true;
}

// Replies with a failed write's error; true if the write went through.
bool WriteOkOrReply(Context& ctx, const WriteResult& w) {
  if (w.ok()) return true;
  ctx.reply->Error(w.error);
  return false;
}

// Reads a string key for a read-modify-write step. Returns false after replying (WRONGTYPE or
// an I/O error). *info says whether the key exists; *value holds a copy of its value.
// `count_read`: the command reads the value (GETDEL, GETEX, SET ... GET), so a keyspace hit or
// miss is counted (and a miss reported), as Redis's read look-up does.
TaskOf<bool> ReadStringOrReply(Context& ctx, std::string_view key, KeyInfo* info,
                               std::string* value, bool count_read = false) {
  Store& st = *ctx.store;
  *info = count_read ? st.LookupRead(key, ctx.now_ms) : st.Lookup(key, ctx.now_ms);
  value->clear();
  if (!info->exists) co_return true;
  if (info->type != ValueType::kString) {
    ctx.reply->Error(kErrWrongType);
    co_return false;
  }
  ReadResult r = co_await st.ReadValue(key, *info);
  if (r.status == ReadResult::Status::kError) {
    ctx.reply->Error(r.error);
    co_return false;
  }
  if (!r.ok()) {
    info->exists = false;  // gone while we read
    co_return true;
  }
  value->assign(r.value.data(), r.value.size());
  co_return true;
}

// GET of a value that is not in the cache: read from the log's buffer or the device.
Task GetStored(Context& ctx, KeyInfo info) {
  ReadResult r = co_await ctx.store->ReadValue(ctx.args[1], info);
  if (r.ok()) {
    ctx.reply->Bulk(r.value);
  } else if (r.status == ReadResult::Status::kError) {
    ctx.reply->Error(r.error);
  } else {
    ctx.reply->Null();
  }
}

// Not a coroutine itself: a GET answered from the cache (or of a missing key) costs no frame.
Task Get(Context& ctx) {
  Store& st = *ctx.store;
  KeyInfo info = st.LookupRead(ctx.args[1], ctx.now_ms);
  if (!info.exists) {
    ctx.reply->Null();
    return Task();
  }
  if (info.type != ValueType::kString) {
    ctx.reply->Error(kErrWrongType);
    return Task();
  }
  if (const std::string* cached = st.CachedValue(ctx.args[1], info)) {
    ctx.reply->Bulk(*cached);
    return Task();
  }
  return GetStored(ctx, info);
}

// The events of a SET: "set", then "expire" with a TTL; a TTL already past expires the key at
// once (Redis sets it and its next look-up expires it).
void NotifySet(std::string_view key, int64_t expire, bool expired) {
  NotifyKeyspaceEvent(kNotifyString, "set", key);
  if (expire != 0) NotifyKeyspaceEvent(kNotifyGeneric, "expire", key);
  if (expired) NotifyKeyspaceEvent(kNotifyExpired, "expired", key);
}

// The SET options that make the write depend on the key's current value or TTL.
constexpr uint32_t kSetConditional = kSetNx | kSetXx | kSetGet | kSetKeepTtl;

// The absolute expire time the options give the written value (0: none).
int64_t ExpireToWrite(const ExtendedSetArgs& a) {
  return (a.flags & kSetAnyExpire) ? a.expire_at_ms : 0;
}

// The common body of SET / SETNX / SETEX / PSETEX / GETSET. The check (NX/XX/GET) and the write
// apply to the same version of the key: if another write slips in while the old value is read,
// the command starts over.
// `a` by value: SET hands its task straight to the caller (no frame of its own to keep it in).
Task SetGeneric(Context& ctx, std::string_view key, std::string_view value, ExtendedSetArgs a,
                bool reply_int) {
  Store& st = *ctx.store;
  if ((a.flags & kSetConditional) == 0) {
    const int64_t expire = ExpireToWrite(a);
    if (expire != 0 && expire <= ctx.now_ms) {
      bool existed;
      WriteResult w = co_await st.Delete(key, ctx.now_ms, &existed);  // already expired
      if (!WriteOkOrReply(ctx, w)) co_return;
      NotifySet(key, expire, true);
      ctx.reply->Ok();
      co_return;
    }
    WriteResult w = co_await st.Write(key, ValueType::kString, value, expire);
    if (!WriteOkOrReply(ctx, w)) co_return;
    NotifySet(key, expire, false);
    if (reply_int) {
      ctx.reply->Integer(1);
    } else {
      ctx.reply->Ok();
    }
    co_return;
  }
  while (true) {
    KeyInfo old;
    std::string old_value;
    if (a.flags & kSetGet) {
      if (!co_await ReadStringOrReply(ctx, key, &old, &old_value, true)) co_return;
    } else {
      old = st.Lookup(key, ctx.now_ms);
    }
    bool found = old.exists;
    // The reply once the value was written (`set`) or the NX/XX check refused it.
    auto reply = [&](bool set) {
      if (a.flags & kSetGet) {
        if (found) {
          ctx.reply->Bulk(old_value);
        } else {
          ctx.reply->Null();
        }
      } else if (reply_int) {
        ctx.reply->Integer(set ? 1 : 0);
      } else if (set) {
        ctx.reply->Ok();
      } else {
        ctx.reply->Null();
      }
    };
    if (((a.flags & kSetNx) && found) || ((a.flags & kSetXx) && !found)) {
      reply(false);
      co_return;
    }
    int64_t expire = 0;
    if (a.flags & kSetKeepTtl) expire = old.expire_ms;
    if (a.flags & kSetAnyExpire) expire = a.expire_at_ms;
    bool applied = false;
    WriteResult w;
    const bool past = expire != 0 && expire <= ctx.now_ms;
    if (past) {
      bool existed;
      w = co_await st.Delete(key, ctx.now_ms, &existed);  // already expired: gone at once
      applied = true;
    } else {
      w = co_await st.WriteIf(key, found ? old.loc : 0, ValueType::kString, value, expire,
                              &applied);
    }
    if (!WriteOkOrReply(ctx, w)) co_return;
    if (!applied) continue;
    NotifySet(key, (a.flags & kSetAnyExpire) ? expire : 0, past);
    reply(true);
    co_return;
  }
}

// Not a coroutine itself: one coroutine frame fewer per SET.
Task Set(Context& ctx) {
  ExtendedSetArgs a;
  if (!ParseExtendedSetArgsOrReply(ctx, ctx.args.subspan(3), true, &a)) return Task();
  // A plain SET (no NX/XX/GET/KEEPTTL, no TTL already past) that the store can take at once
  // needs no coroutine at all.
  if ((a.flags & kSetConditional) == 0) {
    const int64_t expire = ExpireToWrite(a);
    if ((expire == 0 || expire > ctx.now_ms) &&
        ctx.store->TryWriteNow(ctx.args[1], ValueType::kString, ctx.args[2], expire)) {
      NotifySet(ctx.args[1], expire, false);
      ctx.reply->Ok();
      return Task();
    }
  }
  return SetGeneric(ctx, ctx.args[1], ctx.args[2], a, false);
}

Task SetNx(Context& ctx) {
  ExtendedSetArgs a;
  a.flags = kSetNx;
  co_await SetGeneric(ctx, ctx.args[1], ctx.args[2], a, true);
}

Task SetExGeneric(Context& ctx, ExpireUnit unit) {
  ExtendedSetArgs a;
  a.flags = unit == ExpireUnit::kSeconds ? kSetEx : kSetPx;
  if (!ExpireAtMsOrReply(ctx, ctx.args[2], unit, true, &a.expire_at_ms)) co_return;
  co_await SetGeneric(ctx, ctx.args[1], ctx.args[3], a, false);
}

Task SetEx(Context& ctx) { co_await SetExGeneric(ctx, ExpireUnit::kSeconds); }
Task PSetEx(Context& ctx) { co_await SetExGeneric(ctx, ExpireUnit::kMilliseconds); }

Task GetSet(Context& ctx) {
  ExtendedSetArgs a;
  a.flags = kSetGet;
  co_await SetGeneric(ctx, ctx.args[1], ctx.args[2], a, false);
}

// GETDEL and GETEX: read the value, then delete it or rewrite it with a new TTL — on the same
// version of the key (retry if it changed meanwhile).
Task GetDel(Context& ctx) {
  Store& st = *ctx.store;
  while (true) {
    KeyInfo info;
    std::string value;
    if (!co_await ReadStringOrReply(ctx, ctx.args[1], &info, &value, true)) co_return;
    if (!info.exists) {
      ctx.reply->Null();
      co_return;
    }
    bool existed;
    WriteResult w = co_await st.DeleteIf(ctx.args[1], info.loc, &existed);
    if (!WriteOkOrReply(ctx, w)) co_return;
    if (!existed) continue;
    NotifyKeyspaceEvent(kNotifyGeneric, "del", ctx.args[1]);
    ctx.reply->Bulk(value);
    co_return;
  }
}

Task GetEx(Context& ctx) {
  ExtendedSetArgs a;
  if (!ParseExtendedSetArgsOrReply(ctx, ctx.args.subspan(2), false, &a, /*resolve=*/false)) {
    co_return;
  }
  Store& st = *ctx.store;
  bool resolved = false;
  while (true) {
    KeyInfo info;
    std::string value;
    if (!co_await ReadStringOrReply(ctx, ctx.args[1], &info, &value, true)) co_return;
    if (!info.exists) {
      ctx.reply->Null();
      co_return;
    }
    // As Redis 7.0's getexCommand: the time is checked only once the key is found a string.
    if (!resolved && !ResolveExpireOrReply(ctx, &a)) co_return;
    resolved = true;
    bool changed = (a.flags & kSetAnyExpire) || ((a.flags & kSetPersist) && info.expire_ms != 0);
    if (changed) {
      const int64_t expire = ExpireToWrite(a);
      bool applied = false;
      WriteResult w;
      const bool past = expire != 0 && expire <= ctx.now_ms;
      if (past) {
        w = co_await st.DeleteIf(ctx.args[1], info.loc, &applied);
      } else {
        w = co_await st.WriteIf(ctx.args[1], info.loc, ValueType::kString, value, expire, &applied);
      }
      if (!WriteOkOrReply(ctx, w)) co_return;
      if (!applied) continue;
      NotifyKeyspaceEvent(kNotifyGeneric,
                          past          ? "del"
                          : expire != 0 ? "expire"
                                        : "persist",
                          ctx.args[1]);
    }
    ctx.reply->Bulk(value);
    co_return;
  }
}

Task StrLen(Context& ctx) {
  Store& st = *ctx.store;
  KeyInfo info = st.LookupRead(ctx.args[1], ctx.now_ms);
  if (!info.exists) {
    ctx.reply->Integer(0);
    co_return;
  }
  if (info.type != ValueType::kString) {
    ctx.reply->Error(kErrWrongType);
    co_return;
  }
  ReadResult r = co_await st.ReadValue(ctx.args[1], info);
  if (r.status == ReadResult::Status::kError) {
    ctx.reply->Error(r.error);
  } else {
    ctx.reply->Integer(static_cast<int64_t>(r.value.size()));
  }
}

// Read-modify-write of the string at ctx.args[1], retried if another write came in while it
// was read; the TTL stays, as in Redis. `modify(exists, &value)` turns the old value (empty if
// missing) into the new one, or replies an error itself and returns false. True once written,
// with the value written in *out (the caller replies).
template <typename Modify>
TaskOf<bool> RewriteStringOrReply(Context& ctx, std::string_view event, Modify modify,
                                  std::string* out) {
  Store& st = *ctx.store;
  while (true) {
    KeyInfo info;
    std::string v;
    if (!co_await ReadStringOrReply(ctx, ctx.args[1], &info, &v)) co_return false;
    if (!modify(info.exists, &v)) co_return false;
    bool applied = false;
    WriteResult w = co_await st.WriteIf(ctx.args[1], info.exists ? info.loc : 0, ValueType::kString,
                                        v, info.expire_ms, &applied);
    if (!WriteOkOrReply(ctx, w)) co_return false;
    if (applied) {
      NotifyKeyspaceEvent(kNotifyString, event, ctx.args[1]);
      *out = std::move(v);
      co_return true;
    }
  }
}

Task Append(Context& ctx) {
  std::string_view add = ctx.args[2];
  std::string written;
  bool ok = co_await RewriteStringOrReply(
      ctx, "append",
      [&](bool, std::string* v) {
        if (!CheckStringLengthOrReply(ctx, static_cast<int64_t>(v->size()),
                                      static_cast<int64_t>(add.size()))) {
          return false;
        }
        v->append(add.data(), add.size());
        return true;
      },
      &written);
  if (ok) ctx.reply->Integer(static_cast<int64_t>(written.size()));
}

Task GetRange(Context& ctx) {
  int64_t start, end;
  if (!ParseInt64(ctx.args[2], &start) || !ParseInt64(ctx.args[3], &end)) {
    ctx.reply->Error(kErrNotInteger);
    co_return;
  }
  Store& st = *ctx.store;
  KeyInfo info = st.LookupRead(ctx.args[1], ctx.now_ms);
  if (!info.exists) {
    ctx.reply->Bulk("");
    co_return;
  }
  if (info.type != ValueType::kString) {
    ctx.reply->Error(kErrWrongType);
    co_return;
  }
  ReadResult r = co_await st.ReadValue(ctx.args[1], info);
  if (r.status == ReadResult::Status::kError) {
    ctx.reply->Error(r.error);
    co_return;
  }
  std::string_view v = r.value;
  const int64_t len = static_cast<int64_t>(v.size());
  if (start < 0 && end < 0 && start > end) {
    ctx.reply->Bulk("");
    co_return;
  }
  if (start < 0) start = len + start;
  if (end < 0) end = len + end;
  if (start < 0) start = 0;
  if (end < 0) end = 0;
  if (end >= len) end = len - 1;
  if (start > end || len == 0) {
    ctx.reply->Bulk("");
    co_return;
  }
  ctx.reply->Bulk(v.substr(start, end - start + 1));
}

Task SetRange(Context& ctx) {
  int64_t offset;
  if (!ParseInt64(ctx.args[2], &offset)) {
    ctx.reply->Error(kErrNotInteger);
    co_return;
  }
  if (offset < 0) {
    ctx.reply->Error(kErrOffsetRange);
    co_return;
  }
  std::string_view value = ctx.args[3];
  if (value.empty()) {
    KeyInfo info;
    std::string cur;
    if (!co_await ReadStringOrReply(ctx, ctx.args[1], &info, &cur)) co_return;
    ctx.reply->Integer(static_cast<int64_t>(cur.size()));
    co_return;
  }
  if (!CheckStringLengthOrReply(ctx, offset, static_cast<int64_t>(value.size()))) co_return;
  std::string written;
  bool ok = co_await RewriteStringOrReply(
      ctx, "setrange",
      [&](bool, std::string* v) {
        size_t need = static_cast<size_t>(offset) + value.size();
        if (v->size() < need) v->resize(need, '\0');
        std::memcpy(v->data() + offset, value.data(), value.size());
        return true;
      },
      &written);
  if (ok) ctx.reply->Integer(static_cast<int64_t>(written.size()));
}

Task IncrDecr(Context& ctx, int64_t incr) {
  int64_t value = 0;
  std::string written;
  bool ok = co_await RewriteStringOrReply(
      ctx, "incrby",
      [&](bool exists, std::string* v) {
        value = 0;
        if (exists && !ParseInt64(*v, &value)) {
          ctx.reply->Error(kErrNotInteger);
          return false;
        }
        if ((incr < 0 && value < 0 && incr < INT64_MIN - value) ||
            (incr > 0 && value > 0 && incr > INT64_MAX - value)) {
          ctx.reply->Error(kErrOverflow);
          return false;
        }
        value += incr;
        char buf[kMaxInt64Chars + 1];
        v->assign(buf, FormatInt64(value, buf));
        return true;
      },
      &written);
  if (ok) ctx.reply->Integer(value);
}

Task Incr(Context& ctx) { co_await IncrDecr(ctx, 1); }
Task Decr(Context& ctx) { co_await IncrDecr(ctx, -1); }

Task IncrBy(Context& ctx) {
  int64_t incr;
  if (!ParseInt64(ctx.args[2], &incr)) {
    ctx.reply->Error(kErrNotInteger);
    co_return;
  }
  co_await IncrDecr(ctx, incr);
}

Task DecrBy(Context& ctx) {
  int64_t incr;
  if (!ParseInt64(ctx.args[2], &incr)) {
    ctx.reply->Error(kErrNotInteger);
    co_return;
  }
  if (incr == INT64_MIN) {
    ctx.reply->Error("ERR decrement would overflow");
    co_return;
  }
  co_await IncrDecr(ctx, -incr);
}

Task IncrByFloat(Context& ctx) {
  std::string written;
  bool ok = co_await RewriteStringOrReply(
      ctx, "incrbyfloat",
      [&](bool exists, std::string* v) {
        // As Redis: the key's type first, then both numbers.
        long double value = 0;
        long double incr;
        if ((exists && !ParseLongDouble(*v, &value)) || !ParseLongDouble(ctx.args[2], &incr)) {
          ctx.reply->Error(kErrNotFloat);
          return false;
        }
        value += incr;
        if (std::isnan(value) || std::isinf(value)) {
          ctx.reply->Error(kErrIncrFloatNaN);
          return false;
        }
        *v = FormatLongDouble(value);
        return true;
      },
      &written);
  if (ok) ctx.reply->Bulk(written);
}

// MGET: each shard's values are read (and copied) on its worker, then replied in key order.
Task MGet(Context& ctx) {
  KeyPlan plan(ctx, ctx.args.subspan(1));
  std::vector<std::optional<std::string>> values(plan.keys().size());
  std::string error;
  co_await plan.Lock();
  for (int s : plan.shards()) {
    co_await plan.Run(s, [&, s](Store& st) -> Task {
      for (size_t i = 0; i < plan.keys().size(); ++i) {
        if (plan.shard_of(i) != s) continue;
        KeyInfo info = st.LookupRead(plan.keys()[i], ctx.now_ms);
        if (!info.exists || info.type != ValueType::kString) continue;
        ReadResult r = co_await st.ReadValue(plan.keys()[i], info);
        if (r.ok()) {
          values[i].emplace(r.value);
        } else if (r.status == ReadResult::Status::kError && error.empty()) {
          error = r.error;
        }
      }
    });
  }
  co_await plan.Unlock();
  if (!error.empty()) {
    ctx.reply->Error(error);
    co_return;
  }
  ctx.reply->Array(values.size());
  for (const auto& v : values) {
    if (v) {
      ctx.reply->Bulk(*v);
    } else {
      ctx.reply->Null();
    }
  }
}

std::vector<std::string_view> EveryOther(std::span<const std::string_view> args) {
  std::vector<std::string_view> keys;
  keys.reserve(args.size() / 2);
  for (size_t i = 1; i < args.size(); i += 2) keys.push_back(args[i]);
  return keys;
}

// MSET / MSETNX: all keys are written under the locks of their shards, so no reader on any
// worker sees some of them and not the others.
Task MSetGeneric(Context& ctx, bool nx) {
  if (ctx.args.size() % 2 == 0) {
    ctx.reply->Error(WrongArityError(ctx.spec->name));
    co_return;
  }
  KeyPlan plan(ctx, EveryOther(ctx.args));
  co_await plan.Lock();
  bool blocked = false;
  if (nx) {
    for (int s : plan.shards()) {
      co_await plan.On(s, [&](Store& st) {
        for (size_t i = 0; i < plan.keys().size(); ++i) {
          if (plan.shard_of(i) == s && st.Lookup(plan.keys()[i], ctx.now_ms).exists) {
            blocked = true;
          }
        }
      });
      if (blocked) break;
    }
  }
  std::string error;
  if (!blocked) {
    for (int s : plan.shards()) {
      co_await plan.Run(s, [&, s](Store& st) -> Task {
        for (size_t i = 0; i < plan.keys().size() && error.empty(); ++i) {
          if (plan.shard_of(i) != s) continue;
          WriteResult w =
              co_await st.Write(plan.keys()[i], ValueType::kString, ctx.args[2 * i + 2], 0);
          if (!w.ok()) error = w.error;
          if (w.ok()) NotifyKeyspaceEvent(kNotifyString, "set", plan.keys()[i]);
        }
      });
    }
  }
  co_await plan.Unlock();
  if (!error.empty()) {
    ctx.reply->Error(error);
  } else if (nx) {
    ctx.reply->Integer(blocked ? 0 : 1);
  } else {
    ctx.reply->Ok();
  }
}

Task MSet(Context& ctx) { co_await MSetGeneric(ctx, false); }
Task MSetNx(Context& ctx) { co_await MSetGeneric(ctx, true); }

constexpr uint32_t kW = kCmdWrite | kCmdDenyOom;
constexpr uint32_t kR = kCmdReadOnly;

const CommandSpec kStringCommands[] = {
    {"get", 2, kR | kCmdFast, 1, 1, 1, &Get, "@read @string @fast", "string",
     "Returns the string value of a key.", "1.0.0"},
    {"set", -3, kW, 1, 1, 1, &Set, "@write @string @slow", "string",
     "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.",
     "1.0.0"},
    {"setnx", 3, kW | kCmdFast, 1, 1, 1, &SetNx, "@write @string @fast", "string",
     "Set the string value of a key only when the key doesn't exist.", "1.0.0"},
    {"setex", 4, kW, 1, 1, 1, &SetEx, "@write @string @slow", "string",
     "Sets the string value and expiration time of a key. Creates the key if it doesn't exist.",
     "2.0.0"},
    {"psetex", 4, kW, 1, 1, 1, &PSetEx, "@write @string @slow", "string",
     "Sets both string value and expiration time in milliseconds of a key. The key is created if "
     "it doesn't exist.",
     "2.6.0"},
    {"getset", 3, kW | kCmdFast, 1, 1, 1, &GetSet, "@write @string @fast", "string",
     "Returns the previous string value of a key after setting it to a new value.", "1.0.0"},
    {"getdel", 2, kCmdWrite | kCmdFast, 1, 1, 1, &GetDel, "@write @string @fast", "string",
     "Returns the string value of a key after deleting the key.", "6.2.0"},
    {"getex", -2, kCmdWrite | kCmdFast, 1, 1, 1, &GetEx, "@write @string @fast", "string",
     "Returns the string value of a key after setting its expiration time.", "6.2.0"},
    {"strlen", 2, kR | kCmdFast, 1, 1, 1, &StrLen, "@read @string @fast", "string",
     "Returns the length of a string value.", "2.2.0"},
    {"append", 3, kW | kCmdFast, 1, 1, 1, &Append, "@write @string @fast", "string",
     "Appends a string to the value of a key. Creates the key if it doesn't exist.", "2.0.0"},
    {"getrange", 4, kR, 1, 1, 1, &GetRange, "@read @string @slow", "string",
     "Returns a substring of the string stored at a key.", "2.4.0"},
    {"substr", 4, kR, 1, 1, 1, &GetRange, "@read @string @slow", "string",
     "Returns a substring from a string value.", "1.0.0"},
    {"setrange", 4, kW, 1, 1, 1, &SetRange, "@write @string @slow", "string",
     "Overwrites a part of a string value with another by an offset. Creates the key if it "
     "doesn't exist.",
     "2.2.0"},
    {"incr", 2, kW | kCmdFast, 1, 1, 1, &Incr, "@write @string @fast", "string",
     "Increments the integer value of a key by one. Uses 0 as initial value if the key doesn't "
     "exist.",
     "1.0.0"},
    {"decr", 2, kW | kCmdFast, 1, 1, 1, &Decr, "@write @string @fast", "string",
     "Decrements the integer value of a key by one. Uses 0 as initial value if the key doesn't "
     "exist.",
     "1.0.0"},
    {"incrby", 3, kW | kCmdFast, 1, 1, 1, &IncrBy, "@write @string @fast", "string",
     "Increments the integer value of a key by a number. Uses 0 as initial value if the key "
     "doesn't exist.",
     "1.0.0"},
    {"decrby", 3, kW | kCmdFast, 1, 1, 1, &DecrBy, "@write @string @fast", "string",
     "Decrements a number from the integer value of a key. Uses 0 as initial value if the key "
     "doesn't exist.",
     "1.0.0"},
    {"incrbyfloat", 3, kW | kCmdFast, 1, 1, 1, &IncrByFloat, "@write @string @fast", "string",
     "Increment the floating point value of a key by a number. Uses 0 as initial value if the key "
     "doesn't exist.",
     "2.6.0"},
    {"mget", -2, kR | kCmdFast, 1, -1, 1, &MGet, "@read @string @fast", "string",
     "Atomically returns the string values of one or more keys.", "1.0.0"},
    {"mset", -3, kW, 1, -1, 2, &MSet, "@write @string @slow", "string",
     "Atomically creates or modifies the string values of one or more keys.", "1.0.1"},
    {"msetnx", -3, kW, 1, -1, 2, &MSetNx, "@write @string @slow", "string",
     "Atomically modifies the string values of one or more keys only when all keys don't exist.",
     "1.0.1"},
};

}  // namespace

std::span<const CommandSpec> StringCommands() { return kStringCommands; }

}  // namespace lavik
