#include "protocol/request_parser.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace lavik {
namespace {

// Redis refuses larger counts and lengths before AUTH so an anonymous client cannot make it
// allocate (CVE-2021-32675).
constexpr int64_t kMaxUnauthMultibulk = 10;
constexpr int64_t kMaxUnauthBulk = 16384;

// Vectors bigger than this after a huge request are released instead of kept for reuse.
constexpr size_t kKeepArgsCapacity = 4096;

// Redis's string2ll: optional '-', no '+', no leading zeros, no spaces, fits int64, fewer than
// 21 bytes. Protocol errors depend on exactly these rules ("$01" is an invalid bulk length).
bool ParseRedisInt(const char* s, size_t len, int64_t* value) {
  if (len == 0 || len >= 21) return false;
  if (len == 1 && s[0] == '0') {
    *value = 0;
    return true;
  }
  size_t i = 0;
  const bool negative = s[0] == '-';
  if (negative && ++i == len) return false;
  if (s[i] < '1' || s[i] > '9') return false;
  uint64_t v = static_cast<uint64_t>(s[i++] - '0');
  for (; i < len; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    const uint64_t digit = static_cast<uint64_t>(s[i] - '0');
    if (v > (UINT64_MAX - digit) / 10) return false;
    v = v * 10 + digit;
  }
  if (negative) {
    if (v > static_cast<uint64_t>(INT64_MAX) + 1) return false;
    *value = static_cast<int64_t>(0 - v);
  } else {
    if (v > static_cast<uint64_t>(INT64_MAX)) return false;
    *value = static_cast<int64_t>(v);
  }
  return true;
}

// The common header "<prefix><1-18 digits>\r?" with no leading zero, read without memchr. Returns
// false whenever the general path must decide (other bytes, too short, more digits), so the
// result is always identical to FindLineEnd + ParseRedisInt (given max_inline >= 20, so a
// header this short can never be "too big").
inline bool FastHeader(const char* data, size_t len, size_t start, char prefix, int64_t* value,
                       size_t* cr) {
  const char* p = data + start;
  const char* end = data + len;
  if (end - p < 4 || p[0] != prefix) return false;
  ++p;
  int64_t v = 0;
  const char* digits = p;
  if (*p == '0') {
    ++p;
  } else {
    const char* stop = std::min(end, digits + 18);
    while (p < stop && static_cast<unsigned char>(*p - '0') <= 9) v = v * 10 + (*p++ - '0');
  }
  // Need the '\r' and the byte after it (Redis skips that byte without checking it is '\n').
  if (p == digits || end - p < 2 || *p != '\r') return false;
  *value = v;
  *cr = static_cast<size_t>(p - data);
  return true;
}

inline bool IsSpace(char c) {  // C isspace() in the "C" locale
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

inline bool IsHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

inline int HexValue(char c) {
  if (c <= '9') return c - '0';
  if (c <= 'F') return c - 'A' + 10;
  return c - 'a' + 10;
}

}  // namespace

RequestParser::RequestParser() : RequestParser(Limits()) {}

RequestParser::RequestParser(Limits limits) : limits_(limits) {}

void RequestParser::Reset() {
  state_ = State::kStart;
  inline_ = false;
  pos_ = 0;
  scan_ = 0;
  hint_ = 0;
  remaining_ = 0;
  bulk_len_ = -1;
  if (spans_.capacity() > kKeepArgsCapacity) {
    std::vector<Span>().swap(spans_);
    std::vector<std::string_view>().swap(args_);
  } else {
    spans_.clear();
    args_.clear();
  }
  inline_args_.clear();
  error_.clear();
}

RequestParser::Status RequestParser::Parse(const char* data, size_t len) {
  switch (state_) {
    case State::kDone:
      Reset();
      [[fallthrough]];
    case State::kStart:
      assert(pos_ == 0);
      if (len == 0) return Status::kNeedMore;
      if (data[0] != '*') return ParseInline(data, len);
      return ParseMultibulkHeader(data, len);
    case State::kMultibulk:
      assert(len >= pos_);
      return ParseArgs(data, len);
    case State::kError:
      break;
  }
  return Status::kError;
}

RequestParser::Line RequestParser::FindLineEnd(const char* data, size_t len, size_t start,
                                               char term, size_t* found) {
  // Redis looks for the terminator in all buffered bytes and fails once more than max_inline
  // bytes are buffered without one. Searching only the first max_inline + 1 bytes makes the
  // outcome independent of how the input was split into reads (Redis byte-by-byte behaviour).
  const size_t limit = std::min(len, start + limits_.max_inline + 1);
  const size_t from = std::max(scan_, start);
  const void* hit = from < limit ? std::memchr(data + from, term, limit - from) : nullptr;
  if (hit == nullptr) {
    scan_ = limit;
    return len - start > limits_.max_inline ? Line::kTooBig : Line::kNeedMore;
  }
  *found = static_cast<size_t>(static_cast<const char*>(hit) - data);
  scan_ = *found;
  return Line::kFound;
}

RequestParser::Status RequestParser::ParseMultibulkHeader(const char* data, size_t len) {
  int64_t count;
  size_t cr;
  if (!FastHeader(data, len, 0, '*', &count, &cr)) {
    switch (FindLineEnd(data, len, 0, '\r', &cr)) {
      case Line::kTooBig:
        return Fail("Protocol error: too big mbulk count string");
      case Line::kNeedMore:
        return Status::kNeedMore;
      case Line::kFound:
        break;
    }
    if (cr + 2 > len) return Status::kNeedMore;  // Redis also waits for the byte after '\r'
    if (!ParseRedisInt(data + 1, cr - 1, &count)) {
      return Fail("Protocol error: invalid multibulk length");
    }
  }
  if (count > static_cast<int64_t>(std::min<size_t>(limits_.max_multibulk, INT64_MAX))) {
    return Fail("Protocol error: invalid multibulk length");
  }
  if (auth_required_ && count > kMaxUnauthMultibulk) {
    return Fail("Protocol error: unauthenticated multibulk length");
  }
  pos_ = cr + 2;
  if (count <= 0) return Done();  // Redis skips "*0" and "*-N" as empty requests
  remaining_ = count;
  // Reserve for ordinary requests only: a hostile "*2000000000" must not allocate up front.
  if (count <= 1024) spans_.reserve(static_cast<size_t>(count));
  state_ = State::kMultibulk;
  return ParseArgs(data, len);
}

RequestParser::Status RequestParser::ParseArgs(const char* data, size_t len) {
  while (remaining_ > 0) {
    if (bulk_len_ < 0) {
      int64_t n;
      size_t cr;
      if (FastHeader(data, len, pos_, '$', &n, &cr)) {
        if (static_cast<uint64_t>(n) > limits_.max_bulk_len) {
          return Fail("Protocol error: invalid bulk length");
        }
      } else {
        switch (FindLineEnd(data, len, pos_, '\r', &cr)) {
          case Line::kTooBig:
            return Fail("Protocol error: too big bulk count string");
          case Line::kNeedMore:
            hint_ = 0;
            return Status::kNeedMore;
          case Line::kFound:
            break;
        }
        if (cr + 2 > len) {
          hint_ = 0;
          return Status::kNeedMore;
        }
        if (data[pos_] != '$') {
          std::string message = "Protocol error: expected '$', got '";
          message += data[pos_];
          message += '\'';
          return Fail(message);
        }
        if (!ParseRedisInt(data + pos_ + 1, cr - pos_ - 1, &n) || n < 0 ||
            static_cast<uint64_t>(n) > limits_.max_bulk_len) {
          return Fail("Protocol error: invalid bulk length");
        }
      }
      if (auth_required_ && n > kMaxUnauthBulk) {
        return Fail("Protocol error: unauthenticated bulk length");
      }
      pos_ = cr + 2;
      bulk_len_ = n;
    }
    // The payload and the two bytes after it, which Redis skips without checking for "\r\n".
    const size_t need = pos_ + static_cast<size_t>(bulk_len_) + 2;
    if (len < need) {
      hint_ = need;
      return Status::kNeedMore;
    }
    spans_.push_back({pos_, static_cast<size_t>(bulk_len_)});
    pos_ = need;
    bulk_len_ = -1;
    --remaining_;
  }
  // Appended rather than resized: resize value-initializes out of line, on every request.
  args_.clear();
  for (const Span& span : spans_) args_.emplace_back(data + span.offset, span.len);
  return Done();
}

RequestParser::Status RequestParser::ParseInline(const char* data, size_t len) {
  size_t newline;
  switch (FindLineEnd(data, len, 0, '\n', &newline)) {
    case Line::kTooBig:
      return Fail("Protocol error: too big inline request");
    case Line::kNeedMore:
      return Status::kNeedMore;
    case Line::kFound:
      break;
  }
  const size_t line_len = (newline > 0 && data[newline - 1] == '\r') ? newline - 1 : newline;
  if (!SplitInline(data, line_len)) {
    return Fail("Protocol error: unbalanced quotes in request");
  }
  pos_ = newline + 1;
  inline_ = true;
  return Done();
}

// Redis's sdssplitargs: arguments are separated by whitespace; "double quotes" understand
// \xHH \n \r \t \b \a and \<any>; 'single quotes' understand only \'; a quote may open mid-word;
// a closing quote must be followed by whitespace or the end of the line.
bool RequestParser::SplitInline(const char* s, size_t n) {
  spans_.clear();
  inline_args_.clear();
  inline_args_.reserve(n);  // arguments never grow when unescaped, so views stay valid
  size_t i = 0;
  while (true) {
    while (i < n && IsSpace(s[i])) ++i;
    if (i == n) break;
    const size_t start = inline_args_.size();
    char quote = 0;  // '"' or '\'' inside a quoted argument
    bool done = false;
    while (!done) {
      if (quote != 0) {
        if (i == n) return false;  // unterminated quotes
        const char c = s[i];
        const bool dq = quote == '"';  // escapes: \xHH \n \r \t \b \a; in '...' only \'
        if (dq && c == '\\' && i + 3 < n && s[i + 1] == 'x' && IsHex(s[i + 2]) && IsHex(s[i + 3])) {
          inline_args_ += static_cast<char>(HexValue(s[i + 2]) * 16 + HexValue(s[i + 3]));
          i += 4;
        } else if (dq && c == '\\' && i + 1 < n) {
          char e = s[i + 1];
          switch (e) {
            case 'n':
              e = '\n';
              break;
            case 'r':
              e = '\r';
              break;
            case 't':
              e = '\t';
              break;
            case 'b':
              e = '\b';
              break;
            case 'a':
              e = '\a';
              break;
            default:
              break;
          }
          inline_args_ += e;
          i += 2;
        } else if (!dq && c == '\\' && i + 1 < n && s[i + 1] == '\'') {
          inline_args_ += '\'';
          i += 2;
        } else if (c == quote) {
          if (i + 1 < n && !IsSpace(s[i + 1])) return false;
          done = true;
          ++i;
        } else {
          inline_args_ += c;
          ++i;
        }
      } else {
        if (i == n) break;
        const char c = s[i++];
        switch (c) {
          case ' ':
          case '\n':
          case '\r':
          case '\t':
            done = true;
            break;
          case '"':
            quote = '"';
            break;
          case '\'':
            quote = '\'';
            break;
          default:
            inline_args_ += c;
            break;
        }
      }
    }
    spans_.push_back({start, inline_args_.size() - start});
  }
  args_.resize(spans_.size());
  for (size_t k = 0; k < spans_.size(); ++k) {
    args_[k] = std::string_view(inline_args_.data() + spans_[k].offset, spans_[k].len);
  }
  return true;
}

RequestParser::Status RequestParser::Done() {
  state_ = State::kDone;
  hint_ = 0;
  return Status::kDone;
}

RequestParser::Status RequestParser::Fail(std::string_view message) {
  state_ = State::kError;
  hint_ = 0;
  spans_.clear();
  args_.clear();
  error_.assign(message);
  return Status::kError;
}

bool RequestParser::Take(const char* data, const RequestAhead& ahead) {
  if (state_ == State::kError || ahead.argc > limits_.max_multibulk ||
      ahead.longest > limits_.max_bulk_len ||
      (auth_required_ && (ahead.argc > static_cast<uint64_t>(kMaxUnauthMultibulk) ||
                          ahead.longest > static_cast<uint64_t>(kMaxUnauthBulk)))) {
    return false;
  }
  inline_ = false;
  scan_ = 0;
  hint_ = 0;
  remaining_ = 0;
  bulk_len_ = -1;
  spans_.clear();
  args_.clear();
  for (uint32_t i = 0; i < ahead.argc; ++i)
    args_.emplace_back(data + ahead.offset[i], ahead.size[i]);
  pos_ = ahead.length;
  state_ = State::kDone;
  return true;
}

bool ReadAhead(const char* data, size_t len, RequestAhead* out) {
  int64_t argc;
  size_t cr;
  // FastHeader is exactly what Parse reads first: the same bytes give the same numbers.
  if (!FastHeader(data, len, 0, '*', &argc, &cr) || argc < 1 ||
      argc > static_cast<int64_t>(RequestAhead::kMaxArgs)) {
    return false;
  }
  size_t pos = cr + 2;
  uint64_t longest = 0;
  for (int64_t i = 0; i < argc; ++i) {
    int64_t n;
    if (!FastHeader(data, len, pos, '$', &n, &cr)) return false;
    pos = cr + 2;
    const uint64_t size = static_cast<uint64_t>(n);
    if (size > len - pos || len - pos - size < 2 || pos + size + 2 > UINT32_MAX) return false;
    out->offset[i] = static_cast<uint32_t>(pos);
    out->size[i] = static_cast<uint32_t>(size);
    longest = std::max(longest, size);
    pos += size + 2;
  }
  out->argc = static_cast<uint32_t>(argc);
  out->longest = static_cast<uint32_t>(longest);
  out->length = static_cast<uint32_t>(pos);
  return true;
}

}  // namespace lavik
