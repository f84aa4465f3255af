// Where the RDB decoder takes its bytes from. A decoder pulls exactly what the format says it
// needs next, so the same code reads a DUMP payload held in memory (StringSource) and, later, a
// dump.rdb file or a full-sync stream read piece by piece.
//
// Thread safety: a source is used by one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace lavik::rdb {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads exactly `n` bytes into `dst`. False at the end of the input (or on an I/O error):
  // the decoder then reports a truncated value.
  virtual bool Read(void* dst, size_t n) = 0;
  // Appends exactly `n` bytes to *out. The default grows *out a bounded piece at a time, so a
  // corrupt length never allocates more than the input really holds (plus one piece).
  virtual bool ReadAppend(size_t n, std::string* out);
};

// A source read through a buffer that a subclass refills from somewhere (a file, a socket), so
// input of any size is decoded with bounded memory.
class BufferedSource : public ByteSource {
 public:
  bool Read(void* dst, size_t n) override;
  // Grows *out only as bytes really arrive, so a corrupt length cannot allocate ahead of them.
  bool ReadAppend(size_t n, std::string* out) override;
  uint64_t consumed() const { return consumed_; }  // bytes handed out so far
  // Up to `max` bytes, as many as are buffered (refilling first if none are): they stay valid
  // until the next call. Empty at the end of the input (or on an error).
  std::string_view ReadSome(size_t max);

 protected:
  // Called when buf_[pos_, end_) is used up: puts the next bytes in buf_ and sets pos_ = 0 and
  // end_; false at the end of the input or on an error.
  virtual bool Refill() = 0;
  bool Fill() { return pos_ < end_ || Refill(); }
  std::string buf_;
  size_t pos_ = 0, end_ = 0;
  uint64_t consumed_ = 0;
};

// A source over bytes in memory (they must outlive it).
class StringSource : public ByteSource {
 public:
  explicit StringSource(std::string_view data) : data_(data) {}
  bool Read(void* dst, size_t n) override;
  bool ReadAppend(size_t n, std::string* out) override;
  size_t remaining() const { return data_.size() - pos_; }
  size_t position() const { return pos_; }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

}  // namespace lavik::rdb
