// LuaEngine: one worker's Lua 5.1 state with Redis 7.0's sandbox and `redis` API, and the run of
// one script in it.
//
// The state has the base, table, string and math libraries, cjson and bit (Debian's
// lua-cjson and LuaBitOp); no os, io, package, debug, loadfile, dofile, print, getfenv,
// setfenv. Globals are read-only and reading an undefined one is an error, with Redis's texts.
// Scripts are compiled once per worker (by SHA1) and kept until SCRIPT FLUSH.
//
// Run() must be called on the worker's Fiber (fiber.h): redis.call runs the command through
// the command table (transaction.h's RunHoldingShards; the caller holds the shards), and when
// the command suspends the fiber is parked until it finishes.
//
// Thread safety: one engine per worker thread, used only there, one script at a time.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "commands/command.h"
#include "scripting/script_flags.h"

struct lua_State;

namespace lavik {

// The process's one running script (scripts run one at a time, see doc/threading.md).
struct ScriptStatus {
  // EVAL/FCALL: a script starts (function: its name, "" for EVAL; command: EVAL, FCALL...) and
  // ends; both reset busy/wrote/kill.
  void Started(std::string_view function, std::span<const std::string_view> command);
  void Finished();
  // FUNCTION STATS: the running function's name, command and start (false: none runs).
  bool RunningFunction(std::string* name, std::vector<std::string>* command,
                       int64_t* start_ms) const;
  // SCRIPT KILL / FUNCTION KILL, `running` saying whether there is a script of their kind:
  // -NOTBUSY, -UNKILLABLE (it wrote), or +OK and the kill flag set.
  void KillOrReply(ReplyWriter* w, bool running);

  std::atomic<bool> running{false};
  std::atomic<bool> busy{false};      // past busy-reply-threshold
  std::atomic<bool> wrote{false};     // has run a write command (SCRIPT KILL refuses)
  std::atomic<bool> kill{false};      // SCRIPT KILL asked
  std::atomic<bool> function{false};  // the running script is a function (FCALL)
  std::atomic<int64_t> threshold_ms{5000};
  void (*on_busy)(void* arg) = nullptr;  // set once at start-up (SetScriptBusyHook)
  void* on_busy_arg = nullptr;

 private:
  mutable std::mutex mu_;
  std::string function_;
  std::vector<std::string> command_;
  int64_t start_ms_ = 0;
};
ScriptStatus& RunningScript();

// One EVAL: its inputs, and its reply written to ctx->reply.
struct ScriptRun {
  Context* ctx = nullptr;  // EVAL's context (client, services)
  std::string_view body;
  bool body_known = true;  // false: EVALSHA took the compiled fast path; look it up if needed
  std::string body_storage;
  std::string sha;
  std::span<const std::string_view> keys;
  std::span<const std::string_view> args;
  bool read_only = false;      // EVAL_RO / EVALSHA_RO / #!lua flags=no-writes
  bool no_writes = false;      // the shebang's no-writes (remembered with the compiled script)
  bool shebang = false;        // the script has a shebang (EVAL_RO refuses one without no-writes)
  bool allow_oom = false;      // the shebang's or function's allow-oom
  ClusterScriptFlags cluster;  // no-cluster, allow-cross-slot-keys (script_flags.h)
  int cluster_slot = -1;       // cluster mode: the slot of the keys touched so far (-1: none)
  bool oom_at_start = false;   // over maxmemory when it started: its first denyoom call fails
  std::string library;         // FCALL: the function's library (its code in body_storage)
  int resp = 2;                // redis.setresp
  int64_t start_ns = 0;
  // redis.call's scratch: the command's arguments and reply (here so that nothing with a
  // destructor is on the C stack when Lua raises an error with longjmp).
  std::vector<std::string> call_args;
  std::vector<std::string_view> call_argv;
  std::string call_reply;
};

class LuaEngine {
 public:
  // The worker's state for EVAL scripts, and its separate one for FUNCTION libraries (as in
  // Redis: a function never sees an EVAL's globals).
  static LuaEngine& Local();
  static LuaEngine& LocalFunctions();
  ~LuaEngine();

  // Runs the script (on the fiber). Writes the reply (result or error).
  void Run(ScriptRun& run);
  // FCALL (functions state): runs function run.sha of library `library` (whose code is `code`)
  // with KEYS and ARGV as its two arguments (function_load.cc).
  void RunFunction(ScriptRun& run, const std::string& library, const std::string& code);

  // Whether this worker has `sha` (lowercase) compiled since the last SCRIPT FLUSH; if so,
  // *no_writes, *allow_oom are its shebang's flags and Run() will not need the body.
  bool Compiled(const std::string& sha, bool* no_writes, bool* allow_oom, bool* shebang,
                ClusterScriptFlags* cluster) const;

  // The compile error of a script ("" if it compiles), as SCRIPT LOAD and EVAL report it.
  static std::string CompileError(std::string_view body);

  // Bytes held by every worker's Lua state (each updates its share after a run): any thread.
  static size_t TotalMemory();

 private:
  explicit LuaEngine(bool functions_mode);
  uint64_t SourceGeneration() const;  // the cache's or the registry's
  void Reset();
  // Calls the function below its nargs arguments (the error handler under it) and writes the
  // reply; pops both.
  void Call(ScriptRun& run, int nargs);
  void UpdateMemory();
  // Pushes the compiled function of run.sha; false (error written) if it does not compile.
  bool PushFunction(ScriptRun& run);

  const bool functions_mode_;
  lua_State* L_ = nullptr;
  int runs_ = 0;
  uint64_t generation_ = 0;
  int handler_ref_ = 0;  // the error handler (registry reference)
  int globals_ref_ = 0;  // the real globals table (the visible one is a read-only proxy)
  struct Function {
    int ref;  // registry reference
    bool no_writes;
    bool allow_oom;
    bool shebang;
    ClusterScriptFlags cluster;
  };
  std::unordered_map<std::string, Function> functions_;     // by sha
  size_t memory_ = 0;                                       // this state's share of TotalMemory()
  std::unordered_map<std::string, bool> loaded_libraries_;  // functions mode: loaded here
};

}  // namespace lavik
