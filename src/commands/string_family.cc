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
#include "protocol/errors.h"
#include "storage/store.h"

namespace lavik {
namespace {

constexpr int64_t kMaxStringLength = 512LL * 1024 * 1024;  // proto-max-bulk-len default

bool IsString(const Entry* e) { return e->type == ValueType::kString; }

// Looks key up for a read; writes WRONGTYPE and returns false if it is not a string.
bool LookupStringOrReply(Context& ctx, std::string_view key, Entry** out) {
  Entry* e = ctx.store->LookupRead(key, ctx.now_ms);
  if (e != nullptr && !IsString(e)) {
    ctx.reply->Error(kErrWrongType);
    return false;
  }
  *out = e;
  return true;
}

bool CheckStringLengthOrReply(Context& ctx, int64_t offset, int64_t append) {
  if (offset > kMaxStringLength - append) {
    ctx.reply->Error(kErrStringTooLong);
    return false;
  }
  return true;
}

void SetValue(Store& store, Entry* e, std::string_view value, bool keep_ttl) {
  store.WriteString(e, value);
  if (!keep_ttl) store.SetExpire(e, 0);
  store.NoteWrite();
}

Task Get(Context& ctx) {
  Entry* e;
  if (!LookupStringOrReply(ctx, ctx.args[1], &e)) co_return;
  if (e == nullptr) {
    ctx.reply->Null();
    co_return;
  }
  const std::string& v = co_await ctx.store->ReadValue(e);
  ctx.reply->Bulk(v);
}

// The common body of SET / SETNX / SETEX / PSETEX / GETSET.
Task SetGeneric(Context& ctx, std::string_view key, std::string_view value,
                const ExtendedSetArgs& a, bool reply_int) {
  Store& st = *ctx.store;
  Entry* e = st.Lookup(key, ctx.now_ms);
  if (a.flags & kSetGet) {
    if (e != nullptr && !IsString(e)) {
      ctx.reply->Error(kErrWrongType);
      co_return;
    }
    if (e == nullptr) {
      ctx.reply->Null();
    } else {
      const std::string& old = co_await st.ReadValue(e);
      ctx.reply->Bulk(old);
    }
  }
  bool found = e != nullptr;
  if (((a.flags & kSetNx) && found) || ((a.flags & kSetXx) && !found)) {
    if (!(a.flags & kSetGet)) {
      if (reply_int) {
        ctx.reply->Integer(0);
      } else {
        ctx.reply->Null();
      }
    }
    co_return;
  }
  if (e == nullptr) {
    bool created;
    e = st.LookupOrCreate(key, ctx.now_ms, &created);
  }
  SetValue(st, e, value, (a.flags & kSetKeepTtl) != 0);
  if (a.flags & kSetAnyExpire) {
    if (a.expire_at_ms <= ctx.now_ms) {
      st.Delete(e);  // already expired: Redis deletes it at once
    } else {
      st.SetExpire(e, a.expire_at_ms);
    }
  }
  if (!(a.flags & kSetGet)) {
    if (reply_int) {
      ctx.reply->Integer(1);
    } else {
      ctx.reply->Ok();
    }
  }
}

Task Set(Context& ctx) {
  ExtendedSetArgs a;
  if (!ParseExtendedSetArgsOrReply(ctx, ctx.args.subspan(3), true, &a)) co_return;
  co_await SetGeneric(ctx, ctx.args[1], ctx.args[2], a, false);
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

Task GetDel(Context& ctx) {
  Entry* e;
  if (!LookupStringOrReply(ctx, ctx.args[1], &e)) co_return;
  if (e == nullptr) {
    ctx.reply->Null();
    co_return;
  }
  const std::string& v = co_await ctx.store->ReadValue(e);
  ctx.reply->Bulk(v);
  ctx.store->Delete(e);
  ctx.store->NoteWrite();
}

Task GetEx(Context& ctx) {
  ExtendedSetArgs a;
  if (!ParseExtendedSetArgsOrReply(ctx, ctx.args.subspan(2), false, &a)) co_return;
  Entry* e;
  if (!LookupStringOrReply(ctx, ctx.args[1], &e)) co_return;
  if (e == nullptr) {
    ctx.reply->Null();
    co_return;
  }
  const std::string& v = co_await ctx.store->ReadValue(e);
  ctx.reply->Bulk(v);
  if (a.flags & kSetAnyExpire) {
    if (a.expire_at_ms <= ctx.now_ms) {
      ctx.store->Delete(e);
    } else {
      ctx.store->SetExpire(e, a.expire_at_ms);
    }
    ctx.store->NoteWrite();
  } else if ((a.flags & kSetPersist) && e->expire_ms != 0) {
    ctx.store->SetExpire(e, 0);
    ctx.store->NoteWrite();
  }
}

Task StrLen(Context& ctx) {
  Entry* e;
  if (!LookupStringOrReply(ctx, ctx.args[1], &e)) co_return;
  ctx.reply->Integer(e == nullptr ? 0 : static_cast<int64_t>(e->value.size()));
}

Task Append(Context& ctx) {
  Store& st = *ctx.store;
  Entry* e = st.Lookup(ctx.args[1], ctx.now_ms);
  std::string_view add = ctx.args[2];
  if (e == nullptr) {
    bool created;
    e = st.LookupOrCreate(ctx.args[1], ctx.now_ms, &created);
    st.WriteString(e, add);
  } else {
    if (!IsString(e)) {
      ctx.reply->Error(kErrWrongType);
      co_return;
    }
    if (!CheckStringLengthOrReply(ctx, static_cast<int64_t>(e->value.size()),
                                  static_cast<int64_t>(add.size()))) {
      co_return;
    }
    co_await st.ReadValue(e);
    e->value.append(add.data(), add.size());
  }
  st.NoteWrite();
  ctx.reply->Integer(static_cast<int64_t>(e->value.size()));
}

Task GetRange(Context& ctx) {
  int64_t start, end;
  if (!ParseInt64(ctx.args[2], &start) || !ParseInt64(ctx.args[3], &end)) {
    ctx.reply->Error(kErrNotInteger);
    co_return;
  }
  Entry* e;
  if (!LookupStringOrReply(ctx, ctx.args[1], &e)) co_return;
  if (e == nullptr) {
    ctx.reply->Bulk("");
    co_return;
  }
  const std::string& v = co_await ctx.store->ReadValue(e);
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
  ctx.reply->Bulk(std::string_view(v).substr(start, end - start + 1));
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
  Store& st = *ctx.store;
  std::string_view value = ctx.args[3];
  Entry* e = st.Lookup(ctx.args[1], ctx.now_ms);
  if (e != nullptr && !IsString(e)) {
    ctx.reply->Error(kErrWrongType);
    co_return;
  }
  if (value.empty()) {
    ctx.reply->Integer(e == nullptr ? 0 : static_cast<int64_t>(e->value.size()));
    co_return;
  }
  if (!CheckStringLengthOrReply(ctx, offset, static_cast<int64_t>(value.size()))) co_return;
  if (e == nullptr) {
    bool created;
    e = st.LookupOrCreate(ctx.args[1], ctx.now_ms, &created);
  } else {
    co_await st.ReadValue(e);
  }
  std::string& v = e->value;
  size_t need = static_cast<size_t>(offset) + value.size();
  if (v.size() < need) v.resize(need, '\0');
  std::memcpy(v.data() + offset, value.data(), value.size());
  st.NoteWrite();
  ctx.reply->Integer(static_cast<int64_t>(v.size()));
}

Task IncrDecr(Context& ctx, int64_t incr) {
  Store& st = *ctx.store;
  Entry* e = st.Lookup(ctx.args[1], ctx.now_ms);
  int64_t value = 0;
  if (e != nullptr) {
    if (!IsString(e)) {
      ctx.reply->Error(kErrWrongType);
      co_return;
    }
    const std::string& v = co_await st.ReadValue(e);
    if (!ParseInt64(v, &value)) {
      ctx.reply->Error(kErrNotInteger);
      co_return;
    }
  }
  if ((incr < 0 && value < 0 && incr < INT64_MIN - value) ||
      (incr > 0 && value > 0 && incr > INT64_MAX - value)) {
    ctx.reply->Error(kErrOverflow);
    co_return;
  }
  value += incr;
  char buf[kMaxInt64Chars + 1];
  size_t n = FormatInt64(value, buf);
  if (e == nullptr) {
    bool created;
    e = st.LookupOrCreate(ctx.args[1], ctx.now_ms, &created);
  }
  st.WriteString(e, std::string_view(buf, n));  // keeps the TTL, as Redis does
  st.NoteWrite();
  ctx.reply->Integer(value);
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
  Store& st = *ctx.store;
  Entry* e = st.Lookup(ctx.args[1], ctx.now_ms);
  long double value = 0;
  long double incr;
  if (e != nullptr) {
    if (!IsString(e)) {
      ctx.reply->Error(kErrWrongType);
      co_return;
    }
    const std::string& v = co_await st.ReadValue(e);
    if (!ParseLongDouble(v, &value)) {
      ctx.reply->Error(kErrNotFloat);
      co_return;
    }
  }
  if (!ParseLongDouble(ctx.args[2], &incr)) {
    ctx.reply->Error(kErrNotFloat);
    co_return;
  }
  value += incr;
  if (std::isnan(value) || std::isinf(value)) {
    ctx.reply->Error(kErrIncrFloatNaN);
    co_return;
  }
  std::string out = FormatLongDouble(value);
  if (e == nullptr) {
    bool created;
    e = st.LookupOrCreate(ctx.args[1], ctx.now_ms, &created);
  }
  st.WriteString(e, out);
  st.NoteWrite();
  ctx.reply->Bulk(out);
}

// MGET: each shard's values are copied out on its worker, then replied in key order.
Task MGet(Context& ctx) {
  KeyPlan plan(ctx, ctx.args.subspan(1));
  std::vector<std::optional<std::string>> values(plan.keys().size());
  co_await plan.Lock();
  for (int s : plan.shards()) {
    co_await plan.On(s, [&](Store& st) {
      for (size_t i = 0; i < plan.keys().size(); ++i) {
        if (plan.shard_of(i) != s) continue;
        Entry* e = st.LookupRead(plan.keys()[i], ctx.now_ms);
        if (e != nullptr && IsString(e)) values[i] = e->value;
      }
    });
  }
  co_await plan.Unlock();
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
          if (plan.shard_of(i) == s && st.Lookup(plan.keys()[i], ctx.now_ms) != nullptr) {
            blocked = true;
          }
        }
      });
      if (blocked) break;
    }
  }
  if (!blocked) {
    for (int s : plan.shards()) {
      co_await plan.On(s, [&](Store& st) {
        for (size_t i = 0; i < plan.keys().size(); ++i) {
          if (plan.shard_of(i) != s) continue;
          bool created;
          Entry* e = st.LookupOrCreate(plan.keys()[i], ctx.now_ms, &created);
          SetValue(st, e, ctx.args[2 * i + 2], false);
        }
      });
    }
  }
  co_await plan.Unlock();
  if (nx) {
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
