// REPLICAOF host port | NO ONE (and its old name SLAVEOF), ROLE. They reach the process's
// Replica through ctx.services (replica.h).
#include "replication/replication_commands.h"

#include <string>

#include "base/ascii.h"
#include "base/log.h"
#include "base/numbers.h"
#include "client/services.h"
#include "replication/replica.h"

namespace lavik {
namespace {

Task ReplicaOf(Context& ctx) {
  Replica* replica = ctx.services->replica;
  if (EqualsNoCase(ctx.args[1], "no") && EqualsNoCase(ctx.args[2], "one")) {
    replica->Promote();
    ctx.reply->Ok();
    co_return;
  }
  int64_t port = 0;
  if (!ParseInt64(ctx.args[2], &port) || port < 0 || port > 65535) {
    ctx.reply->Error("ERR Invalid master port");
    co_return;
  }
  ctx.reply->Simple(replica->Follow(std::string(ctx.args[1]), static_cast<int>(port)));
}

Task Role(Context& ctx) {
  ctx.services->replica->WriteRole(*ctx.reply);
  co_return;
}

constexpr uint32_t kAdminStale = kCmdAdmin | kCmdNoScript | kCmdStale;

const CommandSpec kReplicationCommands[] = {
    {"replicaof", 3, kAdminStale, 0, 0, 0, &ReplicaOf, "@admin @slow @dangerous", "server",
     "Make the server a replica of another instance, or promote it as master.", "5.0.0"},
    {"slaveof", 3, kAdminStale, 0, 0, 0, &ReplicaOf, "@admin @slow @dangerous", "server",
     "Make the server a replica of another instance, or promote it as master.", "1.0.0"},
    {"role", 1, kCmdNoScript | kCmdLoading | kCmdStale | kCmdFast, 0, 0, 0, &Role,
     "@admin @fast @dangerous", "server",
     "Return the role of the instance in the context of replication", "2.8.12"},
};

}  // namespace

std::span<const CommandSpec> ReplicationCommands() { return kReplicationCommands; }

}  // namespace lavik
