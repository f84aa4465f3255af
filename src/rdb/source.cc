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
