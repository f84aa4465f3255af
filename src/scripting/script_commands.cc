// EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT (scripting.h).
#include <cstdlib>
#include <string>
#include <vector>

#include "base/ascii.h"
#include "base/clock.h"
#include "base/numbers.h"
#include "base/slot.h"
#include "client/services.h"
#include "commands/multi_shard.h"
#include "config/config_registry.h"
#include "observability/observability.h"
#include "protocol/errors.h"
#include "scripting/fiber.h"
#include "scripting/function_commands.h"
#include "scripting/function_registry.h"
#include "scripting/lua_engine.h"
#include "scripting/script_cache.h"
#include "scripting/script_flags.h"
#include "scripting/script_locks.h"
#include "scripting/scripting.h"

namespace lavik {

std::string_view ScriptBusyError() {
  ScriptStatus& status = RunningScript();
  if (!status.busy.load(std::memory_order_acquire)) return {};
  return status.function.load(std::memory_order_acquire) ? kErrBusyFunction : kErrBusyScript;
}

void SetScriptBusyHook(void (*hook)(void* arg), void* arg) {
  RunningScript().on_busy_arg = arg;
  RunningScript().on_busy = hook;
}

size_t ScriptCacheBytes() { return ScriptCache::Get().body_bytes(); }
size_t ScriptCacheCount() { return ScriptCache::Get().count(); }
size_t ScriptVmBytes() { return LuaEngine::TotalMemory(); }

void ConfigureScripting(ConfigRegistry& registry) {
  auto apply = [](std::string_view v) {
    RunningScript().threshold_ms.store(std::strtoll(std::string(v).c_str(), nullptr, 10));
    return Status::Ok();
  };
  if (const std::string* v = registry.Value("busy-reply-threshold")) apply(*v);
  registry.OnChange("busy-reply-threshold", apply);
}

namespace {
bool ParseShebangOrReply(Context& ctx, std::string_view body, bool* no_writes, bool* allow_oom,
                         bool* shebang, ClusterScriptFlags* cluster = nullptr);
}  // namespace

bool ScriptMayWrite(const CommandSpec& spec, std::span<const std::string_view> args) {
  const std::string_view n = spec.name;
  if ((n != "eval" && n != "evalsha" && n != "fcall") || args.size() < 2) return false;
  bool no_writes = false;
  if (n == "fcall") {
    std::string library, code;
    return FunctionRegistry::Get().Find(args[1], &library, &code, &no_writes) && !no_writes;
  }
  std::string body;
  if (n == "evalsha") {
    if (!ScriptCache::Get().Find(args[1], &body)) return false;
  } else {
    body.assign(args[1]);
  }
  std::string ignored;
  ReplyWriter sink(&ignored, 2);
  Context ctx;
  ctx.reply = &sink;
  bool shebang = false, allow_oom = false;
  return ParseShebangOrReply(ctx, body, &no_writes, &allow_oom, &shebang) && !no_writes;
}

namespace {

std::vector<std::string_view> SplitOn(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i <= s.size()) {
    size_t j = s.find(sep, i);
    if (j == std::string_view::npos) j = s.size();
    if (j > i || sep == ',') out.push_back(s.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

// "#!lua flags=a,b" (Redis 7.0's shebang): sets *shebang, *no_writes and *allow_oom; false
// (error written) if invalid.
bool ParseShebangOrReply(Context& ctx, std::string_view body, bool* no_writes, bool* allow_oom,
                         bool* shebang, ClusterScriptFlags* cluster) {
  if (!body.starts_with("#!")) {
    // Redis 7.0: a script without a shebang (eval compatibility mode) may touch keys of any slot.
    if (cluster != nullptr) cluster->allow_cross_slot = true;
    return true;
  }
  *shebang = true;
  const size_t nl = body.find('\n');
  if (nl == std::string_view::npos) {
    ctx.reply->Error("ERR Invalid script shebang");
    return false;
  }
  std::vector<std::string_view> parts = SplitOn(body.substr(0, nl), ' ');
  if (parts.empty() || parts[0] != "#!lua") {
    ctx.reply->Error("ERR Unexpected engine in script shebang: " +
                     std::string(parts.empty() ? "" : parts[0]));
    return false;
  }
  for (size_t i = 1; i < parts.size(); ++i) {
    if (!parts[i].starts_with("flags=")) {
      ctx.reply->Error("ERR Unknown lua shebang option: " + std::string(parts[i]));
      return false;
    }
    std::string_view list = parts[i].substr(6);
    if (list.empty()) continue;
    for (std::string_view f : SplitOn(list, ',')) {
      if (f == "no-writes") {
        *no_writes = true;
      } else if (f == "allow-oom") {
        *allow_oom = true;
      } else if (f == "no-cluster") {
        if (cluster != nullptr) cluster->no_cluster = true;
      } else if (f == "allow-cross-slot-keys") {
        if (cluster != nullptr) cluster->allow_cross_slot = true;
      } else if (f != "allow-stale") {
        ctx.reply->Error("ERR Unexpected flag in script shebang: " + std::string(f));
        return false;
      }
    }
  }
  return true;
}

enum class Source { kBody, kSha, kFunction };

void RunScriptOnFiber(void* arg) { LuaEngine::Local().Run(*static_cast<ScriptRun*>(arg)); }
void RunFunctionOnFiber(void* arg) {
  auto* run = static_cast<ScriptRun*>(arg);
  LuaEngine::LocalFunctions().RunFunction(*run, run->library, run->body_storage);
}

constexpr std::string_view kErrRoWithWriteFlag =
    "ERR Can not execute a script with write flag using *_ro command.";

// Finds what EVAL / EVALSHA / FCALL runs: fills run.sha (the function name for FCALL), the
// body or library, and the no-writes flag. False if it replied an error.
bool ResolveOrReply(Context& ctx, Source source, bool read_only, ScriptRun& run,
                    std::string* body) {
  ScriptCache& cache = ScriptCache::Get();
  bool no_writes = false;
  bool allow_oom = false;
  bool shebang = false;
  ClusterScriptFlags cluster;
  if (source == Source::kFunction) {
    if (!FunctionRegistry::Get().Find(ctx.args[1], &run.library, &run.body_storage, &no_writes,
                                      &allow_oom, &cluster)) {
      ctx.reply->Error("ERR Function not found");
      return false;
    }
    run.sha.assign(ctx.args[1]);
    shebang = true;  // a function's flags are always explicit
  } else if (source == Source::kSha) {
    run.sha = LowerSha(ctx.args[1]);
    // A script this worker has compiled since the last SCRIPT FLUSH needs no cache lookup.
    run.body_known =
        !LuaEngine::Local().Compiled(run.sha, &no_writes, &allow_oom, &shebang, &cluster);
    if (run.body_known) {
      if (!cache.Find(run.sha, body)) {
        ctx.reply->Error(kErrNoScript);
        return false;
      }
      if (!ParseShebangOrReply(ctx, *body, &no_writes, &allow_oom, &shebang, &cluster)) {
        return false;
      }
    }
  } else {
    body->assign(ctx.args[1]);
    run.sha = Sha1Hex(*body);
    if (!ParseShebangOrReply(ctx, *body, &no_writes, &allow_oom, &shebang, &cluster)) {
      return false;
    }
    if (!cache.Exists(run.sha)) {
      std::string error = LuaEngine::CompileError(*body);
      if (!error.empty()) {
        ctx.reply->Error(error);
        return false;
      }
      cache.Add(*body);
    }
  }
  if (cluster.no_cluster && ctx.services->cluster != nullptr) {
    ctx.reply->Error("ERR Can not run script on cluster, 'no-cluster' flag is set.");
    return false;
  }
  if (read_only && shebang && !no_writes) {
    ctx.reply->Error(kErrRoWithWriteFlag);
    return false;
  }
  // A script that may write is refused before it runs, as Redis's processCommand refuses it.
  if (shebang && !no_writes && !ctx.from_master && ctx.services->disk_error_denies_writes()) {
    ctx.reply->Error(kErrMisconf);
    return false;
  }
  if (shebang && !no_writes && ctx.services->refuses_writes()) {  // as Redis, before it runs
    ctx.reply->Error(kErrReadOnlyReplica);
    return false;
  }
  run.no_writes = no_writes;
  run.allow_oom = allow_oom;
  run.shebang = shebang;
  run.cluster = cluster;
  run.read_only = read_only || no_writes;
  return true;
}

Task EvalGeneric(Context& ctx, Source source, bool read_only) {
  ScriptRun run;
  std::string body;
  if (source == Source::kFunction && !ResolveOrReply(ctx, source, read_only, run, &body)) {
    co_return;  // FCALL looks the function up before it reads numkeys
  }
  int64_t numkeys = 0;
  if (!ParseInt64(ctx.args[2], &numkeys)) {
    ctx.reply->Error(kErrNotInteger);
    co_return;
  }
  const int64_t rest = static_cast<int64_t>(ctx.args.size()) - 3;
  if (numkeys > rest) {
    ctx.reply->Error("ERR Number of keys can't be greater than number of args");
    co_return;
  }
  if (numkeys < 0) {
    ctx.reply->Error("ERR Number of keys can't be negative");
    co_return;
  }
  if (source != Source::kFunction && !ResolveOrReply(ctx, source, read_only, run, &body)) {
    co_return;
  }
  // Over maxmemory, a script that declared its flags and may write without allow-oom is refused
  // before it runs (Redis derives denyoom from its flags); inside EXEC it gets the flag's text.
  run.oom_at_start =
      !ctx.from_master && ctx.services->over_memory_limit && ctx.services->over_memory_limit();
  if (run.oom_at_start && run.shebang && !run.no_writes && !run.allow_oom) {
    ctx.reply->Error(ctx.in_exec ? kErrOomScriptFlag : kErrOOM);
    co_return;
  }
  run.ctx = &ctx;
  run.body = body;
  run.keys = ctx.args.subspan(3, numkeys);
  // Cluster mode: the declared keys fix the script's slot (the request path checked they share
  // one); redis.call's keys must stay in it unless the script allows cross-slot keys.
  run.cluster_slot = run.keys.empty() ? -1 : KeyHashSlot(run.keys[0]);
  run.args = ctx.args.subspan(3 + numkeys);

  if (!ctx.in_exec) {
    // Every shard (doc/threading.md: a script may name keys it did not declare, so it holds the
    // whole keyspace like a Redis script does).
    const std::string_view busy = co_await LockAllShards(ctx, &run);
    if (!busy.empty()) {  // another script passed busy-reply-threshold while this one waited
      ctx.reply->Error(busy);
      co_return;
    }
  }
  ScriptStatus& status = RunningScript();
  status.Started(source == Source::kFunction ? run.sha : "", ctx.args);
  run.start_ns = MonotonicNs();
  co_await Fiber::Local().Run(source == Source::kFunction ? &RunFunctionOnFiber : &RunScriptOnFiber,
                              &run);
  status.Finished();
  if (!ctx.in_exec) UnlockAllShards(ctx);
}

Task Eval(Context& ctx) { return EvalGeneric(ctx, Source::kBody, false); }
Task EvalSha(Context& ctx) { return EvalGeneric(ctx, Source::kSha, false); }
Task EvalRo(Context& ctx) { return EvalGeneric(ctx, Source::kBody, true); }
Task EvalShaRo(Context& ctx) { return EvalGeneric(ctx, Source::kSha, true); }
Task FCall(Context& ctx) { return EvalGeneric(ctx, Source::kFunction, false); }
Task FCallRo(Context& ctx) { return EvalGeneric(ctx, Source::kFunction, true); }

Task ScriptLoad(Context& ctx) {
  std::string error = LuaEngine::CompileError(ctx.args[2]);
  if (!error.empty()) {
    ctx.reply->Error(error);
    co_return;
  }
  ctx.reply->Bulk(ScriptCache::Get().Add(ctx.args[2]));
}

Task ScriptExists(Context& ctx) {
  ctx.reply->Array(ctx.args.size() - 2);
  for (size_t i = 2; i < ctx.args.size(); ++i) {
    ctx.reply->Integer(ScriptCache::Get().Exists(ctx.args[i]) ? 1 : 0);
  }
  co_return;
}

Task ScriptFlush(Context& ctx) {
  if (!FlushModeOk(ctx.args)) {
    ctx.reply->Error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
    co_return;
  }
  ScriptCache::Get().Flush();
  ctx.reply->Ok();
}

Task ScriptKill(Context& ctx) {
  ScriptStatus& status = RunningScript();
  status.KillOrReply(ctx.reply, status.running.load(std::memory_order_acquire));
  co_return;
}

// Lavik has no Lua debugger (LDB): NO is accepted as Redis accepts it, YES and SYNC are refused.
Task ScriptDebug(Context& ctx) {
  const std::string_view mode = ctx.args[2];
  if (ctx.in_exec) {
    ctx.reply->Error("ERR SCRIPT DEBUG must be called outside a pipeline");
  } else if (EqualsNoCase(mode, "no")) {
    ctx.reply->Ok();
  } else if (EqualsNoCase(mode, "yes") || EqualsNoCase(mode, "sync")) {
    ctx.reply->Error("ERR SCRIPT DEBUG YES|SYNC is not supported: Lavik has no Lua debugger");
  } else {
    ctx.reply->Error("ERR Use SCRIPT DEBUG YES/SYNC/NO");
  }
  co_return;
}

Task ScriptHelp(Context& ctx) {
  static constexpr const char* kLines[] = {
      "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "DEBUG (YES|SYNC|NO)",
      "    Set the debug mode for subsequent scripts executed.",
      "EXISTS <sha1> [<sha1> ...]",
      "    Return information about the existence of the scripts in the script cache.",
      "FLUSH [ASYNC|SYNC]",
      "    Flush the Lua scripts cache. Very dangerous on replicas.",
      "    When called without the optional mode argument, the behavior is determined by the",
      "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
      "    * ASYNC: Asynchronously flush the scripts cache.",
      "    * SYNC: Synchronously flush the scripts cache.",
      "KILL",
      "    Kill the currently executing Lua script.",
      "LOAD <script>",
      "    Load a script into the scripts cache without executing it.",
      "HELP",
      "    Prints this help.",
  };
  ReplyHelpLines(ctx.reply, kLines);
  co_return;
}

constexpr uint32_t kEvalFlags =
    kCmdHome | kCmdNoScript | kCmdStale | kCmdSkipMonitor | kCmdNoMandatoryKeys | kCmdMovableKeys;
constexpr uint32_t kScr = kCmdHome;

const CommandSpec kScriptSubcommands[] = {
    {"script|debug", 3, kScr | kCmdNoScript, 0, 0, 0, &ScriptDebug, "@slow @scripting", "scripting",
     "Set the debug mode for executed scripts.", "3.2.0"},
    {"script|exists", -3, kScr | kCmdNoScript, 0, 0, 0, &ScriptExists, "@slow @scripting",
     "scripting", "Check existence of scripts in the script cache.", "2.6.0"},
    {"script|load", 3, kScr | kCmdNoScript | kCmdStale, 0, 0, 0, &ScriptLoad, "@slow @scripting",
     "scripting", "Load the specified Lua script into the script cache.", "2.6.0"},
    {"script|help", 2, kScr | kCmdLoading | kCmdStale, 0, 0, 0, &ScriptHelp, "@slow @scripting",
     "scripting", "Show helpful text about the different subcommands", "5.0.0"},
    {"script|kill", 2, kScr | kCmdNoScript | kCmdAllowBusy, 0, 0, 0, &ScriptKill,
     "@slow @scripting", "scripting", "Kill the script currently in execution.", "2.6.0"},
    {"script|flush", -2, kScr | kCmdNoScript, 0, 0, 0, &ScriptFlush, "@slow @scripting",
     "scripting", "Remove all the scripts from the script cache.", "2.6.0"},
};

const CommandSpec kScriptingCommands[] = {
    {"eval", -3, kEvalFlags, 0, 0, 0, &Eval, "@slow @scripting", "scripting",
     "Execute a Lua script server side", "2.6.0"},
    {"evalsha", -3, kEvalFlags, 0, 0, 0, &EvalSha, "@slow @scripting", "scripting",
     "Execute a Lua script server side", "2.6.0"},
    {"eval_ro", -3, kEvalFlags | kCmdReadOnly, 0, 0, 0, &EvalRo, "@slow @scripting", "scripting",
     "Execute a read-only Lua script server side", "7.0.0"},
    {"evalsha_ro", -3, kEvalFlags | kCmdReadOnly, 0, 0, 0, &EvalShaRo, "@slow @scripting",
     "scripting", "Execute a read-only Lua script server side", "7.0.0"},
    {"fcall", -3, kEvalFlags, 0, 0, 0, &FCall, "@slow @scripting", "scripting", "Invoke a function",
     "7.0.0"},
    {"fcall_ro", -3, kEvalFlags | kCmdReadOnly, 0, 0, 0, &FCallRo, "@slow @scripting", "scripting",
     "Invoke a read-only function", "7.0.0"},
    {"function", -2, kScr, 0, 0, 0, nullptr, "@slow", "scripting",
     "A container for function commands", "7.0.0", FunctionSubcommands()},
    {"script", -2, kScr, 0, 0, 0, nullptr, "@slow", "scripting",
     "A container for Lua scripts management commands", "2.6.0", kScriptSubcommands},
};

}  // namespace

std::span<const CommandSpec> ScriptingCommands() { return kScriptingCommands; }

}  // namespace lavik
