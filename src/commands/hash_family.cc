// Hash commands: HSET/HMSET/HSETNX, HGET/HMGET, HDEL, HLEN, HSTRLEN, HEXISTS, HKEYS/HVALS/HGETALL,
// HINCRBY/HINCRBYFLOAT, HRANDFIELD, HSCAN. A hash is one record holding its field/value pairs in
// the collection encoding (storage/collection.h, doc/collections.md).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "base/ascii.h"
#include "base/numbers.h"
#include "commands/collection_access.h"
#include "commands/families.h"

namespace lavik {
namespace {

constexpr ValueType kHash = ValueType::kHash;

// HSET / HMSET: field/value pairs; the reply counts new fields (HSET) or is OK (HMSET).
Task SetFields(Context& ctx, bool reply_ok) {
  if (ctx.args.size() % 2 != 0) {
    ctx.reply->Error(WrongArityError(ctx.spec->name));
    co_return;
  }
  int64_t added = 0;
  std::vector<std::string_view> fields;
  for (size_t i = 2; i + 1 < ctx.args.size(); i += 2) fields.push_back(ctx.args[i]);
  bool ok = co_await RewriteCollectionOrReply(
      ctx, kHash, "hset",
      [&](const CollectionView& v, bool, std::string* out) {
        std::vector<CollectionChange> changes;
        changes.reserve(ctx.args.size() / 2 - 1);
        added = 0;
        for (size_t i = 2; i + 1 < ctx.args.size(); i += 2) {
          changes.push_back({ctx.args[i], ctx.args[i + 1], false});
        }
        // New fields, each counted once however often the command names it.
        std::vector<std::string_view> fresh;
        for (const CollectionChange& c : changes) {
          if (v.Find(c.field) < 0) fresh.push_back(c.field);
        }
        std::sort(fresh.begin(), fresh.end());
        added = std::unique(fresh.begin(), fresh.end()) - fresh.begin();
        *out = ApplyChanges(v, std::move(changes), true);
        return Rewrite::kWrite;
      },
      ReadScope::Members(fields));
  if (!ok) co_return;
  if (reply_ok) {
    ctx.reply->Ok();
  } else {
    ctx.reply->Integer(added);
  }
}

Task HSet(Context& ctx) { co_await SetFields(ctx, false); }
Task HMSet(Context& ctx) { co_await SetFields(ctx, true); }

Task HSetNx(Context& ctx) {
  bool set = false;
  bool ok = co_await RewriteCollectionOrReply(
      ctx, kHash, "hset",
      [&](const CollectionView& v, bool, std::string* out) {
        set = v.Find(ctx.args[2]) < 0;
        if (!set) return Rewrite::kUnchanged;
        *out = ApplyChanges(v, {{ctx.args[2], ctx.args[3], false}}, true);
        return Rewrite::kWrite;
      },
      ReadScope::Members(ctx.args.subspan(2, 1)));
  if (ok) ctx.reply->Integer(set ? 1 : 0);
}

Task HGet(Context& ctx) {
  CollectionRead h;
  if (!co_await ReadCollectionOrReply(ctx, kHash, &h, ReadScope::Members(ctx.args.subspan(2, 1)))) {
    co_return;
  }
  int64_t i = h.view.Find(ctx.args[2]);
  if (i < 0) {
    ctx.reply->Null();
  } else {
    ctx.reply->Bulk(h.view.value(static_cast<uint32_t>(i)));
  }
}

Task HMGet(Context& ctx) {
  CollectionRead h;
  if (!co_await ReadCollectionOrReply(ctx, kHash, &h, ReadScope::Members(ctx.args.subspan(2)))) {
    co_return;
  }
  ctx.reply->Array(ctx.args.size() - 2);
  for (size_t a = 2; a < ctx.args.size(); ++a) {
    int64_t i = h.view.Find(ctx.args[a]);
    if (i < 0) {
      ctx.reply->Null();
    } else {
      ctx.reply->Bulk(h.view.value(static_cast<uint32_t>(i)));
    }
  }
}

Task HDel(Context& ctx) { co_await RemoveMembers(ctx, kHash); }

Task HLen(Context& ctx) { co_await ReplyCardinality(ctx, kHash); }

Task HStrLen(Context& ctx) {
  CollectionRead h;
  if (!co_await ReadCollectionOrReply(ctx, kHash, &h, ReadScope::Members(ctx.args.subspan(2, 1)))) {
    co_return;
  }
  int64_t i = h.view.Find(ctx.args[2]);
  ctx.reply->Integer(i < 0 ? 0
                           : static_cast<int64_t>(h.view.value(static_cast<uint32_t>(i)).size()));
}

Task HExists(Context& ctx) {
  CollectionRead h;
  if (!co_await ReadCollectionOrReply(ctx, kHash, &h, ReadScope::Members(ctx.args.subspan(2, 1)))) {
    co_return;
  }
  ctx.reply->Integer(h.view.Find(ctx.args[2]) >= 0 ? 1 : 0);
}

enum HashPart : int { kFields = 1, kValues = 2 };

// HKEYS / HVALS / HGETALL.
Task GetAllGeneric(Context& ctx, int parts) {
  CollectionRead h;
  if (!co_await ReadCollectionOrReply(ctx, kHash, &h)) {
    co_return;
  }
  const uint32_t n = h.view.size();
  if (parts == (kFields | kValues)) {
    ctx.reply->Map(n);
  } else {
    ctx.reply->Array(n);
  }
  for (uint32_t i = 0; i < n; ++i) {
    if (parts & kFields) ctx.reply->Bulk(h.view.field(i));
    if (parts & kValues) ctx.reply->Bulk(h.view.value(i));
  }
}

Task HKeys(Context& ctx) { co_await GetAllGeneric(ctx, kFields); }
Task HVals(Context& ctx) { co_await GetAllGeneric(ctx, kValues); }
Task HGetAll(Context& ctx) { co_await GetAllGeneric(ctx, kFields | kValues); }

Task HIncrBy(Context& ctx) {
  int64_t incr;
  if (!ParseInt64(ctx.args[3], &incr)) {
    ctx.reply->Error(kErrNotInteger);
    co_return;
  }
  int64_t value = 0;
  bool ok = co_await RewriteCollectionOrReply(
      ctx, kHash, "hincrby",
      [&](const CollectionView& v, bool, std::string* out) {
        value = 0;
        int64_t i = v.Find(ctx.args[2]);
        if (i >= 0 && !ParseInt64(v.value(static_cast<uint32_t>(i)), &value)) {
          ctx.reply->Error(kErrHashNotInteger);
          return Rewrite::kError;
        }
        if ((incr < 0 && value < 0 && incr < INT64_MIN - value) ||
            (incr > 0 && value > 0 && incr > INT64_MAX - value)) {
          ctx.reply->Error(kErrOverflow);
          return Rewrite::kError;
        }
        value += incr;
        char buf[kMaxInt64Chars];
        std::string_view text(buf, FormatInt64(value, buf));
        *out = ApplyChanges(v, {{ctx.args[2], text, false}}, true);
        return Rewrite::kWrite;
      },
      ReadScope::Members(ctx.args.subspan(2, 1)));
  if (ok) ctx.reply->Integer(value);
}

Task HIncrByFloat(Context& ctx) {
  long double incr;
  if (!ParseLongDouble(ctx.args[3], &incr)) {
    ctx.reply->Error(kErrNotFloat);
    co_return;
  }
  if (std::isnan(incr) || std::isinf(incr)) {
    ctx.reply->Error("ERR value is NaN or Infinity");
    co_return;
  }
  std::string text;
  bool ok = co_await RewriteCollectionOrReply(
      ctx, kHash, "hincrbyfloat",
      [&](const CollectionView& v, bool, std::string* out) {
        long double value = 0;
        int64_t i = v.Find(ctx.args[2]);
        if (i >= 0 && !ParseLongDouble(v.value(static_cast<uint32_t>(i)), &value)) {
          ctx.reply->Error(kErrHashNotFloat);
          return Rewrite::kError;
        }
        value += incr;
        if (std::isnan(value) || std::isinf(value)) {
          ctx.reply->Error(kErrIncrFloatNaN);
          return Rewrite::kError;
        }
        text = FormatLongDouble(value);
        *out = ApplyChanges(v, {{ctx.args[2], text, false}}, true);
        return Rewrite::kWrite;
      },
      ReadScope::Members(ctx.args.subspan(2, 1)));
  if (ok) ctx.reply->Bulk(text);
}

// HRANDFIELD key [count [WITHVALUES]] (Redis 7.0 hrandfieldCommand).
Task HRandField(Context& ctx) {
  int64_t count = 0;
  bool with_count = ctx.args.size() >= 3;
  bool with_values = false;
  if (with_count) {
    if (!ParseInt64(ctx.args[2], &count)) {
      ctx.reply->Error(kErrNotInteger);
      co_return;
    }
    if (count < -INT64_MAX) {
      ctx.reply->Error(
          "ERR value is out of range, value must between -9223372036854775807 and "
          "9223372036854775807");
      co_return;
    }
    if (ctx.args.size() > 4 || (ctx.args.size() == 4 && !EqualsNoCase(ctx.args[3], "withvalues"))) {
      ctx.reply->Error(kErrSyntax);
      co_return;
    }
    with_values = ctx.args.size() == 4;
    if (with_values && (count < -INT64_MAX / 2 || count > INT64_MAX / 2)) {
      ctx.reply->Error(kErrOutOfRange);  // the reply would hold 2 * |count| items
      co_return;
    }
  }
  CollectionRead h;
  if (!co_await ReadRandomMembersOrReply(ctx, kHash, with_count, &h)) co_return;
  const CollectionView& v = h.view;
  RandomPicks picks(v, count);
  const size_t per = with_values && ctx.reply->resp() == 2 ? 2 : 1;
  ctx.reply->Array(picks.size() * per);
  for (uint64_t k = 0; k < picks.size(); ++k) {
    const uint32_t i = picks.Next();
    if (with_values && ctx.reply->resp() > 2) ctx.reply->Array(2);
    ctx.reply->Bulk(v.field(i));
    if (with_values) ctx.reply->Bulk(v.value(i));
  }
}

Task HScan(Context& ctx) {
  CollectionRead h;
  std::vector<uint32_t> hits;
  if (!co_await ScanOrReply(ctx, kHash, &h, &hits)) co_return;
  ctx.reply->Array(hits.size() * 2);
  for (uint32_t i : hits) {
    ctx.reply->Bulk(h.view.field(i));
    ctx.reply->Bulk(h.view.value(i));
  }
}

constexpr uint32_t kW = kCmdWrite | kCmdDenyOom;
constexpr uint32_t kR = kCmdReadOnly;

const CommandSpec kHashCommands[] = {
    {"hset", -4, kW | kCmdFast, 1, 1, 1, &HSet, "@write @hash @fast", "hash",
     "Creates or modifies the value of a field in a hash.", "2.0.0"},
    {"hmset", -4, kW | kCmdFast, 1, 1, 1, &HMSet, "@write @hash @fast", "hash",
     "Sets the values of multiple fields.", "2.0.0"},
    {"hsetnx", 4, kW | kCmdFast, 1, 1, 1, &HSetNx, "@write @hash @fast", "hash",
     "Sets the value of a field in a hash only when the field doesn't exist.", "2.0.0"},
    {"hget", 3, kR | kCmdFast, 1, 1, 1, &HGet, "@read @hash @fast", "hash",
     "Returns the value of a field in a hash.", "2.0.0"},
    {"hmget", -3, kR | kCmdFast, 1, 1, 1, &HMGet, "@read @hash @fast", "hash",
     "Returns the values of all fields in a hash.", "2.0.0"},
    {"hdel", -3, kCmdWrite | kCmdFast, 1, 1, 1, &HDel, "@write @hash @fast", "hash",
     "Deletes one or more fields and their values from a hash. Deletes the hash if no fields "
     "remain.",
     "2.0.0"},
    {"hlen", 2, kR | kCmdFast, 1, 1, 1, &HLen, "@read @hash @fast", "hash",
     "Returns the number of fields in a hash.", "2.0.0"},
    {"hstrlen", 3, kR | kCmdFast, 1, 1, 1, &HStrLen, "@read @hash @fast", "hash",
     "Returns the length of the value of a field.", "3.2.0"},
    {"hexists", 3, kR | kCmdFast, 1, 1, 1, &HExists, "@read @hash @fast", "hash",
     "Determines whether a field exists in a hash.", "2.0.0"},
    {"hkeys", 2, kR, 1, 1, 1, &HKeys, "@read @hash @slow", "hash", "Returns all fields in a hash.",
     "2.0.0"},
    {"hvals", 2, kR, 1, 1, 1, &HVals, "@read @hash @slow", "hash", "Returns all values in a hash.",
     "2.0.0"},
    {"hgetall", 2, kR, 1, 1, 1, &HGetAll, "@read @hash @slow", "hash",
     "Returns all fields and values in a hash.", "2.0.0"},
    {"hincrby", 4, kW | kCmdFast, 1, 1, 1, &HIncrBy, "@write @hash @fast", "hash",
     "Increments the integer value of a field in a hash by a number. Uses 0 as initial value if "
     "the field doesn't exist.",
     "2.0.0"},
    {"hincrbyfloat", 4, kW | kCmdFast, 1, 1, 1, &HIncrByFloat, "@write @hash @fast", "hash",
     "Increments the floating point value of a field by a number. Uses 0 as initial value if the "
     "field doesn't exist.",
     "2.6.0"},
    {"hrandfield", -2, kR, 1, 1, 1, &HRandField, "@read @hash @slow", "hash",
     "Returns one or more random fields from a hash.", "6.2.0"},
    {"hscan", -3, kR, 1, 1, 1, &HScan, "@read @hash @slow", "hash",
     "Iterates over fields and values of a hash.", "2.8.0"},
};

}  // namespace

std::span<const CommandSpec> HashCommands() { return kHashCommands; }

}  // namespace lavik
