#include "scripting/lua_struct.h"

#include <cctype>
#include <cstdint>
#include <cstring>
#include <lua.hpp>
#include <utility>

namespace lavik {

namespace {

constexpr int kMaxIntSize = 32;
constexpr size_t kNativeAlign = alignof(max_align_t) < 8 ? alignof(max_align_t) : 8;

struct Header {
  bool little = true;  // x86-64 is little-endian
  size_t align = 1;
};

size_t ReadNumber(const char** fmt, size_t dflt) {
  if (!std::isdigit(static_cast<unsigned char>(**fmt))) return dflt;
  size_t n = 0;
  while (std::isdigit(static_cast<unsigned char>(**fmt))) n = n * 10 + (*(*fmt)++ - '0');
  return n;
}

// The size of option `opt` (reading its count from *fmt); raises on a bad integer size.
size_t OptionSize(lua_State* L, char opt, const char** fmt) {
  switch (opt) {
    case 'B':
    case 'b':
    case 'x':
      return 1;
    case 'H':
    case 'h':
      return sizeof(short);
    case 'L':
    case 'l':
      return sizeof(long);
    case 'T':
      return sizeof(size_t);
    case 'f':
      return sizeof(float);
    case 'd':
      return sizeof(double);
    case 'c':
      return ReadNumber(fmt, 1);
    case 'i':
    case 'I': {
      const size_t n = ReadNumber(fmt, sizeof(int));
      if (n > kMaxIntSize) {
        luaL_error(L, "integral size %d is larger than limit of %d", static_cast<int>(n),
                   kMaxIntSize);
      }
      return n;
    }
    default:
      return 0;
  }
}

size_t Padding(size_t len, const Header& h, char opt, size_t size) {
  if (size == 0 || opt == 'c') return 0;
  if (size > h.align) size = h.align;
  return (size - (len & (size - 1))) & (size - 1);
}

// Endianness and alignment options; raises on an unknown option.
void Control(lua_State* L, char opt, const char** fmt, Header* h) {
  switch (opt) {
    case ' ':
      return;
    case '>':
      h->little = false;
      return;
    case '<':
    case '=':
      h->little = true;
      return;
    case '!': {
      const size_t a = ReadNumber(fmt, kNativeAlign);
      if (a == 0 || (a & (a - 1)) != 0) luaL_error(L, "alignment %d is not a power of 2", a);
      h->align = a;
      return;
    }
    default:
      luaL_argerror(L, 1, lua_pushfstring(L, "invalid format option '%c'", opt));
  }
}

bool IsData(char opt) { return std::strchr("bBhHlLTiIfdxcs", opt) != nullptr; }

// Applies the control options up to the next data option; false at the end of the format.
bool NextOption(lua_State* L, const char** fmt, Header* h, char* opt, size_t* size) {
  while (**fmt != '\0') {
    *opt = *(*fmt)++;
    if (IsData(*opt)) {
      *size = OptionSize(L, *opt, fmt);
      return true;
    }
    Control(L, *opt, fmt, h);
  }
  return false;
}

void PutInteger(luaL_Buffer* b, lua_Number n, bool little, size_t size) {
  uint64_t v = n < 0 ? static_cast<uint64_t>(static_cast<int64_t>(n)) : static_cast<uint64_t>(n);
  char buf[kMaxIntSize];
  for (size_t i = 0; i < size; ++i) {
    buf[little ? i : size - 1 - i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
  luaL_addlstring(b, buf, size);
}

lua_Number GetInteger(const char* p, bool little, bool is_signed, size_t size) {
  uint64_t v = 0;
  for (size_t i = 0; i < size; ++i) {
    v = (v << 8) | static_cast<unsigned char>(p[little ? size - 1 - i : i]);
  }
  if (!is_signed || size >= 8) {
    return is_signed ? static_cast<lua_Number>(static_cast<int64_t>(v))
                     : static_cast<lua_Number>(v);
  }
  const uint64_t mask = ~uint64_t{0} << (size * 8 - 1);
  if (v & mask) v |= mask;
  return static_cast<lua_Number>(static_cast<int64_t>(v));
}

// Copies a float's bytes in the record's byte order.
void PutBytes(luaL_Buffer* b, const void* p, size_t size, bool little) {
  char buf[sizeof(double)];
  std::memcpy(buf, p, size);
  if (!little) {
    for (size_t i = 0; i < size / 2; ++i) std::swap(buf[i], buf[size - 1 - i]);
  }
  luaL_addlstring(b, buf, size);
}

void GetBytes(void* out, const char* p, size_t size, bool little) {
  char buf[sizeof(double)];
  std::memcpy(buf, p, size);
  if (!little) {
    for (size_t i = 0; i < size / 2; ++i) std::swap(buf[i], buf[size - 1 - i]);
  }
  std::memcpy(out, buf, size);
}

int Pack(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  Header h;
  int arg = 2;
  size_t total = 0;
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  char opt;
  size_t size;
  while (NextOption(L, &fmt, &h, &opt, &size)) {
    for (size_t pad = Padding(total, h, opt, size); pad > 0; --pad, ++total) {
      luaL_addchar(&b, '\0');
    }
    switch (opt) {
      case 'x':
        luaL_addchar(&b, '\0');
        break;
      case 'f': {
        const float f = static_cast<float>(luaL_checknumber(L, arg++));
        PutBytes(&b, &f, size, h.little);
        break;
      }
      case 'd': {
        const double d = luaL_checknumber(L, arg++);
        PutBytes(&b, &d, size, h.little);
        break;
      }
      case 'c':
      case 's': {
        size_t len = 0;
        const char* s = luaL_checklstring(L, arg, &len);
        if (opt == 's') {  // the bytes and a NUL, as given (embedded NULs included)
          size = len + 1;
          luaL_addlstring(&b, s, size);
        } else {
          if (size == 0) size = len;
          // Redis's struct names the argument after the string here; so do we.
          luaL_argcheck(L, len >= size, arg + 1, "string too short");
          luaL_addlstring(&b, s, size);
        }
        ++arg;
        break;
      }
      default:
        PutInteger(&b, luaL_checknumber(L, arg++), h.little, size);
    }
    total += size;
  }
  luaL_pushresult(&b);
  return 1;
}

int Unpack(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  size_t len = 0;
  const char* data = luaL_checklstring(L, 2, &len);
  size_t pos = static_cast<size_t>(luaL_optinteger(L, 3, 1)) - 1;
  Header h;
  int n = 0;
  char opt;
  size_t size;
  while (NextOption(L, &fmt, &h, &opt, &size)) {
    pos += Padding(pos, h, opt, size);
    luaL_argcheck(L, pos + size <= len, 2, "data string too short");
    luaL_checkstack(L, 2, "too many results");
    switch (opt) {
      case 'x':
        break;
      case 'f': {
        float f;
        GetBytes(&f, data + pos, size, h.little);
        lua_pushnumber(L, f);
        ++n;
        break;
      }
      case 'd': {
        double d;
        GetBytes(&d, data + pos, size, h.little);
        lua_pushnumber(L, d);
        ++n;
        break;
      }
      case 'c':
        if (size == 0) {
          if (n == 0 || !lua_isnumber(L, -1)) luaL_error(L, "format 'c0' needs a previous size");
          size = static_cast<size_t>(lua_tonumber(L, -1));
          lua_pop(L, 1);
          --n;
          luaL_argcheck(L, pos + size <= len, 2, "data string too short");
        }
        lua_pushlstring(L, data + pos, size);
        ++n;
        break;
      case 's': {
        const void* end = std::memchr(data + pos, '\0', len - pos);
        if (end == nullptr) luaL_error(L, "unfinished string in data");
        size = static_cast<const char*>(end) - (data + pos) + 1;
        lua_pushlstring(L, data + pos, size - 1);
        ++n;
        break;
      }
      default:
        lua_pushnumber(L, GetInteger(data + pos, h.little, std::islower(opt), size));
        ++n;
    }
    pos += size;
  }
  lua_pushinteger(L, static_cast<lua_Integer>(pos + 1));
  return n + 1;
}

int Size(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  Header h;
  size_t total = 0;
  char opt;
  size_t size;
  while (NextOption(L, &fmt, &h, &opt, &size)) {
    if (opt == 's') luaL_argerror(L, 1, "option 's' has no fixed size");
    if (opt == 'c' && size == 0) luaL_argerror(L, 1, "option 'c0' has no fixed size");
    total += Padding(total, h, opt, size) + size;
  }
  lua_pushinteger(L, static_cast<lua_Integer>(total));
  return 1;
}

}  // namespace

int OpenStructLibrary(lua_State* L) {
  static const luaL_Reg kFunctions[] = {
      {"pack", Pack}, {"unpack", Unpack}, {"size", Size}, {nullptr, nullptr}};
  lua_newtable(L);
  luaL_register(L, nullptr, kFunctions);
  return 1;
}

}  // namespace lavik
