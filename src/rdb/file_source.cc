#include "rdb/file_source.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
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

bool FileSource::Fill() {
  if (pos_ < end_) return true;
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

bool FileSource::Read(void* dst, size_t n) {
  auto* d = static_cast<char*>(dst);
  while (n > 0) {
    if (!Fill()) return false;
    const size_t take = std::min(n, end_ - pos_);
    std::memcpy(d, buf_.data() + pos_, take);
    pos_ += take;
    d += take;
    n -= take;
  }
  return true;
}

bool FileSource::ReadAppend(size_t n, std::string* out) {
  // Grows *out only as bytes really arrive, so a corrupt length cannot allocate ahead of them.
  while (n > 0) {
    if (!Fill()) return false;
    const size_t take = std::min(n, end_ - pos_);
    out->append(buf_.data() + pos_, take);
    pos_ += take;
    n -= take;
  }
  return true;
}

}  // namespace lavik::rdb
