// XREAD [COUNT n] [BLOCK ms] STREAMS key... id...
// XREADGROUP GROUP g c [COUNT n] [BLOCK ms] [NOACK] STREAMS key... id...
//
// One attempt runs under the shard locks of all its keys: a first pass checks every key (type,
// group) and resolves "$", so an error leaves nothing changed; a second pass serves each key on
// its worker, writing that key's part of the reply there. If nothing was served and BLOCK was
// given, the reader queues a waiter on every key *before* the locks are released — an XADD
// needs the lock, so none can slip between the check and the queueing — and suspends until an
// XADD wakes it, the timeout passes or the client hangs up. A woken reader simply tries again.
#include "blocking/stream_blocking.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "base/ascii.h"
#include "base/clock.h"
#include "base/db_key.h"
#include "base/numbers.h"
#include "blocking/list_blocking.h"
#include "client/client_state.h"
#include "commands/multi_shard.h"
#include "commands/propagate.h"
#include "commands/stream_access.h"
#include "commands/stream_wait.h"
#include "notify/keyspace_events.h"
#include "protocol/errors.h"

namespace lavik {
namespace {

struct ReadArgs {
  bool group_mode = false;
  std::string_view group, consumer;
  int64_t count = 0;   // 0: no limit
  int64_t block = -1;  // -1: no BLOCK; 0: forever
  bool noack = false;
  std::vector<std::string_view> keys;
  std::vector<std::string_view> id_args;
};

bool ParseReadArgsOrReply(Context& ctx, bool group_mode, ReadArgs* a) {
  const auto& args = ctx.args;
  a->group_mode = group_mode;
  size_t streams_at = 0;
  bool group_given = false;
  for (size_t i = 1; i < args.size(); ++i) {
    const size_t more = args.size() - i - 1;
    std::string_view o = args[i];
    if (EqualsNoCase(o, "block") && more > 0) {
      ++i;
      if (!ParseInt64(args[i], &a->block)) {
        ctx.reply->Error(kErrTimeoutNotInteger);
        return false;
      }
      if (a->block < 0) {
        ctx.reply->Error(kErrTimeoutNegative);
        return false;
      }
    } else if (EqualsNoCase(o, "count") && more > 0) {
      ++i;
      if (!ParseInt64(args[i], &a->count)) {
        ctx.reply->Error(kErrNotInteger);
        return false;
      }
      if (a->count < 0) a->count = 0;
    } else if (EqualsNoCase(o, "streams") && more > 0) {
      streams_at = i + 1;
      const size_t n = args.size() - streams_at;
      if (n % 2 != 0) {
        // Redis 7.0 names XREAD and '$' whichever of the two commands ran.
        ctx.reply->Error(
            "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be "
            "specified.");
        return false;
      }
      break;
    } else if (EqualsNoCase(o, "group") && more >= 2) {
      if (!group_mode) {
        ctx.reply->Error(
            "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.");
        return false;
      }
      a->group = args[i + 1];
      a->consumer = args[i + 2];
      group_given = true;
      i += 2;
    } else if (EqualsNoCase(o, "noack")) {
      if (!group_mode) {
        ctx.reply->Error(
            "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.");
        return false;
      }
      a->noack = true;
    } else {
      ctx.reply->Error(kErrSyntax);
      return false;
    }
  }
  if (streams_at == 0) {
    ctx.reply->Error(kErrSyntax);
    return false;
  }
  if (group_mode && !group_given) {
    ctx.reply->Error("ERR Missing GROUP option for XREADGROUP");
    return false;
  }
  const size_t n = (args.size() - streams_at) / 2;
  a->keys.assign(args.begin() + streams_at, args.begin() + streams_at + n);
  a->id_args.assign(args.begin() + streams_at + n, args.end());
  return true;
}

// What the reader asks of one key: entries after `after`, or (XREADGROUP ">") new entries for
// the group, or (XREADGROUP with an id) the consumer's pending history from `after` on.
struct KeyWant {
  StreamId after;
  bool dollar = false;    // "$": resolved to the stream's last id on the first attempt
  bool new_only = false;  // ">"
};

bool ParseWantsOrReply(Context& ctx, const ReadArgs& a, std::vector<KeyWant>* wants) {
  wants->resize(a.keys.size());
  for (size_t i = 0; i < a.keys.size(); ++i) {
    std::string_view arg = a.id_args[i];
    KeyWant& w = (*wants)[i];
    if (arg == "$") {
      if (a.group_mode) {
        ctx.reply->Error(
            "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the "
            "history of this consumer by specifying a proper ID, or use the > ID to get new "
            "messages. The $ ID would just return an empty result set.");
        return false;
      }
      w.dollar = true;
    } else if (arg == ">") {
      if (!a.group_mode) {
        ctx.reply->Error(
            "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> "
            "<consumer> option.");
        return false;
      }
      w.new_only = true;
    } else if (!ParseStreamId(arg, 0, true, &w.after)) {
      // Redis checks a key's type and group before parsing its id: CheckKey reports a bad id
      // in that order, so nothing is reported here.
      w = KeyWant{};
    }
  }
  return true;
}

struct KeyOutcome {
  bool skip = false;  // a woken XREAD whose key is no stream now: nothing to read, block again
  std::string error;
  std::string reply;  // this key's part of the reply (RESP2: with its 2-element array header)
  bool served = false;
  std::vector<std::string> effect;  // XREADGROUP: what replicas get (repl::AddEffect)
};

// Pass 1 on the key's worker: type and group checks, "$" resolution.
// `woken`: a blocked XREADGROUP retrying, which Redis fails with its own texts when the stream
// or the group went away meanwhile.
Task CheckKey(Store& st, Context& ctx, const ReadArgs& a, size_t i, bool woken, KeyWant* want,
              KeyOutcome* out) {
  if (woken) {
    // The key was replaced by another type while the reader waited (SET, DEL and a push in one
    // EXEC): Redis fails a group reader and lets an XREAD reader wait on.
    const KeyInfo info = st.Lookup(a.keys[i], ctx.now_ms);
    if (info.exists && info.type != ValueType::kStream) {
      if (a.group_mode) {
        out->error = "UNBLOCKED the stream key no longer exists";
      } else {
        out->skip = true;
      }
      co_return;
    }
  }
  StreamRead r;
  if (!co_await ReadStream(st, a.keys[i], ctx.now_ms, true, &r, &out->error)) co_return;
  if (a.group_mode && woken && !r.info.exists) {
    out->error = "UNBLOCKED the stream key no longer exists";
    co_return;
  }
  if (a.group_mode && woken && r.stream.FindGroup(a.group) == nullptr) {
    out->error = "NOGROUP the consumer group this client was blocked on no longer exists";
    co_return;
  }
  if (a.group_mode && (!r.info.exists || r.stream.FindGroup(a.group) == nullptr)) {
    out->error = "NOGROUP No such key '" + std::string(a.keys[i]) + "' or consumer group '" +
                 std::string(a.group) + "' in XREADGROUP with GROUP option";
    co_return;
  }
  std::string_view arg = a.id_args[i];
  if (arg != "$" && arg != ">") {
    StreamId id;
    if (!ParseStreamId(arg, 0, true, &id)) {
      out->error = kErrInvalidStreamId;
      co_return;
    }
  }
  if (want->dollar) {
    want->after = r.info.exists ? r.stream.last_id : StreamId{};
    want->dollar = false;
  }
}

void KeyHeader(ReplyWriter& w, std::string_view key) {
  if (w.resp() == 2) w.Array(2);
  w.Bulk(ClientKey(key));
}

// Pass 2 for XREAD.
Task ServeRead(Store& st, Context& ctx, const ReadArgs& a, size_t i, const KeyWant& want,
               KeyOutcome* out) {
  StreamRead r;
  StreamWindow window;  // a chunked stream reads only the chunks past want.after
  if (!want.after.Incr(&window.start)) co_return;
  window.count = a.count == 0 ? SIZE_MAX : static_cast<size_t>(a.count);
  if (!co_await ReadStreamWindow(st, a.keys[i], ctx.now_ms, false, window, &r, &out->error)) {
    co_return;
  }
  const Stream& s = r.stream;
  if (!r.info.exists || s.entries.empty() || s.entries.back().id <= want.after) co_return;
  std::vector<const StreamEntry*> list;
  const auto limit = a.count == 0 ? SIZE_MAX : static_cast<size_t>(a.count);
  for (size_t j = s.UpperBound(want.after); j < s.entries.size() && list.size() < limit; ++j) {
    list.push_back(&s.entries[j]);
  }
  ReplyWriter w(&out->reply, ctx.reply->resp());
  KeyHeader(w, a.keys[i]);
  ReplyEntries(w, s, list);
  out->served = true;
}

// Pass 2 for XREADGROUP: delivers new entries (">") or replays the consumer's pending ones.
Task ServeGroupRead(Store& st, Context& ctx, const ReadArgs& a, size_t i, const KeyWant& want,
                    KeyOutcome* out) {
  const int64_t now = ctx.now_ms;
  const auto limit = a.count == 0 ? SIZE_MAX : static_cast<size_t>(a.count);
  bool created = false;
  const bool ok = co_await RewriteStream(
      st, a.keys[i], now,
      [&](Stream* s, bool) {
        out->reply.clear();
        out->served = false;
        out->effect.clear();
        const bool propagating = ctx.repl != nullptr;  // else no effect is built
        created = false;
        StreamGroup* g = s->FindGroup(a.group);
        if (g == nullptr) return Rewrite::kUnchanged;  // checked in pass 1, under the same lock
        if (want.new_only && (s->entries.empty() || s->entries.back().id <= g->last_id)) {
          return Rewrite::kUnchanged;
        }
        ReplyWriter w(&out->reply, ctx.reply->resp());
        KeyHeader(w, a.keys[i]);
        int ci = g->FindConsumer(a.consumer);
        if (ci < 0) {
          g->consumers.push_back({std::string(a.consumer), now, -1});
          ci = static_cast<int>(g->consumers.size() - 1);
          created = true;
          // The replicas' XCLAIMs create it, unless none is sent: NOACK (as Redis 7.0) or a
          // read of the history (Redis 7.0 sends nothing then).
          if (propagating && (a.noack || !want.new_only)) {
            out->effect.push_back(CreateConsumerEffect(a.keys[i], a.group, a.consumer));
          }
        }
        g->consumers[ci].seen_ms = now;
        const auto c = static_cast<uint32_t>(ci);
        out->served = true;
        if (!want.new_only) {
          // History: the consumer's pending entries after the id given.
          StreamId from;
          if (!want.after.Incr(&from)) {
            w.Array(0);
            return Rewrite::kWrite;
          }
          std::vector<size_t> hits;
          for (size_t p = g->PendingLowerBound(from); p < g->pending.size() && hits.size() < limit;
               ++p) {
            if (g->pending[p].consumer == c) hits.push_back(p);
          }
          w.Array(hits.size());
          for (size_t p : hits) {
            StreamPending& pe = g->pending[p];
            const int e = s->Find(pe.id);
            if (e < 0) {
              // Deleted since it was delivered: the id with a null entry, as Redis replies.
              w.Array(2);
              ReplyId(w, pe.id);
              w.NullArray();
              continue;
            }
            ReplyEntry(w, *s, s->entries[e]);
            pe.delivery_ms = now;
            ++pe.delivery_count;
            // Redis 7.0 sends nothing for a history read; the XCLAIM keeps the replicas' count.
            if (propagating) out->effect.push_back(ClaimEffect(a.keys[i], *g, pe));
          }
          return Rewrite::kWrite;
        }
        std::vector<size_t> list;
        for (size_t j = s->UpperBound(g->last_id); j < s->entries.size() && list.size() < limit;
             ++j) {
          list.push_back(j);
        }
        w.Array(list.size());
        const StreamId last0 = g->last_id;
        for (size_t j : list) {
          const StreamId id = s->entries[j].id;
          ReplyEntry(w, *s, s->entries[j]);
          if (id > g->last_id) {
            if (g->entries_read != kEntriesReadUnknown &&
                !s->RangeHasTombstones(id, kMaxStreamId)) {
              ++g->entries_read;
            } else if (s->entries_added != 0) {
              g->entries_read = s->EstimateEntriesRead(id);
            }
            g->last_id = id;
          }
          if (a.noack) continue;
          const size_t at = g->PendingLowerBound(id);
          if (at < g->pending.size() && g->pending[at].id == id) {
            g->pending[at] = StreamPending{id, c, now, 1};
          } else {
            g->pending.insert(g->pending.begin() + static_cast<std::ptrdiff_t>(at),
                              StreamPending{id, c, now, 1});
          }
          if (propagating) out->effect.push_back(ClaimEffect(a.keys[i], *g, g->pending[at]));
        }
        // The group's new last id and entries_read: Redis 7.0 sends them after a NOACK read
        // only (its replicas' XCLAIM LASTID leaves entries_read behind); later versions always.
        if (propagating && g->last_id != last0) {
          out->effect.push_back(SetIdEffect(a.keys[i], *g));
        }
        return Rewrite::kWrite;
      },
      &out->error);
  if (ok && created) NotifyKeyspaceEvent(kNotifyStream, "xgroup-createconsumer", a.keys[i]);
}

Task ReadCommand(Context& ctx, bool group_mode) {
  ReadArgs a;
  if (!ParseReadArgsOrReply(ctx, group_mode, &a)) co_return;
  std::vector<KeyWant> wants;
  if (!ParseWantsOrReply(ctx, a, &wants)) co_return;
  const int64_t deadline = a.block > 0 ? NowMs() + a.block : 0;
  bool woken = false;
  while (true) {
    KeyPlan plan(ctx, a.keys);
    std::vector<KeyOutcome> outs(a.keys.size());
    co_await plan.Lock();
    std::string error;
    for (size_t i = 0; i < a.keys.size() && error.empty(); ++i) {
      co_await plan.Run(plan.shard_of(i), [&, i](Store& st) -> Task {
        co_await CheckKey(st, ctx, a, i, woken, &wants[i], &outs[i]);
      });
      error = outs[i].error;
    }
    size_t served = 0;
    for (size_t i = 0; i < a.keys.size() && error.empty(); ++i) {
      if (outs[i].skip) continue;
      co_await plan.Run(plan.shard_of(i), [&, i](Store& st) -> Task {
        if (group_mode) {
          co_await ServeGroupRead(st, ctx, a, i, wants[i], &outs[i]);
        } else {
          co_await ServeRead(st, ctx, a, i, wants[i], &outs[i]);
        }
      });
      error = outs[i].error;
      served += outs[i].served;
    }
    if (group_mode) {
      // The groups' changes go to the replicas in the order of the writes to their keys: the
      // stream position is taken while the keys are still held (commands/propagate.h).
      bool effects = false;
      for (KeyOutcome& o : outs) {
        effects = effects || !o.effect.empty();
        repl::AddEffect(ctx, std::move(o.effect));
      }
      if (effects && !ctx.in_exec) repl::TakeSeqNow(ctx);
    }
    std::shared_ptr<ListWaiter> w;
    const bool block = error.empty() && served == 0 && a.block >= 0 && !ctx.in_exec;
    if (block) {
      w = std::make_shared<ListWaiter>();
      w->home = Worker::Current();
      w->deadline_ms = deadline;
      w->fd = ctx.client->conn->fd();
      w->client_id = ctx.client_id;
      for (size_t i = 0; i < a.keys.size(); ++i) {
        co_await plan.On(plan.shard_of(i), [&, i](Store&) { QueueStreamWaiter(a.keys[i], w); });
      }
    }
    co_await plan.Unlock();
    if (!error.empty()) {
      ctx.reply->Error(error);
      co_return;
    }
    if (served > 0) {
      if (ctx.reply->resp() == 3) {
        ctx.reply->Map(served);
      } else {
        ctx.reply->Array(served);
      }
      for (const KeyOutcome& o : outs) {
        if (o.served) ctx.reply->Raw(o.reply);
      }
      co_return;
    }
    if (!block) {
      ctx.reply->NullArray();
      co_return;
    }
    TrackBlockedWaiter(w);
    const ListWaiter::Outcome outcome = co_await WaitForList{w.get()};
    UntrackBlockedWaiter(w);
    for (size_t i = 0; i < a.keys.size(); ++i) {
      co_await plan.On(plan.shard_of(i),
                       [&, i](Store&) { DequeueStreamWaiter(a.keys[i], w.get()); });
    }
    if (outcome != ListWaiter::Outcome::kWoken) {
      ReplyWaitEnded(ctx, outcome);
      co_return;
    }
    ctx.now_ms = NowMs();  // the retry delivers at its own time
    woken = true;
  }
}

Task XRead(Context& ctx) { co_await ReadCommand(ctx, false); }
Task XReadGroup(Context& ctx) { co_await ReadCommand(ctx, true); }

const CommandSpec kStreamReadCommands[] = {
    {"xread", -4, kCmdReadOnly | kCmdBlocking | kCmdMovableKeys | kCmdHome, 0, 0, 0, &XRead,
     "@read @stream @slow @blocking", "stream",
     "Return never seen elements in multiple streams, with IDs greater than the ones reported by "
     "the caller for each stream. Can block.",
     "5.0.0"},
    {"xreadgroup", -7, kCmdWrite | kCmdBlocking | kCmdMovableKeys | kCmdHome, 0, 0, 0, &XReadGroup,
     "@write @stream @slow @blocking", "stream",
     "Return new entries from a stream using a consumer group, or access the history of the "
     "pending entries for a given consumer. Can block.",
     "5.0.0"},
};

}  // namespace

std::span<const CommandSpec> StreamReadCommands() { return kStreamReadCommands; }

}  // namespace lavik
