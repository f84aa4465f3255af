// Propagation: the effects of write commands, for the replication stream a master sends its
// replicas (replication/master.h, doc/replication.md "Lavik as a master").
//
// Nothing here runs until the first replica attaches (repl::On() is one relaxed load, false
// until then, and never false again, as Redis keeps its backlog once created). From then on:
//
// - every write command that changed data yields one stream *entry*: a global sequence number
//   (repl::TakeSeq, one atomic add) and the command's effect as RESP, the rewrites Redis 7.0
//   makes applied (relative expiry times → PEXPIREAT / SET ... PXAT, INCRBYFLOAT → SET KEEPTTL,
//   SPOP → SREM, blocking pops → their non-blocking form, XADD * → the ID it made, GETDEL → DEL,
//   RESTORE ttl → ABSTTL); XREADGROUP, XCLAIM and XAUTOCLAIM send what they record themselves
//   (OwnEffect: XCLAIM ... FORCE JUSTID per pending entry they changed, XGROUP SETID/
//   CREATECONSUMER), as Redis's streamPropagateXCLAIM;
// - the number is taken while the command still owns its keys: on the key's worker right after
//   a single-shard command finishes there, or before a multi-shard command (MSET across shards,
//   EXEC, a script, FLUSHALL) releases its shard locks (repl::TakeSeqBeforeUnlock), so two
//   writes to one key get numbers in the order they were applied;
// - the entry goes to the calling worker's own log (a mutex only that worker and the master's
//   thread take); the master's thread drains the logs and emits the entries in number order.
//   Numbers are dense: every number taken is pushed, with no ops if the command wrote nothing.
// - EXEC and scripts collect their inner writes (ReplCall::batch); an entry with more than one
//   op is sent wrapped in MULTI/EXEC, as Redis 7.0 does.
//
// Thread safety: On/TakeSeq/Push from any thread; Drain from the master's thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "commands/command.h"

namespace lavik {

// One command of the stream: its logical database (-1: any) and its RESP bytes.
struct ReplOp {
  int db = -1;
  std::string resp;
};

// A command's propagation state (Context::repl), allocated only while replication is on.
struct ReplCall {
  uint64_t seq = 0;     // taken before the shards were released (0: not yet)
  uint64_t dirty0 = 0;  // the store's write count when the command started
  bool batch = false;   // EXEC / a script: the inner writes are collected in ops
  std::vector<ReplOp> ops;
  std::string reply;           // the reply, captured for the rewrites that need it
  std::string* out = nullptr;  // where the captured reply then goes
  bool by_dirty = false;       // a single-shard command: changed = the store's count moved
  // XADD/XTRIM with "~": the exact threshold the trim left (the stream's length for MAXLEN, its
  // first entry's id for MINID), sent instead with "=" (Redis's streamRewriteTrimArgument).
  // Set by the command, taken by the command's effect.
  std::string trim_to;
};

namespace repl {

extern std::atomic<bool> g_on;
inline bool On() { return g_on.load(std::memory_order_relaxed); }

// The master's thread, at the first replica: from now on writes are logged. `wake` is called
// (from any thread) after a push while the master's thread sleeps.
void Activate(void (*wake)());
// Called by the master's thread before it sleeps: the next push calls wake.
void WantWake();

uint64_t TakeSeq();
// The last sequence number taken (WAIT: every entry up to it).
uint64_t LastSeq();

// A multi-shard command about to release its shards: takes its number now. Not a blocking
// command's attempt: one that blocks takes its number when it is served (TakeSeqNow).
inline void TakeSeqBeforeUnlock(Context& ctx) {
  if (ctx.repl != nullptr && ctx.repl->seq == 0 && !(ctx.spec->flags & kCmdBlocking)) {
    ctx.repl->seq = TakeSeq();
  }
}
// A blocked command served on its key's worker (blocking/list_blocking.cc): its place is now.
inline void TakeSeqNow(Context& ctx) {
  if (ctx.repl != nullptr && ctx.repl->seq == 0) ctx.repl->seq = TakeSeq();
}

// A single-shard write suspending for the first time (the dispatcher): if it already changed
// the store (`dirty`, the store's write count now, moved since it started — nothing else ran
// on the worker in between), its place in the stream is now, not when it finishes: a write
// that waits for the device after placing its record (appendfsync always) cannot be overtaken
// by a later write to the same key that finishes first.
inline void TakeSeqIfWritten(Context& ctx, uint64_t dirty) {
  if (ctx.repl->seq == 0 && !ctx.repl->batch && dirty != ctx.repl->dirty0) {
    ctx.repl->seq = TakeSeq();
  }
}

struct Entry {
  uint64_t seq = 0;
  std::vector<ReplOp> ops;
};
void Push(uint64_t seq, std::vector<ReplOp> ops);
// The master's thread: moves every log's entries to *out (unordered).
void Drain(std::vector<Entry>* out);

// Commands whose effects go to the stream: writes, EXEC and scripts, PUBLISH.
inline bool Propagates(const CommandSpec& spec);

// Commands whose effect is computed from their reply (INCRBYFLOAT, SPOP, XADD, blocking pops).
bool NeedsReply(const CommandSpec& spec);
// EXEC, EVAL, EVALSHA, FCALL (and the _RO forms): their inner writes are their effect.
bool IsBatch(const CommandSpec& spec);
// XREADGROUP, XCLAIM, XAUTOCLAIM: their effect is the commands they record (AddEffect) while
// they change the group, never their own arguments; nothing recorded, nothing sent.
bool OwnEffect(const CommandSpec& spec);
// For an OwnEffect command: appends `cmds` (RESP, keys in the client's form) to the running
// command's effect, in its logical database. Nothing while replication is off (ctx.repl null);
// inside EXEC or a script they join the batch's commands.
void AddEffect(Context& ctx, std::vector<std::string> cmds);

// Appends the effect of a command that ran and changed data to *ops; `args` are in stored form
// for physical database `db` (base/db_key.h), `reply` its RESP reply (for NeedsReply commands),
// `trim_to` the command's ReplCall::trim_to.
void AppendEffect(const CommandSpec& spec, std::span<const std::string_view> args, int db,
                  int64_t now_ms, std::string_view reply, std::vector<ReplOp>* ops,
                  std::string_view trim_to = {});

// A top-level command finished (on the worker that owns its keys, or at home for the rest):
// pushes its entry, if it changed data or took a number, and frees ctx.repl.
void Finish(Context& ctx, bool changed, std::string_view reply);

// A key expired here (lazily or by the active cycle), by stored key: its DEL gets the next
// number, as Redis 7.0 sends a DEL for every key its master expires (replicas never expire keys
// themselves: they hide them). The Store calls it (Store::SetExpiredKeySink) on the key's
// worker, before the command that found the key expired takes its own number.
void PropagateExpired(std::string_view stored_key);

// RESP array of the arguments.
std::string Resp(std::span<const std::string_view> args);

inline bool Propagates(const CommandSpec& spec) {
  return (spec.flags & kCmdWrite) || IsBatch(spec) || spec.name == "publish";
}

}  // namespace repl
}  // namespace lavik
