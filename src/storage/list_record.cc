#include "storage/list_record.h"

#include <cstring>

#include "base/varint.h"

namespace lavik {
namespace {

constexpr uint8_t kVersion = 1;
constexpr char kKind = 'L';
constexpr size_t kHeaderSize = 8;

uint32_t LoadU32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);  // little-endian hosts only (as the record format)
  return v;
}

}  // namespace

bool ListView::Parse(std::string_view encoded) {
  *this = ListView();
  if (encoded.empty()) return true;
  if (encoded.size() < kHeaderSize || static_cast<uint8_t>(encoded[0]) != kVersion ||
      encoded[1] != kKind || encoded[2] != 0 || encoded[3] != 0) {
    return false;
  }
  const uint32_t count = LoadU32(encoded.data() + 4);
  if (count == 0 || (encoded.size() - kHeaderSize) / 4 < count) return false;
  offsets_ = encoded.data() + kHeaderSize;
  data_ = encoded.substr(kHeaderSize + size_t{4} * count);
  count_ = count;
  // The first element starts the area; the last one must end it exactly.
  if (LoadU32(offsets_) != 0) {
    *this = ListView();
    return false;
  }
  const uint32_t last = LoadU32(offsets_ + size_t{4} * (count - 1));
  const std::string_view e = last < data_.size() ? element(count - 1) : std::string_view();
  if (last >= data_.size() || e.data() + e.size() != data_.data() + data_.size()) {
    *this = ListView();
    return false;
  }
  return true;
}

std::string_view ListView::element(uint32_t i) const {
  const uint32_t off = LoadU32(offsets_ + size_t{4} * i);
  if (off >= data_.size()) return {};
  const char* p = data_.data() + off;
  const char* end = data_.data() + data_.size();
  uint32_t len;
  if (!ReadVarint32(&p, end, &len) || static_cast<size_t>(end - p) < len) return {};
  return std::string_view(p, len);
}

std::vector<std::string_view> ListView::Elements() const {
  std::vector<std::string_view> out;
  out.reserve(count_);
  for (uint32_t i = 0; i < count_; ++i) out.push_back(element(i));
  return out;
}

std::string EncodeList(const std::vector<std::string_view>& elements) {
  if (elements.empty()) return {};
  const auto count = static_cast<uint32_t>(elements.size());
  size_t data = 0;
  for (std::string_view e : elements) data += e.size() + 5;
  std::string out;
  out.reserve(kHeaderSize + size_t{4} * count + data);
  out.push_back(static_cast<char>(kVersion));
  out.push_back(kKind);
  out.append(2, '\0');
  out.append(reinterpret_cast<const char*>(&count), 4);
  const size_t table = out.size();
  out.append(size_t{4} * count, '\0');
  const size_t area = out.size();
  for (uint32_t i = 0; i < count; ++i) {
    const auto off = static_cast<uint32_t>(out.size() - area);
    std::memcpy(out.data() + table + size_t{4} * i, &off, 4);
    AppendVarint(&out, elements[i].size());
    out.append(elements[i]);
  }
  return out;
}

}  // namespace lavik
