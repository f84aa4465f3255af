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
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "commands/command.h"

struct lua_State;

namespace lavik {

// The process's one running script (scripts run one at a time, see doc/threading.md).
struct ScriptStatus {
  std::atomic<bool> running{false};
  std::atomic<bool> busy{false};   // past busy-reply-threshold
  std::atomic<bool> wrote{false};  // has run a write command (SCRIPT KILL refuses)
  std::atomic<bool> kill{false};   // SCRIPT KILL asked
  std::atomic<int64_t> threshold_ms{5000};
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
  bool read_only = false;  // EVAL_RO / EVALSHA_RO / #!lua flags=no-writes
  bool no_writes = false;  // the shebang's no-writes (remembered with the compiled script)
  int resp = 2;            // redis.setresp
  int64_t start_ns = 0;
  // redis.call's scratch: the command's arguments and reply (here so that nothing with a
  // destructor is on the C stack when Lua raises an error with longjmp).
  std::vector<std::string> call_args;
  std::vector<std::string_view> call_argv;
  std::string call_reply;
};

class LuaEngine {
 public:
  static LuaEngine& Local();
  ~LuaEngine();

  // Runs the script (on the fiber). Writes the reply (result or error).
  void Run(ScriptRun& run);

  // Whether this worker has `sha` (lowercase) compiled since the last SCRIPT FLUSH; if so,
  // *no_writes is its shebang's flag and Run() will not need the body.
  bool Compiled(const std::string& sha, bool* no_writes) const;

  // The compile error of a script ("" if it compiles), as SCRIPT LOAD and EVAL report it.
  static std::string CompileError(std::string_view body);

  // Bytes held by every worker's Lua state (each updates its share after a run): any thread.
  static size_t TotalMemory();

 private:
  LuaEngine();
  void Reset();
  void UpdateMemory();
  // Pushes the compiled function of run.sha; false (error written) if it does not compile.
  bool PushFunction(ScriptRun& run);

  lua_State* L_ = nullptr;
  uint64_t generation_ = 0;
  int handler_ref_ = 0;  // the error handler (registry reference)
  int globals_ref_ = 0;  // the real globals table (the visible one is a read-only proxy)
  struct Function {
    int ref;  // registry reference
    bool no_writes;
  };
  std::unordered_map<std::string, Function> functions_;  // by sha
  size_t memory_ = 0;                                    // this state's share of TotalMemory()
};

}  // namespace lavik
