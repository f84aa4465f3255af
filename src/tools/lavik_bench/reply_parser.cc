#include "tools/lavik_bench/reply_parser.h"

#include <cstring>

namespace lavik::bench {
namespace {

constexpr int kMaxDepth = 32;
constexpr size_t kMaxLine = 64 * 1024;

// Finds the "\r\n" ending the line that starts at data[pos]; returns its offset or -1 (need
// more) or -2 (line too long to be a reply header).
int64_t FindCrlf(const char* data, size_t len, size_t pos) {
  const size_t limit = len - pos > kMaxLine ? pos + kMaxLine : len;
  const void* cr = std::memchr(data + pos, '\r', limit - pos);
  if (cr == nullptr) return len - pos > kMaxLine ? -2 : -1;
  const size_t at = static_cast<const char*>(cr) - data;
  if (at + 1 >= len) return -1;
  return data[at + 1] == '\n' ? static_cast<int64_t>(at) : -2;
}

// Parses a signed decimal in data[begin, end).
bool ParseLength(const char* data, size_t begin, size_t end, int64_t* out) {
  if (begin >= end || end - begin > 18) return false;  // 18 digits cannot overflow
  bool neg = false;
  if (data[begin] == '-') {
    neg = true;
    if (++begin == end) return false;
  }
  int64_t v = 0;
  for (size_t i = begin; i < end; ++i) {
    if (data[i] < '0' || data[i] > '9') return false;
    v = v * 10 + (data[i] - '0');
  }
  *out = neg ? -v : v;
  return true;
}

ParseStatus ParseAt(const char* data, size_t len, size_t* pos, int depth, Reply* reply) {
  if (*pos >= len) return ParseStatus::kNeedMore;
  if (depth > kMaxDepth) return ParseStatus::kError;
  const char type = data[*pos];
  const int64_t crlf = FindCrlf(data, len, *pos + 1);
  if (crlf == -1) return ParseStatus::kNeedMore;
  if (crlf < 0) return ParseStatus::kError;
  const size_t line_begin = *pos + 1;
  const size_t line_end = static_cast<size_t>(crlf);
  const size_t after = line_end + 2;
  switch (type) {
    case '+':
      reply->kind = ReplyKind::kSimple;
      *pos = after;
      return ParseStatus::kDone;
    case '-':
      reply->kind = ReplyKind::kError;
      *pos = after;
      return ParseStatus::kDone;
    case ':':
      reply->kind = ReplyKind::kInteger;
      if (!ParseLength(data, line_begin, line_end, &reply->integer)) return ParseStatus::kError;
      *pos = after;
      return ParseStatus::kDone;
    case '_':
      reply->kind = ReplyKind::kNil;
      *pos = after;
      return ParseStatus::kDone;
    case '#':
    case ',':
    case '(':
      reply->kind = ReplyKind::kOther;
      *pos = after;
      return ParseStatus::kDone;
    case '$':
    case '!':
    case '=': {
      int64_t n;
      if (!ParseLength(data, line_begin, line_end, &n) || n < -1) return ParseStatus::kError;
      if (n == -1) {
        reply->kind = ReplyKind::kNil;
        *pos = after;
        return ParseStatus::kDone;
      }
      const size_t end = after + static_cast<size_t>(n) + 2;
      if (len < end) return ParseStatus::kNeedMore;
      if (data[end - 2] != '\r' || data[end - 1] != '\n') return ParseStatus::kError;
      reply->kind = type == '!'   ? ReplyKind::kError
                    : type == '$' ? ReplyKind::kBulk
                                  : ReplyKind::kOther;
      reply->integer = n;
      *pos = end;
      return ParseStatus::kDone;
    }
    case '*':
    case '~':
    case '>':
    case '%':
    case '|': {
      int64_t n;
      if (!ParseLength(data, line_begin, line_end, &n) || n < -1) return ParseStatus::kError;
      if (n == -1) {
        reply->kind = ReplyKind::kNil;
        *pos = after;
        return ParseStatus::kDone;
      }
      // Maps and attributes hold n key/value pairs.
      const int64_t elements = (type == '%' || type == '|') ? 2 * n : n;
      size_t p = after;
      Reply element;
      for (int64_t i = 0; i < elements; ++i) {
        const ParseStatus s = ParseAt(data, len, &p, depth + 1, &element);
        if (s != ParseStatus::kDone) return s;
      }
      if (type == '|') {
        // An attribute precedes the actual reply.
        *pos = p;
        return ParseAt(data, len, pos, depth + 1, reply);
      }
      reply->kind = ReplyKind::kAggregate;
      reply->integer = n;
      *pos = p;
      return ParseStatus::kDone;
    }
    default:
      return ParseStatus::kError;
  }
}

}  // namespace

ParseStatus ParseReply(const char* data, size_t len, Reply* reply, size_t* consumed) {
  size_t pos = 0;
  const ParseStatus s = ParseAt(data, len, &pos, 0, reply);
  if (s == ParseStatus::kDone) *consumed = pos;
  return s;
}

}  // namespace lavik::bench
