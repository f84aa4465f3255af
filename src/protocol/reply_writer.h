// ReplyWriter: appends RESP2 or RESP3 replies to a caller-owned std::string, byte for byte as
// Redis 7.0 writes them. RESP3-only types are downgraded for RESP2 clients the way Redis does
// (map -> flat array, double -> bulk string, bool -> integer, verbatim -> bulk, null -> $-1/*-1).
//
// The writer never flushes and never fails: it only appends to *out. Aggregate headers (Array,
// Map...) are just headers; the caller then writes exactly the announced number of elements.
//
// Thread safety: none; one writer per connection (or per reply), used by one thread.

#ifndef LAVIK_PROTOCOL_REPLY_WRITER_H_
#define LAVIK_PROTOCOL_REPLY_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace lavik {

// Told about every error reply a writer produces (INFO errorstats). The text is as passed to
// Error(), without the leading '-'.
class ErrorSink {
 public:
  virtual void OnErrorReply(std::string_view text) = 0;

 protected:
  ~ErrorSink() = default;
};

class ReplyWriter {
 public:
  // `out` must outlive the writer (or be replaced with SetOutput). `resp` is 2 or 3.
  ReplyWriter(std::string* out, int resp) : out_(out), resp_(resp) {}

  void SetOutput(std::string* out) { out_ = out; }
  std::string* output() const { return out_; }
  int resp() const { return resp_; }
  void set_resp(int resp) { resp_ = resp; }
  // Error replies written so far (a command failed if this grew while it ran), and where to
  // report each one (nullptr: nowhere).
  uint64_t errors() const { return errors_; }
  void set_error_sink(ErrorSink* sink) { error_sink_ = sink; }

  void Simple(std::string_view s);  // +s    (s must not contain CR or LF)
  void Ok();                        // +OK
  // -s, where s starts with its code ("ERR foo", "WRONGTYPE ..."); CR and LF become spaces.
  void Error(std::string_view s);
  void Integer(int64_t v);        // :v
  void Bulk(std::string_view s);  // $len\r\n s \r\n
  // "$len\r\n" only: the caller appends exactly `len` payload bytes and then "\r\n" (lets a large
  // value be copied, or read from the device, straight into the output buffer).
  void BulkHeader(size_t len);
  void BulkInt(int64_t v);  // v as a bulk string ("$2\r\n42\r\n")
  void Null();              // RESP2 $-1, RESP3 _
  void NullArray();         // RESP2 *-1, RESP3 _
  void Array(size_t n);     // *n
  void Map(size_t n);       // RESP3 %n; RESP2 *2n (the caller writes n key/value pairs)
  void Set(size_t n);       // RESP3 ~n; RESP2 *n
  void Push(size_t n);      // RESP3 >n; RESP2 *n
  // RESP3 ,d; RESP2 bulk string. Finite values print as printf("%.17g") like Redis 7.0
  // (0.1 -> "0.10000000000000001"); infinities as "inf"/"-inf"; NaN as "nan".
  void Double(double d);
  void Bool(bool b);  // RESP3 #t/#f; RESP2 :1/:0
  // RESP3 =len\r\n fmt:text (fmt is exactly 3 bytes, e.g. "txt", "mkd"); RESP2 bulk of text.
  void Verbatim(std::string_view text, std::string_view fmt = "txt");
  void Raw(std::string_view bytes);  // appended unchanged

 private:
  // Appends <type><n>\r\n.
  void Header(char type, uint64_t n);

  std::string* out_;
  int resp_;
  uint64_t errors_ = 0;
  ErrorSink* error_sink_ = nullptr;
};

}  // namespace lavik

#endif  // LAVIK_PROTOCOL_REPLY_WRITER_H_
