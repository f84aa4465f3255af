// Scripting: EVAL / EVALSHA / EVAL_RO / EVALSHA_RO / SCRIPT, Lua 5.1 as Redis 7.0 runs it (see
// doc/scripting.md), and the hooks the server needs: the busy-script state that makes other
// clients get -BUSY, and the busy-reply-threshold parameter.
//
// Thread safety: ScriptBusy() may be called from any worker; the commands run on the
// connection's worker.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "commands/command.h"

namespace lavik {

class ConfigRegistry;

// EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, SCRIPT.
std::span<const CommandSpec> ScriptingCommands();

// Reads busy-reply-threshold (alias lua-time-limit) now and on every CONFIG SET.
void ConfigureScripting(ConfigRegistry& registry);

// A script has run longer than busy-reply-threshold and is still running: commands without
// the allow-busy flag are answered with this error (kErrBusyScript, or kErrBusyFunction for a
// function). Empty when no script is busy.
std::string_view ScriptBusyError();

// Called (once per script, on the script's worker) when a script passes busy-reply-threshold,
// so the server can answer -BUSY to the commands already queued behind the script's locks.
void SetScriptBusyHook(void (*hook)(void* arg), void* arg);

// CLIENT PAUSE WRITE: whether EVAL / EVALSHA / FCALL with these arguments may write (Redis holds
// them unless the script's shebang or the function has no-writes; an unknown script or
// function is not held, it fails at once). False for every other command.
bool ScriptMayWrite(const CommandSpec& spec, std::span<const std::string_view> args);

// Start-up, before clients are served: function libraries persist in "<data file>.functions"
// (doc/scripting.md, "Functions survive restarts"); loads the libraries kept there. A freshly
// formatted data file starts a new dataset: a file left from an earlier one is removed. False
// with *error if the file is unreadable or damaged.
bool OpenFunctionLibraries(const std::string& data_file, bool fresh_data_file, std::string* error);

// INFO's memory section: the script cache's bytes (bodies and SHA1 keys) and count, and the
// memory of every worker's Lua state as of its last script run.
size_t ScriptCacheBytes();
size_t ScriptCacheCount();
size_t ScriptVmBytes();

}  // namespace lavik
