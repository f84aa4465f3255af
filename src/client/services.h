// Services: the process-wide subsystems a command handler may reach (ctx.services), besides its
// store and shards. The server fills it in before the workers start and never changes it
// afterwards, so any worker may read it; what each subsystem allows from which thread is said in
// its own header. It lets the subsystem libraries (pubsub/, transaction/...) reach each other
// without including the server (server/server.h stands above them).
#pragma once

#include <functional>
#include <vector>

namespace lavik {

class Acl;
class CommandTable;
class Observability;
class PubSub;
class Replica;
class Worker;
struct WorkerStats;

// The most workers a process runs (per-worker tables are sized by it).
inline constexpr int kMaxWorkers = 256;

struct Services {
  std::vector<Worker*> workers;            // by worker id
  std::vector<WorkerStats*> worker_stats;  // by worker id
  PubSub* pubsub = nullptr;
  Observability* observability = nullptr;
  const CommandTable* commands = nullptr;  // scripts look up redis.call's commands here
  const Acl* acl = nullptr;                // and check them against the client's user
  Replica* replica = nullptr;              // REPLICAOF, ROLE (replication/replica.h)
  // True while a read-only replica refuses writes from clients (scripts check it too).
  std::function<bool()> replica_read_only;
  bool refuses_writes() const { return replica_read_only && replica_read_only(); }

  int worker_count() const { return static_cast<int>(workers.size()); }
};

}  // namespace lavik
