// OBJECT ENCODING / FREQ / IDLETIME / REFCOUNT / HELP (object_command.cc explains what they answer
// for Lavik's records).
//
// Thread safety: the handlers run on the connection's worker (kCmdHome) and read the key on its
// own worker.
#pragma once

#include <span>

#include "commands/command.h"

namespace lavik {

std::span<const CommandSpec> ObjectCommands();

}  // namespace lavik
