// Emptying every database from a command other than FLUSHALL: CLUSTER RESET of a replica, which
// Redis's clusterReset empties (emptyData) before it answers.
//
// Thread safety: a command coroutine, like the FLUSHALL handler it shares its steps with
// (key_family.cc); it waits while a snapshot walk runs, as FLUSHALL does.
#pragma once

#include <string>

#include "commands/command.h"
#include "runtime/task.h"

namespace lavik {

// Drops every key of every database on every shard. *error is set ("ERR ... failed: ...") on a
// failure of the device; nothing is propagated to replicas and no keyspace event is sent.
Task FlushAllDatabases(Context& ctx, std::string* error);

}  // namespace lavik
