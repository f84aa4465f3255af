#include "scripting/lua_reply.h"

#include <cstdint>
#include <cstdlib>
#include <lua.hpp>
#include <string>

namespace lavik {

namespace {

class RespToLua {
 public:
  RespToLua(lua_State* L, std::string_view in) : L_(L), in_(in) {}

  // Parses one value at pos_; pushes it unless `push` is false (attributes are skipped).
  void Value(bool push) {
    lua_checkstack(L_, 4);
    const char type = in_[pos_++];
    const std::string_view line = Line();
    switch (type) {
      case ':':
        if (push)
          lua_pushnumber(L_, static_cast<lua_Number>(std::strtoll(Cstr(line), nullptr, 10)));
        return;
      case '$':
      case '=': {
        const long long n = std::strtoll(Cstr(line), nullptr, 10);
        if (n < 0) {
          if (push) lua_pushboolean(L_, 0);
          return;
        }
        const std::string_view s = in_.substr(pos_, n);
        pos_ += n + 2;
        if (!push) return;
        if (type == '$') {
          lua_pushlstring(L_, s.data(), s.size());
          return;
        }
        lua_newtable(L_);
        lua_pushstring(L_, "verbatim_string");
        lua_newtable(L_);
        SetField("string", s.substr(s.size() >= 4 ? 4 : 0));
        SetField("format", s.substr(0, 3));
        lua_settable(L_, -3);
        return;
      }
      case '+':
        if (push) OneFieldTable("ok", line);
        return;
      case '-':
        if (push) PushLuaError(L_, std::string("-").append(line));
        return;
      case '(':
        if (push) OneFieldTable("big_number", line);
        return;
      case ',':
        if (push) {
          lua_newtable(L_);
          lua_pushstring(L_, "double");
          lua_pushnumber(L_, std::strtod(Cstr(line), nullptr));
          lua_settable(L_, -3);
        }
        return;
      case '#':
        if (push) lua_pushboolean(L_, line == "t");
        return;
      case '_':
        if (push) lua_pushnil(L_);
        return;
      case '*':
      case '>':
      case '~':
      case '%':
      case '|':
        Aggregate(type, std::strtoll(Cstr(line), nullptr, 10), push);
        return;
      default:
        if (push) lua_pushnil(L_);
    }
  }

 private:
  void Aggregate(char type, long long n, bool push) {
    if (type == '|') {  // attributes are not shown to scripts; the value follows
      for (long long i = 0; i < 2 * n; ++i) Value(false);
      Value(push);
      return;
    }
    if (n < 0) {
      if (push) lua_pushboolean(L_, 0);
      return;
    }
    if (push) {
      lua_newtable(L_);
      if (type == '%' || type == '~') {
        lua_pushstring(L_, type == '%' ? "map" : "set");
        lua_newtable(L_);
      }
    }
    for (long long i = 0; i < n; ++i) {
      if (type == '%') {
        Value(push);
        Value(push);
        if (push) lua_settable(L_, -3);
      } else if (type == '~') {
        Value(push);
        if (push) {
          lua_pushboolean(L_, 1);
          lua_settable(L_, -3);
        }
      } else {
        if (push) lua_pushnumber(L_, static_cast<lua_Number>(i + 1));
        Value(push);
        if (push) lua_settable(L_, -3);
      }
    }
    if (push && (type == '%' || type == '~')) lua_settable(L_, -3);
  }

  std::string_view Line() {
    const size_t end = in_.find("\r\n", pos_);
    std::string_view l = in_.substr(pos_, end - pos_);
    pos_ = end + 2;
    return l;
  }
  const char* Cstr(std::string_view s) {
    scratch_.assign(s);
    return scratch_.c_str();
  }
  void OneFieldTable(const char* field, std::string_view s) {
    lua_newtable(L_);
    SetField(field, s);
  }
  void SetField(const char* field, std::string_view s) {
    lua_pushstring(L_, field);
    lua_pushlstring(L_, s.data(), s.size());
    lua_settable(L_, -3);
  }

  lua_State* L_;
  std::string_view in_;
  size_t pos_ = 0;
  std::string scratch_;
};

// t[field] of the table at the top, pushed; returns its Lua type.
int RawField(lua_State* L, const char* field) {
  lua_pushstring(L, field);
  lua_rawget(L, -2);
  return lua_type(L, -1);
}

std::string NoNewlines(lua_State* L, int idx) {
  size_t n = 0;
  const char* p = lua_tolstring(L, idx, &n);
  std::string s(p, n);
  for (char& c : s) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  return s;
}

// A table that is none of the special forms: an array up to the first nil.
void WriteArray(lua_State* L, ReplyWriter* w, int script_resp) {
  std::string* out = w->output();
  std::string body;
  w->SetOutput(&body);
  size_t n = 0;
  for (;; ++n) {
    lua_pushnumber(L, static_cast<lua_Number>(n + 1));
    lua_rawget(L, -2);
    if (lua_type(L, -1) == LUA_TNIL) {
      lua_pop(L, 1);
      break;
    }
    WriteLuaAsReply(L, w, script_resp);
  }
  w->SetOutput(out);
  w->Array(n);
  w->Raw(body);
}

// {map=t} or {set=t}, with t on top of the stack.
void WriteMapOrSet(lua_State* L, ReplyWriter* w, int script_resp, bool map) {
  std::string* out = w->output();
  std::string body;
  w->SetOutput(&body);
  size_t n = 0;
  lua_pushnil(L);
  while (lua_next(L, -2) != 0) {
    if (map) {
      lua_pushvalue(L, -2);
      WriteLuaAsReply(L, w, script_resp);  // the key
      WriteLuaAsReply(L, w, script_resp);  // the value
    } else {
      lua_pop(L, 1);
      lua_pushvalue(L, -1);
      WriteLuaAsReply(L, w, script_resp);
    }
    ++n;
  }
  w->SetOutput(out);
  if (map) {
    w->Map(n);
  } else {
    w->Set(n);
  }
  w->Raw(body);
}

// The special one-field forms; true if the table (at -1) was one and has been written.
bool WriteSpecialTable(lua_State* L, ReplyWriter* w, int script_resp) {
  for (const bool error : {true, false}) {
    if (RawField(L, error ? "err" : "ok") == LUA_TSTRING) {
      std::string s = NoNewlines(L, -1);
      lua_pop(L, 1);
      if (error) {
        w->Error(s);
      } else {
        w->Simple(s);
      }
      return true;
    }
    lua_pop(L, 1);
  }
  if (RawField(L, "double") == LUA_TNUMBER) {
    w->Double(lua_tonumber(L, -1));
    lua_pop(L, 1);
    return true;
  }
  lua_pop(L, 1);
  if (RawField(L, "big_number") == LUA_TSTRING) {
    std::string s = NoNewlines(L, -1);
    lua_pop(L, 1);
    if (w->resp() == 3) {
      w->Raw("(" + s + "\r\n");
    } else {
      w->Bulk(s);
    }
    return true;
  }
  lua_pop(L, 1);
  if (RawField(L, "verbatim_string") == LUA_TTABLE) {
    const int vs = lua_gettop(L);
    lua_pushstring(L, "format");
    lua_rawget(L, vs);
    lua_pushstring(L, "string");
    lua_rawget(L, vs);
    if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TSTRING) {
      size_t n = 0;
      const char* text = lua_tolstring(L, -1, &n);
      w->Verbatim(std::string_view(text, n), lua_tostring(L, -2));
      lua_pop(L, 3);
      return true;
    }
    lua_pop(L, 2);
  }
  lua_pop(L, 1);
  for (const bool map : {true, false}) {
    if (RawField(L, map ? "map" : "set") == LUA_TTABLE) {
      WriteMapOrSet(L, w, script_resp, map);
      lua_pop(L, 1);
      return true;
    }
    lua_pop(L, 1);
  }
  return false;
}

}  // namespace

void PushRespAsLua(lua_State* L, std::string_view resp) {
  if (resp.empty()) {
    lua_pushnil(L);
    return;
  }
  RespToLua(L, resp).Value(true);
}

void PushLuaError(lua_State* L, std::string_view text) {
  std::string msg;
  if (!text.empty() && text[0] == '-') {
    const size_t sp = text.find(' ');
    msg = sp == std::string_view::npos ? "ERR " + std::string(text.substr(1))
                                       : std::string(text.substr(1));
  } else {
    msg = "ERR " + std::string(text);
  }
  while (!msg.empty() && (msg.back() == '\r' || msg.back() == '\n')) msg.pop_back();
  lua_newtable(L);
  lua_pushstring(L, "err");
  lua_pushlstring(L, msg.data(), msg.size());
  lua_settable(L, -3);
}

void WriteLuaAsReply(lua_State* L, ReplyWriter* w, int script_resp) {
  lua_checkstack(L, 6);
  switch (lua_type(L, -1)) {
    case LUA_TSTRING: {
      size_t n = 0;
      const char* s = lua_tolstring(L, -1, &n);
      w->Bulk(std::string_view(s, n));
      break;
    }
    case LUA_TBOOLEAN:
      if (script_resp == 2) {
        if (lua_toboolean(L, -1)) {
          w->Integer(1);
        } else {
          w->Null();
        }
      } else {
        w->Bool(lua_toboolean(L, -1));
      }
      break;
    case LUA_TNUMBER: {
      // Truncated toward zero; out of range (and NaN) gives INT64_MIN, as Redis's C cast does
      // on x86, without the undefined conversion.
      const double d = lua_tonumber(L, -1);
      const bool fits = d >= -9223372036854775808.0 && d < 9223372036854775808.0;
      w->Integer(fits ? static_cast<int64_t>(d) : INT64_MIN);
      break;
    }
    case LUA_TTABLE:
      if (!WriteSpecialTable(L, w, script_resp)) WriteArray(L, w, script_resp);
      break;
    default:
      w->Null();
  }
  lua_pop(L, 1);
}

}  // namespace lavik
