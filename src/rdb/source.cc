#include "rdb/source.h"

#include <algorithm>
#include <cstring>

namespace lavik::rdb {

bool ByteSource::ReadAppend(size_t n, std::string* out) {
  constexpr size_t kPiece = 64 << 10;
  while (n > 0) {
    const size_t take = std::min(n, kPiece);
    const size_t at = out->size();
    out->resize(at + take);
    if (!Read(out->data() + at, take)) return false;
    n -= take;
  }
  return true;
}

bool BufferedSource::Read(void* dst, size_t n) {
  auto* d = static_cast<char*>(dst);
  while (n > 0) {
    if (!Fill()) return false;
    const size_t take = std::min(n, end_ - pos_);
    std::memcpy(d, buf_.data() + pos_, take);
    pos_ += take;
    consumed_ += take;
    d += take;
    n -= take;
  }
  return true;
}

bool BufferedSource::ReadAppend(size_t n, std::string* out) {
  while (n > 0) {
    if (!Fill()) return false;
    const size_t take = std::min(n, end_ - pos_);
    out->append(buf_.data() + pos_, take);
    pos_ += take;
    consumed_ += take;
    n -= take;
  }
  return true;
}

std::string_view BufferedSource::ReadSome(size_t max) {
  if (max == 0 || !Fill()) return {};
  const size_t take = std::min(max, end_ - pos_);
  const std::string_view out(buf_.data() + pos_, take);
  pos_ += take;
  consumed_ += take;
  return out;
}

bool StringSource::Read(void* dst, size_t n) {
  if (n > remaining()) return false;
  if (n > 0) std::memcpy(dst, data_.data() + pos_, n);
  pos_ += n;
  return true;
}

bool StringSource::ReadAppend(size_t n, std::string* out) {
  if (n > remaining()) return false;
  out->append(data_.data() + pos_, n);
  pos_ += n;
  return true;
}

}  // namespace lavik::rdb
