// The `cmsgpack` Lua library Redis bundles, written for Lavik with the same encoding choices:
// pack(v...) concatenates one MessagePack value per argument — integers in the smallest
// integer format, other numbers as float32 when exact and float64 otherwise, strings as
// fixstr/str8/str16/str32, tables as arrays when their keys are exactly 1..n (maps otherwise),
// nesting past 16 levels and non-data values as nil — and unpack(s), unpack_one(s [, offset]),
// unpack_limit(s, limit [, offset]) decode them, with Redis's error texts.
//
// Thread safety: none; the lua_State's thread only.
#pragma once

struct lua_State;

namespace lavik {

// Pushes the `cmsgpack` table (call it through lua_call with no arguments).
int OpenCmsgpackLibrary(lua_State* L);

}  // namespace lavik
