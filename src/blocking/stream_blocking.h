// XREAD and XREADGROUP, with and without BLOCK: their registration table. They run on the
// connection's worker (kCmdHome) and reach each stream's worker through a KeyPlan; a reader that
// finds nothing queues itself on every key (commands/stream_wait.h) and waits under the blocked-
// client timer of list_blocking.h (doc/threading.md, "Blocking stream reads").
//
// Thread safety: the handlers run on the client's home worker.
#pragma once

#include <span>

#include "commands/command.h"

namespace lavik {

std::span<const CommandSpec> StreamReadCommands();

}  // namespace lavik
