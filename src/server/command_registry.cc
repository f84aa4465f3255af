#include "server/command_registry.h"

#include "blocking/list_blocking.h"
#include "blocking/stream_blocking.h"
#include "cluster/cluster_commands.h"
#include "commands/families.h"
#include "commands/key_copy.h"
#include "commands/lcs.h"
#include "observability/observability.h"
#include "pubsub/pubsub.h"
#include "replication/replication_commands.h"
#include "scripting/scripting.h"
#include "server/object_command.h"
#include "server/reset_command.h"
#include "transaction/transaction.h"

namespace lavik {

std::vector<std::span<const CommandSpec>> AllCommandFamilies() {
  return {
      StringCommands(),        KeyCommands(),           CopyCommands(),
      HashCommands(),          SetCommands(),           ListCommands(),
      ListBlockingCommands(),  ZSetSingleKeyCommands(), ZSetMultiKeyCommands(),
      ZSetBlockingCommands(),  StreamCommands(),        StreamGroupCommands(),
      StreamInfoCommands(),    StreamReadCommands(),    ConnectionCommands(),
      ResetCommands(),         ObjectCommands(),        ServerCommands(),
      ObservabilityCommands(), AclCommands(),           PubSubCommands(),
      TransactionCommands(),   DumpCommands(),          GeoCommands(),
      HyperLogLogCommands(),   BitmapCommands(),        SortCommands(),
      LcsCommands(),           MemoryCommands(),        SaveCommands(),
      LolwutCommands(),        ScriptingCommands(),     DbCommands(),
      ReplicationCommands(),   ClusterCommands(),       MigrateCommands(),
  };
}

}  // namespace lavik
