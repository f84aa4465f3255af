// Server commands: INFO (info.cc), CONFIG, COMMAND, TIME, SHUTDOWN.
#include <strings.h>

#include <algorithm>
#include <coroutine>
#include <string>
#include <vector>

#include "base/ascii.h"
#include "base/clock.h"
#include "client/client_state.h"
#include "commands/command_keys.h"
#include "commands/command_table.h"
#include "net/connection.h"
#include "protocol/errors.h"
#include "replication/master.h"
#include "runtime/shard_hop.h"
#include "runtime/worker.h"
#include "server/command_registry.h"
#include "server/config_rewrite.h"
#include "server/server.h"

namespace lavik {

Task Info(Context& ctx);  // info.cc
// command_keys_commands.cc
Task CommandGetKeys(Context& ctx);
Task CommandGetKeysAndFlags(Context& ctx);
Task CommandList(Context& ctx);

namespace {

Task ConfigGet(Context& ctx) {
  std::vector<std::pair<std::string, std::string>> out;
  ctx.server->ConfigGet(ctx.args.subspan(2), &out);
  ctx.reply->Map(out.size());
  for (const auto& [name, value] : out) {
    ctx.reply->Bulk(name);
    ctx.reply->Bulk(value);
  }
  co_return;
}

Task ConfigSet(Context& ctx) {
  if (ctx.args.size() % 2 != 0) {  // a name without a value (arity already checked)
    ctx.reply->Error(kErrSyntax);
    co_return;
  }
  std::vector<std::pair<std::string, std::string>> params;
  for (size_t i = 2; i + 1 < ctx.args.size(); i += 2) {
    params.emplace_back(std::string(ctx.args[i]), std::string(ctx.args[i + 1]));
  }
  // enable-protected-configs local: a loopback or unix-socket client.
  const std::string_view peer = ctx.client != nullptr && ctx.client->conn != nullptr
                                    ? std::string_view(ctx.client->conn->peer())
                                    : std::string_view();
  const bool local = peer.rfind("127.", 0) == 0 || peer.rfind("::1", 0) == 0 ||
                     peer.rfind("[::1]", 0) == 0 || peer.rfind("/", 0) == 0 || peer.empty();
  Status st = ctx.server->ConfigSet(std::move(params), local);
  if (st.ok) {
    ctx.reply->Ok();
  } else {
    ctx.reply->Error(st.error);
  }
}

Task ConfigResetStat(Context& ctx) {
  Server* server = ctx.server;
  for (int w = 0; w < server->worker_count(); ++w) {
    co_await ShardHop(server->worker(w), [server, w]() {
      WorkerStats& s = server->stats(w);
      s.commands.Reset();
      s.connections_received.Reset();
      s.rejected_connections.Reset();
      s.expired_keys_active.Reset();
      Connection::ResetIoCounts();  // this hop runs on worker w
      // Redis keeps the dirty counter (rdb_changes_since_last_save) across RESETSTAT.
      StoreStats& st = server->shards().at(w).store.stats();
      const uint64_t dirty = st.dirty;
      st = StoreStats{};
      st.dirty = dirty;
      server->observability().stats.ResetWorker(w);
    });
  }
  server->save_state().saves = 0;
  ctx.reply->Ok();
}

Task ConfigHelp(Context& ctx) {
  static const char* kLines[] = {
      "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "GET <pattern>",
      "    Return parameters matching the glob-like <pattern> and their values.",
      "SET <directive> <value>",
      "    Set the configuration <directive> to <value>.",
      "RESETSTAT",
      "    Reset statistics reported by the INFO command.",
      "REWRITE",
      "    Rewrite the configuration file.",
      "HELP",
      "    Print this help.",
  };
  ctx.reply->Array(std::size(kLines));
  for (const char* l : kLines) ctx.reply->Simple(l);
  co_return;
}

Task Time(Context& ctx) {
  int64_t us = NowUs();
  ctx.reply->Array(2);
  ctx.reply->BulkInt(us / 1000000);
  ctx.reply->BulkInt(us % 1000000);
  co_return;
}

// SHUTDOWN's wait for lagging replicas (Server::BeginShutdownWait): resumed on the client's
// worker with the outcome. A second SHUTDOWN joins the running wait instead.
struct ShutdownAwaiter : MailboxItem {
  Server* server = nullptr;
  int64_t timeout_ms = 0;
  Worker* home = nullptr;
  std::coroutine_handle<> handle;
  bool joined = false;
  bool missed = false;            // the wait ended between the two tries: none runs now
  int outcome = Master::kInSync;  // joined: kAborted if the server goes on running

  bool await_ready() const { return false; }
  bool await_suspend(std::coroutine_handle<> h) {
    handle = h;
    home = Worker::Current();
    run = [](MailboxItem* item) { static_cast<ShutdownAwaiter*>(item)->handle.resume(); };
    auto* self = this;
    if (server->BeginShutdownWait(timeout_ms, [self](int o) {
          self->outcome = o;
          self->home->Post(self);
        })) {
      return true;
    }
    joined = true;
    missed = !server->JoinShutdownWait([self](bool resumed) {
      self->outcome = resumed ? Master::kAborted : Master::kInSync;
      self->home->Post(self);
    });
    return !missed;
  }
  void await_resume() const {}
};

// SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT], as Redis 7.0's shutdownCommand: unless NOW (or
// shutdown-timeout 0) it first waits, writes held, up to shutdown-timeout seconds for every
// replica to acknowledge the whole stream (REPLCONF GETACK *); ABORT from another client ends
// that wait and the server goes on. Then the save (SAVE, or save points without NOSAVE).
Task Shutdown(Context& ctx) {
  bool nosave = false, save = false, force = false, now = false, abort = false;
  for (size_t i = 1; i < ctx.args.size(); ++i) {
    std::string_view o = ctx.args[i];
    if (EqualsNoCase(o, "nosave")) {
      nosave = true;
    } else if (EqualsNoCase(o, "save")) {
      save = true;
    } else if (EqualsNoCase(o, "now")) {
      now = true;
    } else if (EqualsNoCase(o, "force")) {
      force = true;
    } else if (EqualsNoCase(o, "abort")) {
      abort = true;
    } else {
      ctx.reply->Error(kErrSyntax);
      co_return;
    }
  }
  if ((abort && (nosave || save || now || force)) || (nosave && save)) {
    ctx.reply->Error(kErrSyntax);
    co_return;
  }
  Server* server = ctx.server;
  if (abort) {
    if (server->AbortShutdown()) {
      ctx.reply->Ok();
    } else {
      ctx.reply->Error("ERR No shutdown in progress.");
    }
    co_return;
  }
  const int64_t timeout_s = std::stoll(server->ConfigValue("shutdown-timeout"));
  bool waited = false;
  while (!now && timeout_s > 0 && !server->master().ReplicasInSync()) {
    ShutdownAwaiter w;
    w.server = server;
    w.timeout_ms = timeout_s * 1000;
    co_await w;
    if (w.missed) continue;  // another one's wait just ended: look again
    if (w.outcome == Master::kAborted) {
      if (!w.joined) server->EndShutdownWait(true);
      ctx.reply->Error("ERR Errors trying to SHUTDOWN. Check logs.");
      co_return;
    }
    if (w.joined) {  // the SHUTDOWN that began the wait saves and stops the server
      ctx.client->close_after_reply = true;
      co_return;
    }
    waited = true;
    break;
  }
  server->master().LogShutdownSync();
  // As Redis: SAVE, or save points without NOSAVE, write dump.rdb first; a failed save keeps
  // the server running unless FORCE.
  if (!nosave && (save || !server->ConfigValue("save").empty())) {
    bool ok = false;
    co_await SaveBeforeShutdown(server, &ok);
    if (!ok && !force) {
      if (waited) server->EndShutdownWait(true);
      ctx.reply->Error("ERR Errors trying to SHUTDOWN. Check logs.");
      co_return;
    }
  }
  if (waited) server->EndShutdownWait(false);
  // As Redis: no reply; the connection closes when the server exits.
  server->RequestShutdown();
  ctx.client->close_after_reply = true;
}

// --- COMMAND ---

struct FlagName {
  uint32_t flag;
  const char* name;
};
constexpr FlagName kFlagNames[] = {
    {kCmdWrite, "write"},
    {kCmdReadOnly, "readonly"},
    {kCmdDenyOom, "denyoom"},
    {kCmdAdmin, "admin"},
    {kCmdPubSub, "pubsub"},
    {kCmdNoScript, "noscript"},
    {kCmdBlocking, "blocking"},
    {kCmdLoading, "loading"},
    {kCmdStale, "stale"},
    {kCmdSkipMonitor, "skip_monitor"},
    {kCmdFast, "fast"},
    {kCmdNoAuth, "no_auth"},
    {kCmdAllowBusy, "allow_busy"},
    {kCmdNoMulti, "no_multi"},
    {kCmdNoMandatoryKeys, "no_mandatory_keys"},
    {kCmdMovableKeys, "movablekeys"},
    {kCmdAsking, "asking"},
};

std::vector<std::string_view> Words(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = s.find(' ', i);
    if (j == std::string_view::npos) j = s.size();
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

void ReplyCommandInfo(ReplyWriter& w, const CommandSpec& spec) {
  w.Array(10);
  w.Bulk(spec.name);
  w.Integer(spec.arity);
  size_t nflags = 0;
  for (const FlagName& f : kFlagNames) nflags += (spec.flags & f.flag) ? 1 : 0;
  w.Set(nflags);
  for (const FlagName& f : kFlagNames) {
    if (spec.flags & f.flag) w.Simple(f.name);
  }
  const KeyRange range = LegacyKeyRange(spec);
  w.Integer(range.first);
  w.Integer(range.last);
  w.Integer(range.step);
  std::vector<std::string_view> cats = Words(spec.acl_categories);
  w.Set(cats.size());
  for (std::string_view c : cats) w.Simple(c);
  w.Array(0);  // tips
  w.Array(0);  // key specifications
  w.Array(spec.subcommands.size());
  for (const CommandSpec& sub : spec.subcommands) ReplyCommandInfo(w, sub);
}

void ReplyCommandDocs(ReplyWriter& w, const CommandSpec& spec) {
  w.Map(spec.subcommands.empty() ? 3 : 4);
  w.Bulk("summary");
  w.Bulk(spec.summary);
  w.Bulk("since");
  w.Bulk(spec.since);
  w.Bulk("group");
  w.Bulk(spec.group);
  if (!spec.subcommands.empty()) {
    w.Bulk("subcommands");
    w.Map(spec.subcommands.size());
    for (const CommandSpec& sub : spec.subcommands) {
      w.Bulk(sub.name);
      ReplyCommandDocs(w, sub);
    }
  }
}

Task Command(Context& ctx) {
  const auto& all = ctx.server->commands().all();
  ctx.reply->Array(all.size());
  for (const CommandSpec* s : all) ReplyCommandInfo(*ctx.reply, *s);
  co_return;
}

Task CommandCount(Context& ctx) {
  ctx.reply->Integer(static_cast<int64_t>(ctx.server->commands().all().size()));
  co_return;
}

// Resolves "get" or "client|list" to a spec.
const CommandSpec* Resolve(const CommandTable& table, std::string_view name) {
  size_t bar = name.find('|');
  if (bar == std::string_view::npos) return table.Find(name);
  const CommandSpec* container = table.Find(name.substr(0, bar));
  return container ? CommandTable::FindSubcommand(*container, name.substr(bar + 1)) : nullptr;
}

Task CommandInfo(Context& ctx) {
  const CommandTable& table = ctx.server->commands();
  if (ctx.args.size() == 2) {
    co_await Command(ctx);
    co_return;
  }
  ctx.reply->Array(ctx.args.size() - 2);
  for (size_t i = 2; i < ctx.args.size(); ++i) {
    const CommandSpec* s = Resolve(table, ctx.args[i]);
    if (s == nullptr) {
      ctx.reply->Null();
    } else {
      ReplyCommandInfo(*ctx.reply, *s);
    }
  }
}

Task CommandDocs(Context& ctx) {
  const CommandTable& table = ctx.server->commands();
  std::vector<const CommandSpec*> specs;
  if (ctx.args.size() == 2) {
    specs = table.all();
  } else {
    for (size_t i = 2; i < ctx.args.size(); ++i) {
      if (const CommandSpec* s = Resolve(table, ctx.args[i])) specs.push_back(s);
    }
  }
  ctx.reply->Map(specs.size());
  for (const CommandSpec* s : specs) {
    ctx.reply->Bulk(s->name);
    ReplyCommandDocs(*ctx.reply, *s);
  }
  co_return;
}

Task CommandHelp(Context& ctx) {
  static const char* kLines[] = {
      "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "(no subcommand)",
      "    Return details about all Redis commands.",
      "COUNT",
      "    Return the total number of commands in this Redis server.",
      "LIST",
      "    Return a list of all commands in this Redis server.",
      "INFO [<command-name> ...]",
      "    Return details about multiple Redis commands.",
      "    If no command names are given, documentation details for all",
      "    commands are returned.",
      "DOCS [<command-name> ...]",
      "    Return documentation details about multiple Redis commands.",
      "    If no command names are given, documentation details for all",
      "    commands are returned.",
      "GETKEYS <full-command>",
      "    Return the keys from a full Redis command.",
      "GETKEYSANDFLAGS <full-command>",
      "    Return the keys and the access flags from a full Redis command.",
      "HELP",
      "    Prints this help.",
  };
  ctx.reply->Array(std::size(kLines));
  for (const char* l : kLines) ctx.reply->Simple(l);
  co_return;
}

constexpr uint32_t kSrv = kCmdHome;

const CommandSpec kConfigSubcommands[] = {
    {"config|get", -3, kSrv | kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale, 0, 0, 0,
     &ConfigGet, "@admin @slow @dangerous", "server",
     "Returns the effective values of configuration parameters.", "2.0.0"},
    {"config|set", -4, kSrv | kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale, 0, 0, 0,
     &ConfigSet, "@admin @slow @dangerous", "server", "Sets configuration parameters in-flight.",
     "2.0.0"},
    {"config|resetstat", 2, kSrv | kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale, 0, 0, 0,
     &ConfigResetStat, "@admin @slow @dangerous", "server", "Resets the server's statistics.",
     "2.0.0"},
    {"config|rewrite", 2, kSrv | kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale, 0, 0, 0,
     &ConfigRewrite, "@admin @slow @dangerous", "server",
     "Rewrite the configuration file with the in memory configuration", "2.8.0"},
    {"config|help", 2, kSrv | kCmdLoading | kCmdStale, 0, 0, 0, &ConfigHelp, "@slow", "server",
     "Returns helpful text about the different subcommands.", "5.0.0"},
};

const CommandSpec kCommandSubcommands[] = {
    {"command|count", 2, kSrv | kCmdLoading | kCmdStale, 0, 0, 0, &CommandCount,
     "@slow @connection", "server", "Returns a count of commands.", "2.8.13"},
    {"command|list", -2, kSrv | kCmdLoading | kCmdStale, 0, 0, 0, &CommandList, "@slow @connection",
     "server", "Returns a list of command names.", "7.0.0"},
    {"command|info", -2, kSrv | kCmdLoading | kCmdStale, 0, 0, 0, &CommandInfo, "@slow @connection",
     "server", "Returns information about one, multiple or all commands.", "2.8.13"},
    {"command|docs", -2, kSrv | kCmdLoading | kCmdStale, 0, 0, 0, &CommandDocs, "@slow @connection",
     "server",
     "Returns documentary information about one, multiple or all "
     "commands.",
     "7.0.0"},
    {"command|getkeys", -4, kSrv | kCmdLoading | kCmdStale, 0, 0, 0, &CommandGetKeys,
     "@slow @connection", "server", "Extract keys given a full Redis command", "2.8.13"},
    {"command|getkeysandflags", -4, kSrv | kCmdLoading | kCmdStale, 0, 0, 0,
     &CommandGetKeysAndFlags, "@slow @connection", "server",
     "Extract keys and access flags given a full Redis command", "7.0.0"},
    {"command|help", 2, kSrv | kCmdLoading | kCmdStale, 0, 0, 0, &CommandHelp, "@slow @connection",
     "server", "Returns helpful text about the different subcommands.", "5.0.0"},
};

const CommandSpec kServerCommands[] = {
    {"info", -1, kSrv | kCmdLoading | kCmdStale, 0, 0, 0, &Info, "@slow @dangerous", "server",
     "Returns information and statistics about the server.", "1.0.0"},
    {"config", -2, kSrv, 0, 0, 0, nullptr, "@slow", "server",
     "A container for server configuration commands.", "2.0.0", kConfigSubcommands},
    {"command", -1, kSrv | kCmdLoading | kCmdStale, 0, 0, 0, &Command, "@slow @connection",
     "server", "Returns detailed information about all commands.", "2.8.13", kCommandSubcommands},
    {"time", 1, kSrv | kCmdLoading | kCmdStale | kCmdFast, 0, 0, 0, &Time, "@fast", "server",
     "Returns the server time.", "2.6.0"},
    {"shutdown", -1, kSrv | kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale | kCmdNoMulti, 0, 0,
     0, &Shutdown, "@admin @slow @dangerous", "server",
     "Synchronously saves the database(s) to disk and shuts down the Redis server.", "1.0.0"},
};

}  // namespace

std::span<const CommandSpec> ServerCommands() { return kServerCommands; }

}  // namespace lavik
