// RESET: returns a connection to the state of a new one (reset_command.cc).
//
// Thread safety: the handler runs on the connection's worker (kCmdHome).
#pragma once

#include <span>

#include "commands/command.h"

namespace lavik {

std::span<const CommandSpec> ResetCommands();

}  // namespace lavik
