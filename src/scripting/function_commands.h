// FUNCTION's subcommands (function_commands.cc), listed under the FUNCTION container in
// ScriptingCommands(). FCALL / FCALL_RO are in script_commands.cc (they share EVAL's run).
#pragma once

#include <span>
#include <string_view>

#include "commands/command.h"

namespace lavik {

std::span<const CommandSpec> FunctionSubcommands();

// SCRIPT FLUSH / FUNCTION FLUSH: no argument, SYNC or ASYNC (both flush at once).
bool FlushModeOk(std::span<const std::string_view> args);

// SCRIPT HELP / FUNCTION HELP: the lines as an array of status replies.
void ReplyHelpLines(ReplyWriter* w, std::span<const char* const> lines);

}  // namespace lavik
