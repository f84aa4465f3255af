// SAVE, BGSAVE [SCHEDULE], LASTSAVE (doc/commands.md, "SAVE"; doc/rdb.md).
//
// A save does two things. It makes Lavik's own data file durable — every shard writes out its
// log buffers and syncs (Store::FlushAndSync) — and it writes a Redis-compatible dump.rdb of
// the dataset to CONFIG `dir` + `dbfilename` (server/rdb_save.h), which redis-server can load.
// Then it counts as Redis's save does: LASTSAVE moves, rdb_changes_since_last_save restarts
// from the writes it covered, rdb_saves grows. A failed BGSAVE leaves rdb_last_bgsave_status
// "err"; a failed SAVE replies -ERR (and, as in Redis, leaves that status alone). The index
// checkpoint (storage/recovery.h) is not written here: it is valid only while nothing is
// written after it, which only a shutdown can promise (--shutdown-checkpoint). BGSAVE runs the
// same work as a background task on the connection's worker and replies at once.
#include <string>

#include "base/ascii.h"
#include "base/clock.h"
#include "base/log.h"
#include "protocol/errors.h"
#include "runtime/shard_hop.h"
#include "server/command_registry.h"
#include "server/rdb_save.h"
#include "server/server.h"
#include "storage/store.h"

namespace lavik {
namespace {

// Flushes and syncs every shard's log, then writes dump.rdb from *snap (opened now if it is not
// open yet; closed at the end); records the outcome in the server's SaveState (whose
// in_progress the caller holds). True if both succeeded.
Task SaveAll(Server* server, bool background, bool* ok, RdbSnapshot* snap) {
  SaveState& state = server->save_state();
  const int64_t start_ms = NowMs();
  state.current_start_ms = start_ms;
  state.last_try_s = start_ms / 1000;
  ++state.saves;  // every attempt, as Redis counts rdb_saves
  *ok = true;
  uint64_t dirty = 0;
  for (int w = 0; w < server->worker_count(); ++w) {
    co_await ShardCall(server->worker(w), [server, w, ok, &dirty]() -> Task {
      Store& st = server->shards().at(w).store;
      dirty += st.stats().dirty;  // the writes this flush makes durable
      bool synced = false;
      co_await st.FlushAndSync(&synced);
      if (!synced) *ok = false;
    });
  }
  bool written = false;
  if (*ok) {
    co_await SaveRdbFile(server->shards(), server->ConfigValue("dir"),
                         server->ConfigValue("dbfilename"), &written, "", snap);
  } else {
    co_await EndRdbSnapshot(server->shards(), snap);
  }
  *ok = *ok && written;
  if (*ok || background) state.last_ok = *ok;
  if (*ok) {
    state.dirty_at_save = dirty;
    state.last_save_s = NowMs() / 1000;
  }
  state.current_start_ms = 0;
  state.last_bgsave_s = (NowMs() - start_ms) / 1000;
}

// `snap`: the snapshot BGSAVE opened before it replied (not open inside EXEC or a script: the
// walk opens it once the caller's shard locks are released).
Task BackgroundSave(Server* server, RdbSnapshot snap) {
  bool ok;
  co_await SaveAll(server, true, &ok, &snap);
  server->save_state().in_progress = false;
}

Task Save(Context& ctx) {
  SaveState& state = ctx.server->save_state();
  if (state.in_progress.exchange(true)) {
    ctx.reply->Error(kErrBgsaveInProgress);
    co_return;
  }
  bool ok;
  RdbSnapshot snap;
  co_await SaveAll(ctx.server, false, &ok, &snap);
  state.in_progress = false;
  if (ok) {
    ctx.reply->Ok();
  } else {
    ctx.reply->Error("ERR");  // Redis's reply to a failed SAVE (the log says why)
  }
}

Task Bgsave(Context& ctx) {
  // SCHEDULE: Redis 7.0 waits with it only for an AOF rewrite, which Lavik does not have, so it
  // changes nothing; a running save refuses another BGSAVE, SCHEDULE or not, as in Redis.
  if (ctx.args.size() > 1 && (ctx.args.size() > 2 || !EqualsNoCase(ctx.args[1], "schedule"))) {
    ctx.reply->Error(kErrSyntax);
    co_return;
  }
  SaveState& state = ctx.server->save_state();
  if (state.in_progress.exchange(true)) {
    ctx.reply->Error(kErrBgsaveInProgress);
    co_return;
  }
  // The snapshot begins before the reply: every write acknowledged before it is in the file, no
  // write sent after it is. (Inside EXEC or a script the shards' locks are held by the caller:
  // the walk opens its snapshot once they are released.)
  RdbSnapshot snap;
  // Inside EXEC Redis schedules the save for after the transaction, and says so.
  if (!ctx.in_exec && !ctx.in_script) co_await BeginRdbSnapshot(ctx.server->shards(), &snap);
  ctx.reply->Simple(ctx.in_exec ? "Background saving scheduled" : "Background saving started");
  Task t = BackgroundSave(ctx.server, snap);
  t.Start(nullptr, nullptr);
}

Task Lastsave(Context& ctx) {
  ctx.reply->Integer(ctx.server->save_state().last_save_s.load());
  co_return;
}

constexpr uint32_t kSrv = kCmdHome;

const CommandSpec kSaveCommands[] = {
    {"save", 1, kSrv | kCmdAdmin | kCmdNoScript | kCmdNoMulti, 0, 0, 0, &Save,
     "@admin @slow @dangerous", "server", "Makes the dataset durable on disk, synchronously.",
     "1.0.0"},
    {"bgsave", -1, kSrv | kCmdAdmin | kCmdNoScript, 0, 0, 0, &Bgsave, "@admin @slow @dangerous",
     "server", "Makes the dataset durable on disk in the background.", "1.0.0"},
    {"lastsave", 1, kSrv | kCmdLoading | kCmdStale | kCmdFast, 0, 0, 0, &Lastsave,
     "@admin @fast @dangerous", "server",
     "Returns the Unix timestamp of the last successful save to disk.", "1.0.0"},
};

}  // namespace

std::span<const CommandSpec> SaveCommands() { return kSaveCommands; }

Task SaveBeforeShutdown(Server* server, bool* ok) {
  SaveState& state = server->save_state();
  *ok = false;
  if (state.in_progress.exchange(true)) co_return;
  RdbSnapshot snap;
  co_await SaveAll(server, false, ok, &snap);
  state.in_progress = false;
}

Task CheckSavePoints(Server* server) {
  const std::string points = server->ConfigValue("save");
  if (points.empty()) co_return;
  SaveState& state = server->save_state();
  const int64_t now_s = NowMs() / 1000;
  if (state.in_progress.load() || (!state.last_ok.load() && now_s - state.last_try_s.load() <= 5)) {
    co_return;
  }
  uint64_t dirty = 0;
  for (int w = 0; w < server->worker_count(); ++w) {
    co_await ShardHop(server->worker(w), [server, w, &dirty]() {
      dirty += server->shards().at(w).store.stats().dirty;
    });
  }
  const uint64_t changes = dirty - state.dirty_at_save.load();
  const int64_t since = now_s - state.last_save_s.load();
  bool due = false;
  size_t i = 0;
  while (i < points.size() && !due) {  // "seconds changes seconds changes ..."
    size_t end = points.find(' ', i);
    const int64_t seconds = std::stoll(points.substr(i, end - i));
    i = points.find_first_not_of(' ', end);
    end = points.find(' ', i);
    const uint64_t need = std::stoull(points.substr(i, end - i));
    i = end == std::string::npos ? points.size() : end + 1;
    due = changes >= need && since > seconds;
  }
  if (!due || state.in_progress.exchange(true)) co_return;
  LogNotice(std::to_string(changes) + " changes in " + std::to_string(since) +
            " seconds. Saving...");
  Task t = BackgroundSave(server, RdbSnapshot());
  t.Start(nullptr, nullptr);
}

}  // namespace lavik
