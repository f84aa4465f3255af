// FUNCTION LOAD's side of Lua: redis.register_function, running a library's code in its load
// environment, and FCALL's run of a registered function (LuaEngine::RunFunction).
#include <cctype>
#include <cstring>
#include <string>
#include <vector>

#include "protocol/errors.h"
#include "scripting/function_registry.h"
#include "scripting/lua_engine.h"
#include "scripting/lua_sandbox.h"

namespace lavik {

namespace {

// Where redis.register_function puts what it registers while a library loads.
struct LoadCollector {
  std::vector<FunctionInfo>* functions;
  bool keep_callbacks = false;  // into the registry's "lavik_functions" table, by name
};
thread_local LoadCollector* collector = nullptr;

constexpr const char* kFunctionFlags[] = {"no-writes", "allow-oom", "allow-stale", "no-cluster",
                                          "allow-cross-slot-keys"};

bool ValidName(const char* s, size_t n) {
  if (n == 0) return false;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = s[i];
    if (!(std::isalnum(c) || c == '_')) return false;
  }
  return true;
}

// The named-argument form: records the stack index of each field's value (left on the stack).
const char* ReadNamedArguments(lua_State* L, int* name, int* callback, int* flags, int* desc) {
  lua_pushnil(L);
  while (lua_next(L, 1) != 0) {
    const char* key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "";
    int* slot = std::strcmp(key, "function_name") == 0 ? name
                : std::strcmp(key, "callback") == 0    ? callback
                : std::strcmp(key, "flags") == 0       ? flags
                : std::strcmp(key, "description") == 0 ? desc
                                                       : nullptr;
    if (slot == nullptr) return "unknown argument given to redis.register_function";
    *slot = lua_gettop(L);  // the value stays where it is
    lua_checkstack(L, 2);
    lua_pushvalue(L, -2);  // the key, for lua_next
  }
  if (*name == 0) return "redis.register_function must get a function name argument";
  if (*callback == 0) return "redis.register_function must get a callback argument";
  if (lua_type(L, *callback) != LUA_TFUNCTION) {
    return "callback argument given to redis.register_function must be a function";
  }
  return nullptr;
}

// Checks the call and registers the function; returns the error text (a constant) or null.
// Builds the C++ record only once nothing can fail, so the caller may raise afterwards.
const char* Register(lua_State* L) {
  if (collector == nullptr) {
    return "redis.register_function can only be called on FUNCTION LOAD command";
  }
  int name = 0, callback = 0, flags = 0, desc = 0;
  const int argc = lua_gettop(L);
  if (argc == 1) {
    if (!lua_istable(L, 1)) {
      return "calling redis.register_function with a single argument is only applicable to Lua "
             "table (representing named arguments).";
    }
    if (const char* e = ReadNamedArguments(L, &name, &callback, &flags, &desc)) return e;
  } else if (argc == 2) {
    name = 1;
    callback = 2;
    if (!lua_isstring(L, 1)) return "first argument to redis.register_function must be a string";
    if (lua_type(L, 2) != LUA_TFUNCTION) {
      return "second argument to redis.register_function must be a function";
    }
  } else {
    return "wrong number of arguments to redis.register_function";
  }
  if (!lua_isstring(L, name)) {
    return "function_name argument given to redis.register_function must be a string";
  }
  if (desc != 0 && !lua_isstring(L, desc)) {
    return "description argument given to redis.register_function must be a string";
  }
  bool no_writes = false, allow_oom = false;
  const int nflags = flags == 0 ? 0 : static_cast<int>(lua_objlen(L, flags));
  if (flags != 0 && !lua_istable(L, flags)) {
    return "flags argument to redis.register_function must be a table representing function "
           "flags";
  }
  for (int i = 1; i <= nflags; ++i) {
    lua_rawgeti(L, flags, i);
    const char* f = lua_isstring(L, -1) ? lua_tostring(L, -1) : "";
    bool known = false;
    for (const char* k : kFunctionFlags) known = known || std::strcmp(f, k) == 0;
    no_writes = no_writes || std::strcmp(f, "no-writes") == 0;
    allow_oom = allow_oom || std::strcmp(f, "allow-oom") == 0;
    lua_pop(L, 1);
    if (!known) return "unknown flag given";
  }
  size_t n = 0;
  const char* fname = lua_tolstring(L, name, &n);
  if (!ValidName(fname, n)) {
    return "Library names can only contain letters, numbers, or underscores(_) and must be at "
           "least one character long";
  }
  for (const FunctionInfo& f : *collector->functions) {
    if (f.name.size() == n && std::memcmp(f.name.data(), fname, n) == 0) {
      return "Function already exists in the library";
    }
  }
  FunctionInfo& info = collector->functions->emplace_back();
  info.name.assign(fname, n);
  if (desc != 0) info.description = lua_tostring(L, desc);
  for (int i = 1; i <= nflags; ++i) {
    lua_rawgeti(L, flags, i);
    info.flags.emplace_back(lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  info.no_writes = no_writes;
  info.allow_oom = allow_oom;
  if (collector->keep_callbacks) {
    lua_getfield(L, LUA_REGISTRYINDEX, "lavik_functions");
    lua_pushvalue(L, callback);
    lua_setfield(L, -2, info.name.c_str());
    lua_pop(L, 1);
  }
  return nullptr;
}

int RegisterFunction(lua_State* L) {
  if (const char* error = Register(L)) PushErrorAndRaise(L, error);
  return 0;
}

// Runs a library's code in L: while it loads it sees only `redis` with register_function, log
// and the constants; afterwards (globals_ref != 0) its functions see the state's globals.
// Returns Redis's error text or "".
std::string LoadCode(lua_State* L, std::string_view code, LoadCollector* c, int globals_ref) {
  std::string text(code);
  if (text.starts_with("#!")) text.replace(0, 2, "--");  // keeps the line numbers
  if (luaL_loadbuffer(L, text.data(), text.size(), "@user_function") != 0) {
    std::string error = std::string("ERR Error compiling function: ") + lua_tostring(L, -1);
    lua_pop(L, 1);
    return error;
  }
  lua_newtable(L);  // the load-time `redis`
  SetFunction(L, "register_function", RegisterFunction);
  SetFunction(L, "log", RedisLog);
  SetRedisConstants(L);
  lua_newtable(L);
  lua_pushcfunction(L, MissingGlobal);  // redis.call at load time: "nonexistent global"
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
  PushReadOnlyProxy(L, -1);  // [chunk, redis, proxy]
  lua_remove(L, -2);
  lua_newtable(L);  // the load-time globals
  lua_insert(L, -2);
  lua_setfield(L, -2, "redis");
  lua_newtable(L);
  lua_pushcfunction(L, MissingGlobal);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
  PushReadOnlyProxy(L, -1);  // [chunk, load globals, env]
  lua_remove(L, -2);
  lua_pushvalue(L, -1);
  lua_setfenv(L, -3);
  lua_insert(L, -2);  // [env, chunk]
  collector = c;
  const int err = lua_pcall(L, 0, 0, 0);
  collector = nullptr;
  if (err != 0) {
    std::string msg = "ERR unknown error";
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "err");
      if (lua_isstring(L, -1)) msg = lua_tostring(L, -1);
      lua_pop(L, 1);
    } else if (lua_isstring(L, -1)) {
      msg = std::string("ERR ") + lua_tostring(L, -1);
    }
    lua_pop(L, 2);
    return "ERR Error registering functions: " + msg;
  }
  if (globals_ref != 0) {  // from now on the library's functions see the real globals
    lua_getmetatable(L, -1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, globals_ref);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return "";
}

}  // namespace

std::string ReadLibrary(std::string_view code, std::vector<FunctionInfo>* functions) {
  lua_State* L = luaL_newstate();
  LoadCollector c{functions, false};
  std::string error = LoadCode(L, code, &c, 0);
  lua_close(L);
  if (error.empty() && functions->empty()) error = "ERR No functions registered";
  return error;
}

void LuaEngine::RunFunction(ScriptRun& run, const std::string& library, const std::string& code) {
  if (generation_ != SourceGeneration()) Reset();
  lua_State* L = L_;
  lua_rawgeti(L, LUA_REGISTRYINDEX, handler_ref_);
  lua_getfield(L, LUA_REGISTRYINDEX, "lavik_functions");
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, "lavik_functions");
  }
  const int callbacks = lua_gettop(L);
  if (loaded_libraries_.emplace(library, true).second) {
    std::vector<FunctionInfo> functions;
    LoadCollector c{&functions, true};
    std::string error = LoadCode(L, code, &c, globals_ref_);
    if (!error.empty()) {
      run.ctx->reply->Error(error);
      lua_pop(L, 2);
      return;
    }
  }
  lua_getfield(L, callbacks, run.sha.c_str());
  lua_remove(L, callbacks);  // [handler, callback]
  if (!lua_isfunction(L, -1)) {
    run.ctx->reply->Error("ERR Function not found");
    lua_pop(L, 2);
    return;
  }
  PushStrings(L, run.keys);
  PushStrings(L, run.args);
  Call(run, 2);
}

}  // namespace lavik
