// FUNCTION LOAD | LIST | DELETE | FLUSH | DUMP | RESTORE | STATS | KILL | HELP (Redis 7.0
// functions). Every change replies once the registry has made it durable (function_registry.h).
#include "scripting/function_commands.h"

#include <unistd.h>

#include <string>

#include "base/ascii.h"
#include "base/clock.h"
#include "base/glob.h"
#include "base/log.h"
#include "protocol/errors.h"
#include "rdb/function_payload.h"
#include "scripting/function_registry.h"
#include "scripting/lua_engine.h"
#include "scripting/scripting.h"

namespace lavik {

namespace {

Task FunctionLoad(Context& ctx) {
  bool replace = false;
  size_t i = 2;
  if (ctx.args.size() > 3) {
    if (!EqualsNoCase(ctx.args[2], "replace")) {
      ctx.reply->Error("ERR Unknown option given: " + std::string(ctx.args[2]));
      co_return;
    }
    replace = true;
    i = 3;
  }
  if (i + 1 != ctx.args.size()) {
    ctx.reply->Error("ERR Function code is missing");
    co_return;
  }
  std::string name;
  std::string error = FunctionRegistry::Get().Load(ctx.args[i], replace, &name);
  if (!error.empty()) {
    ctx.reply->Error(error);
    co_return;
  }
  ctx.reply->Bulk(name);
}

void ReplyOkOrError(Context& ctx, const std::string& error) {
  if (error.empty()) {
    ctx.reply->Ok();
  } else {
    ctx.reply->Error(error);
  }
}

Task FunctionDelete(Context& ctx) {
  ReplyOkOrError(ctx, FunctionRegistry::Get().Delete(ctx.args[2]));
  co_return;
}

Task FunctionFlush(Context& ctx) {
  if (ctx.args.size() > 3) {
    ctx.reply->Error(SubcommandSyntaxError(ctx.args[0], ctx.args[1]));
    co_return;
  }
  if (!FlushModeOk(ctx.args)) {
    ctx.reply->Error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
    co_return;
  }
  ReplyOkOrError(ctx, FunctionRegistry::Get().Flush());
}

Task FunctionDump(Context& ctx) {
  ctx.reply->Bulk(rdb::EncodeFunctionsPayload(FunctionRegistry::Get().Codes()));
  co_return;
}

Task FunctionRestore(Context& ctx) {
  if (ctx.args.size() > 4) {
    ctx.reply->Error(SubcommandSyntaxError(ctx.args[0], ctx.args[1]));
    co_return;
  }
  RestorePolicy policy = RestorePolicy::kAppend;
  if (ctx.args.size() == 4) {
    const std::string_view p = ctx.args[3];
    if (EqualsNoCase(p, "append")) {
      policy = RestorePolicy::kAppend;
    } else if (EqualsNoCase(p, "replace")) {
      policy = RestorePolicy::kReplace;
    } else if (EqualsNoCase(p, "flush")) {
      policy = RestorePolicy::kFlush;
    } else {
      ctx.reply->Error(
          "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.");
      co_return;
    }
  }
  std::vector<std::string> codes;
  std::string error;
  if (!rdb::DecodeFunctionsPayload(ctx.args[2], &codes, &error)) {
    ctx.reply->Error(error);
    co_return;
  }
  ReplyOkOrError(ctx, FunctionRegistry::Get().Restore(codes, policy));
}

Task FunctionList(Context& ctx) {
  bool with_code = false;
  std::string_view pattern;
  bool has_pattern = false;
  for (size_t i = 2; i < ctx.args.size(); ++i) {
    if (EqualsNoCase(ctx.args[i], "withcode") && !with_code) {
      with_code = true;
    } else if (EqualsNoCase(ctx.args[i], "libraryname") && !has_pattern) {
      if (i + 1 >= ctx.args.size()) {
        ctx.reply->Error("ERR library name argument was not given");
        co_return;
      }
      pattern = ctx.args[++i];
      has_pattern = true;
    } else {
      ctx.reply->Error("ERR Unknown argument " + std::string(ctx.args[i]));
      co_return;
    }
  }
  std::vector<FunctionLibrary> libs = FunctionRegistry::Get().List();
  std::erase_if(
      libs, [&](const FunctionLibrary& l) { return has_pattern && !GlobMatch(pattern, l.name); });
  ReplyWriter& w = *ctx.reply;
  w.Array(libs.size());
  for (const FunctionLibrary& lib : libs) {
    w.Map(with_code ? 4 : 3);
    w.Bulk("library_name");
    w.Bulk(lib.name);
    w.Bulk("engine");
    w.Bulk("LUA");
    w.Bulk("functions");
    w.Array(lib.functions.size());
    for (const FunctionInfo& f : lib.functions) {
      w.Map(3);
      w.Bulk("name");
      w.Bulk(f.name);
      w.Bulk("description");
      if (f.description) {
        w.Bulk(*f.description);
      } else {
        w.Null();
      }
      w.Bulk("flags");
      w.Set(f.flags.size());
      for (const std::string& flag : f.flags) w.Bulk(flag);
    }
    if (with_code) {
      w.Bulk("library_code");
      w.Bulk(lib.code);
    }
  }
}

Task FunctionStats(Context& ctx) {
  ReplyWriter& w = *ctx.reply;
  w.Map(2);
  w.Bulk("running_script");
  std::string name;
  std::vector<std::string> command;
  int64_t start_ms = 0;
  if (RunningScript().RunningFunction(&name, &command, &start_ms)) {
    w.Map(3);
    w.Bulk("name");
    w.Bulk(name);
    w.Bulk("command");
    w.Array(command.size());
    for (const std::string& a : command) w.Bulk(a);
    w.Bulk("duration_ms");
    w.Integer(NowMs() - start_ms);
  } else {
    w.Null();
  }
  w.Bulk("engines");
  w.Map(1);
  w.Bulk("LUA");
  w.Map(2);
  w.Bulk("libraries_count");
  w.Integer(static_cast<int64_t>(FunctionRegistry::Get().library_count()));
  w.Bulk("functions_count");
  w.Integer(static_cast<int64_t>(FunctionRegistry::Get().function_count()));
  co_return;
}

Task FunctionKill(Context& ctx) {
  std::string name;
  std::vector<std::string> command;
  int64_t start_ms = 0;
  ScriptStatus& status = RunningScript();
  status.KillOrReply(ctx.reply, status.RunningFunction(&name, &command, &start_ms));
  co_return;
}

Task FunctionHelp(Context& ctx) {
  static constexpr const char* kLines[] = {
      "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "LOAD [REPLACE] <FUNCTION CODE>",
      "    Create a new library with the given library name and code.",
      "DELETE <LIBRARY NAME>",
      "    Delete the given library.",
      "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
      "    Return general information on all the libraries:",
      "    * Library name",
      "    * The engine used to run the Library",
      "    * Library description",
      "    * Functions list",
      "    * Library code (if WITHCODE is given)",
      "    It also possible to get only function that matches a pattern using LIBRARYNAME "
      "argument.",
      "STATS",
      "    Return information about the current function running:",
      "    * Function name",
      "    * Command used to run the function",
      "    * Duration in MS that the function is running",
      "    If no function is running, return nil",
      "    In addition, returns a list of available engines.",
      "KILL",
      "    Kill the current running function.",
      "FLUSH [ASYNC|SYNC]",
      "    Delete all the libraries.",
      "    When called without the optional mode argument, the behavior is determined by the",
      "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
      "    * ASYNC: Asynchronously flush the libraries.",
      "    * SYNC: Synchronously flush the libraries.",
      "DUMP",
      "    Return a serialized payload representing the current libraries, can be restored "
      "using FUNCTION RESTORE command",
      "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
      "    Restore the libraries represented by the given payload, it is possible to give a "
      "restore policy to",
      "    control how to handle existing libraries (default APPEND):",
      "    * FLUSH: delete all existing libraries.",
      "    * APPEND: appends the restored libraries to the existing libraries. On collision, "
      "abort.",
      "    * REPLACE: appends the restored libraries to the existing libraries, On collision, "
      "replace the old",
      "      libraries with the new libraries (notice that even on this option there is a "
      "chance of failure",
      "      in case of functions name collision with another library).",
      "HELP",
      "    Prints this help.",
  };
  ReplyHelpLines(ctx.reply, kLines);
  co_return;
}

constexpr uint32_t kFn = kCmdHome | kCmdNoScript;
constexpr std::string_view kWriteCats = "@write @slow @scripting";

const CommandSpec kFunctionSubcommands[] = {
    {"function|delete", 3, kFn | kCmdWrite, 0, 0, 0, &FunctionDelete, kWriteCats, "scripting",
     "Delete a function by name", "7.0.0"},
    {"function|load", -3, kFn | kCmdWrite | kCmdDenyOom, 0, 0, 0, &FunctionLoad, kWriteCats,
     "scripting", "Create a function with the given arguments (name, code, description)", "7.0.0"},
    {"function|kill", 2, kFn | kCmdAllowBusy, 0, 0, 0, &FunctionKill, "@slow @scripting",
     "scripting", "Kill the function currently in execution.", "7.0.0"},
    {"function|flush", -2, kFn | kCmdWrite, 0, 0, 0, &FunctionFlush, kWriteCats, "scripting",
     "Deleting all functions", "7.0.0"},
    {"function|dump", 2, kFn, 0, 0, 0, &FunctionDump, "@slow @scripting", "scripting",
     "Dump all functions into a serialized binary payload", "7.0.0"},
    {"function|restore", -3, kFn | kCmdWrite | kCmdDenyOom, 0, 0, 0, &FunctionRestore, kWriteCats,
     "scripting", "Restore all the functions on the given payload", "7.0.0"},
    {"function|stats", 2, kFn | kCmdAllowBusy, 0, 0, 0, &FunctionStats, "@slow @scripting",
     "scripting",
     "Return information about the function currently running (name, description, duration)",
     "7.0.0"},
    {"function|help", 2, kCmdHome | kCmdLoading | kCmdStale, 0, 0, 0, &FunctionHelp,
     "@slow @scripting", "scripting", "Show helpful text about the different subcommands", "7.0.0"},
    {"function|list", -2, kFn, 0, 0, 0, &FunctionList, "@slow @scripting", "scripting",
     "List information about all the functions", "7.0.0"},
};

}  // namespace

bool FlushModeOk(std::span<const std::string_view> args) {
  return args.size() == 2 ||
         (args.size() == 3 && (EqualsNoCase(args[2], "sync") || EqualsNoCase(args[2], "async")));
}

void ReplyHelpLines(ReplyWriter* w, std::span<const char* const> lines) {
  w->Array(lines.size());
  for (const char* l : lines) w->Simple(l);
}

std::span<const CommandSpec> FunctionSubcommands() { return kFunctionSubcommands; }

bool OpenFunctionLibraries(const std::string& data_file, bool fresh_data_file, std::string* error) {
  const std::string path = data_file + ".functions";
  if (fresh_data_file && unlink(path.c_str()) == 0) {
    LogNotice("New data file: removed the function libraries of the old one (" + path + ")");
  }
  if (!FunctionRegistry::Get().Open(path, error)) return false;
  const size_t n = FunctionRegistry::Get().library_count();
  if (n != 0) LogNotice("Loaded " + std::to_string(n) + " function libraries from " + path);
  return true;
}

}  // namespace lavik
