// List commands: LPUSH/RPUSH(X), LPOP/RPOP, LLEN, LRANGE, LINDEX, LSET, LINSERT, LREM, LTRIM,
// LPOS, LMOVE/RPOPLPUSH, LMPOP. A list is one record holding its elements in order
// (storage/list_record.h), or once large a root plus chunks in list order (list_chunks.h); a
// command names the window it needs (list_access.h ListScope) and only those chunks are read
// and rewritten (doc/collections.md). LMOVE and LMPOP take their keys' shard locks
// (multi_shard.h), so they are atomic across workers as in Redis.
#include <algorithm>
#include <string>
#include <vector>

#include "base/ascii.h"
#include "base/numbers.h"
#include "commands/families.h"
#include "commands/list_access.h"
#include "commands/list_chunks.h"
#include "commands/list_ops.h"
#include "commands/multi_shard.h"

namespace lavik {
namespace {

using Elements = std::vector<std::string_view>;

// LPUSH/RPUSH and their X forms (only if the list exists).
Task PushGeneric(Context& ctx, bool left, bool only_if_exists) {
  int64_t len = 0;
  bool ok = co_await RewriteListOrReply(ctx, left ? "lpush" : "rpush",
                                        left ? ListScope::Head(1) : ListScope::Tail(1),
                                        [&](const ListWindow& w, bool exists, Elements* e) {
                                          if (!exists && only_if_exists) {
                                            len = 0;
                                            return Rewrite::kUnchanged;
                                          }
                                          PushElements(e, ctx.args.subspan(2), left);
                                          len = static_cast<int64_t>(w.size + ctx.args.size() - 2);
                                          return Rewrite::kWrite;
                                        });
  if (ok) ctx.reply->Integer(len);
}

Task LPush(Context& ctx) { co_await PushGeneric(ctx, true, false); }
Task RPush(Context& ctx) { co_await PushGeneric(ctx, false, false); }
Task LPushX(Context& ctx) { co_await PushGeneric(ctx, true, true); }
Task RPushX(Context& ctx) { co_await PushGeneric(ctx, false, true); }

// LPOP/RPOP key [count]: with a count the reply is an array (a null array for a missing key).
Task PopGeneric(Context& ctx, bool left) {
  bool with_count;
  int64_t count;
  if (!ParsePopCountOrReply(ctx, true, &with_count, &count)) co_return;
  std::vector<std::string> popped;
  bool existed = false;
  bool ok = co_await RewriteListOrReply(
      ctx, left ? "lpop" : "rpop", left ? ListScope::Head(count) : ListScope::Tail(count),
      [&](const ListWindow&, bool exists, Elements* e) {
        existed = exists;
        popped.clear();
        if (!exists || count == 0) return Rewrite::kUnchanged;
        PopElements(e, static_cast<uint64_t>(count), left, &popped);
        return Rewrite::kWrite;
      });
  if (!ok) co_return;
  if (!existed) {
    if (with_count) {
      ctx.reply->NullArray();
    } else {
      ctx.reply->Null();
    }
  } else if (!with_count) {
    ctx.reply->Bulk(popped[0]);
  } else {
    ctx.reply->Array(popped.size());
    for (const std::string& s : popped) ctx.reply->Bulk(s);
  }
}

Task LPop(Context& ctx) { co_await PopGeneric(ctx, true); }
Task RPop(Context& ctx) { co_await PopGeneric(ctx, false); }

Task LLen(Context& ctx) {
  ListRead l;
  std::string error;
  if (!co_await ReadList(*ctx.store, ctx.args[1], ctx.now_ms, true, false, &l, &error,
                         ListScope::Count())) {
    ctx.reply->Error(error);
    co_return;
  }
  ctx.reply->Integer(static_cast<int64_t>(l.size));
}

Task LRange(Context& ctx) {
  int64_t start, stop;
  if (!ParseInt64(ctx.args[2], &start) || !ParseInt64(ctx.args[3], &stop)) {
    ctx.reply->Error(kErrNotInteger);
    co_return;
  }
  ListRead l;
  std::string error;
  if (!co_await ReadList(*ctx.store, ctx.args[1], ctx.now_ms, true, false, &l, &error,
                         ListScope::Range(start, stop))) {
    ctx.reply->Error(error);
    co_return;
  }
  uint32_t from, to;
  if (!ClampRange(static_cast<uint32_t>(l.size), start, stop, &from, &to)) {
    ctx.reply->Array(0);
    co_return;
  }
  ctx.reply->Array(to - from + 1);
  for (uint32_t i = from; i <= to; ++i) ctx.reply->Bulk(l.view.element(i - l.base));
}

Task LIndex(Context& ctx) {
  int64_t index;
  if (!ParseInt64(ctx.args[2], &index)) {
    ctx.reply->Error(kErrNotInteger);
    co_return;
  }
  ListRead l;
  std::string error;
  if (!co_await ReadList(*ctx.store, ctx.args[1], ctx.now_ms, true, false, &l, &error,
                         ListScope::Index(index))) {
    ctx.reply->Error(error);
    co_return;
  }
  uint32_t i;
  if (!ResolveIndex(static_cast<uint32_t>(l.size), index, &i)) {
    ctx.reply->Null();
  } else {
    ctx.reply->Bulk(l.view.element(i - static_cast<uint32_t>(l.base)));
  }
}

Task LSet(Context& ctx) {
  int64_t index;
  if (!ParseInt64(ctx.args[2], &index)) {
    ctx.reply->Error(kErrNotInteger);
    co_return;
  }
  std::string_view failure;
  bool ok = co_await RewriteListOrReply(
      ctx, "lset", ListScope::Index(index), [&](const ListWindow& w, bool exists, Elements* e) {
        uint32_t i;
        failure = {};
        if (!exists) {
          failure = kErrNoSuchKey;
          return Rewrite::kUnchanged;
        }
        if (!ResolveIndex(static_cast<uint32_t>(w.size), index, &i)) {
          failure = kErrIndexRange;
          return Rewrite::kUnchanged;
        }
        (*e)[i - w.base] = ctx.args[3];
        return Rewrite::kWrite;
      });
  if (ok) ReplyErrorOrOk(ctx, failure);
}

// LINSERT key BEFORE|AFTER pivot element: -1 if the pivot is missing, 0 if the key is.
Task LInsert(Context& ctx) {
  bool after;
  if (EqualsNoCase(ctx.args[2], "after")) {
    after = true;
  } else if (EqualsNoCase(ctx.args[2], "before")) {
    after = false;
  } else {
    ctx.reply->Error(kErrSyntax);
    co_return;
  }
  int64_t result = 0;
  bool ok =
      co_await RewriteListOrReply(ctx, "linsert", [&](const ListView&, bool exists, Elements* e) {
        result = 0;
        if (!exists) return Rewrite::kUnchanged;
        auto it = std::find(e->begin(), e->end(), ctx.args[3]);
        if (it == e->end()) {
          result = -1;
          return Rewrite::kUnchanged;
        }
        e->insert(after ? it + 1 : it, ctx.args[4]);
        result = static_cast<int64_t>(e->size());
        return Rewrite::kWrite;
      });
  if (ok) ctx.reply->Integer(result);
}

// LREM key count element: count > 0 from the head, < 0 from the tail, 0 all.
Task LRem(Context& ctx) {
  int64_t count;
  if (!ParseInt64(ctx.args[2], &count)) {
    ctx.reply->Error(kErrNotInteger);
    co_return;
  }
  int64_t removed = 0;
  bool ok =
      co_await RewriteListOrReply(ctx, "lrem", [&](const ListView&, bool exists, Elements* e) {
        removed = exists ? RemoveElements(e, ctx.args[3], count) : 0;
        return removed > 0 ? Rewrite::kWrite : Rewrite::kUnchanged;
      });
  if (ok) ctx.reply->Integer(removed);
}

Task LTrim(Context& ctx) {
  int64_t start, stop;
  if (!ParseInt64(ctx.args[2], &start) || !ParseInt64(ctx.args[3], &stop)) {
    ctx.reply->Error(kErrNotInteger);
    co_return;
  }
  bool ok = co_await RewriteListOrReply(
      ctx, "ltrim", ListScope::Trim(start, stop),
      [&](const ListWindow& w, bool exists, Elements* e) {
        if (!exists) return Rewrite::kUnchanged;
        uint32_t from, to;
        if (!ClampRange(static_cast<uint32_t>(w.size), start, stop, &from, &to)) {
          e->clear();
        } else {
          // The window starts at w.base (the chunk of `from`, or the whole list).
          e->erase(e->begin() + (to - w.base) + 1, e->end());
          e->erase(e->begin(), e->begin() + (from - w.base));
        }
        return Rewrite::kWrite;
      });
  if (ok) ctx.reply->Ok();
}

// LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len] (Redis 7.0 lposCommand).
Task LPos(Context& ctx) {
  int64_t rank = 1, count = -1, maxlen = 0;
  for (size_t i = 3; i < ctx.args.size(); i += 2) {
    std::string_view opt = ctx.args[i];
    if (i + 1 >= ctx.args.size()) {
      ctx.reply->Error(kErrSyntax);
      co_return;
    }
    int64_t v;
    const bool is_rank = EqualsNoCase(opt, "rank"), is_count = EqualsNoCase(opt, "count"),
               is_maxlen = EqualsNoCase(opt, "maxlen");
    if (!is_rank && !is_count && !is_maxlen) {
      ctx.reply->Error(kErrSyntax);
      co_return;
    }
    if (!ParseInt64(ctx.args[i + 1], &v)) {
      ctx.reply->Error(kErrNotInteger);
      co_return;
    }
    if (is_rank) {
      if (v == 0) {
        ctx.reply->Error(
            "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... "
            "or use negative to start from the end of the list");
        co_return;
      }
      rank = v;
    } else if (is_count) {
      if (v < 0) {
        ctx.reply->Error("ERR COUNT can't be negative");
        co_return;
      }
      count = v;
    } else {
      if (v < 0) {
        ctx.reply->Error("ERR MAXLEN can't be negative");
        co_return;
      }
      maxlen = v;
    }
  }
  std::vector<int64_t> hits;
  std::string error;
  if (!co_await FindListPositions(*ctx.store, ctx.args[1], ctx.now_ms, ctx.args[2], rank,
                                  count < 0 ? 1 : count, maxlen, &hits, &error)) {
    ctx.reply->Error(error);
    co_return;
  }
  if (count < 0) {
    if (hits.empty()) {
      ctx.reply->Null();
    } else {
      ctx.reply->Integer(hits[0]);
    }
    co_return;
  }
  ctx.reply->Array(hits.size());
  for (int64_t h : hits) ctx.reply->Integer(h);
}

// LMOVE source destination LEFT|RIGHT LEFT|RIGHT; RPOPLPUSH source destination.
Task MoveCommand(Context& ctx, bool from_left, bool to_left) {
  KeyPlan plan(ctx, ctx.args.subspan(1, 2));
  MoveResult r;
  co_await plan.Lock();
  co_await MoveOnce(ctx, plan, from_left, to_left, &r);
  co_await plan.Unlock();
  if (!r.error.empty()) {
    ctx.reply->Error(r.error);
  } else if (!r.moved) {
    ctx.reply->Null();
  } else {
    ctx.reply->Bulk(r.element);
  }
}

Task LMove(Context& ctx) {
  bool from_left, to_left;
  if (!ParseSideOrReply(ctx, ctx.args[3], &from_left) ||
      !ParseSideOrReply(ctx, ctx.args[4], &to_left)) {
    co_return;
  }
  co_await MoveCommand(ctx, from_left, to_left);
}

Task RPopLPush(Context& ctx) { co_await MoveCommand(ctx, false, true); }

// LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count]
Task LMPop(Context& ctx) {
  MPopArgs a;
  if (!ParseMPopArgsOrReply(ctx, 1, &a)) co_return;
  KeyPlan plan(ctx, ctx.args.subspan(2, a.numkeys));
  PopResult r;
  co_await plan.Lock();
  co_await MPopOnce(ctx, plan, a, &r);
  co_await plan.Unlock();
  ReplyMPop(ctx, r);
}

constexpr uint32_t kW = kCmdWrite | kCmdDenyOom;
constexpr uint32_t kR = kCmdReadOnly;

const CommandSpec kListCommands[] = {
    {"lpush", -3, kW | kCmdFast, 1, 1, 1, &LPush, "@write @list @fast", "list",
     "Prepends one or more elements to a list. Creates the key if it doesn't exist.", "1.0.0"},
    {"rpush", -3, kW | kCmdFast, 1, 1, 1, &RPush, "@write @list @fast", "list",
     "Appends one or more elements to a list. Creates the key if it doesn't exist.", "1.0.0"},
    {"lpushx", -3, kW | kCmdFast, 1, 1, 1, &LPushX, "@write @list @fast", "list",
     "Prepends one or more elements to a list only when the list exists.", "2.2.0"},
    {"rpushx", -3, kW | kCmdFast, 1, 1, 1, &RPushX, "@write @list @fast", "list",
     "Appends an element to a list only when the list exists.", "2.2.0"},
    {"lpop", -2, kCmdWrite | kCmdFast, 1, 1, 1, &LPop, "@write @list @fast", "list",
     "Returns the first elements in a list after removing it. Deletes the list if the last "
     "element was popped.",
     "1.0.0"},
    {"rpop", -2, kCmdWrite | kCmdFast, 1, 1, 1, &RPop, "@write @list @fast", "list",
     "Returns and removes the last elements of a list. Deletes the list if the last element was "
     "popped.",
     "1.0.0"},
    {"llen", 2, kR | kCmdFast, 1, 1, 1, &LLen, "@read @list @fast", "list",
     "Returns the length of a list.", "1.0.0"},
    {"lrange", 4, kR, 1, 1, 1, &LRange, "@read @list @slow", "list",
     "Returns a range of elements from a list.", "1.0.0"},
    {"lindex", 3, kR, 1, 1, 1, &LIndex, "@read @list @slow", "list",
     "Returns an element from a list by its index.", "1.0.0"},
    {"lset", 4, kW, 1, 1, 1, &LSet, "@write @list @slow", "list",
     "Sets the value of an element in a list by its index.", "1.0.0"},
    {"linsert", 5, kW, 1, 1, 1, &LInsert, "@write @list @slow", "list",
     "Inserts an element before or after another element in a list.", "2.2.0"},
    {"lrem", 4, kCmdWrite, 1, 1, 1, &LRem, "@write @list @slow", "list",
     "Removes elements from a list. Deletes the list if the last element was removed.", "1.0.0"},
    {"ltrim", 4, kCmdWrite, 1, 1, 1, &LTrim, "@write @list @slow", "list",
     "Removes elements from both ends a list. Deletes the list if all elements were trimmed.",
     "1.0.0"},
    {"lpos", -3, kR, 1, 1, 1, &LPos, "@read @list @slow", "list",
     "Returns the index of matching elements in a list.", "6.0.6"},
    {"lmove", 5, kW, 1, 2, 1, &LMove, "@write @list @slow", "list",
     "Returns an element after popping it from one list and pushing it to another. Deletes the "
     "list if the last element was moved.",
     "6.2.0"},
    {"rpoplpush", 3, kW, 1, 2, 1, &RPopLPush, "@write @list @slow", "list",
     "Returns the last element of a list after removing and pushing it to another list. Deletes "
     "the list if the last element was popped.",
     "1.2.0"},
    {"lmpop", -4, kCmdWrite | kCmdMovableKeys, 0, 0, 0, &LMPop, "@write @list @slow", "list",
     "Returns multiple elements from a list after removing them. Deletes the list if the last "
     "element was popped.",
     "7.0.0"},
};

}  // namespace

std::span<const CommandSpec> ListCommands() { return kListCommands; }

}  // namespace lavik
