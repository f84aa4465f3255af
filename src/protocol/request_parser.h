// RequestParser: incremental parser for client requests with Redis 7 semantics (multibulk
// "*N\r\n$len\r\n..." and inline "GET key\r\n" commands), pure bytes, no I/O.
//
// Usage, for a connection whose unparsed input is buf[off, end):
//   while (parser.Parse(buf + off, end - off) == RequestParser::Status::kDone) {
//     if (!parser.args().empty()) Execute(parser.args());   // empty request: ignore
//     off += parser.consumed();
//   }
//   kNeedMore: read more (bytes_hint() says how much, if known) and call Parse again with `data`
//   pointing at the same request start (the buffer may have moved). kError: reply
//   "-ERR " + error() and close the connection, as Redis does.
//
// Invariants: the parser keeps offsets relative to `data`, never pointers, so the caller may move
// or grow its buffer between calls as long as the bytes already passed are unchanged. Work done on
// a partial request is kept: a request arriving in k reads costs O(bytes + k), not O(bytes * k).
// Deviation from Redis: a NUL byte is an ordinary byte here; Redis scans lines with strchr, so a
// NUL in a header or inline line stalls it until the 64 KiB limit.
//
// Thread safety: none; one parser per connection.

#ifndef LAVIK_PROTOCOL_REQUEST_PARSER_H_
#define LAVIK_PROTOCOL_REQUEST_PARSER_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lavik {

// A complete multibulk request read ahead of its turn (ReadAhead), for a pipeline's prefetch:
// where its arguments lie, relative to its first byte. RequestParser::Take completes the request
// from it without reading its bytes again.
struct RequestAhead {
  static constexpr size_t kMaxArgs = 8;
  uint32_t length;   // bytes the request occupies
  uint32_t longest;  // its longest argument
  uint32_t argc;
  uint32_t offset[kMaxArgs];
  uint32_t size[kMaxArgs];

  // The second argument (the first key of most commands); empty with fewer than two.
  std::string_view SecondArg(const char* data) const {
    return argc < 2 ? std::string_view() : std::string_view(data + offset[1], size[1]);
  }
};

// Reads the request at data[0, len) when it is a multibulk request of 1 to kMaxArgs arguments,
// every one complete in the bytes given, with every header in the common form ("<digits>\r",
// no sign, no leading zero): the form RequestParser reads the same way whatever its limits.
// False otherwise, and then RequestParser::Parse decides (it may refuse the request).
bool ReadAhead(const char* data, size_t len, RequestAhead* out);

class RequestParser {
 public:
  enum class Status { kDone, kNeedMore, kError };

  struct Limits {
    size_t max_bulk_len = 512u << 20;  // proto-max-bulk-len: a longer bulk is an invalid length
    size_t max_inline = 64 * 1024;     // longest inline line / header line (PROTO_INLINE_MAX_SIZE)
    size_t max_multibulk = INT32_MAX;  // largest accepted *N
  };

  // (Two constructors rather than `Limits limits = {}`: a nested struct's member initializers
  // cannot be used in a default argument inside the enclosing class.)
  RequestParser();
  explicit RequestParser(Limits limits);

  RequestParser(const RequestParser&) = delete;
  RequestParser& operator=(const RequestParser&) = delete;

  // Parses the request starting at data[0]; `len` must not shrink between calls for one request.
  // After kDone the next call starts a new request (Reset is implicit). After kError every call
  // returns kError until Reset.
  Status Parse(const char* data, size_t len);

  // The arguments of the completed request (zero for an empty request: "*0", "*-1", a blank
  // inline line). Multibulk arguments are views into data[0, consumed()); inline arguments are
  // unescaped into parser-owned storage. Valid until the next Parse/Reset and while the data is
  // unchanged.
  std::span<const std::string_view> args() const { return {args_.data(), args_.size()}; }

  // Bytes of `data` the completed request occupies (kDone only).
  size_t consumed() const { return state_ == State::kDone ? pos_ : 0; }

  // kNeedMore: the total bytes (from data[0]) needed before the parser can make progress, when
  // known — i.e. while waiting for a bulk payload, so the caller can reserve a 100 MB bulk once.
  // 0 when unknown (a header line is incomplete).
  size_t bytes_hint() const { return hint_; }

  // kError: Redis's text without the "ERR " prefix, e.g. "Protocol error: invalid bulk length".
  // May contain any byte of the input ("expected '$', got 'X'"); ReplyWriter::Error maps CR/LF.
  const std::string& error() const { return error_; }

  // True if the last completed request was an inline command.
  bool inline_request() const { return inline_; }

  // Redis rejects *N > 10 and $len > 16384 from clients that still have to authenticate
  // ("Protocol error: unauthenticated multibulk/bulk length"). Set per request by the caller.
  void set_auth_required(bool required) { auth_required_ = required; }

  // proto-max-bulk-len changed at runtime: applies from the next bulk header on.
  void set_max_bulk_len(size_t bytes) { limits_.max_bulk_len = bytes; }

  // Forgets the current request and its args.
  void Reset();

  // Completes the request at `data` from a ReadAhead of the same bytes, as Parse would with
  // kDone: args() and consumed() are set. False when the request is outside this parser's
  // limits as they are now (proto-max-bulk-len, the unauthenticated bounds), or the parser is in
  // error: then Parse must read the request, and refuses it as Redis does.
  bool Take(const char* data, const RequestAhead& ahead);

 private:
  enum class State : uint8_t { kStart, kMultibulk, kDone, kError };
  enum class Line : uint8_t { kFound, kNeedMore, kTooBig };
  struct Span {
    size_t offset;
    size_t len;
  };

  Status ParseMultibulkHeader(const char* data, size_t len);
  Status ParseArgs(const char* data, size_t len);
  Status ParseInline(const char* data, size_t len);
  Line FindLineEnd(const char* data, size_t len, size_t start, char term, size_t* found);
  bool SplitInline(const char* line, size_t len);
  Status Done();
  Status Fail(std::string_view message);

  Limits limits_;
  State state_ = State::kStart;
  bool inline_ = false;
  bool auth_required_ = false;
  size_t pos_ = 0;           // bytes of the current request parsed so far
  size_t scan_ = 0;          // where the search for the current line's terminator resumes
  size_t hint_ = 0;          // see bytes_hint()
  int64_t remaining_ = 0;    // multibulk arguments still to read
  int64_t bulk_len_ = -1;    // length of the bulk being read; -1 while its header is unread
  std::vector<Span> spans_;  // where each argument lives (offsets survive buffer moves)
  std::vector<std::string_view> args_;
  std::string inline_args_;  // unescaped inline arguments, back to back
  std::string error_;
};

}  // namespace lavik

#endif  // LAVIK_PROTOCOL_REQUEST_PARSER_H_
