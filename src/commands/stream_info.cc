// XINFO STREAM [FULL [COUNT n]], XINFO GROUPS, XINFO CONSUMERS and XINFO HELP, with Redis 7.0's
// field names and order; maps in RESP3. Groups and consumers are listed in name order (Redis
// keeps them in radix trees). Lavik has no radix tree: radix-tree-keys/-nodes report the nodes
// of 100 entries Redis would use, which is an estimate.
#include <algorithm>
#include <string>
#include <vector>

#include "base/ascii.h"
#include "base/numbers.h"
#include "commands/families.h"
#include "commands/stream_access.h"

namespace lavik {
namespace {

// Redis 7.0's streamReplyWithCGLag: how many entries the group has not read yet, or nil when
// deletions make it unknowable.
void ReplyLag(ReplyWriter& w, const Stream& s, const StreamGroup& g) {
  if (s.entries_added == 0) {
    w.Integer(0);
    return;
  }
  const auto added = static_cast<int64_t>(s.entries_added);
  if (g.entries_read != kEntriesReadUnknown && !s.RangeHasTombstones(g.last_id, kMaxStreamId)) {
    w.Integer(added - g.entries_read);
    return;
  }
  const int64_t read = s.EstimateEntriesRead(g.last_id);
  if (read == kEntriesReadUnknown) {
    w.Null();
  } else {
    w.Integer(added - read);
  }
}

void ReplyEntriesRead(ReplyWriter& w, const StreamGroup& g) {
  if (g.entries_read == kEntriesReadUnknown) {
    w.Null();
  } else {
    w.Integer(g.entries_read);
  }
}

// A group's map fields last-delivered-id, entries-read and lag (XINFO GROUPS and STREAM FULL).
void ReplyGroupProgress(ReplyWriter& w, const Stream& s, const StreamGroup& g) {
  w.Bulk("last-delivered-id");
  ReplyId(w, g.last_id);
  w.Bulk("entries-read");
  ReplyEntriesRead(w, g);
  w.Bulk("lag");
  ReplyLag(w, s, g);
}

template <typename T>
std::vector<const T*> ByName(const std::vector<T>& v) {
  std::vector<const T*> out;
  for (const T& x : v) out.push_back(&x);
  std::sort(out.begin(), out.end(), [](const T* a, const T* b) { return a->name < b->name; });
  return out;
}

void ReplyStreamHead(ReplyWriter& w, const Stream& s) {
  const auto n = static_cast<int64_t>(s.entries.size());
  const int64_t nodes = (n + 99) / 100;
  w.Bulk("length");
  w.Integer(n);
  w.Bulk("radix-tree-keys");
  w.Integer(nodes);
  w.Bulk("radix-tree-nodes");
  w.Integer(nodes + 1);
  w.Bulk("last-generated-id");
  ReplyId(w, s.last_id);
  w.Bulk("max-deleted-entry-id");
  ReplyId(w, s.max_deleted_id);
  w.Bulk("entries-added");
  w.Integer(static_cast<int64_t>(s.entries_added));
  w.Bulk("recorded-first-entry-id");
  ReplyId(w, s.entries.empty() ? StreamId{} : s.entries.front().id);
}

void ReplyFull(ReplyWriter& w, const Stream& s, int64_t count, int64_t now) {
  w.Map(9);
  ReplyStreamHead(w, s);
  w.Bulk("entries");
  size_t n = s.entries.size();
  if (count > 0 && static_cast<uint64_t>(count) < n) n = static_cast<size_t>(count);
  w.Array(n);
  for (size_t i = 0; i < n; ++i) ReplyEntry(w, s, s.entries[i]);
  w.Bulk("groups");
  w.Array(s.groups.size());
  for (const StreamGroup* g : ByName(s.groups)) {
    w.Map(7);
    w.Bulk("name");
    w.Bulk(g->name);
    ReplyGroupProgress(w, s, *g);
    w.Bulk("pel-count");
    w.Integer(static_cast<int64_t>(g->pending.size()));
    w.Bulk("pending");
    size_t np = g->pending.size();
    if (count > 0 && static_cast<uint64_t>(count) < np) np = static_cast<size_t>(count);
    w.Array(np);
    for (size_t i = 0; i < np; ++i)
      ReplyPendingEntry(w, *g, g->pending[i], g->pending[i].delivery_ms);
    w.Bulk("consumers");
    w.Array(g->consumers.size());
    for (const StreamConsumer* c : ByName(g->consumers)) {
      const auto ci = static_cast<uint32_t>(c - g->consumers.data());
      std::vector<const StreamPending*> mine;
      for (const StreamPending& p : g->pending) {
        if (p.consumer == ci) mine.push_back(&p);
      }
      w.Map(4);
      w.Bulk("name");
      w.Bulk(c->name);
      w.Bulk("seen-time");
      w.Integer(c->seen_ms);
      w.Bulk("pel-count");
      w.Integer(static_cast<int64_t>(mine.size()));
      w.Bulk("pending");
      size_t k = mine.size();
      if (count > 0 && static_cast<uint64_t>(count) < k) k = static_cast<size_t>(count);
      w.Array(k);
      for (size_t i = 0; i < k; ++i) {
        w.Array(3);
        ReplyId(w, mine[i]->id);
        w.Integer(mine[i]->delivery_ms);
        w.Integer(static_cast<int64_t>(mine[i]->delivery_count));
      }
    }
  }
  (void)now;
}

// Reads the stream at args[2] for XINFO: "ERR no such key" if it is missing.
TaskOf<bool> ReadForInfoOrReply(Context& ctx, StreamRead* r) {
  std::string error;
  if (!co_await ReadStream(*ctx.store, ctx.args[2], ctx.now_ms, true, r, &error)) {
    ctx.reply->Error(error);
    co_return false;
  }
  if (!r->info.exists) {
    ctx.reply->Error(kErrNoSuchKey);
    co_return false;
  }
  co_return true;
}

// XINFO STREAM key [FULL [COUNT count]]
Task XInfoStream(Context& ctx) {
  const auto& args = ctx.args;
  bool full = false;
  int64_t count = 10;
  if (args.size() > 3) {
    if (!EqualsNoCase(args[3], "full") ||
        (args.size() != 4 && !(args.size() == 6 && EqualsNoCase(args[4], "count")))) {
      ctx.reply->Error(SubcommandSyntaxError("xinfo", args[1]));
      co_return;
    }
    full = true;
    if (args.size() == 6) {
      if (!ParseInt64(args[5], &count)) {
        ctx.reply->Error(kErrNotInteger);
        co_return;
      }
      if (count < 0) count = 0;
    }
  }
  StreamRead r;
  if (!co_await ReadForInfoOrReply(ctx, &r)) co_return;
  const Stream& s = r.stream;
  ReplyWriter& w = *ctx.reply;
  if (full) {
    ReplyFull(w, s, count, ctx.now_ms);
    co_return;
  }
  w.Map(10);
  ReplyStreamHead(w, s);
  w.Bulk("groups");
  w.Integer(static_cast<int64_t>(s.groups.size()));
  w.Bulk("first-entry");
  if (s.entries.empty()) {
    w.Null();
  } else {
    ReplyEntry(w, s, s.entries.front());
  }
  w.Bulk("last-entry");
  if (s.entries.empty()) {
    w.Null();
  } else {
    ReplyEntry(w, s, s.entries.back());
  }
}

// XINFO GROUPS key
Task XInfoGroups(Context& ctx) {
  StreamRead r;
  if (!co_await ReadForInfoOrReply(ctx, &r)) co_return;
  const Stream& s = r.stream;
  ReplyWriter& w = *ctx.reply;
  w.Array(s.groups.size());
  for (const StreamGroup* g : ByName(s.groups)) {
    w.Map(6);
    w.Bulk("name");
    w.Bulk(g->name);
    w.Bulk("consumers");
    w.Integer(static_cast<int64_t>(g->consumers.size()));
    w.Bulk("pending");
    w.Integer(static_cast<int64_t>(g->pending.size()));
    ReplyGroupProgress(w, s, *g);
  }
}

// XINFO CONSUMERS key group
Task XInfoConsumers(Context& ctx) {
  StreamRead r;
  if (!co_await ReadForInfoOrReply(ctx, &r)) co_return;
  StreamGroup* g = r.stream.FindGroup(ctx.args[3]);
  if (g == nullptr) {
    ctx.reply->Error(NoSuchGroupError(ctx.args[2], ctx.args[3]));
    co_return;
  }
  ReplyWriter& w = *ctx.reply;
  w.Array(g->consumers.size());
  for (const StreamConsumer* c : ByName(g->consumers)) {
    w.Map(3);
    w.Bulk("name");
    w.Bulk(c->name);
    w.Bulk("pending");
    w.Integer(static_cast<int64_t>(g->PendingOf(static_cast<uint32_t>(c - g->consumers.data()))));
    w.Bulk("idle");
    w.Integer(std::max<int64_t>(0, ctx.now_ms - c->seen_ms));
  }
}

Task XInfoHelp(Context& ctx) {
  static const char* kLines[] = {
      "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CONSUMERS <key> <groupname>",
      "    Show consumers of <groupname>.",
      "GROUPS <key>",
      "    Show the stream consumer groups.",
      "STREAM <key> [FULL [COUNT <count>]",
      "    Show information about the stream.",
      "HELP",
      "    Prints this help.",
  };
  ctx.reply->Array(std::size(kLines));
  for (const char* l : kLines) ctx.reply->Simple(l);
  co_return;
}

constexpr uint32_t kR = kCmdReadOnly;

const CommandSpec kXInfoSubcommands[] = {
    {"xinfo|consumers", 4, kR, 2, 2, 1, &XInfoConsumers, "@read @stream @slow", "stream",
     "List the consumers in a consumer group", "5.0.0"},
    {"xinfo|groups", 3, kR, 2, 2, 1, &XInfoGroups, "@read @stream @slow", "stream",
     "List the consumer groups of a stream", "5.0.0"},
    {"xinfo|stream", -3, kR, 2, 2, 1, &XInfoStream, "@read @stream @slow", "stream",
     "Get information about a stream", "5.0.0"},
    {"xinfo|help", 2, kCmdLoading | kCmdStale | kCmdHome, 0, 0, 0, &XInfoHelp, "@stream @slow",
     "stream", "Show helpful text about the different subcommands", "5.0.0"},
};

const CommandSpec kStreamInfoCommands[] = {
    {"xinfo", -2, 0, 0, 0, 0, nullptr, "@slow", "stream",
     "A container for stream introspection commands", "5.0.0", kXInfoSubcommands},
};

}  // namespace

std::span<const CommandSpec> StreamInfoCommands() { return kStreamInfoCommands; }

}  // namespace lavik
