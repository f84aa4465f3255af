#include "scripting/lua_reply.h"

#include <gtest/gtest.h>

#include <lua.hpp>
#include <string>

#include "protocol/reply_writer.h"

namespace lavik {
namespace {

class LuaReplyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    L_ = luaL_newstate();
    luaL_openlibs(L_);
  }
  void TearDown() override { lua_close(L_); }

  // The reply a Lua expression's value becomes.
  std::string Reply(const std::string& expr, int client_resp = 2, int script_resp = 2) {
    const std::string code = "return " + expr;
    EXPECT_EQ(luaL_dostring(L_, code.c_str()), 0) << lua_tostring(L_, -1);
    std::string out;
    ReplyWriter w(&out, client_resp);
    WriteLuaAsReply(L_, &w, script_resp);
    EXPECT_EQ(lua_gettop(L_), 0);
    return out;
  }

  // The reply `resp` turned into Lua and back.
  std::string RoundTrip(const std::string& resp, int client_resp = 2, int script_resp = 2) {
    PushRespAsLua(L_, resp);
    std::string out;
    ReplyWriter w(&out, client_resp);
    WriteLuaAsReply(L_, &w, script_resp);
    return out;
  }

  lua_State* L_ = nullptr;
};

TEST_F(LuaReplyTest, ScalarsFollowRedis) {
  EXPECT_EQ(Reply("42"), ":42\r\n");
  EXPECT_EQ(Reply("3.99"), ":3\r\n");
  EXPECT_EQ(Reply("-3.99"), ":-3\r\n");
  EXPECT_EQ(Reply("'hi'"), "$2\r\nhi\r\n");
  EXPECT_EQ(Reply("true"), ":1\r\n");
  EXPECT_EQ(Reply("false"), "$-1\r\n");
  EXPECT_EQ(Reply("nil"), "$-1\r\n");
  EXPECT_EQ(Reply("false", 3), "_\r\n");
  EXPECT_EQ(Reply("false", 3, 3), "#f\r\n");
  EXPECT_EQ(Reply("true", 2, 3), ":1\r\n");  // RESP2 client: the bool is downgraded
}

TEST_F(LuaReplyTest, TablesStopAtTheFirstNil) {
  EXPECT_EQ(Reply("{1, 2, nil, 3}"), "*2\r\n:1\r\n:2\r\n");
  EXPECT_EQ(Reply("{}"), "*0\r\n");
  EXPECT_EQ(Reply("{'a', {1}}"), "*2\r\n$1\r\na\r\n*1\r\n:1\r\n");
}

TEST_F(LuaReplyTest, SpecialTables) {
  EXPECT_EQ(Reply("{ok='fine'}"), "+fine\r\n");
  EXPECT_EQ(Reply("{err='BAD thing'}"), "-BAD thing\r\n");
  EXPECT_EQ(Reply("{err='a\\r\\nb'}"), "-a  b\r\n");
  EXPECT_EQ(Reply("{err=5}"), "*0\r\n");
  EXPECT_EQ(Reply("{double=1.5}"), "$3\r\n1.5\r\n");
  EXPECT_EQ(Reply("{double=1.5}", 3), ",1.5\r\n");
  EXPECT_EQ(Reply("{big_number='123'}", 3), "(123\r\n");
  EXPECT_EQ(Reply("{map={a=1}}", 3), "%1\r\n$1\r\na\r\n:1\r\n");
  EXPECT_EQ(Reply("{set={a=true}}", 3), "~1\r\n$1\r\na\r\n");
  EXPECT_EQ(Reply("{verbatim_string={format='txt', string='x'}}", 3), "=5\r\ntxt:x\r\n");
}

TEST_F(LuaReplyTest, RespToLuaAndBack) {
  EXPECT_EQ(RoundTrip(":7\r\n"), ":7\r\n");
  EXPECT_EQ(RoundTrip("$3\r\nabc\r\n"), "$3\r\nabc\r\n");
  EXPECT_EQ(RoundTrip("$-1\r\n"), "$-1\r\n");  // false → null
  EXPECT_EQ(RoundTrip("*-1\r\n"), "$-1\r\n");
  EXPECT_EQ(RoundTrip("+OK\r\n"), "+OK\r\n");
  EXPECT_EQ(RoundTrip("-WRONGTYPE bad\r\n"), "-WRONGTYPE bad\r\n");
  EXPECT_EQ(RoundTrip("*2\r\n:1\r\n*1\r\n$1\r\nx\r\n"), "*2\r\n:1\r\n*1\r\n$1\r\nx\r\n");
  EXPECT_EQ(RoundTrip("%1\r\n$1\r\nk\r\n:2\r\n", 3), "%1\r\n$1\r\nk\r\n:2\r\n");
  EXPECT_EQ(RoundTrip("~1\r\n$1\r\nm\r\n", 3), "~1\r\n$1\r\nm\r\n");
  EXPECT_EQ(RoundTrip(",2.5\r\n", 3), ",2.5\r\n");
  EXPECT_EQ(RoundTrip("#t\r\n", 3, 3), "#t\r\n");
  EXPECT_EQ(RoundTrip("_\r\n", 3), "_\r\n");
  EXPECT_EQ(RoundTrip("(12345678901234567890\r\n", 3), "(12345678901234567890\r\n");
  EXPECT_EQ(RoundTrip("=7\r\ntxt:abc\r\n", 3), "=7\r\ntxt:abc\r\n");
}

TEST_F(LuaReplyTest, ErrorsGetACode) {
  PushLuaError(L_, "plain text");
  lua_getfield(L_, -1, "err");
  EXPECT_STREQ(lua_tostring(L_, -1), "ERR plain text");
  lua_pop(L_, 2);
  PushLuaError(L_, "-CODE rest\r\n");
  lua_getfield(L_, -1, "err");
  EXPECT_STREQ(lua_tostring(L_, -1), "CODE rest");
  lua_pop(L_, 2);
  PushLuaError(L_, "-NOSPACE");
  lua_getfield(L_, -1, "err");
  EXPECT_STREQ(lua_tostring(L_, -1), "ERR NOSPACE");
  lua_pop(L_, 2);
}

}  // namespace
}  // namespace lavik
