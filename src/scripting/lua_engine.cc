#include "scripting/lua_engine.h"

#include <lua.hpp>

// Debian's generated module headers lack C linkage.
extern "C" {
#include <lua-bitop.h>
#include <lua-cjson.h>
}

#include <cmath>
#include <cstdio>
#include <string>

#include "acl/acl.h"
#include "base/clock.h"
#include "base/log.h"
#include "client/client_state.h"
#include "client/services.h"
#include "commands/command_table.h"
#include "observability/observability.h"
#include "protocol/errors.h"
#include "runtime/worker.h"
#include "scripting/fiber.h"
#include "scripting/function_registry.h"
#include "scripting/lua_cmsgpack.h"
#include "scripting/lua_readonly.h"
#include "scripting/lua_reply.h"
#include "scripting/lua_sandbox.h"
#include "scripting/lua_struct.h"
#include "scripting/script_cache.h"
#include "transaction/transaction.h"

namespace lavik {

ScriptStatus& RunningScript() {
  static ScriptStatus status;
  return status;
}

void ScriptStatus::Started(std::string_view function, std::span<const std::string_view> command) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    function_.assign(function);
    command_.assign(command.begin(), command.end());
    start_ms_ = NowMs();
  }
  wrote.store(false);
  kill.store(false);
  this->function.store(!function.empty());
  running.store(true, std::memory_order_release);
}

void ScriptStatus::Finished() {
  running.store(false, std::memory_order_release);
  busy.store(false, std::memory_order_release);
  kill.store(false);
}

void ScriptStatus::KillOrReply(ReplyWriter* w, bool is_running) {
  if (!is_running) {
    w->Error(kErrNotBusy);
  } else if (wrote.load()) {
    w->Error(kErrUnkillable);
  } else {
    kill.store(true, std::memory_order_release);
    w->Ok();
  }
}

bool ScriptStatus::RunningFunction(std::string* name, std::vector<std::string>* command,
                                   int64_t* start_ms) const {
  if (!running.load(std::memory_order_acquire)) return false;
  std::lock_guard<std::mutex> lock(mu_);
  if (function_.empty()) return false;
  *name = function_;
  *command = command_;
  *start_ms = start_ms_;
  return true;
}

// The sandbox and redis.* pieces; function_load.cc uses some of them (lua_sandbox.h).
inline namespace sandbox {

thread_local ScriptRun* current_run = nullptr;
thread_local std::unique_ptr<LuaEngine> local_engine;
thread_local std::unique_ptr<LuaEngine> local_function_engine;

constexpr char kReadOnlyError[] = "Attempt to modify a readonly table";

// --- math.random: the rand48 generator Redis uses, so sequences match across platforms ---

thread_local uint64_t rand48_state = 0x1234ABCD330EULL;

void Srand48(int32_t seed) {
  rand48_state = (static_cast<uint64_t>(static_cast<uint32_t>(seed)) << 16) | 0x330E;
}
int32_t Lrand48() {
  rand48_state = (0x5DEECE66DULL * rand48_state + 0xB) & ((1ULL << 48) - 1);
  return static_cast<int32_t>(rand48_state >> 17);
}

int MathRandom(lua_State* L) {
  constexpr int32_t kMax = 0x7fffffff;
  const lua_Number r = static_cast<lua_Number>(Lrand48() % kMax) / static_cast<lua_Number>(kMax);
  switch (lua_gettop(L)) {
    case 0:
      lua_pushnumber(L, r);
      return 1;
    case 1: {
      const int u = luaL_checkint(L, 1);
      luaL_argcheck(L, 1 <= u, 1, "interval is empty");
      lua_pushnumber(L, floor(r * u) + 1);
      return 1;
    }
    case 2: {
      const int l = luaL_checkint(L, 1);
      const int u = luaL_checkint(L, 2);
      luaL_argcheck(L, l <= u, 2, "interval is empty");
      lua_pushnumber(L, floor(r * (u - l + 1)) + l);
      return 1;
    }
    default:
      return luaL_error(L, "wrong number of arguments");
  }
}

int MathRandomSeed(lua_State* L) {
  Srand48(luaL_checkint(L, 1));
  return 0;
}

// --- the sandbox ---

int MissingGlobal(lua_State* L) {
  return luaL_error(L, "Script attempted to access nonexistent global variable '%s'",
                    lua_tostring(L, 2));
}

int ReadOnlyTable(lua_State* L) { return luaL_error(L, kReadOnlyError); }

// Pushes a read-only view of the table at `idx`: reads go to it, writes raise an error.
void PushReadOnlyProxy(lua_State* L, int idx) {
  idx = idx < 0 ? lua_gettop(L) + idx + 1 : idx;
  lua_newtable(L);
  lua_newtable(L);
  lua_pushvalue(L, idx);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, ReadOnlyTable);
  lua_setfield(L, -2, "__newindex");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");
  lua_setmetatable(L, -2);
}

// Redis 7.0's pcall: an error that is a table with an `err` string comes back as that string.
int RedisStylePcall(lua_State* L) {
  const int argc = lua_gettop(L);
  lua_pushboolean(L, 1);
  lua_insert(L, 1);
  if (lua_pcall(L, argc - 1, LUA_MULTRET, 0) != 0) {
    lua_remove(L, 1);
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "err");
      if (lua_isstring(L, -1)) {
        lua_replace(L, -2);
      } else {
        lua_pop(L, 1);
      }
    }
    lua_pushboolean(L, 0);
    lua_insert(L, 1);
  }
  return lua_gettop(L);
}

// --- redis.* ---

void PushErrorAndRaise(lua_State* L, const char* text) {
  PushLuaError(L, text);
  lua_error(L);
}

// Moves redis.call's arguments from the Lua stack into run.call_argv (numbers as "%.17g").
// False, with the error table pushed, if there are none or one is not a string or number.
bool TakeArgs(lua_State* L, ScriptRun& run) {
  const int argc = lua_gettop(L);
  if (argc == 0) {
    PushLuaError(L, "Please specify at least one argument for this redis lib call");
    return false;
  }
  run.call_args.resize(argc);
  bool bad_arg = false;
  for (int i = 1; i <= argc; ++i) {
    std::string& a = run.call_args[i - 1];
    if (lua_type(L, i) == LUA_TNUMBER) {
      char buf[64];
      const int n =
          std::snprintf(buf, sizeof(buf), "%.17g", static_cast<double>(lua_tonumber(L, i)));
      a.assign(buf, n);
    } else if (lua_type(L, i) == LUA_TSTRING) {
      size_t n = 0;
      const char* s = lua_tolstring(L, i, &n);
      a.assign(s, n);
    } else {
      bad_arg = true;
    }
  }
  lua_pop(L, argc);
  if (bad_arg) {
    PushLuaError(L, "Lua redis lib command arguments must be strings or integers");
    return false;
  }
  run.call_argv.assign(run.call_args.begin(), run.call_args.end());
  return true;
}

// The command run.call_argv names (with its subcommand), or nullptr.
const CommandSpec* FindCommand(const ScriptRun& run) {
  std::span<const std::string_view> argv = run.call_argv;
  const CommandSpec* spec = run.ctx->services->commands->Find(argv[0]);
  if (spec != nullptr && !spec->subcommands.empty() &&
      !(argv.size() == 1 && spec->handler != nullptr)) {
    spec = argv.size() < 2 ? nullptr : CommandTable::FindSubcommand(*spec, argv[1]);
  }
  return spec;
}

// Whether the script's user may run the command (ACL).
bool AclAllows(const ScriptRun& run, const CommandSpec& spec) {
  const ClientState* cl = run.ctx->client;
  return cl == nullptr || cl->master || cl->acl_user == nullptr || cl->acl_user->unrestricted ||
         run.ctx->services->acl->Check(*cl->acl_user, spec, run.call_argv).kind == AclVerdict::kOk;
}

// Runs the command on the stack (redis.call's arguments); pushes its reply. Returns true if
// the reply is an error. Raises no Lua error (the caller does, once this frame is gone).
bool RunCommand(lua_State* L, ScriptRun& run) {
  if (!TakeArgs(L, run)) return true;
  std::span<const std::string_view> argv = run.call_argv;
  Context& ctx = *run.ctx;
  const CommandSpec* spec = FindCommand(run);
  if (spec == nullptr) {
    PushLuaError(L, "Unknown Redis command called from script");
    return true;
  }
  // Refused before it ran: as Redis's scriptCall, the command's rejected_calls counts it.
  const auto reject = [&](std::string_view error) {
    if (ctx.services->observability != nullptr && Worker::Current() != nullptr) {
      ctx.services->observability->CommandRejected(Worker::Current()->id(), spec);
    }
    PushLuaError(L, error);
    return true;
  };
  if (!CommandTable::ArityOk(*spec, argv.size())) {
    return reject("Wrong number of args calling Redis command from script");
  }
  if (spec->flags & kCmdNoScript) {
    return reject("This Redis command is not allowed from script");
  }
  if (!AclAllows(run, *spec)) {
    return reject("The user executing the script can't run this command or subcommand");
  }
  const bool write = spec->flags & kCmdWrite;
  if (write && run.read_only) {
    return reject("-ERR Write commands are not allowed from read-only scripts.");
  }
  if (write && ctx.services->refuses_writes() && !(ctx.client && ctx.client->master)) {
    return reject("-READONLY You can't write against a read only replica.");
  }
  // As Redis's scriptVerifyWriteCommandAllow: a script's first write gets -MISCONF while
  // saves fail (after one write it may not be stopped halfway).
  if (write && ctx.services->disk_error_denies_writes() && !(ctx.client && ctx.client->master) &&
      !RunningScript().wrote.load(std::memory_order_relaxed)) {
    return reject(std::string("-") + std::string(kErrMisconf));
  }
  // Over maxmemory at the start, a script without allow-oom may not grow memory before its
  // first write (after that, stopping it halfway would break its atomicity).
  if (run.oom_at_start && !run.allow_oom && (spec->flags & kCmdDenyOom) &&
      !RunningScript().wrote.load(std::memory_order_relaxed)) {
    return reject(std::string("-") + std::string(kErrOOM));
  }
  if (write) RunningScript().wrote.store(true, std::memory_order_relaxed);
  if (ctx.services->cluster != nullptr && !(ctx.client && ctx.client->master)) {
    int slot = -1;
    std::string error = ctx.services->cluster_script_check(*ctx.services, *spec, argv, &slot);
    if (error.empty() && slot >= 0 && !run.cluster.allow_cross_slot) {
      if (run.cluster_slot < 0) {
        run.cluster_slot = slot;
      } else if (run.cluster_slot != slot) {
        error = "Script attempted to access keys that do not hash to the same slot";
      }
    }
    if (!error.empty()) return reject(error);
  }
  run.call_reply.clear();
  ReplyWriter w(&run.call_reply, run.resp);
  Fiber& fiber = Fiber::Local();
  ctx.in_script = true;  // a SELECT in the script changes ctx.db, not the client's database
  Task t = RunHoldingShards(ctx, spec, argv, &w);
  if (!t.Start([](void* f) { static_cast<Fiber*>(f)->Resume(); }, &fiber)) fiber.Suspend();
  PushRespAsLua(L, run.call_reply);
  return !run.call_reply.empty() && run.call_reply[0] == '-';
}

int CallOrPcall(lua_State* L, bool raise) {
  if (current_run == nullptr) {
    PushErrorAndRaise(L, "redis.call/pcall can only be called inside a script invocation");
  }
  const bool failed = RunCommand(L, *current_run);
  if (failed && raise) return lua_error(L);
  return 1;
}
int RedisCall(lua_State* L) { return CallOrPcall(L, true); }
int RedisPcall(lua_State* L) { return CallOrPcall(L, false); }

int RedisAclCheckCmd(lua_State* L) {
  if (current_run == nullptr) {
    PushErrorAndRaise(L, "redis.acl_check_cmd can only be called inside a script invocation");
  }
  if (!TakeArgs(L, *current_run)) return lua_error(L);
  const CommandSpec* spec = FindCommand(*current_run);
  if (spec == nullptr) PushErrorAndRaise(L, "Invalid command passed to redis.acl_check_cmd()");
  lua_pushboolean(L, AclAllows(*current_run, *spec));
  return 1;
}

int RedisSha1Hex(lua_State* L) {
  if (lua_gettop(L) != 1) PushErrorAndRaise(L, "wrong number of arguments");
  size_t n = 0;
  const char* s = lua_tolstring(L, 1, &n);
  char hex[41];
  {
    const std::string h = Sha1Hex(std::string_view(s == nullptr ? "" : s, n));
    h.copy(hex, 40);
  }
  lua_pushlstring(L, hex, 40);
  return 1;
}

int RedisErrorReply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
    PushLuaError(L, "wrong number or type of arguments");
    return 1;
  }
  size_t n = 0;
  const char* s = lua_tolstring(L, 1, &n);
  std::string text;
  if (n == 0 || s[0] != '-') text = "-";
  text.append(s, n);
  PushLuaError(L, text);
  return 1;
}

int RedisStatusReply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
    PushLuaError(L, "wrong number or type of arguments");
    return 1;
  }
  lua_newtable(L);
  lua_pushstring(L, "ok");
  lua_pushvalue(L, -3);
  lua_settable(L, -3);
  return 1;
}

int RedisLog(lua_State* L) {
  const int argc = lua_gettop(L);
  if (argc < 2) PushErrorAndRaise(L, "redis.log() requires two arguments or more.");
  if (!lua_isnumber(L, 1)) PushErrorAndRaise(L, "First argument must be a number (log level).");
  const int level = static_cast<int>(lua_tonumber(L, 1));
  if (level < 0 || level > 3) PushErrorAndRaise(L, "Invalid debug level.");
  const auto severity = static_cast<LogSeverity>(level);
  if (!LogEnabled(severity)) return 0;
  std::string msg;
  for (int i = 2; i <= argc; ++i) {
    size_t n = 0;
    const char* s = lua_tolstring(L, i, &n);
    if (s == nullptr) continue;
    if (i != 2) msg.push_back(' ');
    msg.append(s, n);
  }
  Log(severity, msg);
  return 0;
}

int RedisSetResp(lua_State* L) {
  if (current_run == nullptr) {
    PushErrorAndRaise(L, "redis.setresp can only be called inside a script invocation");
  }
  if (lua_gettop(L) != 1) PushErrorAndRaise(L, "redis.setresp() requires one argument.");
  const int resp = static_cast<int>(lua_tonumber(L, 1));
  if (resp != 2 && resp != 3) PushErrorAndRaise(L, "RESP version must be 2 or 3.");
  current_run->resp = resp;
  return 0;
}

int RedisSetRepl(lua_State* L) {
  if (lua_gettop(L) != 1) PushErrorAndRaise(L, "redis.set_repl() requires two arguments.");
  const int flags = static_cast<int>(lua_tonumber(L, -1));
  if ((flags & ~3) != 0) {
    PushErrorAndRaise(L,
                      "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or "
                      "REPL_NONE.");
  }
  return 0;  // Lavik has no replication yet: accepted, nothing to do
}

int ReturnTrue(lua_State* L) {
  lua_pushboolean(L, 1);
  return 1;
}
int ReturnFalse(lua_State* L) {
  lua_pushboolean(L, 0);
  return 1;
}
int NoOp(lua_State*) { return 0; }

// The count hook: SCRIPT KILL, and past busy-reply-threshold, a turn of the worker's loop now
// and then so its other clients get -BUSY instead of silence.
struct YieldItem : MailboxItem {
  Fiber* fiber = nullptr;
};
thread_local YieldItem yield_item;

void CountHook(lua_State* L, lua_Debug*) {
  ScriptStatus& status = RunningScript();
  if (status.kill.load(std::memory_order_acquire)) {
    // From now on every line raises, so a pcall cannot swallow the kill for good.
    lua_sethook(L, CountHook, LUA_MASKLINE, 0);
    LogWarning("Lua script killed by user with SCRIPT KILL.");
    PushErrorAndRaise(L, "Script killed by user with SCRIPT KILL...");
  }
  const int64_t limit_ms = status.threshold_ms.load(std::memory_order_relaxed);
  if (current_run == nullptr || limit_ms <= 0) return;
  if (MonotonicNs() - current_run->start_ns < limit_ms * 1000000) return;
  if (!status.busy.exchange(true)) {
    LogWarning("Slow script detected: still in execution after " + std::to_string(limit_ms) +
               " milliseconds. You can try killing the script using the SCRIPT KILL command.");
    if (status.on_busy != nullptr) status.on_busy(status.on_busy_arg);
  }
  Fiber& fiber = Fiber::Local();
  yield_item.fiber = &fiber;
  yield_item.run = [](MailboxItem* item) { static_cast<YieldItem*>(item)->fiber->Resume(); };
  Worker::Current()->Defer(&yield_item);
  fiber.Suspend();
}

void SetFunction(lua_State* L, const char* name, lua_CFunction f) {
  lua_pushcfunction(L, f);
  lua_setfield(L, -2, name);
}
void SetNumber(lua_State* L, const char* name, lua_Number v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, name);
}

void OpenLibrary(lua_State* L, const char* name, lua_CFunction open) {
  lua_pushcfunction(L, open);
  lua_pushstring(L, name);
  lua_call(L, 1, 0);
}

const luaL_Reg kRedisFunctions[] = {
    {"call", RedisCall},
    {"pcall", RedisPcall},
    {"log", RedisLog},
    {"setresp", RedisSetResp},
    {"sha1hex", RedisSha1Hex},
    {"error_reply", RedisErrorReply},
    {"status_reply", RedisStatusReply},
    {"set_repl", RedisSetRepl},
    {"replicate_commands", ReturnTrue},
    {"breakpoint", ReturnFalse},
    {"debug", NoOp},
    {"acl_check_cmd", RedisAclCheckCmd},
};

struct NumberField {
  const char* name;
  lua_Number value;
};
const NumberField kRedisNumbers[] = {
    {"LOG_DEBUG", 0},  {"LOG_VERBOSE", 1},
    {"LOG_NOTICE", 2}, {"LOG_WARNING", 3},
    {"REPL_NONE", 0},  {"REPL_AOF", 1},
    {"REPL_SLAVE", 2}, {"REPL_REPLICA", 2},
    {"REPL_ALL", 3},   {"REDIS_VERSION_NUM", 0x07000f},
};

void SetRedisConstants(lua_State* L) {
  for (const NumberField& n : kRedisNumbers) SetNumber(L, n.name, n.value);
  lua_pushstring(L, "7.0.15");
  lua_setfield(L, -2, "REDIS_VERSION");
}

// The error handler every script runs under: a table error keeps its fields, anything else
// becomes {err="ERR <text>"}; both get the source and line of the Lua code that raised it.
constexpr char kErrorHandler[] =
    "local dbg = debug\n"
    "return function(err)\n"
    "  local i = dbg.getinfo(2, 'nSl')\n"
    "  if i and i.what == 'C' then i = dbg.getinfo(3, 'nSl') end\n"
    "  if type(err) ~= 'table' then err = {err = 'ERR ' .. tostring(err)} end\n"
    "  if i then err['source'] = i.source; err['line'] = i.currentline end\n"
    "  return err\n"
    "end\n";

}  // namespace sandbox

LuaEngine& LuaEngine::Local() {
  if (local_engine == nullptr) local_engine.reset(new LuaEngine(false));
  return *local_engine;
}

LuaEngine& LuaEngine::LocalFunctions() {
  if (local_function_engine == nullptr) local_function_engine.reset(new LuaEngine(true));
  return *local_function_engine;
}

uint64_t LuaEngine::SourceGeneration() const {
  return functions_mode_ ? FunctionRegistry::Get().generation() : ScriptCache::Get().generation();
}

LuaEngine::LuaEngine(bool functions_mode) : functions_mode_(functions_mode) {
  Reset();
  UpdateMemory();
}

LuaEngine::~LuaEngine() {
  if (L_ != nullptr) lua_close(L_);
}

void LuaEngine::Reset() {
  if (L_ != nullptr) lua_close(L_);
  functions_.clear();
  loaded_libraries_.clear();
  generation_ = SourceGeneration();
  L_ = luaL_newstate();
  lua_State* L = L_;
  OpenLibrary(L, "", luaopen_base);
  OpenLibrary(L, LUA_TABLIBNAME, luaopen_table);
  OpenLibrary(L, LUA_STRLIBNAME, luaopen_string);
  OpenLibrary(L, LUA_MATHLIBNAME, luaopen_math);
  OpenLibrary(L, LUA_DBLIBNAME, luaopen_debug);
  lua_pushcfunction(L, luaopen_cjson);
  lua_call(L, 0, 1);
  lua_setglobal(L, "cjson");
  lua_pushcfunction(L, luaopen_bit);
  lua_call(L, 0, 1);
  lua_setglobal(L, "bit");
  lua_pushcfunction(L, OpenStructLibrary);
  lua_call(L, 0, 1);
  lua_setglobal(L, "struct");
  lua_pushcfunction(L, OpenCmsgpackLibrary);
  lua_call(L, 0, 1);
  lua_setglobal(L, "cmsgpack");
  lua_pushcfunction(L, RedisStylePcall);
  lua_setglobal(L, "pcall");

  lua_getglobal(L, "math");
  SetFunction(L, "random", MathRandom);
  SetFunction(L, "randomseed", MathRandomSeed);
  lua_pop(L, 1);

  lua_newtable(L);  // redis
  for (const luaL_Reg& f : kRedisFunctions) SetFunction(L, f.name, f.func);
  SetRedisConstants(L);
  PushReadOnlyProxy(L, -1);
  lua_setglobal(L, "redis");
  lua_setfield(L, LUA_REGISTRYINDEX, "lavik_redis");  // the real table, for pairs below

  luaL_loadbuffer(L, kErrorHandler, sizeof(kErrorHandler) - 1, "@error_handler");
  lua_call(L, 0, 1);
  handler_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);

  for (const char* name : {"debug", "print", "dofile", "loadfile", "getfenv", "setfenv", "newproxy",
                           "module", "require"}) {
    lua_pushnil(L);
    lua_setglobal(L, name);
  }
  Srand48(static_cast<int32_t>(NowMs()));

  // Globals: the real table gets an error for unknown names; scripts see read-only proxies of
  // it and of every library table (lua_readonly.h).
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  lua_newtable(L);
  lua_pushcfunction(L, MissingGlobal);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
  lua_pop(L, 1);
  ProtectGlobals(L);  // [G]
  globals_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
}

std::string LuaEngine::CompileError(std::string_view body) {
  lua_State* L = luaL_newstate();
  std::string text(body);
  if (text.starts_with("#!")) text.replace(0, 2, "--");
  std::string error;
  if (luaL_loadbuffer(L, text.data(), text.size(), "@user_script") != 0) {
    error = std::string("ERR Error compiling script (new function): ") + lua_tostring(L, -1);
  }
  lua_close(L);
  return error;
}

bool LuaEngine::Compiled(const std::string& sha, bool* no_writes, bool* allow_oom, bool* shebang,
                         ClusterScriptFlags* cluster) const {
  if (generation_ != SourceGeneration()) return false;
  auto it = functions_.find(sha);
  if (it == functions_.end()) return false;
  *no_writes = it->second.no_writes;
  *allow_oom = it->second.allow_oom;
  *shebang = it->second.shebang;
  *cluster = it->second.cluster;
  return true;
}

bool LuaEngine::PushFunction(ScriptRun& run) {
  auto it = functions_.find(run.sha);
  if (it != functions_.end()) {
    lua_rawgeti(L_, LUA_REGISTRYINDEX, it->second.ref);
    return true;
  }
  if (!run.body_known) {  // SCRIPT FLUSH ran while this EVALSHA waited for the shards
    if (!ScriptCache::Get().Find(run.sha, &run.body_storage)) {
      run.ctx->reply->Error(kErrNoScript);
      return false;
    }
    run.body = run.body_storage;
  }
  std::string text(run.body);
  if (text.starts_with("#!")) text.replace(0, 2, "--");  // keeps the line numbers
  if (luaL_loadbuffer(L_, text.data(), text.size(), "@user_script") != 0) {
    run.ctx->reply->Error(std::string("ERR Error compiling script (new function): ") +
                          lua_tostring(L_, -1));
    lua_pop(L_, 1);
    return false;
  }
  lua_pushvalue(L_, -1);
  functions_[run.sha] = Function{luaL_ref(L_, LUA_REGISTRYINDEX), run.no_writes, run.allow_oom,
                                 run.shebang, run.cluster};
  return true;
}

inline namespace sandbox {

void PushStrings(lua_State* L, std::span<const std::string_view> v) {
  lua_createtable(L, static_cast<int>(v.size()), 0);
  for (size_t i = 0; i < v.size(); ++i) {
    lua_pushlstring(L, v[i].data(), v[i].size());
    lua_rawseti(L, -2, static_cast<int>(i + 1));
  }
}

// The error a script ended with (at the top of the stack) as Redis 7.0 words it.
void WriteScriptError(lua_State* L, ScriptRun& run) {
  ReplyWriter* w = run.ctx->reply;
  if (!lua_istable(L, -1)) {
    const char* msg = lua_isstring(L, -1) ? lua_tostring(L, -1) : "execution failure";
    w->Error("ERR Error running script f_" + run.sha + ", " + std::string(msg).substr(0, 100));
    return;
  }
  std::string text;
  lua_getfield(L, -1, "err");
  if (lua_isstring(L, -1)) text = lua_tostring(L, -1);
  lua_getfield(L, -2, "source");
  lua_getfield(L, -3, "line");
  if (lua_isstring(L, -1) && lua_isstring(L, -2)) {
    text += " script: " + run.sha + ", on " + lua_tostring(L, -2) + ":" + lua_tostring(L, -1) + ".";
  }
  lua_pop(L, 3);
  w->Error(text);
}

}  // namespace sandbox

void LuaEngine::Run(ScriptRun& run) {
  if (generation_ != SourceGeneration()) Reset();
  lua_State* L = L_;
  lua_rawgeti(L, LUA_REGISTRYINDEX, handler_ref_);
  if (!PushFunction(run)) {
    lua_pop(L, 1);
    return;
  }
  // G's metatable has only __index, so setfield on the real globals stores directly.
  lua_rawgeti(L, LUA_REGISTRYINDEX, globals_ref_);
  const int globals = lua_gettop(L);
  PushStrings(L, run.keys);
  lua_setfield(L, globals, "KEYS");
  PushStrings(L, run.args);
  lua_setfield(L, globals, "ARGV");
  lua_pop(L, 1);
  Call(run, 0);
}

void LuaEngine::Call(ScriptRun& run, int nargs) {
  lua_State* L = L_;
  current_run = &run;
  lua_sethook(L, CountHook, LUA_MASKCOUNT, 100000);
  const int err = lua_pcall(L, nargs, 1, -(nargs + 2));
  lua_sethook(L, nullptr, 0, 0);
  current_run = nullptr;
  if (err != 0) {
    WriteScriptError(L, run);
  } else {
    WriteLuaAsReply(L, run.ctx->reply, run.resp);
    lua_pushnil(L);  // balance the pop below
  }
  lua_pop(L, 2);  // the result or error, and the handler
  // A small GC step now and then, as Redis does, instead of a long full cycle later.
  if (++runs_ == 50) {
    lua_gc(L, LUA_GCSTEP, 50);
    runs_ = 0;
  }
  UpdateMemory();
}

namespace {
std::atomic<size_t> total_lua_memory{0};
}  // namespace

size_t LuaEngine::TotalMemory() { return total_lua_memory.load(std::memory_order_relaxed); }

void LuaEngine::UpdateMemory() {
  const size_t now = static_cast<size_t>(lua_gc(L_, LUA_GCCOUNT, 0)) * 1024 +
                     static_cast<size_t>(lua_gc(L_, LUA_GCCOUNTB, 0));
  total_lua_memory.fetch_add(now - memory_, std::memory_order_relaxed);
  memory_ = now;
}

}  // namespace lavik
