// The command table's entry type and the context a handler runs with.
//
// A handler is a coroutine (runtime/task.h): it parses its arguments, calls typed Store
// operations and writes its reply through ctx.reply. It runs on the worker that owns its keys
// (the dispatcher routes it there), or — for keyless commands and commands whose keys span
// several shards — on the connection's worker, from where it reaches other shards by hops
// (multi_shard.h). Side effects every command has (stats, dirty counter) run in the dispatcher.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "protocol/reply_writer.h"
#include "runtime/task.h"

namespace lavik {

class ClientState;
class Server;
struct Services;
class ShardSet;
class Store;
struct CommandSpec;
struct ReplCall;

struct Context {
  std::span<const std::string_view> args;
  ReplyWriter* reply = nullptr;
  Store* store = nullptr;         // the store of the worker the handler runs on
  ClientState* client = nullptr;  // only for commands that run on the connection's worker
  ShardSet* shards = nullptr;
  Server* server = nullptr;            // only for commands that run on the connection's worker
  const Services* services = nullptr;  // the process's subsystems (client/services.h)
  const CommandSpec* spec = nullptr;
  int64_t now_ms = 0;  // wall clock when the command started (expiry decisions)
  uint64_t client_id = 0;
  // Run by EXEC (transaction/transaction.h): EXEC already holds the lock of every shard the command
  // touches (KeyPlan takes none), and the command must not block.
  bool in_exec = false;
  // The physical database (base/db_key.h) the command runs in: the client's, or a script's
  // after its own SELECT. Keys in ctx.args are already stored keys of it.
  int db = 0;
  // Run by a script's redis.call: SELECT changes the script's database, not the client's.
  bool in_script = false;
  // Cluster mode: the keys' slot is MIGRATING or IMPORTING here (cluster/cluster_route.h), so
  // the keys' worker checks which exist before the handler runs. 0 otherwise.
  uint32_t cluster_open = 0;
  // Cluster mode: the routes version the dispatcher routed by, plus one (0: not routed), and
  // whether ASKING covered it — the keys' worker routes again if the cluster moved meanwhile.
  uint64_t cluster_routes = 0;
  bool cluster_asking = false;
  // Replication (commands/propagate.h): set only once a replica has attached.
  ReplCall* repl = nullptr;
  // Sent by our master (a replica applying its stream): as Redis's mustObeyClient, what the
  // master already checked is not refused again (XADD/XTRIM's exact trim with LIMIT).
  bool from_master = false;
};

using Handler = Task (*)(Context& ctx);

// The reply of a command that either failed a check (`failure`, an error text) or did its work.
inline void ReplyErrorOrOk(Context& ctx, std::string_view failure) {
  if (failure.empty()) {
    ctx.reply->Ok();
  } else {
    ctx.reply->Error(failure);
  }
}

// Redis's command flags (those COMMAND INFO shows), plus Lavik's routing flags.
enum CommandFlag : uint32_t {
  kCmdWrite = 1u << 0,
  kCmdReadOnly = 1u << 1,
  kCmdDenyOom = 1u << 2,
  kCmdAdmin = 1u << 3,
  kCmdPubSub = 1u << 4,
  kCmdNoScript = 1u << 5,
  kCmdBlocking = 1u << 6,
  kCmdLoading = 1u << 7,
  kCmdStale = 1u << 8,
  kCmdSkipMonitor = 1u << 9,
  kCmdFast = 1u << 10,
  kCmdNoAuth = 1u << 11,
  kCmdAllowBusy = 1u << 12,
  kCmdNoMulti = 1u << 13,
  kCmdMovableKeys = 1u << 14,
  kCmdNoMandatoryKeys = 1u << 15,
  // The command implies ASKING (RESTORE-ASKING): in cluster mode it may write a slot this node
  // is importing, as after ASKING (the cluster dispatcher's check; src/cluster/).
  kCmdAsking = 1u << 16,
  // Routing: the handler needs the connection (ctx.client / ctx.server): run it at home even if
  // it names keys.
  kCmdHome = 1u << 20,
};

struct CommandSpec {
  std::string_view name;  // lowercase
  int arity;              // > 0: exactly this many args (with the name); < 0: at least -arity
  uint32_t flags;
  int first_key;  // 0 = no keys
  int last_key;   // -1 = last argument, -2 = the one before, ...
  int key_step;
  Handler handler;
  std::string_view acl_categories;  // e.g. "@read @string @fast"
  std::string_view group;           // COMMAND DOCS group ("string", "keyspace", ...)
  std::string_view summary;
  std::string_view since;
  // Subcommands (CLIENT, CONFIG, COMMAND) are listed for COMMAND INFO/DOCS.
  std::span<const CommandSpec> subcommands = {};
};

}  // namespace lavik
