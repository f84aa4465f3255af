#include "rdb/function_payload.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rdb/codec.h"
#include "rdb/payload.h"

namespace lavik::rdb {
namespace {

const std::string kLib = "#!lua name=l\nredis.register_function('f', function() return 1 end)";

std::string Framed(std::string body) {
  AppendDumpFooter(&body);
  return body;
}

TEST(FunctionPayload, EncodesOpcodeCodeAndFooter) {
  const std::string p = EncodeFunctionsPayload({kLib});
  std::string want(1, '\xf5');
  PutString(kLib, &want);
  EXPECT_EQ(p, Framed(want));
  EXPECT_EQ(EncodeFunctionsPayload({}), Framed(""));
  EXPECT_EQ(EncodeFunctionsPayload({}).size(), kDumpFooterBytes);
}

TEST(FunctionPayload, RoundTripsInOrder) {
  const std::vector<std::string> codes = {kLib, "#!lua name=m\n-- " + std::string(300, 'x')};
  std::vector<std::string> got;
  std::string error;
  ASSERT_TRUE(DecodeFunctionsPayload(EncodeFunctionsPayload(codes), &got, &error)) << error;
  EXPECT_EQ(got, codes);
}

TEST(FunctionPayload, ReadsThePreGaRecord) {
  std::string body(1, '\xf6');
  PutString("lib", &body);
  PutString("LUA", &body);
  PutLength(1, &body);
  PutString("a description", &body);
  PutString("return 1", &body);
  std::vector<std::string> got;
  std::string error;
  ASSERT_TRUE(DecodeFunctionsPayload(Framed(body), &got, &error)) << error;
  EXPECT_EQ(got, std::vector<std::string>{"#!LUA name=lib\nreturn 1"});
}

TEST(FunctionPayload, ErrorsAreRedisTexts) {
  const std::pair<std::string, std::string> cases[] = {
      {"", "ERR DUMP payload version or checksum are wrong"},
      {EncodeFunctionsPayload({kLib}).substr(1), "ERR DUMP payload version or checksum are wrong"},
      {Framed(std::string("\x00\x01x", 3)), "ERR given type is not a function"},
      {Framed("\xf5"), "ERR Failed loading library payload"},
      {Framed("\xf6"), "ERR Failed loading library name"},
      {Framed("\xf6\x01q"), "ERR Failed loading engine name"},
      {Framed(std::string("\xf6\x01q\x03lua\x01", 8)), "ERR Failed loading library description"},
      {Framed(std::string("\xf6\x01q\x03lua\x00", 8)), "ERR Failed loading library blob"},
  };
  for (const auto& [payload, text] : cases) {
    std::vector<std::string> got;
    std::string error;
    EXPECT_FALSE(DecodeFunctionsPayload(payload, &got, &error));
    EXPECT_EQ(error, text);
  }
}

TEST(FunctionPayload, RefusesANewerRdbVersion) {
  std::string p = EncodeFunctionsPayload({kLib});
  EXPECT_TRUE(DumpFooterOk(p));
  p[p.size() - 10] = 11;  // the version's low byte; the CRC no longer matters
  EXPECT_FALSE(DumpFooterOk(p));
}

}  // namespace
}  // namespace lavik::rdb
