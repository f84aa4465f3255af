// REPLICAOF / SLAVEOF / ROLE (replication_commands.cc): registered by server/command_registry.cc.
#pragma once

#include <span>

#include "commands/command.h"

namespace lavik {

std::span<const CommandSpec> ReplicationCommands();

}  // namespace lavik
