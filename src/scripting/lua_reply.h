// The conversions between Redis replies and Lua values, as Redis 7.0's scripting does them.
//
// RESP → Lua (what redis.call returns): integer → number, bulk → string, null bulk / null array
// → false, array → table, status → {ok=s}, error → {err="CODE msg"}; RESP3 (redis.setresp(3)):
// map → {map={k=v}}, set → {set={m=true}}, double → {double=d}, boolean → boolean, null → nil,
// big number → {big_number=s}, verbatim → {verbatim_string={string=s, format=f}}.
//
// Lua → RESP (what the script returns): string → bulk, number → integer (truncated), boolean →
// :1 / null (RESP2 script) or #t/#f (RESP3), table → {err=}/{ok=}/{double=}/{big_number=}/
// {verbatim_string=}/{map=}/{set=} or an array that stops at the first nil, anything else →
// null.
//
// Thread safety: none; the lua_State's thread only.
#pragma once

#include <string_view>

#include "protocol/reply_writer.h"

struct lua_State;

namespace lavik {

// Pushes the value of the one complete reply `resp` onto L's stack.
void PushRespAsLua(lua_State* L, std::string_view resp);

// Pushes {err="CODE msg"}: "-CODE msg" keeps its code, text without '-' gets "ERR ".
void PushLuaError(lua_State* L, std::string_view text);

// Writes the value on top of L's stack (and pops it) as a reply. `script_resp` is the
// protocol the script chose with redis.setresp (booleans depend on it).
void WriteLuaAsReply(lua_State* L, ReplyWriter* w, int script_resp);

}  // namespace lavik
