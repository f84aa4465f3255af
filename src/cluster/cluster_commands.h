// CLUSTER and its subcommands, ASKING, READONLY, READWRITE (cluster_commands.cc): registered by
// server/command_registry.cc. They reach the node's Cluster through ctx.services->cluster (null
// with cluster mode off: every one of them then answers Redis's "cluster support disabled").
#pragma once

#include <span>

#include "commands/command.h"

namespace lavik {

std::span<const CommandSpec> ClusterCommands();

}  // namespace lavik
