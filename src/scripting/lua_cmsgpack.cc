#include "scripting/lua_cmsgpack.h"

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <lua.hpp>
#include <string>

namespace lavik {

namespace {

constexpr int kMaxNesting = 16;

void PutBigEndian(std::string* out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void EncodeHeader(std::string* out, uint8_t tag, uint64_t v, int bytes) {
  out->push_back(static_cast<char>(tag));
  PutBigEndian(out, v, bytes);
}

void EncodeInteger(std::string* out, int64_t n) {
  if (n >= 0) {
    if (n <= 127) {
      out->push_back(static_cast<char>(n));
    } else if (n <= 0xff) {
      EncodeHeader(out, 0xcc, n, 1);
    } else if (n <= 0xffff) {
      EncodeHeader(out, 0xcd, n, 2);
    } else if (n <= 0xffffffffLL) {
      EncodeHeader(out, 0xce, n, 4);
    } else {
      EncodeHeader(out, 0xcf, n, 8);
    }
  } else if (n >= -32) {
    out->push_back(static_cast<char>(n));  // negative fixint
  } else if (n >= -128) {
    EncodeHeader(out, 0xd0, static_cast<uint64_t>(n), 1);
  } else if (n >= -32768) {
    EncodeHeader(out, 0xd1, static_cast<uint64_t>(n), 2);
  } else if (n >= INT32_MIN) {
    EncodeHeader(out, 0xd2, static_cast<uint64_t>(n), 4);
  } else {
    EncodeHeader(out, 0xd3, static_cast<uint64_t>(n), 8);
  }
}

void EncodeNumber(std::string* out, lua_Number d) {
  if (!std::isinf(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0 &&
      static_cast<lua_Number>(static_cast<int64_t>(d)) == d) {
    EncodeInteger(out, static_cast<int64_t>(d));
    return;
  }
  const float f = static_cast<float>(d);
  if (static_cast<double>(f) == d) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    EncodeHeader(out, 0xca, bits, 4);
  } else {
    uint64_t bits;
    std::memcpy(&bits, &d, 8);
    EncodeHeader(out, 0xcb, bits, 8);
  }
}

void EncodeString(std::string* out, const char* s, size_t n) {
  if (n < 32) {
    out->push_back(static_cast<char>(0xa0 | n));
  } else if (n <= 0xff) {
    EncodeHeader(out, 0xd9, n, 1);
  } else if (n <= 0xffff) {
    EncodeHeader(out, 0xda, n, 2);
  } else {
    EncodeHeader(out, 0xdb, n, 4);
  }
  out->append(s, n);
}

// True if the table at the top has exactly the keys 1..n (an empty table included).
bool IsArray(lua_State* L) {
  const int top = lua_gettop(L);
  lua_Number max = 0;
  lua_Number count = 0;
  lua_pushnil(L);
  while (lua_next(L, -2) != 0) {
    lua_pop(L, 1);
    const lua_Number k = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : 0;
    if (k <= 0 || std::floor(k) != k) {
      lua_settop(L, top);
      return false;
    }
    if (k > max) max = k;
    ++count;
  }
  lua_settop(L, top);
  return max == count;
}

void EncodeValue(lua_State* L, std::string* out, int level);

void EncodeTable(lua_State* L, std::string* out, int level) {
  lua_checkstack(L, 4);
  if (IsArray(L)) {
    const size_t n = lua_objlen(L, -1);
    if (n <= 15) {
      out->push_back(static_cast<char>(0x90 | n));
    } else if (n <= 0xffff) {
      EncodeHeader(out, 0xdc, n, 2);
    } else {
      EncodeHeader(out, 0xdd, n, 4);
    }
    for (size_t i = 1; i <= n; ++i) {
      lua_rawgeti(L, -1, static_cast<int>(i));
      EncodeValue(L, out, level + 1);
    }
    return;
  }
  size_t n = 0;
  lua_pushnil(L);
  while (lua_next(L, -2) != 0) {
    lua_pop(L, 1);
    ++n;
  }
  if (n <= 15) {
    out->push_back(static_cast<char>(0x80 | n));
  } else if (n <= 0xffff) {
    EncodeHeader(out, 0xde, n, 2);
  } else {
    EncodeHeader(out, 0xdf, n, 4);
  }
  lua_pushnil(L);
  while (lua_next(L, -2) != 0) {
    lua_pushvalue(L, -2);
    EncodeValue(L, out, level + 1);  // the key
    EncodeValue(L, out, level + 1);  // the value
  }
}

// Encodes the value at the top and pops it.
void EncodeValue(lua_State* L, std::string* out, int level) {
  int type = lua_type(L, -1);
  if (type == LUA_TTABLE && level == kMaxNesting) type = LUA_TNIL;
  switch (type) {
    case LUA_TSTRING: {
      size_t n = 0;
      const char* s = lua_tolstring(L, -1, &n);
      EncodeString(out, s, n);
      break;
    }
    case LUA_TBOOLEAN:
      out->push_back(static_cast<char>(lua_toboolean(L, -1) ? 0xc3 : 0xc2));
      break;
    case LUA_TNUMBER:
      EncodeNumber(out, lua_tonumber(L, -1));
      break;
    case LUA_TTABLE:
      EncodeTable(L, out, level);
      break;
    default:
      out->push_back(static_cast<char>(0xc0));
  }
  lua_pop(L, 1);
}

int Pack(lua_State* L) {
  const int argc = lua_gettop(L);
  if (argc == 0) return luaL_argerror(L, 0, "MessagePack pack needs input.");
  std::string* out = new std::string();  // freed below; nothing raises while it is held
  for (int i = 1; i <= argc; ++i) {
    lua_pushvalue(L, i);
    EncodeValue(L, out, 0);
  }
  lua_pushlstring(L, out->data(), out->size());
  delete out;
  return 1;
}

// --- decoding ---

enum class DecodeError { kNone, kEof, kBadFormat };

struct Cursor {
  const unsigned char* p;
  size_t left;
  DecodeError error = DecodeError::kNone;

  bool Need(size_t n) {
    if (left >= n) return true;
    error = DecodeError::kEof;
    return false;
  }
  uint64_t Take(int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v = (v << 8) | p[i];
    p += bytes;
    left -= bytes;
    return v;
  }
};

void DecodeValue(lua_State* L, Cursor* c);

void DecodeString(lua_State* L, Cursor* c, size_t n) {
  if (!c->Need(n)) return;
  lua_pushlstring(L, reinterpret_cast<const char*>(c->p), n);
  c->p += n;
  c->left -= n;
}

void DecodeArray(lua_State* L, Cursor* c, size_t n) {
  lua_checkstack(L, 2);
  lua_newtable(L);
  for (size_t i = 1; i <= n && c->error == DecodeError::kNone; ++i) {
    lua_pushnumber(L, static_cast<lua_Number>(i));
    DecodeValue(L, c);
    if (c->error != DecodeError::kNone) return;
    lua_settable(L, -3);
  }
}

void DecodeMap(lua_State* L, Cursor* c, size_t n) {
  lua_checkstack(L, 3);
  lua_newtable(L);
  for (size_t i = 0; i < n && c->error == DecodeError::kNone; ++i) {
    DecodeValue(L, c);
    if (c->error != DecodeError::kNone) return;
    DecodeValue(L, c);
    if (c->error != DecodeError::kNone) return;
    lua_settable(L, -3);
  }
}

// Pushes one decoded value (or sets c->error; what was pushed is then dropped by the caller).
void DecodeValue(lua_State* L, Cursor* c) {
  if (!c->Need(1)) return;
  lua_checkstack(L, 1);
  const unsigned char tag = static_cast<unsigned char>(c->Take(1));
  if (tag <= 0x7f) return lua_pushnumber(L, tag);
  if (tag >= 0xe0) return lua_pushnumber(L, static_cast<int8_t>(tag));
  if ((tag & 0xe0) == 0xa0) return DecodeString(L, c, tag & 0x1f);
  if ((tag & 0xf0) == 0x90) return DecodeArray(L, c, tag & 0x0f);
  if ((tag & 0xf0) == 0x80) return DecodeMap(L, c, tag & 0x0f);
  static constexpr int kWidth[] = {1, 2, 4, 8};
  switch (tag) {
    case 0xc0:
      return lua_pushnil(L);
    case 0xc2:
    case 0xc3:
      return lua_pushboolean(L, tag == 0xc3);
    case 0xca:
    case 0xcb: {
      const int bytes = tag == 0xca ? 4 : 8;
      if (!c->Need(bytes)) return;
      const uint64_t bits = c->Take(bytes);
      if (bytes == 4) {
        float f;
        const uint32_t b32 = static_cast<uint32_t>(bits);
        std::memcpy(&f, &b32, 4);
        return lua_pushnumber(L, f);
      }
      double d;
      std::memcpy(&d, &bits, 8);
      return lua_pushnumber(L, d);
    }
    case 0xcc:
    case 0xcd:
    case 0xce:
    case 0xcf: {
      const int bytes = kWidth[tag - 0xcc];
      if (!c->Need(bytes)) return;
      return lua_pushnumber(L, static_cast<lua_Number>(c->Take(bytes)));
    }
    case 0xd0:
    case 0xd1:
    case 0xd2:
    case 0xd3: {
      const int bytes = kWidth[tag - 0xd0];
      if (!c->Need(bytes)) return;
      uint64_t v = c->Take(bytes);
      if (bytes < 8 && (v >> (8 * bytes - 1)) != 0) v |= ~uint64_t{0} << (8 * bytes);
      return lua_pushnumber(L, static_cast<lua_Number>(static_cast<int64_t>(v)));
    }
    case 0xc4:  // bin 8/16/32 come back as strings
    case 0xc5:
    case 0xc6:
    case 0xd9:
    case 0xda:
    case 0xdb: {
      const int bytes = tag <= 0xc6 ? kWidth[tag - 0xc4] : kWidth[tag - 0xd9];
      if (!c->Need(bytes)) return;
      return DecodeString(L, c, c->Take(bytes));
    }
    case 0xdc:
    case 0xdd:
    case 0xde:
    case 0xdf: {
      const int bytes = (tag == 0xdc || tag == 0xde) ? 2 : 4;
      if (!c->Need(bytes)) return;
      const size_t n = c->Take(bytes);
      return tag <= 0xdd ? DecodeArray(L, c, n) : DecodeMap(L, c, n);
    }
    default:
      c->error = DecodeError::kBadFormat;
  }
}

// unpack / unpack_one / unpack_limit: decodes up to `limit` values from `offset`.
int UnpackFull(lua_State* L, int limit, int offset) {
  size_t len = 0;
  const char* s = luaL_checklstring(L, 1, &len);
  const bool all = limit == 0;
  if (offset < 0 || limit < 0) {
    return luaL_error(L, "Invalid request to unpack with offset of %d and limit of %d.", offset,
                      static_cast<int>(len));
  }
  if (static_cast<size_t>(offset) > len) {
    return luaL_error(L, "Start offset %d greater than input length %d.", offset,
                      static_cast<int>(len));
  }
  if (all) limit = INT_MAX;
  Cursor c{reinterpret_cast<const unsigned char*>(s) + offset, len - offset};
  const int base = lua_gettop(L);
  int count = 0;
  for (; c.left > 0 && count < limit; ++count) {
    DecodeValue(L, &c);
    if (c.error == DecodeError::kEof) {
      lua_settop(L, base);
      return luaL_error(L, "Missing bytes in input.");
    }
    if (c.error == DecodeError::kBadFormat) {
      lua_settop(L, base);
      return luaL_error(L, "Bad data format in input.");
    }
  }
  if (!all) {
    const int next = c.left == 0 ? -1 : static_cast<int>(len - c.left);
    lua_pushinteger(L, next);
    lua_insert(L, -(count + 1));
    ++count;
  }
  return count;
}

int Unpack(lua_State* L) { return UnpackFull(L, 0, 0); }
int UnpackOne(lua_State* L) { return UnpackFull(L, 1, static_cast<int>(luaL_optinteger(L, 2, 0))); }
int UnpackLimit(lua_State* L) {
  return UnpackFull(L, static_cast<int>(luaL_checkinteger(L, 2)),
                    static_cast<int>(luaL_optinteger(L, 3, 0)));
}

}  // namespace

int OpenCmsgpackLibrary(lua_State* L) {
  static const luaL_Reg kFunctions[] = {{"pack", Pack},
                                        {"unpack", Unpack},
                                        {"unpack_one", UnpackOne},
                                        {"unpack_limit", UnpackLimit},
                                        {nullptr, nullptr}};
  lua_newtable(L);
  luaL_register(L, nullptr, kFunctions);
  lua_pushstring(L, "cmsgpack");
  lua_setfield(L, -2, "_NAME");
  lua_pushstring(L, "lua-cmsgpack 0.4.0");
  lua_setfield(L, -2, "_VERSION");
  lua_pushstring(L, "Copyright (C) 2012, Salvatore Sanfilippo");
  lua_setfield(L, -2, "_COPYRIGHT");
  lua_pushstring(L, "MessagePack C implementation for Lua");
  lua_setfield(L, -2, "_DESCRIPTION");
  return 1;
}

}  // namespace lavik
