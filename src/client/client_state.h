// ClientState: what the server knows about one client connection (name, RESP version, auth) and
// the slot for its one in-flight command.
//
// Thread safety: owned by the connection's worker; touched only there. CLIENT LIST reads other
// workers' clients by hopping to them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "client/client_admin.h"
#include "commands/command.h"
#include "net/connection.h"
#include "protocol/reply_writer.h"

namespace lavik {

struct AclUser;
struct PubSubClient;
class TxState;
struct TrackingClient;

class ClientState {
 public:
  // Defined in server/client_lifecycle.cc: the server creates and frees clients, and only it
  // sees the complete type of every subsystem's per-client part below.
  explicit ClientState(Connection* c);
  ~ClientState();
  ClientState(const ClientState&) = delete;
  ClientState& operator=(const ClientState&) = delete;

  Connection* const conn;
  const uint64_t id;
  std::string name;
  int resp = 2;
  bool authenticated = false;
  std::string user = "default";
  // Snapshot of `user` (acl.h), re-read when Acl::version() moves past acl_version.
  std::shared_ptr<const AclUser> acl_user;
  uint64_t acl_version = 0;
  std::string_view last_command = "NULL";  // a CommandSpec name (static storage)
  int db = 0;                              // SELECT: the logical database (base/db_key.h)
  // The running command's arguments with keys in stored form, when its database needs them
  // (commands/command_keys.h StoredKeyArgs); ctx.args then views these.
  std::string db_arena;
  std::vector<std::string_view> db_argv;

  // The command being run (Context must outlive a suspended handler, so it lives here).
  Context ctx;
  ReplyWriter writer;
  bool pending = false;            // a handler is suspended or runs on another worker
  bool write_suspended = false;    // counted in its shard's writes_suspended() (commands/shards.h)
  bool closed = false;             // the socket is gone; free when the command finishes
  bool close_after_reply = false;  // QUIT: close once the reply is sent
  int64_t cmd_start_ns = 0;        // when the command was dispatched (MonotonicNs)
  uint64_t cmd_errors = 0;         // its reply writer's error count then

  // Client administration (server/client_hub.h).
  const CommandSpec* cmd_spec = nullptr;       // the command being run (or parked)
  std::span<const std::string_view> cmd_args;  // its arguments (views into the connection)
  bool monitor = false;                        // MONITOR: receives every command
  bool no_evict = false;                       // CLIENT NO-EVICT on (flag 'e')
  bool paused = false;                         // parked by CLIENT PAUSE
  bool reply_off = false;                      // CLIENT REPLY OFF
  bool reply_skip_next = false;                // CLIENT REPLY SKIP: drop the next reply
  bool discard_reply = false;                  // this command's reply goes nowhere
  bool cluster_asking = false;                 // ASKING: the next command may use an IMPORTING slot
  bool cluster_readonly = false;               // READONLY (cluster replicas)
  bool master = false;   // a replica's link to its master (replication/replica.h): flag 'M'
  bool replica = false;  // a replica of ours after its PSYNC (replication/master.h): flag 'S'
  int repl_listening_port = 0;  // REPLCONF listening-port / ip-address / capa psync2
  std::string repl_ip;
  bool repl_psync2 = false;
  bool repl_capa_eof = false;     // REPLCONF capa eof: it reads a diskless sync
  bool repl_rdb_only = false;     // REPLCONF rdb-only 1: the RDB, then the connection closes
  std::function<void()> on_free;  // run by the destructor (the link waits for its last command)
  OutputLimitTracker obuf_limit;  // client-output-buffer-limit's soft clock
  std::unique_ptr<TxState> tx;    // MULTI/WATCH (transaction.h); null until used

  // Pub/Sub (pubsub/pubsub.h): created on the first subscription, null until then.
  std::unique_ptr<PubSubClient> pubsub;
  // CLIENT TRACKING (tracking/tracking.h): null until the client tracks or is a REDIRECT target.
  std::unique_ptr<TrackingClient> tracking;

  // Intrusive list of the worker's clients (for CLIENT LIST and shutdown).
  ClientState* prev = nullptr;
  ClientState* next = nullptr;
};

}  // namespace lavik
