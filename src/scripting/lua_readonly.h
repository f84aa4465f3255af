// Redis 7.0's read-only sandbox tables on stock Lua 5.1: the globals, `redis` and every library
// table (string, math, table, cjson, bit, struct, cmsgpack, coroutine) are replaced by proxies
// whose writes raise "Attempt to modify a readonly table" (Redis patches its Lua instead).
//
// A proxy is an empty table whose metatable reads through to the real table. The built-ins that
// see through metatables are wrapped so that they behave on a proxy as on Redis's read-only
// table: rawset, setmetatable and table.insert/remove/sort raise; rawget, pairs and next read the
// real table; getmetatable shows nil for a library, a read-only view for the globals and for
// strings. The string metatable's __index is the `string` proxy, so getmetatable('').__index is
// `string` as in Redis.
//
// Thread safety: none; the lua_State's thread only.
#pragma once

struct lua_State;

namespace lavik {

// Call once the state's libraries and `redis` are in its globals and the globals have their
// missing-variable metatable. Leaves the real globals table on the stack, and makes the proxy
// of it the state's globals (LUA_GLOBALSINDEX) for code compiled from now on.
void ProtectGlobals(lua_State* L);

}  // namespace lavik
