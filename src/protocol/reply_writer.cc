#include "protocol/reply_writer.h"

#include <cassert>
#include <charconv>
#include <cmath>
#include <cstring>

namespace lavik {
namespace {

constexpr std::string_view kCrlf = "\r\n";

// Formats `v` as Redis's "%.17g" would (std::to_chars with a precision follows printf rules) and
// returns its length; inf/nan get the spellings Redis and the RESP3 spec use.
size_t FormatDouble(double d, char* buf, size_t size) {
  if (std::isinf(d)) {
    const std::string_view s = d > 0 ? "inf" : "-inf";
    std::memcpy(buf, s.data(), s.size());
    return s.size();
  }
  if (std::isnan(d)) {
    std::memcpy(buf, "nan", 3);
    return 3;
  }
  const auto result = std::to_chars(buf, buf + size, d, std::chars_format::general, 17);
  return static_cast<size_t>(result.ptr - buf);
}

}  // namespace

void ReplyWriter::Header(char type, uint64_t n) {
  char buf[24];
  buf[0] = type;
  char* p = std::to_chars(buf + 1, buf + sizeof(buf) - 2, n).ptr;
  *p++ = '\r';
  *p++ = '\n';
  out_->append(buf, static_cast<size_t>(p - buf));
}

void ReplyWriter::Simple(std::string_view s) {
  out_->push_back('+');
  out_->append(s);
  out_->append(kCrlf);
}

void ReplyWriter::Ok() { out_->append("+OK\r\n"); }

void ReplyWriter::Error(std::string_view s) {
  ++errors_;
  if (error_sink_ != nullptr) error_sink_->OnErrorReply(s);
  out_->push_back('-');
  const size_t start = out_->size();
  out_->append(s);
  // Error texts may quote user input; a CR or LF inside would end the reply early.
  for (size_t i = start; i < out_->size(); ++i) {
    char& c = (*out_)[i];
    if (c == '\r' || c == '\n') c = ' ';
  }
  out_->append(kCrlf);
}

void ReplyWriter::Integer(int64_t v) {
  char buf[24];
  buf[0] = ':';
  char* p = std::to_chars(buf + 1, buf + sizeof(buf) - 2, v).ptr;
  *p++ = '\r';
  *p++ = '\n';
  out_->append(buf, static_cast<size_t>(p - buf));
}

void ReplyWriter::Bulk(std::string_view s) {
  Header('$', s.size());
  out_->append(s);
  out_->append(kCrlf);
}

void ReplyWriter::BulkHeader(size_t len) { Header('$', len); }

void ReplyWriter::BulkInt(int64_t v) {
  // One append: "$" <1-2 digit length> "\r\n" <up to 20 digits> "\r\n".
  char digits[24];
  const size_t n =
      static_cast<size_t>(std::to_chars(digits, digits + sizeof(digits), v).ptr - digits);
  char buf[32];
  char* p = buf;
  *p++ = '$';
  if (n >= 10) *p++ = static_cast<char>('0' + n / 10);
  *p++ = static_cast<char>('0' + n % 10);
  *p++ = '\r';
  *p++ = '\n';
  std::memcpy(p, digits, n);
  p += n;
  *p++ = '\r';
  *p++ = '\n';
  out_->append(buf, static_cast<size_t>(p - buf));
}

void ReplyWriter::Null() { out_->append(resp_ >= 3 ? "_\r\n" : "$-1\r\n"); }

void ReplyWriter::NullArray() { out_->append(resp_ >= 3 ? "_\r\n" : "*-1\r\n"); }

void ReplyWriter::Array(size_t n) { Header('*', n); }

void ReplyWriter::Map(size_t n) {
  if (resp_ >= 3) {
    Header('%', n);
  } else {
    Header('*', static_cast<uint64_t>(n) * 2);
  }
}

void ReplyWriter::Set(size_t n) { Header(resp_ >= 3 ? '~' : '*', n); }

void ReplyWriter::Push(size_t n) { Header(resp_ >= 3 ? '>' : '*', n); }

void ReplyWriter::Double(double d) {
  char buf[40];
  if (resp_ >= 3) {
    buf[0] = ',';
    char* p = buf + 1 + FormatDouble(d, buf + 1, sizeof(buf) - 3);
    *p++ = '\r';
    *p++ = '\n';
    out_->append(buf, static_cast<size_t>(p - buf));
  } else {
    const size_t n = FormatDouble(d, buf, sizeof(buf));
    Bulk(std::string_view(buf, n));
  }
}

void ReplyWriter::Bool(bool b) {
  if (resp_ >= 3) {
    out_->append(b ? "#t\r\n" : "#f\r\n");
  } else {
    out_->append(b ? ":1\r\n" : ":0\r\n");
  }
}

void ReplyWriter::Verbatim(std::string_view text, std::string_view fmt) {
  if (resp_ < 3) {
    Bulk(text);
    return;
  }
  assert(fmt.size() == 3);
  Header('=', text.size() + 4);
  out_->append(fmt);
  out_->push_back(':');
  out_->append(text);
  out_->append(kCrlf);
}

void ReplyWriter::Raw(std::string_view bytes) { out_->append(bytes); }

}  // namespace lavik
