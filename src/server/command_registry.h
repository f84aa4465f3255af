// Which command families the server registers: every family's table, in COMMAND LIST order.
// The table itself (lookup, arity) is commands/command_table.h.
#pragma once

#include <span>
#include <vector>

#include "commands/command.h"

namespace lavik {

std::vector<std::span<const CommandSpec>> AllCommandFamilies();

// The families defined in server/.
std::span<const CommandSpec> ConnectionCommands();
std::span<const CommandSpec> ServerCommands();
std::span<const CommandSpec> AclCommands();     // acl_commands.cc
std::span<const CommandSpec> MemoryCommands();  // memory_command.cc
std::span<const CommandSpec> SaveCommands();    // save_command.cc
std::span<const CommandSpec> LolwutCommands();  // lolwut_command.cc

}  // namespace lavik
