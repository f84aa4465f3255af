#include "protocol/request_parser.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace lavik {
namespace {

using Status = RequestParser::Status;

// What a connection would see: the requests (args copied out) and how the stream ended.
struct Outcome {
  std::vector<std::vector<std::string>> requests;
  std::vector<bool> inline_flags;
  std::string error;    // empty unless the stream ended in kError
  size_t leftover = 0;  // unparsed bytes at the end (an incomplete request)

  bool operator==(const Outcome&) const = default;
};

// Feeds `input` in the given chunk sizes (the last chunk takes the rest), emulating a connection
// buffer that is reallocated on every read so that a parser holding pointers would fail (ASan).
Outcome Feed(std::string_view input, const std::vector<size_t>& chunks,
             RequestParser::Limits limits = RequestParser::Limits()) {
  RequestParser parser(limits);
  Outcome outcome;
  std::unique_ptr<char[]> buf;
  size_t capacity = 0;
  size_t have = 0;  // bytes in buf
  size_t off = 0;   // start of the current request in buf
  size_t fed = 0;
  size_t chunk_index = 0;
  while (fed < input.size()) {
    size_t n = chunk_index < chunks.size() ? chunks[chunk_index++] : input.size() - fed;
    n = std::min(n, input.size() - fed);
    const size_t keep = have - off;
    if (keep + n <= 4096 || off + keep + n > capacity) {
      // Move the unparsed bytes to a fresh allocation (always while small, on growth when big so
      // that byte-by-byte feeding of 64 KiB stays linear).
      capacity = std::max<size_t>(2 * (keep + n), 64);
      auto fresh = std::make_unique<char[]>(capacity);
      if (keep > 0) std::memcpy(fresh.get(), buf.get() + off, keep);
      buf = std::move(fresh);
      have = keep;
      off = 0;
    }
    std::memcpy(buf.get() + have, input.data() + fed, n);
    have += n;
    fed += n;
    while (true) {
      const Status status = parser.Parse(buf.get() + off, have - off);
      if (status == Status::kNeedMore) break;
      if (status == Status::kError) {
        outcome.error = parser.error();
        EXPECT_EQ(parser.Parse(buf.get() + off, have - off), Status::kError);  // sticky
        return outcome;
      }
      std::vector<std::string> args;
      for (std::string_view a : parser.args()) args.emplace_back(a);
      outcome.requests.push_back(std::move(args));
      outcome.inline_flags.push_back(parser.inline_request());
      EXPECT_GT(parser.consumed(), 0u);
      EXPECT_LE(parser.consumed(), have - off);
      off += parser.consumed();
    }
  }
  outcome.leftover = have - off;
  return outcome;
}

Outcome OneShot(std::string_view input, RequestParser::Limits limits = RequestParser::Limits()) {
  return Feed(input, {input.size()}, limits);
}

Outcome ByteByByte(std::string_view input, RequestParser::Limits limits = RequestParser::Limits()) {
  return Feed(input, std::vector<size_t>(input.size(), 1), limits);
}

std::string Multibulk(const std::vector<std::string>& args) {
  std::string s = "*" + std::to_string(args.size()) + "\r\n";
  for (const std::string& a : args) s += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return s;
}

using Args = std::vector<std::string>;

TEST(RequestParserTest, SingleMultibulk) {
  RequestParser parser;
  const std::string req = "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n";
  ASSERT_EQ(parser.Parse(req.data(), req.size()), Status::kDone);
  ASSERT_EQ(parser.args().size(), 3u);
  EXPECT_EQ(parser.args()[0], "SET");
  EXPECT_EQ(parser.args()[1], "key");
  EXPECT_EQ(parser.args()[2], "value");
  EXPECT_EQ(parser.consumed(), req.size());
  EXPECT_FALSE(parser.inline_request());
  // Views point into the caller's buffer: no copy.
  EXPECT_EQ(parser.args()[2].data(), req.data() + req.find("value"));
}

TEST(RequestParserTest, BinarySafeBulks) {
  const std::string bin("a\0b\r\nc\n\r*$", 10);
  const Outcome o = OneShot(Multibulk({"SET", bin, ""}));
  ASSERT_EQ(o.requests.size(), 1u);
  EXPECT_EQ(o.requests[0], (Args{"SET", bin, ""}));
  EXPECT_EQ(o.leftover, 0u);
}

TEST(RequestParserTest, EmptyMultibulkIsAnEmptyRequest) {
  for (const std::string header : {"*0\r\n", "*-1\r\n", "*-5\r\n"}) {
    RequestParser parser;
    const std::string input = header + "PING\r\n";
    ASSERT_EQ(parser.Parse(input.data(), input.size()), Status::kDone) << header;
    EXPECT_TRUE(parser.args().empty());
    EXPECT_EQ(parser.consumed(), header.size());
    ASSERT_EQ(parser.Parse(input.data() + header.size(), input.size() - header.size()),
              Status::kDone);
    ASSERT_EQ(parser.args().size(), 1u);
    EXPECT_EQ(parser.args()[0], "PING");
    EXPECT_TRUE(parser.inline_request());
  }
}

TEST(RequestParserTest, NeedMoreOnEmptyAndPartialInput) {
  RequestParser parser;
  EXPECT_EQ(parser.Parse("", 0), Status::kNeedMore);
  EXPECT_EQ(parser.Parse("*", 1), Status::kNeedMore);
  EXPECT_EQ(parser.Parse("*1\r", 3), Status::kNeedMore);  // waits for the byte after '\r'
  EXPECT_EQ(parser.Parse("*1\r\n$3\r\nfo", 10), Status::kNeedMore);
  EXPECT_EQ(parser.Parse("*1\r\n$3\r\nfoo\r", 12), Status::kNeedMore);
  EXPECT_EQ(parser.Parse("*1\r\n$3\r\nfoo\r\n", 13), Status::kDone);
  EXPECT_EQ(parser.args()[0], "foo");
}

TEST(RequestParserTest, PipelineInOneBuffer) {
  std::string input;
  Outcome expected;
  for (int i = 0; i < 50; ++i) {
    Args args = {"SET", "key:" + std::to_string(i), std::string(static_cast<size_t>(i), 'v')};
    input += Multibulk(args);
    expected.requests.push_back(args);
    expected.inline_flags.push_back(false);
    input += "GET \"k " + std::to_string(i) + "\"\r\n";
    expected.requests.push_back({"GET", "k " + std::to_string(i)});
    expected.inline_flags.push_back(true);
  }
  EXPECT_EQ(OneShot(input), expected);
  EXPECT_EQ(ByteByByte(input), expected);
}

TEST(RequestParserTest, TenThousandRequests) {
  std::string input;
  for (int i = 0; i < 10000; ++i) input += Multibulk({"INCR", "counter:" + std::to_string(i)});
  for (const Outcome& o : {OneShot(input), Feed(input, std::vector<size_t>(5000, 97))}) {
    ASSERT_EQ(o.requests.size(), 10000u);
    EXPECT_TRUE(o.error.empty());
    EXPECT_EQ(o.leftover, 0u);
    for (int i = 0; i < 10000; ++i) {
      ASSERT_EQ(o.requests[static_cast<size_t>(i)], (Args{"INCR", "counter:" + std::to_string(i)}));
    }
  }
}

// Every valid stream gives the same requests however it is split into reads.
TEST(RequestParserTest, EverySplitPointGivesTheSameRequests) {
  const std::vector<std::string> inputs = {
      Multibulk({"SET", "key", "value"}),
      Multibulk({"", std::string("\0\r\n", 3), std::string(300, 'x')}),
      "*0\r\n*-1\r\n" + Multibulk({"PING"}),
      Multibulk({std::string(12345, 'b')}) + Multibulk({"GET", "a"}),
      "PING\r\nECHO \"a\\x41\\n\" 'b\\'c'\nSET k v\r\n\r\n  \t \r\n",
      "*2\r\n$3\r\nGET\r\n$1\r\nk\r\nGET k\r\n*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPI",
      "*1\rx$4\rxPINGxx*1\r\n$4\r\nPING\r\n",  // Redis skips the byte after '\r' unchecked
  };
  for (const std::string& input : inputs) {
    const Outcome whole = OneShot(input);
    ASSERT_TRUE(whole.error.empty()) << whole.error;
    ASSERT_FALSE(whole.requests.empty());
    for (size_t split = 0; split <= input.size(); ++split) {
      ASSERT_EQ(Feed(input, {split}), whole) << "split at " << split << " of " << input;
    }
    ASSERT_EQ(ByteByByte(input), whole);
  }
}

TEST(RequestParserTest, IncompleteRequestIsLeftOver) {
  const std::string input = Multibulk({"GET", "a"}) + "*2\r\n$3\r\nGET\r\n$1\r\n";
  const Outcome o = OneShot(input);
  EXPECT_EQ(o.requests.size(), 1u);
  EXPECT_EQ(o.leftover, input.size() - Multibulk({"GET", "a"}).size());
}

TEST(RequestParserTest, BufferMayMoveBetweenCalls) {
  RequestParser parser;
  const std::string req = Multibulk({"SET", "key", "value"});
  std::string a = req.substr(0, 20);
  ASSERT_EQ(parser.Parse(a.data(), a.size()), Status::kNeedMore);
  std::vector<char> b(req.begin(), req.end());  // different address, same bytes
  ASSERT_EQ(parser.Parse(b.data(), b.size()), Status::kDone);
  EXPECT_EQ(parser.args()[2], "value");
  EXPECT_EQ(parser.args()[2].data(), b.data() + req.find("value"));
}

TEST(RequestParserTest, ManyArgumentsInManyReads) {
  // 200k arguments in ~1000 reads: checks both correctness and that work is not redone (this
  // would take minutes if each read restarted the request).
  std::vector<std::string> args;
  for (int i = 0; i < 200000; ++i) args.push_back(std::to_string(i));
  const std::string input = Multibulk(args);
  const Outcome o = Feed(input, std::vector<size_t>(1000, input.size() / 1000));
  ASSERT_EQ(o.requests.size(), 1u);
  EXPECT_EQ(o.requests[0], args);
}

TEST(RequestParserTest, BytesHintForBigBulk) {
  RequestParser parser;
  const std::string header = "*2\r\n$3\r\nSET\r\n$104857600\r\n";
  std::string partial = header + "xyz";
  ASSERT_EQ(parser.Parse(partial.data(), partial.size()), Status::kNeedMore);
  EXPECT_EQ(parser.bytes_hint(), header.size() + 104857600u + 2);
  // Unknown while a header line is incomplete.
  RequestParser other;
  const std::string part = "*2\r\n$3\r\nSET\r\n$10";
  ASSERT_EQ(other.Parse(part.data(), part.size()), Status::kNeedMore);
  EXPECT_EQ(other.bytes_hint(), 0u);
  const std::string full = part + "\r\n";
  ASSERT_EQ(other.Parse(full.data(), full.size()), Status::kNeedMore);
  EXPECT_EQ(other.bytes_hint(), full.size() + 10 + 2);
  const std::string done = full + "0123456789\r\n";
  ASSERT_EQ(other.Parse(done.data(), done.size()), Status::kDone);
  EXPECT_EQ(other.bytes_hint(), 0u);
}

TEST(RequestParserTest, MaxBulkLenBoundary) {
  RequestParser parser;
  const std::string ok = "*1\r\n$536870912\r\n";
  EXPECT_EQ(parser.Parse(ok.data(), ok.size()), Status::kNeedMore);
  RequestParser::Limits limits;
  limits.max_bulk_len = 5;
  EXPECT_EQ(OneShot(Multibulk({"12345"}), limits).requests.size(), 1u);
  EXPECT_EQ(OneShot(Multibulk({"123456"}), limits).error, "Protocol error: invalid bulk length");
}

TEST(RequestParserTest, MaxMultibulkBoundary) {
  RequestParser parser;
  EXPECT_EQ(parser.Parse("*2147483647\r\n", 13), Status::kNeedMore);
  RequestParser::Limits limits;
  limits.max_multibulk = 2;
  EXPECT_EQ(OneShot(Multibulk({"a", "b"}), limits).requests.size(), 1u);
  EXPECT_EQ(OneShot(Multibulk({"a", "b", "c"}), limits).error,
            "Protocol error: invalid multibulk length");
}

struct BadInput {
  std::string input;
  std::string error;
};

// Each error text and trigger was checked against redis-server 7.0.15 over a raw socket.
TEST(RequestParserTest, ProtocolErrorsMatchRedis) {
  const std::string kInvalidMbulk = "Protocol error: invalid multibulk length";
  const std::string kInvalidBulk = "Protocol error: invalid bulk length";
  const std::vector<BadInput> cases = {
      {"*x\r\n", kInvalidMbulk},
      {"*00\r\n", kInvalidMbulk},
      {"*01\r\n", kInvalidMbulk},
      {"*+1\r\n", kInvalidMbulk},
      {"* 1\r\n", kInvalidMbulk},
      {"*1 \r\n", kInvalidMbulk},
      {"*\r\n", kInvalidMbulk},
      {"*-\r\n", kInvalidMbulk},
      {"*-0\r\n", kInvalidMbulk},
      {"*2147483648\r\n", kInvalidMbulk},
      {"*99999999999999999999\r\n", kInvalidMbulk},
      {"*1\r\nX\r\n", "Protocol error: expected '$', got 'X'"},
      {"*1\r\n\r\n", "Protocol error: expected '$', got '\r'"},
      {"*2\r\n$1\r\na\r\n:1\r\n", "Protocol error: expected '$', got ':'"},
      {"*1\r\n$-1\r\n", kInvalidBulk},
      {"*1\r\n$-0\r\n", kInvalidBulk},
      {"*1\r\n$01\r\n", kInvalidBulk},
      {"*1\r\n$+1\r\n", kInvalidBulk},
      {"*1\r\n$\r\n", kInvalidBulk},
      {"*1\r\n$1x\r\n", kInvalidBulk},
      {"*1\r\n$536870913\r\n", kInvalidBulk},
      {"*1\r\n$9223372036854775808\r\n", kInvalidBulk},
      {"*1\r\n$1234567890123456789\r\n", kInvalidBulk},
      {"PING \"a\"b\r\n", "Protocol error: unbalanced quotes in request"},
      {"PING 'a'b\r\n", "Protocol error: unbalanced quotes in request"},
      {"PING \"abc\r\n", "Protocol error: unbalanced quotes in request"},
      {"PING 'abc\r\n", "Protocol error: unbalanced quotes in request"},
      {"ECHO fo\"o b\"ar\r\n", "Protocol error: unbalanced quotes in request"},
      {"ECHO \"a\\\"\r\n", "Protocol error: unbalanced quotes in request"},
      {"ECHO \"a\\\r\n", "Protocol error: unbalanced quotes in request"},
      {"ECHO 'a\\'\r\n", "Protocol error: unbalanced quotes in request"},
      {"*" + std::string(65536, '1'), "Protocol error: too big mbulk count string"},
      {"*1\r\n$" + std::string(65536, '1'), "Protocol error: too big bulk count string"},
      {"PING" + std::string(65533, 'x'), "Protocol error: too big inline request"},
  };
  for (const BadInput& c : cases) {
    const std::string shown = c.input.substr(0, 40);
    const Outcome whole = OneShot(c.input);
    EXPECT_EQ(whole.error, c.error) << shown;
    EXPECT_EQ(ByteByByte(c.input).error, c.error) << shown;
    // Requests before the bad one are still delivered.
    const Outcome after_good = OneShot(Multibulk({"PING"}) + c.input);
    EXPECT_EQ(after_good.error, c.error) << shown;
    EXPECT_EQ(after_good.requests.size(), 1u) << shown;
  }
}

TEST(RequestParserTest, TooBigLineBoundaries) {
  // Redis fails once more than 64 KiB are buffered without the terminator.
  const std::string mbulk = "*" + std::string(65535, '1');  // 65536 bytes: still waiting
  EXPECT_TRUE(OneShot(mbulk).error.empty());
  EXPECT_EQ(OneShot(mbulk).leftover, mbulk.size());
  EXPECT_EQ(OneShot(mbulk + "\r\n").error, "Protocol error: invalid multibulk length");

  const std::string bulk = "*1\r\n$" + std::string(65535, '1');  // 65536 bytes after "*1\r\n"
  EXPECT_TRUE(OneShot(bulk).error.empty());
  EXPECT_EQ(OneShot(bulk + "1").error, "Protocol error: too big bulk count string");

  const std::string line = "SET k " + std::string(65530, 'v');  // 65536 bytes
  EXPECT_TRUE(OneShot(line).error.empty());
  const Outcome o = OneShot(line + "\n");
  ASSERT_EQ(o.requests.size(), 1u);
  EXPECT_EQ(o.requests[0][2].size(), 65530u);
  EXPECT_EQ(OneShot(line + "\r\n").error, "Protocol error: too big inline request");

  RequestParser::Limits limits;
  limits.max_inline = 100;
  EXPECT_EQ(OneShot(std::string(101, 'x'), limits).error, "Protocol error: too big inline request");
  EXPECT_TRUE(OneShot(std::string(100, 'x'), limits).error.empty());
}

TEST(RequestParserTest, ErrorIsStickyUntilReset) {
  RequestParser parser;
  ASSERT_EQ(parser.Parse("*x\r\n", 4), Status::kError);
  EXPECT_EQ(parser.Parse("PING\r\n", 6), Status::kError);
  EXPECT_EQ(parser.error(), "Protocol error: invalid multibulk length");
  EXPECT_TRUE(parser.args().empty());
  EXPECT_EQ(parser.consumed(), 0u);
  parser.Reset();
  EXPECT_EQ(parser.Parse("PING\r\n", 6), Status::kDone);
  EXPECT_TRUE(parser.error().empty());
}

TEST(RequestParserTest, UnauthenticatedLimits) {
  RequestParser parser;
  parser.set_auth_required(true);
  std::string ten = "*10\r\n";
  EXPECT_EQ(parser.Parse(ten.data(), ten.size()), Status::kNeedMore);
  parser.Reset();
  EXPECT_EQ(parser.Parse("*11\r\n", 5), Status::kError);
  EXPECT_EQ(parser.error(), "Protocol error: unauthenticated multibulk length");
  parser.Reset();
  const std::string small = "*1\r\n$16384\r\n";
  EXPECT_EQ(parser.Parse(small.data(), small.size()), Status::kNeedMore);
  parser.Reset();
  const std::string big = "*1\r\n$16385\r\n";
  EXPECT_EQ(parser.Parse(big.data(), big.size()), Status::kError);
  EXPECT_EQ(parser.error(), "Protocol error: unauthenticated bulk length");
  parser.Reset();
  // Redis checks validity first.
  EXPECT_EQ(parser.Parse("*1\r\n$-1\r\n", 9), Status::kError);
  EXPECT_EQ(parser.error(), "Protocol error: invalid bulk length");
  parser.Reset();
  parser.set_auth_required(false);
  EXPECT_EQ(parser.Parse("*11\r\n", 5), Status::kNeedMore);
}

struct InlineCase {
  std::string line;
  Args args;
};

TEST(RequestParserTest, InlineSplittingMatchesRedis) {
  const std::vector<InlineCase> cases = {
      {"PING\r\n", {"PING"}},
      {"PING\n", {"PING"}},
      {"SET k v\r\n", {"SET", "k", "v"}},
      {"  SET \t k   v  \r\n", {"SET", "k", "v"}},
      {"\r\n", {}},
      {"\n", {}},
      {"   \t \r\n", {}},
      {"SET \"a\\x41\\n\" 'b\\'c'\r\n", {"SET", "aA\n", "b'c"}},
      {"ECHO \"\\n\\r\\t\\b\\a\\\\\\\"\\q\"\r\n", {"ECHO", "\n\r\t\b\a\\\"q"}},
      {"ECHO \"\\x4g\"\r\n", {"ECHO", "x4g"}},
      {"ECHO \"\\xFf\\x00\"\r\n", {"ECHO", std::string("\xff\0", 2)}},
      {"ECHO 'a\\nb'\r\n", {"ECHO", "a\\nb"}},
      {"ECHO \"\"\r\n", {"ECHO", ""}},
      {"ECHO ''\r\n", {"ECHO", ""}},
      {"ECHO a\"b c\"\r\n", {"ECHO", "ab c"}},
      {"ECHO a'b c'\r\n", {"ECHO", "ab c"}},
      {"ECHO \"x\"\v\r\n", {"ECHO", "x"}},
      {"ECHO a\vb\r\n", {"ECHO", "a\vb"}},
      {"ECHO a\rb\r\n", {"ECHO", "a", "b"}},
      {"ECHO \"a\rb\"\r\n", {"ECHO", "a\rb"}},
      {"ECHO \"a\" \"b\"\r\n", {"ECHO", "a", "b"}},
      {"GET k\r\r\n", {"GET", "k"}},
      {std::string("ECHO a\0b\r\n", 10), {"ECHO", std::string("a\0b", 3)}},
      {"$3 foo\r\n", {"$3", "foo"}},
  };
  for (const InlineCase& c : cases) {
    for (const Outcome& o : {OneShot(c.line), ByteByByte(c.line)}) {
      ASSERT_TRUE(o.error.empty()) << c.line << ": " << o.error;
      ASSERT_EQ(o.requests.size(), 1u) << c.line;
      EXPECT_EQ(o.requests[0], c.args) << c.line;
      EXPECT_TRUE(o.inline_flags[0]);
      EXPECT_EQ(o.leftover, 0u);
    }
  }
}

TEST(RequestParserTest, InlineArgsOwnedByParser) {
  RequestParser parser;
  std::string line = "SET \"a b\" c\r\n";
  ASSERT_EQ(parser.Parse(line.data(), line.size()), Status::kDone);
  EXPECT_EQ(parser.consumed(), line.size());
  line.assign(line.size(), '#');  // the caller may reuse its buffer; inline args are copies
  ASSERT_EQ(parser.args().size(), 3u);
  EXPECT_EQ(parser.args()[1], "a b");
  EXPECT_EQ(parser.args()[2], "c");
}

TEST(RequestParserTest, ArgsStorageIsReused) {
  RequestParser parser;
  const std::string a = Multibulk({"SET", "k1", "v1"});
  const std::string b = Multibulk({"SET", "k2", "v2"});
  ASSERT_EQ(parser.Parse(a.data(), a.size()), Status::kDone);
  const std::string_view* first = parser.args().data();
  for (int i = 0; i < 100; ++i) {
    const std::string& r = i % 2 ? a : b;
    ASSERT_EQ(parser.Parse(r.data(), r.size()), Status::kDone);
    EXPECT_EQ(parser.args().data(), first);
  }
}

TEST(RequestParserTest, ParseAfterDoneStartsNextRequest) {
  RequestParser parser;
  const std::string input = Multibulk({"GET", "a"}) + Multibulk({"GET", "bb"});
  ASSERT_EQ(parser.Parse(input.data(), input.size()), Status::kDone);
  const size_t first = parser.consumed();
  ASSERT_EQ(parser.Parse(input.data() + first, input.size() - first), Status::kDone);
  EXPECT_EQ(parser.args()[1], "bb");
  EXPECT_EQ(first + parser.consumed(), input.size());
  EXPECT_EQ(parser.Parse(input.data() + input.size(), 0), Status::kNeedMore);
}

// ReadAhead + Take: a pipeline's requests read once, ahead of their turn (net/connection.h).
TEST(ReadAheadTest, GivesArgumentsLengthAndSecondArgument) {
  const std::string get = Multibulk({"GET", "key:1"});
  const std::string set = Multibulk({"SET", "k", std::string(3000, 'v')});
  const std::string input = get + set + Multibulk({"PING"});
  RequestAhead ahead;
  ASSERT_TRUE(ReadAhead(input.data(), input.size(), &ahead));
  EXPECT_EQ(ahead.SecondArg(input.data()), "key:1");
  EXPECT_EQ(ahead.length, get.size());
  EXPECT_EQ(ahead.argc, 2u);
  EXPECT_EQ(ahead.longest, 5u);
  const char* at = input.data() + get.size();
  ASSERT_TRUE(ReadAhead(at, input.size() - get.size(), &ahead));
  EXPECT_EQ(ahead.SecondArg(at), "k");
  EXPECT_EQ(ahead.length, set.size());
  EXPECT_EQ(ahead.longest, 3000u);
  const size_t ping = get.size() + set.size();
  ASSERT_TRUE(ReadAhead(input.data() + ping, input.size() - ping, &ahead));
  EXPECT_TRUE(ahead.SecondArg(input.data() + ping).empty());  // one argument
  EXPECT_EQ(ahead.length, input.size() - ping);
}

TEST(ReadAheadTest, RefusesWhatItCannotSeeWholeOrParseMustDecide) {
  const std::string set = Multibulk({"SET", "k", "value"});
  RequestAhead ahead;
  for (size_t cut = 0; cut < set.size(); ++cut) {
    EXPECT_FALSE(ReadAhead(set.data(), cut, &ahead)) << cut;
  }
  const std::string inline_cmd = "GET k\r\n";
  EXPECT_FALSE(ReadAhead(inline_cmd.data(), inline_cmd.size(), &ahead));
  for (const char* bad : {"*0\r\n", "*-1\r\n", "*2\r\n$x\r\n", "*2\r\n:3\r\n", "*01\r\n$1\r\na\r\n",
                          "*1\r\n$01\r\na\r\n", "*1\r\n$-1\r\n", "*1\r\n$+1\r\na\r\n"}) {
    EXPECT_FALSE(ReadAhead(bad, std::strlen(bad), &ahead)) << bad;
  }
  std::vector<std::string> many(RequestAhead::kMaxArgs + 1, "a");
  const std::string wide = Multibulk(many);
  EXPECT_FALSE(ReadAhead(wide.data(), wide.size(), &ahead));
  many.pop_back();
  const std::string widest = Multibulk(many);
  EXPECT_TRUE(ReadAhead(widest.data(), widest.size(), &ahead));
}

// Every prefix and variant of a set of requests: whenever ReadAhead accepts, Take gives what
// Parse gives (arguments, length, not inline).
TEST(ReadAheadTest, TakeAgreesWithParse) {
  std::vector<std::string> inputs = {
      Multibulk({"GET", "key:1"}),
      Multibulk({"SET", "k", std::string(1024, 'v'), "EX", "10"}),
      Multibulk({"PING"}),
      Multibulk({"ECHO", ""}),
      Multibulk({"MSET", "a", "1", "b", "2", "c", "3", "d"}),
      "*2\r\n$3\r\nGET\r\n$1\r\nkXY",  // the two bytes after a payload are skipped unchecked
      "*1\r\n$4\r\nPING\rX",           // and so is the byte after a header's '\r'
  };
  for (const std::string& input : inputs) {
    for (size_t cut = 0; cut <= input.size(); ++cut) {
      RequestAhead ahead;
      if (!ReadAhead(input.data(), cut, &ahead)) continue;
      RequestParser parsed;
      ASSERT_EQ(parsed.Parse(input.data(), cut), Status::kDone) << input << " " << cut;
      RequestParser taken;
      ASSERT_TRUE(taken.Take(input.data(), ahead));
      EXPECT_EQ(taken.consumed(), parsed.consumed());
      EXPECT_FALSE(taken.inline_request());
      ASSERT_EQ(taken.args().size(), parsed.args().size());
      for (size_t i = 0; i < parsed.args().size(); ++i) {
        EXPECT_EQ(taken.args()[i].data(), parsed.args()[i].data());
        EXPECT_EQ(taken.args()[i].size(), parsed.args()[i].size());
      }
      // After Take, Parse starts the next request as after a parsed one.
      const size_t next = taken.consumed();
      EXPECT_EQ(taken.Parse(input.data() + next, cut - next), Status::kNeedMore);
    }
  }
}

// Take leaves to Parse what the parser's limits refuse now, so Redis's errors stay.
TEST(ReadAheadTest, TakeLeavesLimitsToParse) {
  const std::string big = Multibulk({"SET", "k", std::string(20000, 'v')});
  RequestAhead ahead;
  ASSERT_TRUE(ReadAhead(big.data(), big.size(), &ahead));

  RequestParser unauthenticated;
  unauthenticated.set_auth_required(true);
  EXPECT_FALSE(unauthenticated.Take(big.data(), ahead));
  ASSERT_EQ(unauthenticated.Parse(big.data(), big.size()), Status::kError);
  EXPECT_EQ(unauthenticated.error(), "Protocol error: unauthenticated bulk length");

  RequestParser small_bulks;
  small_bulks.set_max_bulk_len(1000);
  EXPECT_FALSE(small_bulks.Take(big.data(), ahead));
  ASSERT_EQ(small_bulks.Parse(big.data(), big.size()), Status::kError);
  EXPECT_EQ(small_bulks.error(), "Protocol error: invalid bulk length");

  const std::string ok = Multibulk({"AUTH", "secret"});
  ASSERT_TRUE(ReadAhead(ok.data(), ok.size(), &ahead));
  EXPECT_FALSE(unauthenticated.Take(ok.data(), ahead));  // the parser is in error
  RequestParser fresh;
  fresh.set_auth_required(true);
  EXPECT_TRUE(fresh.Take(ok.data(), ahead));
  EXPECT_EQ(fresh.args()[1], "secret");
}

}  // namespace
}  // namespace lavik
