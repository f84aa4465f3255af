// FileSource: a ByteSource over an open file descriptor, read sequentially through a fixed
// buffer (1 MiB), so a dump.rdb of any size is decoded with bounded memory.
//
// Thread safety: one thread at a time.
#pragma once

#include <string>

#include "rdb/source.h"

namespace lavik::rdb {

class FileSource : public ByteSource {
 public:
  // Opens `path` for reading; ok() says whether it did (error() says why).
  explicit FileSource(const std::string& path);
  ~FileSource() override;
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;

  bool ok() const { return fd_ >= 0; }
  const std::string& error() const { return error_; }
  bool Read(void* dst, size_t n) override;
  bool ReadAppend(size_t n, std::string* out) override;

 private:
  bool Fill();  // refills buf_ when it is used up; false at the end or on an error
  int fd_ = -1;
  std::string buf_;
  size_t pos_ = 0, end_ = 0;
  std::string error_;
};

}  // namespace lavik::rdb
