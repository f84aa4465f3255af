// Consumer-group commands: XGROUP (CREATE, SETID, DESTROY, CREATECONSUMER, DELCONSUMER, HELP),
// XACK, XPENDING, XCLAIM and XAUTOCLAIM. Groups, their consumers and pending entries live in the
// stream's record (storage/stream_record.h); every change rewrites it. Replies and errors follow
// Redis 7.0's t_stream.c.
#include <algorithm>
#include <string>
#include <vector>

#include "base/ascii.h"
#include "base/numbers.h"
#include "commands/families.h"
#include "commands/propagate.h"
#include "commands/shards.h"
#include "commands/stream_access.h"
#include "commands/stream_wait.h"
#include "notify/keyspace_events.h"

namespace lavik {
namespace {

std::string NoGroupError(std::string_view key, std::string_view group) {
  std::string s = "NOGROUP No such key '";
  s += key;
  s += "' or consumer group '";
  s += group;
  s += "'";
  return s;
}

// ENTRIESREAD's value: non-negative or -1.
bool ParseEntriesReadOrReply(Context& ctx, std::string_view arg, int64_t* out) {
  if (!ParseInt64(arg, out)) {
    ctx.reply->Error(kErrNotInteger);
    return false;
  }
  if (*out < 0 && *out != kEntriesReadUnknown) {
    ctx.reply->Error("ERR value for ENTRIESREAD must be positive or -1");
    return false;
  }
  return true;
}

// XGROUP CREATE|SETID|DESTROY|CREATECONSUMER|DELCONSUMER: args[2] is the key, args[3] the group.
Task XGroupGeneric(Context& ctx) {
  const auto& args = ctx.args;
  const std::string_view sub = args[1];
  const bool create = EqualsNoCase(sub, "create"), setid = EqualsNoCase(sub, "setid");
  bool mkstream = false;
  int64_t entries_read = kEntriesReadUnknown;
  if (create) {
    for (size_t i = 5; i < args.size(); ++i) {
      if (EqualsNoCase(args[i], "mkstream")) {
        mkstream = true;
      } else if (EqualsNoCase(args[i], "entriesread") && i + 1 < args.size()) {
        if (!ParseEntriesReadOrReply(ctx, args[i + 1], &entries_read)) co_return;
        ++i;
      } else {
        ctx.reply->Error(SubcommandSyntaxError("xgroup", sub));
        co_return;
      }
    }
  } else if (setid && args.size() == 7) {
    if (!EqualsNoCase(args[5], "entriesread")) {
      ctx.reply->Error(SubcommandSyntaxError("xgroup", sub));
      co_return;
    }
    if (!ParseEntriesReadOrReply(ctx, args[6], &entries_read)) co_return;
  } else if (setid && args.size() != 5) {
    ctx.reply->Error(SubcommandSyntaxError("xgroup", sub));
    co_return;
  }
  const std::string_view key = args[2], group = args[3];
  std::string failure;
  int64_t result = 0;
  std::string error;
  std::string_view event;  // what a write reports
  bool ok = co_await RewriteStream(
      *ctx.store, key, ctx.now_ms,
      [&](Stream* s, bool exists) {
        failure.clear();
        event = {};
        if (!exists && !mkstream) {
          // Every subcommand but CREATE ... MKSTREAM needs the key.
          failure =
              "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you "
              "may want to use the MKSTREAM option to create an empty stream automatically.";
          return Rewrite::kUnchanged;
        }
        StreamGroup* g = exists ? s->FindGroup(group) : nullptr;
        if (g == nullptr && !create && !EqualsNoCase(sub, "destroy")) {
          failure = NoSuchGroupError(key, group);
          return Rewrite::kUnchanged;
        }
        if (create) {
          StreamId id;
          if (args[4] == "$") {
            id = s->last_id;
          } else if (!ParseStreamId(args[4], 0, true, &id)) {
            failure = kErrInvalidStreamId;
            return Rewrite::kUnchanged;
          }
          if (g != nullptr) {
            failure = "BUSYGROUP Consumer Group name already exists";
            return Rewrite::kUnchanged;
          }
          StreamGroup ng;
          ng.name = group;
          ng.last_id = id;
          ng.entries_read = entries_read;
          s->groups.push_back(std::move(ng));
          event = "xgroup-create";
          return Rewrite::kWrite;
        }
        if (setid) {
          StreamId id;
          if (args[4] == "$") {
            id = s->last_id;
          } else if (!ParseStreamId(args[4], 0, false, &id)) {
            failure = kErrInvalidStreamId;
            return Rewrite::kUnchanged;
          }
          g->last_id = id;
          g->entries_read = entries_read;
          event = "xgroup-setid";
          return Rewrite::kWrite;
        }
        if (EqualsNoCase(sub, "destroy")) {
          result = g != nullptr;
          if (g == nullptr) return Rewrite::kUnchanged;
          s->groups.erase(s->groups.begin() + (g - s->groups.data()));
          event = "xgroup-destroy";
          return Rewrite::kWrite;
        }
        const int c = g->FindConsumer(args[4]);
        if (EqualsNoCase(sub, "createconsumer")) {
          result = c < 0;
          if (c >= 0) return Rewrite::kUnchanged;
          g->consumers.push_back({std::string(args[4]), ctx.now_ms, -1});
          event = "xgroup-createconsumer";
          return Rewrite::kWrite;
        }
        // DELCONSUMER: the consumer's pending entries go with it.
        result = 0;
        if (c < 0) return Rewrite::kUnchanged;
        result = static_cast<int64_t>(g->RemoveConsumer(static_cast<uint32_t>(c)));
        event = "xgroup-delconsumer";
        return Rewrite::kWrite;
      },
      &error);
  if (ok && failure.empty() && !event.empty()) NotifyKeyspaceEvent(kNotifyStream, event, key);
  if (!ok) {
    ctx.reply->Error(error);
  } else if (!failure.empty()) {
    ctx.reply->Error(failure);
  } else if (create || setid) {
    ctx.reply->Ok();
  } else {
    // Readers blocked on a destroyed group wake up to fail (Redis unblocks them with NOGROUP).
    if (EqualsNoCase(sub, "destroy") && result == 1) SignalStreamReady(ctx.shards->local(), key);
    ctx.reply->Integer(result);
  }
}

Task XGroupHelp(Context& ctx) {
  static const char* kLines[] = {
      "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CREATE <key> <groupname> <id|$> [option]",
      "    Create a new consumer group. Options are:",
      "    * MKSTREAM",
      "      Create the empty stream if it does not exist.",
      "    * ENTRIESREAD entries_read",
      "      Set the group's entries_read counter (internal use).",
      "CREATECONSUMER <key> <groupname> <consumer>",
      "    Create a new consumer in the specified group.",
      "DELCONSUMER <key> <groupname> <consumer>",
      "    Remove the specified consumer.",
      "DESTROY <key> <groupname>",
      "    Remove the specified group.",
      "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
      "    Set the current group ID and entries_read counter.",
      "HELP",
      "    Prints this help.",
  };
  ctx.reply->Array(std::size(kLines));
  for (const char* l : kLines) ctx.reply->Simple(l);
  co_return;
}

// XACK key group id [id ...]
Task XAck(Context& ctx) {
  std::vector<StreamId> ids;
  int64_t acked = 0;
  bool parse_failed = false;
  bool ok = co_await RewriteStreamOrReply(
      ctx,
      [&](Stream* s, bool exists) {
        acked = 0;
        StreamGroup* g = exists ? s->FindGroup(ctx.args[2]) : nullptr;
        if (g == nullptr) return Rewrite::kUnchanged;
        // All ids are checked before any is acknowledged.
        ids.assign(ctx.args.size() - 3, StreamId{});
        for (size_t j = 3; j < ctx.args.size(); ++j) {
          if (!ParseStreamId(ctx.args[j], 0, true, &ids[j - 3])) {
            parse_failed = true;
            return Rewrite::kUnchanged;
          }
        }
        for (StreamId id : ids) {
          const int p = g->FindPending(id);
          if (p < 0) continue;
          g->pending.erase(g->pending.begin() + p);
          ++acked;
        }
        return acked > 0 ? Rewrite::kWrite : Rewrite::kUnchanged;
      },
      /*groups_only=*/true);
  if (!ok) co_return;
  if (parse_failed) {
    ctx.reply->Error(kErrInvalidStreamId);
  } else {
    ctx.reply->Integer(acked);
  }
}

// XPENDING key group [[IDLE min-idle-time] start end count [consumer]]
Task XPending(Context& ctx) {
  const auto& args = ctx.args;
  const bool summary = args.size() == 3;
  if (!summary && (args.size() < 6 || args.size() > 9)) {
    ctx.reply->Error(kErrSyntax);
    co_return;
  }
  int64_t min_idle = 0, count = 0;
  StreamId start, end;
  std::string_view consumer;
  bool by_consumer = false;
  if (!summary) {
    size_t at = 3;
    if (EqualsNoCase(args[3], "idle")) {
      if (!ParseInt64(args[4], &min_idle)) {
        ctx.reply->Error(kErrNotInteger);
        co_return;
      }
      if (args.size() < 8) {
        ctx.reply->Error(kErrSyntax);
        co_return;
      }
      at += 2;
    }
    if (!ParseInt64(args[at + 2], &count)) {
      ctx.reply->Error(kErrNotInteger);
      co_return;
    }
    if (count < 0) count = 0;
    bool ex;
    if (!ParseIntervalIdOrReply(ctx, args[at], 0, &start, &ex)) co_return;
    if (ex && !start.Incr(&start)) {
      ctx.reply->Error("ERR invalid start ID for the interval");
      co_return;
    }
    if (!ParseIntervalIdOrReply(ctx, args[at + 1], UINT64_MAX, &end, &ex)) co_return;
    if (ex && !end.Decr(&end)) {
      ctx.reply->Error("ERR invalid end ID for the interval");
      co_return;
    }
    if (at + 3 < args.size()) {
      consumer = args[at + 3];
      by_consumer = true;
    }
  }
  StreamRead r;
  std::string error;
  StreamWindow groups_only;  // XPENDING replies ids from the PEL: no entry is read
  groups_only.count = 0;
  if (!co_await ReadStreamWindow(*ctx.store, args[1], ctx.now_ms, true, groups_only, &r, &error)) {
    ctx.reply->Error(error);
    co_return;
  }
  StreamGroup* g = r.info.exists ? r.stream.FindGroup(args[2]) : nullptr;
  if (g == nullptr) {
    ctx.reply->Error(NoGroupError(args[1], args[2]));
    co_return;
  }
  ReplyWriter& w = *ctx.reply;
  if (summary) {
    w.Array(4);
    w.Integer(static_cast<int64_t>(g->pending.size()));
    if (g->pending.empty()) {
      w.Null();
      w.Null();
      w.NullArray();
      co_return;
    }
    ReplyId(w, g->pending.front().id);
    ReplyId(w, g->pending.back().id);
    std::vector<uint64_t> counts(g->consumers.size());
    for (const StreamPending& p : g->pending) ++counts[p.consumer];
    std::vector<uint32_t> order;
    for (uint32_t c = 0; c < counts.size(); ++c) {
      if (counts[c] > 0) order.push_back(c);
    }
    // Redis lists consumers in name order (its consumers are a radix tree).
    std::sort(order.begin(), order.end(),
              [&](uint32_t a, uint32_t b) { return g->consumers[a].name < g->consumers[b].name; });
    w.Array(order.size());
    for (uint32_t c : order) {
      w.Array(2);
      w.Bulk(g->consumers[c].name);
      w.BulkInt(static_cast<int64_t>(counts[c]));
    }
    co_return;
  }
  int ci = -1;
  if (by_consumer) {
    ci = g->FindConsumer(consumer);
    if (ci < 0) {
      w.Array(0);
      co_return;
    }
  }
  std::vector<const StreamPending*> hits;
  for (size_t i = g->PendingLowerBound(start);
       count > 0 && i < g->pending.size() && g->pending[i].id <= end; ++i) {
    const StreamPending& p = g->pending[i];
    if (ci >= 0 && p.consumer != static_cast<uint32_t>(ci)) continue;
    if (min_idle != 0 && ctx.now_ms - p.delivery_ms < min_idle) continue;
    hits.push_back(&p);
    --count;
  }
  w.Array(hits.size());
  for (const StreamPending* p : hits) ReplyPendingEntry(w, *g, *p, ctx.now_ms - p->delivery_ms);
}

// The consumer `name` of `g`, created if missing (*created); its seen time is now.
uint32_t TouchConsumer(StreamGroup* g, std::string_view name, int64_t now_ms, bool* created) {
  int c = g->FindConsumer(name);
  if (c < 0) {
    *created = true;
    g->consumers.push_back({std::string(name), now_ms, -1});
    return static_cast<uint32_t>(g->consumers.size() - 1);
  }
  g->consumers[c].seen_ms = now_ms;
  return static_cast<uint32_t>(c);
}

// Writes claimed entries: ids only (JUSTID) or the entries themselves.
void ReplyClaimed(ReplyWriter& w, const Stream& s, const std::vector<StreamId>& ids, bool justid) {
  w.Array(ids.size());
  for (StreamId id : ids) {
    if (justid) {
      ReplyId(w, id);
    } else {
      ReplyEntry(w, s, s.entries[s.Find(id)]);
    }
  }
}

bool ParseMinIdleOrReply(Context& ctx, std::string_view cmd, int64_t* min_idle) {
  if (!ParseInt64(ctx.args[4], min_idle)) {
    ctx.reply->Error("ERR Invalid min-idle-time argument for " + std::string(cmd));
    return false;
  }
  if (*min_idle < 0) *min_idle = 0;
  return true;
}

// XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME unix-ms]
//        [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID id]
Task XClaim(Context& ctx) {
  const auto& args = ctx.args;
  {
    // The group must exist before anything else is checked.
    StreamRead r;
    std::string error;
    if (!co_await ReadStream(*ctx.store, args[1], ctx.now_ms, false, &r, &error)) {
      ctx.reply->Error(error);
      co_return;
    }
    if (!r.info.exists || r.stream.FindGroup(args[2]) == nullptr) {
      ctx.reply->Error(NoGroupError(args[1], args[2]));
      co_return;
    }
  }
  int64_t min_idle;
  if (!ParseMinIdleOrReply(ctx, "XCLAIM", &min_idle)) co_return;
  std::vector<StreamId> ids;
  size_t j = 5;
  for (; j < args.size(); ++j) {
    StreamId id;
    if (!ParseStreamId(args[j], 0, true, &id)) break;
    ids.push_back(id);
  }
  const int64_t now = ctx.now_ms;
  int64_t delivery = -1, retrycount = -1;
  bool force = false, justid = false;
  StreamId last_id;
  for (; j < args.size(); ++j) {
    const bool more = j + 1 < args.size();
    std::string_view opt = args[j];
    if (EqualsNoCase(opt, "force")) {
      force = true;
    } else if (EqualsNoCase(opt, "justid")) {
      justid = true;
    } else if (EqualsNoCase(opt, "idle") && more) {
      if (!ParseInt64(args[++j], &delivery)) {
        ctx.reply->Error("ERR Invalid IDLE option argument for XCLAIM");
        co_return;
      }
      delivery = now - delivery;
    } else if (EqualsNoCase(opt, "time") && more) {
      if (!ParseInt64(args[++j], &delivery)) {
        ctx.reply->Error("ERR Invalid TIME option argument for XCLAIM");
        co_return;
      }
    } else if (EqualsNoCase(opt, "retrycount") && more) {
      if (!ParseInt64(args[++j], &retrycount)) {
        ctx.reply->Error("ERR Invalid RETRYCOUNT option argument for XCLAIM");
        co_return;
      }
    } else if (EqualsNoCase(opt, "lastid") && more) {
      if (!ParseStreamIdOrReply(ctx, args[++j], 0, true, &last_id)) co_return;
    } else {
      ctx.reply->Error("ERR Unrecognized XCLAIM option '" + std::string(opt) + "'");
      co_return;
    }
  }
  // A bogus time (negative or in the future) means now, as in Redis: clients compute it from
  // their own clocks.
  if (delivery < 0 || delivery > now) delivery = now;
  std::vector<StreamId> claimed;
  std::string out;  // the reply, written while the entries' bytes are alive
  bool missing = false;
  bool created = false;
  std::vector<std::string> effect;               // what replicas get (repl::AddEffect)
  const bool propagating = ctx.repl != nullptr;  // else no effect is built
  bool ok = co_await RewriteStreamOrReply(ctx, [&](Stream* s, bool exists) {
    claimed.clear();
    effect.clear();
    created = false;
    StreamGroup* g = exists ? s->FindGroup(args[2]) : nullptr;
    missing = g == nullptr;
    if (missing) return Rewrite::kUnchanged;
    bool changed = false, moved_last = false;
    if (last_id > g->last_id) {
      g->last_id = last_id;
      changed = moved_last = true;
    }
    int consumer = -1;
    for (StreamId id : ids) {
      int p = g->FindPending(id);
      if (s->Find(id) < 0) {
        // The entry is gone: its pending entry goes too (on the replicas as well).
        if (p >= 0) {
          if (propagating) effect.push_back(ClaimEffect(args[1], *g, g->pending[p]));
          g->pending.erase(g->pending.begin() + p);
          changed = true;
        }
        continue;
      }
      bool fresh = false;
      if (p < 0) {
        if (!force) continue;
        const size_t at = g->PendingLowerBound(id);
        // Delivered once, as Redis's streamCreateNACK: this claim makes it twice (no JUSTID).
        g->pending.insert(g->pending.begin() + at, StreamPending{id, UINT32_MAX, 0, 1});
        p = static_cast<int>(at);
        fresh = true;
      }
      StreamPending& pe = g->pending[p];
      if (!fresh && min_idle != 0 && now - pe.delivery_ms < min_idle) continue;
      if (consumer < 0) consumer = static_cast<int>(TouchConsumer(g, args[3], now, &created));
      pe.consumer = static_cast<uint32_t>(consumer);
      pe.delivery_ms = delivery;
      if (retrycount >= 0) {
        pe.delivery_count = static_cast<uint64_t>(retrycount);
      } else if (!justid) {
        ++pe.delivery_count;
      }
      claimed.push_back(id);
      if (propagating) effect.push_back(ClaimEffect(args[1], *g, pe));
      changed = true;
    }
    // A LASTID that moved the group, sent by the XCLAIMs above or else on its own.
    if (propagating && moved_last && effect.empty()) {
      effect.push_back(SetIdEffect(args[1], *g));
    }
    out.clear();
    ReplyWriter w(&out, ctx.reply->resp());
    ReplyClaimed(w, *s, claimed, justid);
    return changed ? Rewrite::kWrite : Rewrite::kUnchanged;
  });
  if (!ok) co_return;
  if (created) NotifyKeyspaceEvent(kNotifyStream, "xgroup-createconsumer", args[1]);
  if (missing) {
    ctx.reply->Error(NoGroupError(args[1], args[2]));
  } else {
    repl::AddEffect(ctx, std::move(effect));
    ctx.reply->Raw(out);
  }
}

// XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]
Task XAutoClaim(Context& ctx) {
  const auto& args = ctx.args;
  int64_t min_idle, count = 100;
  if (!ParseMinIdleOrReply(ctx, "XAUTOCLAIM", &min_idle)) co_return;
  StreamId start;
  bool ex;
  if (!ParseIntervalIdOrReply(ctx, args[5], 0, &start, &ex)) co_return;
  if (ex && !start.Incr(&start)) {
    ctx.reply->Error("ERR invalid start ID for the interval");
    co_return;
  }
  bool justid = false;
  for (size_t j = 6; j < args.size(); ++j) {
    if (EqualsNoCase(args[j], "count") && j + 1 < args.size()) {
      // Redis bounds it by LONG_MAX / 16 (its attempt budget is count * 10 of 16-byte ids).
      if (!ParseInt64(args[j + 1], &count) || count < 1 || count > INT64_MAX / 16) {
        ctx.reply->Error("ERR COUNT must be > 0");
        co_return;
      }
      ++j;
    } else if (EqualsNoCase(args[j], "justid")) {
      justid = true;
    } else {
      ctx.reply->Error(kErrSyntax);
      co_return;
    }
  }
  const int64_t now = ctx.now_ms;
  std::vector<StreamId> claimed, deleted;
  StreamId cursor;
  std::string out;  // the claimed entries' reply, written while their bytes are alive
  bool missing = false;
  bool created = false;
  std::vector<std::string> effect;               // what replicas get (repl::AddEffect)
  const bool propagating = ctx.repl != nullptr;  // else no effect is built
  bool ok = co_await RewriteStreamOrReply(ctx, [&](Stream* s, bool exists) {
    claimed.clear();
    deleted.clear();
    effect.clear();
    created = false;
    cursor = StreamId{};
    StreamGroup* g = exists ? s->FindGroup(args[2]) : nullptr;
    missing = g == nullptr;
    if (missing) return Rewrite::kUnchanged;
    int64_t left = count, attempts = count * 10;
    int consumer = -1;
    size_t i = g->PendingLowerBound(start);
    while (attempts > 0 && left > 0 && i < g->pending.size()) {
      --attempts;
      StreamPending& pe = g->pending[i];
      if (s->Find(pe.id) < 0) {
        deleted.push_back(pe.id);
        if (propagating) effect.push_back(ClaimEffect(args[1], *g, pe));  // they drop it too
        g->pending.erase(g->pending.begin() + static_cast<std::ptrdiff_t>(i));
        --left;
        continue;
      }
      if (min_idle != 0 && now - pe.delivery_ms < min_idle) {
        ++i;
        continue;
      }
      if (consumer < 0) consumer = static_cast<int>(TouchConsumer(g, args[3], now, &created));
      pe.consumer = static_cast<uint32_t>(consumer);
      pe.delivery_ms = now;
      if (!justid) ++pe.delivery_count;
      claimed.push_back(pe.id);
      if (propagating) effect.push_back(ClaimEffect(args[1], *g, pe));
      --left;
      ++i;
    }
    if (i < g->pending.size()) cursor = g->pending[i].id;
    out.clear();
    ReplyWriter w(&out, ctx.reply->resp());
    ReplyClaimed(w, *s, claimed, justid);
    return claimed.empty() && deleted.empty() ? Rewrite::kUnchanged : Rewrite::kWrite;
  });
  if (!ok) co_return;
  if (created) NotifyKeyspaceEvent(kNotifyStream, "xgroup-createconsumer", args[1]);
  if (missing) {
    ctx.reply->Error(NoGroupError(args[1], args[2]));
    co_return;
  }
  repl::AddEffect(ctx, std::move(effect));
  ReplyWriter& w = *ctx.reply;
  w.Array(3);
  ReplyId(w, cursor);
  w.Raw(out);
  w.Array(deleted.size());
  for (StreamId id : deleted) ReplyId(w, id);
}

constexpr uint32_t kW = kCmdWrite;

const CommandSpec kXGroupSubcommands[] = {
    {"xgroup|create", -5, kW | kCmdDenyOom, 2, 2, 1, &XGroupGeneric, "@write @stream @slow",
     "stream", "Create a consumer group.", "5.0.0"},
    {"xgroup|createconsumer", 5, kW | kCmdDenyOom, 2, 2, 1, &XGroupGeneric, "@write @stream @slow",
     "stream", "Create a consumer in a consumer group.", "6.2.0"},
    {"xgroup|delconsumer", 5, kW, 2, 2, 1, &XGroupGeneric, "@write @stream @slow", "stream",
     "Delete a consumer from a consumer group.", "5.0.0"},
    {"xgroup|destroy", 4, kW, 2, 2, 1, &XGroupGeneric, "@write @stream @slow", "stream",
     "Destroy a consumer group.", "5.0.0"},
    {"xgroup|setid", -5, kW, 2, 2, 1, &XGroupGeneric, "@write @stream @slow", "stream",
     "Set a consumer group to an arbitrary last delivered ID value.", "5.0.0"},
    {"xgroup|help", 2, kCmdLoading | kCmdStale | kCmdHome, 0, 0, 0, &XGroupHelp, "@stream @slow",
     "stream", "Show helpful text about the different subcommands", "5.0.0"},
};

const CommandSpec kStreamGroupCommands[] = {
    {"xgroup", -2, 0, 0, 0, 0, nullptr, "@slow", "stream",
     "A container for consumer groups commands", "5.0.0", kXGroupSubcommands},
    {"xack", -4, kW | kCmdFast, 1, 1, 1, &XAck, "@write @stream @fast", "stream",
     "Marks a pending message as correctly processed, effectively removing it from the pending "
     "entries list of the consumer group. Return value of the command is the number of messages "
     "successfully acknowledged, that is, the IDs we were actually able to resolve in the PEL.",
     "5.0.0"},
    {"xpending", -3, kCmdReadOnly, 1, 1, 1, &XPending, "@read @stream @slow", "stream",
     "Return information and entries from a stream consumer group pending entries list, that "
     "are messages fetched but never acknowledged.",
     "5.0.0"},
    {"xclaim", -6, kW | kCmdFast, 1, 1, 1, &XClaim, "@write @stream @fast", "stream",
     "Changes (or acquires) ownership of a message in a consumer group, as if the message was "
     "delivered to the specified consumer.",
     "5.0.0"},
    {"xautoclaim", -6, kW | kCmdFast, 1, 1, 1, &XAutoClaim, "@write @stream @fast", "stream",
     "Changes (or acquires) ownership of messages in a consumer group, as if the messages were "
     "delivered to the specified consumer.",
     "6.2.0"},
};

}  // namespace

std::span<const CommandSpec> StreamGroupCommands() { return kStreamGroupCommands; }

}  // namespace lavik
