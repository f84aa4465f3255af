// Services: the process-wide subsystems a command handler may reach (ctx.services), besides its
// store and shards. The server fills it in before the workers start and never changes it
// afterwards, so any worker may read it; what each subsystem allows from which thread is said in
// its own header. It lets the subsystem libraries (pubsub/, transaction/...) reach each other
// without including the server (server/server.h stands above them).
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lavik {

class Acl;
class Cluster;
class ClientState;
class ShardSet;
struct CommandSpec;
class CommandTable;
class Observability;
class Master;
class PubSub;
class Replica;
class Tracking;
class Worker;
struct WorkerStats;

// The most workers a process runs (per-worker tables are sized by it).
inline constexpr int kMaxWorkers = 256;

struct Services {
  std::vector<Worker*> workers;            // by worker id
  std::vector<WorkerStats*> worker_stats;  // by worker id
  PubSub* pubsub = nullptr;
  Tracking* tracking = nullptr;  // client-side caching (tracking/tracking.h)
  // Called at home before EXEC or a script runs one command for a tracking client: remembers a
  // read's keys (tracking/tracking.h; set by the server, which links tracking/).
  void (*track_held)(const Services& services, ShardSet& shards, ClientState* client,
                     const CommandSpec& spec, std::span<const std::string_view> args) = nullptr;
  Observability* observability = nullptr;
  const CommandTable* commands = nullptr;   // scripts look up redis.call's commands here
  const Acl* acl = nullptr;                 // and check them against the client's user
  std::function<bool()> over_memory_limit;  // denyoom commands are refused (memory_guard.h)
  Replica* replica = nullptr;               // REPLICAOF, ROLE (replication/replica.h)
  Cluster* cluster = nullptr;               // cluster mode (cluster/cluster.h); null when it is off
  Master* master = nullptr;                 // PSYNC, REPLCONF, WAIT (replication/master.h)
  // Cluster mode: may a script's redis.call run this command here (Redis's scriptVerifyCluster-
  // State; cluster/cluster_route.h, set by the server)? "" if so, else the error; *slot: the
  // keys' slot (-1: no keys).
  std::string (*cluster_script_check)(const Services& services, const CommandSpec& spec,
                                      std::span<const std::string_view> args, int* slot) = nullptr;
  // Cluster mode: PUBLISH also goes to every other node over the bus, SPUBLISH (shard) to the
  // other nodes of this node's shard, its master and replicas (set by the server).
  void (*cluster_publish)(const Services& services, bool shard, std::string_view channel,
                          std::string_view message) = nullptr;
  // True while a read-only replica refuses writes from clients (scripts check it too).
  std::function<bool()> replica_read_only;
  bool refuses_writes() const { return replica_read_only && replica_read_only(); }
  // True while writes get -MISCONF (stop-writes-on-bgsave-error after a failed save; scripts
  // check it too).
  std::function<bool()> disk_error;
  bool disk_error_denies_writes() const { return disk_error && disk_error(); }

  int worker_count() const { return static_cast<int>(workers.size()); }
};

}  // namespace lavik
