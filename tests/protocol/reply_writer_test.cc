#include "protocol/reply_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/errors.h"

namespace lavik {
namespace {

// Runs `write` against a fresh writer in the given protocol and returns the bytes produced.
template <typename F>
std::string Out(int resp, F write) {
  std::string out;
  ReplyWriter w(&out, resp);
  write(w);
  return out;
}

// The bytes for RESP2 and RESP3.
template <typename F>
void ExpectBoth(F write, std::string_view resp2, std::string_view resp3) {
  EXPECT_EQ(Out(2, write), resp2);
  EXPECT_EQ(Out(3, write), resp3);
}

TEST(ReplyWriterTest, Simple) {
  ExpectBoth([](ReplyWriter& w) { w.Simple("PONG"); }, "+PONG\r\n", "+PONG\r\n");
  ExpectBoth([](ReplyWriter& w) { w.Simple(""); }, "+\r\n", "+\r\n");
  ExpectBoth([](ReplyWriter& w) { w.Ok(); }, "+OK\r\n", "+OK\r\n");
}

TEST(ReplyWriterTest, Error) {
  ExpectBoth([](ReplyWriter& w) { w.Error(kErrSyntax); }, "-ERR syntax error\r\n",
             "-ERR syntax error\r\n");
  ExpectBoth([](ReplyWriter& w) { w.Error("ERR a\r\nb\nc\rd"); }, "-ERR a  b c d\r\n",
             "-ERR a  b c d\r\n");
  ExpectBoth([](ReplyWriter& w) { w.Error(kErrWrongType); },
             "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
             "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
}

TEST(ReplyWriterTest, Integer) {
  const std::vector<std::pair<int64_t, std::string>> cases = {
      {0, ":0\r\n"},
      {1, ":1\r\n"},
      {-1, ":-1\r\n"},
      {9, ":9\r\n"},
      {10, ":10\r\n"},
      {1234567890, ":1234567890\r\n"},
      {std::numeric_limits<int64_t>::max(), ":9223372036854775807\r\n"},
      {std::numeric_limits<int64_t>::min(), ":-9223372036854775808\r\n"},
  };
  for (const auto& [v, bytes] : cases) {
    ExpectBoth([v = v](ReplyWriter& w) { w.Integer(v); }, bytes, bytes);
  }
}

TEST(ReplyWriterTest, Bulk) {
  ExpectBoth([](ReplyWriter& w) { w.Bulk("bar"); }, "$3\r\nbar\r\n", "$3\r\nbar\r\n");
  ExpectBoth([](ReplyWriter& w) { w.Bulk(""); }, "$0\r\n\r\n", "$0\r\n\r\n");
  const std::string bin("a\0\r\nb", 5);
  ExpectBoth([&](ReplyWriter& w) { w.Bulk(bin); }, std::string("$5\r\na\0\r\nb\r\n", 11),
             std::string("$5\r\na\0\r\nb\r\n", 11));
  const std::string big(100000, 'x');
  EXPECT_EQ(Out(2, [&](ReplyWriter& w) { w.Bulk(big); }), "$100000\r\n" + big + "\r\n");
}

TEST(ReplyWriterTest, BulkHeader) {
  ExpectBoth([](ReplyWriter& w) { w.BulkHeader(42); }, "$42\r\n", "$42\r\n");
}

TEST(ReplyWriterTest, BulkInt) {
  const std::vector<std::pair<int64_t, std::string>> cases = {
      {0, "$1\r\n0\r\n"},
      {-1, "$2\r\n-1\r\n"},
      {42, "$2\r\n42\r\n"},
      {123456789, "$9\r\n123456789\r\n"},
      {1234567890, "$10\r\n1234567890\r\n"},
      {std::numeric_limits<int64_t>::max(), "$19\r\n9223372036854775807\r\n"},
      {std::numeric_limits<int64_t>::min(), "$20\r\n-9223372036854775808\r\n"},
  };
  for (const auto& [v, bytes] : cases) {
    ExpectBoth([v = v](ReplyWriter& w) { w.BulkInt(v); }, bytes, bytes);
  }
}

TEST(ReplyWriterTest, Nulls) {
  ExpectBoth([](ReplyWriter& w) { w.Null(); }, "$-1\r\n", "_\r\n");
  ExpectBoth([](ReplyWriter& w) { w.NullArray(); }, "*-1\r\n", "_\r\n");
}

TEST(ReplyWriterTest, Aggregates) {
  ExpectBoth([](ReplyWriter& w) { w.Array(0); }, "*0\r\n", "*0\r\n");
  ExpectBoth([](ReplyWriter& w) { w.Array(3); }, "*3\r\n", "*3\r\n");
  ExpectBoth([](ReplyWriter& w) { w.Map(0); }, "*0\r\n", "%0\r\n");
  ExpectBoth([](ReplyWriter& w) { w.Map(2); }, "*4\r\n", "%2\r\n");
  ExpectBoth([](ReplyWriter& w) { w.Set(0); }, "*0\r\n", "~0\r\n");
  ExpectBoth([](ReplyWriter& w) { w.Set(5); }, "*5\r\n", "~5\r\n");
  ExpectBoth([](ReplyWriter& w) { w.Push(3); }, "*3\r\n", ">3\r\n");
  ExpectBoth([](ReplyWriter& w) { w.Array(1234567); }, "*1234567\r\n", "*1234567\r\n");
}

TEST(ReplyWriterTest, NestedReplyLikeRedis) {
  // HGETALL h -> {f: v}, as redis-server 7.0.15 sends it.
  auto hgetall = [](ReplyWriter& w) {
    w.Map(1);
    w.Bulk("f");
    w.Bulk("v");
  };
  ExpectBoth(hgetall, "*2\r\n$1\r\nf\r\n$1\r\nv\r\n", "%1\r\n$1\r\nf\r\n$1\r\nv\r\n");
  // Subscribe confirmation.
  auto subscribe = [](ReplyWriter& w) {
    w.Push(3);
    w.Bulk("subscribe");
    w.Bulk("c");
    w.Integer(1);
  };
  ExpectBoth(subscribe, "*3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n",
             ">3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n");
}

TEST(ReplyWriterTest, DoubleMatchesRedis) {
  // Bytes observed from redis-server 7.0.15 ZSCORE in RESP2 and RESP3.
  ExpectBoth([](ReplyWriter& w) { w.Double(0.1); }, "$19\r\n0.10000000000000001\r\n",
             ",0.10000000000000001\r\n");
  ExpectBoth([](ReplyWriter& w) { w.Double(3); }, "$1\r\n3\r\n", ",3\r\n");
  ExpectBoth([](ReplyWriter& w) { w.Double(1e300); }, "$23\r\n1.0000000000000001e+300\r\n",
             ",1.0000000000000001e+300\r\n");
  ExpectBoth([](ReplyWriter& w) { w.Double(1.5e-300); }, "$23\r\n1.5000000000000001e-300\r\n",
             ",1.5000000000000001e-300\r\n");
  ExpectBoth([](ReplyWriter& w) { w.Double(123456789012345678.0); },
             "$22\r\n1.2345678901234568e+17\r\n", ",1.2345678901234568e+17\r\n");
  ExpectBoth([](ReplyWriter& w) { w.Double(std::numeric_limits<double>::infinity()); },
             "$3\r\ninf\r\n", ",inf\r\n");
  ExpectBoth([](ReplyWriter& w) { w.Double(-std::numeric_limits<double>::infinity()); },
             "$4\r\n-inf\r\n", ",-inf\r\n");
  ExpectBoth([](ReplyWriter& w) { w.Double(std::nan("")); }, "$3\r\nnan\r\n", ",nan\r\n");
  ExpectBoth([](ReplyWriter& w) { w.Double(-0.0); }, "$2\r\n-0\r\n", ",-0\r\n");
  ExpectBoth([](ReplyWriter& w) { w.Double(-2.5); }, "$4\r\n-2.5\r\n", ",-2.5\r\n");
}

TEST(ReplyWriterTest, DoubleIsPrintfPercent17g) {
  std::mt19937_64 rng(7);
  std::vector<double> values = {std::numeric_limits<double>::max(),
                                std::numeric_limits<double>::min(),
                                std::numeric_limits<double>::denorm_min(),
                                -std::numeric_limits<double>::max(),
                                1e16,
                                1e17,
                                123.456,
                                5e-324};
  for (int i = 0; i < 20000; ++i) {
    uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, sizeof(d));
    if (std::isfinite(d)) values.push_back(d);
    values.push_back(static_cast<double>(static_cast<int64_t>(rng() >> (rng() % 64))));
    values.push_back(std::uniform_real_distribution<double>(-1e6, 1e6)(rng));
  }
  for (double d : values) {
    char expected[64];
    std::snprintf(expected, sizeof(expected), ",%.17g\r\n", d);
    ASSERT_EQ(Out(3, [d](ReplyWriter& w) { w.Double(d); }), expected);
  }
}

TEST(ReplyWriterTest, Bool) {
  ExpectBoth([](ReplyWriter& w) { w.Bool(true); }, ":1\r\n", "#t\r\n");
  ExpectBoth([](ReplyWriter& w) { w.Bool(false); }, ":0\r\n", "#f\r\n");
}

TEST(ReplyWriterTest, Verbatim) {
  ExpectBoth([](ReplyWriter& w) { w.Verbatim("hello"); }, "$5\r\nhello\r\n", "=9\r\ntxt:hello\r\n");
  ExpectBoth([](ReplyWriter& w) { w.Verbatim("# x", "mkd"); }, "$3\r\n# x\r\n",
             "=7\r\nmkd:# x\r\n");
  ExpectBoth([](ReplyWriter& w) { w.Verbatim(""); }, "$0\r\n\r\n", "=4\r\ntxt:\r\n");
}

TEST(ReplyWriterTest, Raw) {
  ExpectBoth([](ReplyWriter& w) { w.Raw("+QUEUED\r\n"); }, "+QUEUED\r\n", "+QUEUED\r\n");
}

TEST(ReplyWriterTest, AppendsAndSwitches) {
  std::string a = "existing";
  std::string b;
  ReplyWriter w(&a, 2);
  EXPECT_EQ(w.resp(), 2);
  w.Null();
  w.SetOutput(&b);
  EXPECT_EQ(w.output(), &b);
  w.set_resp(3);
  EXPECT_EQ(w.resp(), 3);
  w.Null();
  EXPECT_EQ(a, "existing$-1\r\n");
  EXPECT_EQ(b, "_\r\n");
}

// errors.h: texts and formatting checked against redis-server 7.0.15.
TEST(ErrorsTest, Constants) {
  EXPECT_EQ(kErrNotInteger, "ERR value is not an integer or out of range");
  EXPECT_EQ(kErrNoAuth, "NOAUTH Authentication required.");
  EXPECT_EQ(kErrAuthNotConfigured,
            "ERR AUTH <password> called without any password configured for the default user. "
            "Are you sure your configuration is correct?");
  EXPECT_EQ(kErrOOM, "OOM command not allowed when used memory > 'maxmemory'.");
}

TEST(ErrorsTest, UnknownCommand) {
  EXPECT_EQ(UnknownCommandError("foo", {}),
            "ERR unknown command 'foo', with args beginning with: ");
  const std::vector<std::string_view> ab = {"a", "b"};
  EXPECT_EQ(UnknownCommandError("foo", ab),
            "ERR unknown command 'foo', with args beginning with: 'a' 'b' ");
  const std::string long_name(200, 'x');
  const std::vector<std::string_view> a = {"a"};
  EXPECT_EQ(UnknownCommandError(long_name, a),
            "ERR unknown command '" + std::string(128, 'x') + "', with args beginning with: 'a' ");
}

TEST(ErrorsTest, UnknownCommandArgTruncation) {
  const std::string prefix = "ERR unknown command 'foo', with args beginning with: ";
  const std::string a100(100, 'a'), b100(100, 'b'), a125(125, 'a'), a126(126, 'a'), a200(200, 'a');
  // Listed while shorter than 128 bytes; each arg capped to the room left.
  std::vector<std::string_view> args = {a100, b100, "c"};
  EXPECT_EQ(UnknownCommandError("foo", args),
            prefix + "'" + a100 + "' '" + std::string(25, 'b') + "' ");
  args = {a125, "b"};
  EXPECT_EQ(UnknownCommandError("foo", args), prefix + "'" + a125 + "' ");
  args = {a126, "b"};
  EXPECT_EQ(UnknownCommandError("foo", args), prefix + "'" + a126 + "' ");
  args = {a200};
  EXPECT_EQ(UnknownCommandError("foo", args), prefix + "'" + std::string(128, 'a') + "' ");
}

TEST(ErrorsTest, UnknownCommandSanitizes) {
  const std::string nul_arg("c\0d", 3);
  std::vector<std::string_view> args = {"a\r\nb", nul_arg, "e"};
  EXPECT_EQ(UnknownCommandError("foo", args),
            "ERR unknown command 'foo', with args beginning with: 'a  b' 'c' 'e' ");
  const std::string nul_name("fo\0o", 4);
  args = {"a"};
  EXPECT_EQ(UnknownCommandError(nul_name, args),
            "ERR unknown command 'fo', with args beginning with: 'a' ");
  EXPECT_EQ(UnknownCommandError("fo\r\no", {}),
            "ERR unknown command 'fo  o', with args beginning with: ");
}

TEST(ErrorsTest, WrongArity) {
  EXPECT_EQ(WrongArityError("get"), "ERR wrong number of arguments for 'get' command");
  EXPECT_EQ(WrongArityError("config|get"),
            "ERR wrong number of arguments for 'config|get' command");
}

TEST(ErrorsTest, Subcommands) {
  EXPECT_EQ(UnknownSubcommandError("config", "foo"),
            "ERR unknown subcommand 'foo'. Try CONFIG HELP.");
  EXPECT_EQ(UnknownSubcommandError("CoNfIg", "fOo"),
            "ERR unknown subcommand 'fOo'. Try CONFIG HELP.");
  EXPECT_EQ(UnknownSubcommandError("config", std::string(200, 'x')),
            "ERR unknown subcommand '" + std::string(128, 'x') + "'. Try CONFIG HELP.");
  EXPECT_EQ(SubcommandSyntaxError("client", "foo"),
            "ERR unknown subcommand or wrong number of arguments for 'foo'. Try CLIENT HELP.");
}

TEST(ErrorsTest, Formatted) {
  EXPECT_EQ(InvalidExpireTimeError("set"), "ERR invalid expire time in 'set' command");
  EXPECT_EQ(InvalidExpireTimeError("setex"), "ERR invalid expire time in 'setex' command");
  EXPECT_EQ(SubscribeContextError("get"),
            "ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / "
            "RESET are allowed in this context");
}

}  // namespace
}  // namespace lavik
