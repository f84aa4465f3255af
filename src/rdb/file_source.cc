#include "rdb/file_source.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace lavik::rdb {
namespace {
constexpr size_t kBufferBytes = 1 << 20;
}  // namespace

FileSource::FileSource(const std::string& path) {
  fd_ = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) error_ = std::strerror(errno);
  buf_.resize(kBufferBytes);
}

FileSource::~FileSource() {
  if (fd_ >= 0) close(fd_);
}

bool FileSource::Refill() {
  if (fd_ < 0) return false;
  for (;;) {
    const ssize_t got = read(fd_, buf_.data(), buf_.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) error_ = std::strerror(errno);
    if (got <= 0) return false;
    pos_ = 0;
    end_ = static_cast<size_t>(got);
    return true;
  }
}

}  // namespace lavik::rdb
