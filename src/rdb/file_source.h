// FileSource: a ByteSource over an open file descriptor, read sequentially through a fixed
// buffer (1 MiB), so a dump.rdb of any size is decoded with bounded memory.
//
// Thread safety: one thread at a time.
#pragma once

#include <string>

#include "rdb/source.h"

namespace lavik::rdb {

class FileSource : public BufferedSource {
 public:
  // Opens `path` for reading; ok() says whether it did (error() says why).
  explicit FileSource(const std::string& path);
  ~FileSource() override;
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;

  bool ok() const { return fd_ >= 0; }
  const std::string& error() const { return error_; }

 private:
  bool Refill() override;
  int fd_ = -1;
  std::string error_;
};

}  // namespace lavik::rdb
