// The `struct` Lua library Redis bundles (pack/unpack/size of binary records), written for
// Lavik with the same format language and results: endianness `<` `>` `=`, alignment `!n`,
// `b B h H l L T i[n] I[n]` integers, `f` `d` floats, `x` padding, `c[n]` fixed strings (`c0`:
// the whole string / the length read just before), `s` zero-terminated strings.
//
// Thread safety: none; the lua_State's thread only.
#pragma once

struct lua_State;

namespace lavik {

// Pushes the `struct` table (call it through lua_call with no arguments).
int OpenStructLibrary(lua_State* L);

}  // namespace lavik
