// The pieces of the Lua sandbox lua_engine.cc defines and function_load.cc reuses for the
// environment FUNCTION LOAD runs a library's code in.
//
// Thread safety: none; the lua_State's thread only.
#pragma once

#include <lua.hpp>
#include <span>
#include <string_view>

namespace lavik {
inline namespace sandbox {

// __index of the globals: "Script attempted to access nonexistent global variable 'x'".
int MissingGlobal(lua_State* L);
// __newindex of a read-only table: "Attempt to modify a readonly table".
int ReadOnlyTable(lua_State* L);
// Pushes a read-only proxy of the table at `idx` (reads go to it, writes raise).
void PushReadOnlyProxy(lua_State* L, int idx);
// Raises {err="ERR <text>"} (never returns).
void PushErrorAndRaise(lua_State* L, const char* text);
// redis.log.
int RedisLog(lua_State* L);
// t[name] = f / t[name] = v for the table at the top of the stack.
void SetFunction(lua_State* L, const char* name, lua_CFunction f);
void SetNumber(lua_State* L, const char* name, lua_Number v);
// Pushes a Lua array of the strings (KEYS, ARGV).
void PushStrings(lua_State* L, std::span<const std::string_view> v);
// redis.LOG_* and REDIS_VERSION(_NUM) into the table at the top of the stack.
void SetRedisConstants(lua_State* L);

}  // namespace sandbox
}  // namespace lavik
