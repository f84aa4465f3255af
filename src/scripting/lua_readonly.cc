#include "scripting/lua_readonly.h"

#include <lua.hpp>

#include "scripting/lua_sandbox.h"

namespace lavik {

namespace {

constexpr char kReadOnlyError[] = "Attempt to modify a readonly table";
constexpr const char* kLibraries[] = {"string", "math",   "table",    "cjson",
                                      "bit",    "struct", "cmsgpack", "coroutine"};

// Upvalue 1 of every wrapper: proxy → real table. Upvalue 2: the wrapped built-in.
int Proxies() { return lua_upvalueindex(1); }
int Original() { return lua_upvalueindex(2); }

// If the value at `idx` is a proxy, replaces it with its real table and returns true.
bool Unproxy(lua_State* L, int idx) {
  if (!lua_istable(L, idx)) return false;
  lua_pushvalue(L, idx);
  lua_rawget(L, Proxies());
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return false;
  }
  lua_replace(L, idx);
  return true;
}

int RaiseReadOnly(lua_State* L) {
  lua_pushstring(L, kReadOnlyError);  // no position, as Redis's C-level check
  return lua_error(L);
}

// Calls the original with the arguments as they are now on the stack.
int CallOriginal(lua_State* L) {
  lua_pushvalue(L, Original());
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

// rawset, setmetatable, table.insert/remove/sort: refused on a proxy.
int RefuseOnProxy(lua_State* L) {
  if (lua_gettop(L) >= 1 && Unproxy(L, 1)) return RaiseReadOnly(L);
  return CallOriginal(L);
}

// rawget, pairs, next: on a proxy they see the real table.
int SeeThrough(lua_State* L) {
  if (lua_gettop(L) >= 1) Unproxy(L, 1);
  return CallOriginal(L);
}

// getmetatable (upvalue 3: a table → what getmetatable shows for it, false for nothing): a proxy
// shows its recorded view, a value whose metatable has a view shows that view.
int ShownMetatable(lua_State* L) {
  luaL_checkany(L, 1);
  lua_settop(L, 1);
  const int shown = lua_upvalueindex(3);
  lua_pushvalue(L, 1);
  lua_rawget(L, shown);
  if (!lua_isnil(L, -1)) {
    if (!lua_toboolean(L, -1)) lua_pushnil(L);
    return 1;
  }
  lua_pop(L, 1);
  CallOriginal(L);  // [metatable or its __metatable field]
  lua_settop(L, 1);
  lua_pushvalue(L, 1);
  lua_rawget(L, shown);
  if (lua_istable(L, -1)) return 1;
  lua_pop(L, 1);
  return 1;
}

// Replaces the table at the top of the stack by its proxy, recorded in `proxies`.
void Protect(lua_State* L, int proxies) {
  PushReadOnlyProxy(L, -1);  // [real, proxy]
  lua_pushvalue(L, -1);
  lua_pushvalue(L, -3);
  lua_rawset(L, proxies);
  lua_remove(L, -2);
}

void Wrap(lua_State* L, int table, const char* name, lua_CFunction wrapper, int proxies) {
  lua_pushvalue(L, proxies);
  lua_getfield(L, table, name);
  lua_pushcclosure(L, wrapper, 2);
  lua_setfield(L, table, name);
}

}  // namespace

void ProtectGlobals(lua_State* L) {
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  const int globals = lua_gettop(L);
  lua_newtable(L);
  const int proxies = lua_gettop(L);
  lua_newtable(L);
  const int shown = lua_gettop(L);  // getmetatable's answers

  lua_getfield(L, globals, "table");
  for (const char* name : {"insert", "remove", "sort"}) {
    Wrap(L, lua_gettop(L), name, RefuseOnProxy, proxies);
  }
  lua_pop(L, 1);
  for (const char* name : kLibraries) {
    lua_getfield(L, globals, name);
    if (!lua_istable(L, -1)) {
      lua_pop(L, 1);
      continue;
    }
    Protect(L, proxies);
    lua_pushvalue(L, -1);
    lua_pushboolean(L, 0);
    lua_rawset(L, shown);  // a library shows no metatable
    lua_setfield(L, globals, name);
  }
  lua_getfield(L, globals, "redis");  // already a proxy (lua_engine.cc): record it
  lua_getfield(L, LUA_REGISTRYINDEX, "lavik_redis");
  lua_rawset(L, proxies);
  lua_getfield(L, globals, "redis");
  lua_pushboolean(L, 0);
  lua_rawset(L, shown);

  lua_pushstring(L, "");  // strings index the `string` proxy; their metatable shows read-only
  lua_getmetatable(L, -1);
  lua_getfield(L, globals, "string");
  lua_setfield(L, -2, "__index");
  lua_pushvalue(L, -1);
  Protect(L, proxies);
  lua_rawset(L, shown);
  lua_pop(L, 1);

  for (const char* name : {"rawset", "setmetatable"})
    Wrap(L, globals, name, RefuseOnProxy, proxies);
  for (const char* name : {"rawget", "pairs", "next"}) Wrap(L, globals, name, SeeThrough, proxies);
  lua_pushvalue(L, proxies);
  lua_getfield(L, globals, "getmetatable");
  lua_pushvalue(L, shown);
  lua_pushcclosure(L, ShownMetatable, 3);
  lua_setfield(L, globals, "getmetatable");

  lua_pushvalue(L, globals);  // the globals: a proxy whose metatable shows read-only
  Protect(L, proxies);        // [G, proxies, shown, P]
  lua_getmetatable(L, globals);
  Protect(L, proxies);
  lua_pushvalue(L, -2);
  lua_insert(L, -2);
  lua_rawset(L, shown);
  lua_pushvalue(L, -1);
  lua_setfield(L, globals, "_G");
  lua_replace(L, LUA_GLOBALSINDEX);  // scripts compiled from now on see P
  lua_pop(L, 2);                     // [G]
}

}  // namespace lavik
