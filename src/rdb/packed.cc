#include "rdb/packed.h"

#include <cstring>

#include "base/numbers.h"

namespace lavik::rdb {
namespace {

uint64_t Little(const unsigned char* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

int64_t SignExtend(uint64_t v, int bits) {
  const uint64_t sign = uint64_t{1} << (bits - 1);
  return static_cast<int64_t>((v ^ sign) - sign);
}

// Bytes the listpack backlen of an entry of `len` bytes takes.
size_t BacklenSize(uint64_t len) {
  if (len <= 127) return 1;
  if (len < 16383) return 2;
  if (len < 2097151) return 3;
  if (len < 268435455) return 4;
  return 5;
}

// The backlen bytes end at p[n-1]; the last one holds the low 7 bits, earlier ones higher bits,
// every byte but the first (highest) has bit 7 set.
uint64_t DecodeBacklen(const unsigned char* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint64_t{p[n - 1 - i] & 0x7fu} << (7 * i);
  return v;
}

}  // namespace

std::string PackedItem::ToString() const {
  if (!is_int) return std::string(str);
  char buf[kMaxInt64Chars];
  return std::string(buf, FormatInt64(num, buf));
}

bool ParseListpack(std::string_view blob, std::vector<PackedItem>* out) {
  out->clear();
  const auto* p = reinterpret_cast<const unsigned char*>(blob.data());
  const size_t size = blob.size();
  if (size < 7 || Little(p, 4) != size || p[size - 1] != 0xff) return false;
  const uint64_t declared = Little(p + 4, 2);
  size_t pos = 6;
  const size_t end = size - 1;  // the terminator
  while (pos < end) {
    const unsigned char b = p[pos];
    const size_t room = end - pos;
    PackedItem item;
    size_t head = 0, len = 0;  // encoding bytes, string bytes
    if ((b & 0x80) == 0) {
      item.is_int = true;
      item.num = b & 0x7f;
      head = 1;
    } else if ((b & 0xc0) == 0x80) {
      head = 1;
      len = b & 0x3f;
    } else if ((b & 0xe0) == 0xc0) {
      if (room < 2) return false;
      item.is_int = true;
      item.num = SignExtend((uint64_t{b & 0x1fu} << 8) | p[pos + 1], 13);
      head = 2;
    } else if ((b & 0xf0) == 0xe0) {
      if (room < 2) return false;
      head = 2;
      len = (uint64_t{b & 0x0fu} << 8) | p[pos + 1];
    } else if (b == 0xf0) {
      if (room < 5) return false;
      head = 5;
      len = Little(p + pos + 1, 4);
    } else if (b >= 0xf1 && b <= 0xf4) {
      static constexpr int kWidth[] = {2, 3, 4, 8};
      const int w = kWidth[b - 0xf1];
      if (room < static_cast<size_t>(1 + w)) return false;
      item.is_int = true;
      item.num = SignExtend(Little(p + pos + 1, w), 8 * w);
      head = 1 + w;
    } else {
      return false;  // 0xf5..0xfe are unused; 0xff may only end the blob
    }
    if (len > room - head) return false;
    const uint64_t entry = head + len;
    const size_t back = BacklenSize(entry);
    if (back > room - entry) return false;
    if (DecodeBacklen(p + pos + entry, back) != entry) return false;
    if (!item.is_int) item.str = blob.substr(pos + head, len);
    out->push_back(item);
    pos += entry + back;
  }
  return declared == 65535 || declared == out->size();
}

bool ParseZiplist(std::string_view blob, std::vector<PackedItem>* out) {
  out->clear();
  const auto* p = reinterpret_cast<const unsigned char*>(blob.data());
  const size_t size = blob.size();
  if (size < 11 || Little(p, 4) != size || p[size - 1] != 0xff) return false;
  const uint64_t tail = Little(p + 4, 4);
  const uint64_t declared = Little(p + 8, 2);
  size_t pos = 10, prev_len = 0, last = 10;
  const size_t end = size - 1;
  while (pos < end) {
    last = pos;
    size_t at = pos;
    uint64_t prevlen = p[at++];
    if (prevlen == 0xfe) {
      if (end - at < 4) return false;
      prevlen = Little(p + at, 4);
      at += 4;
    } else if (prevlen == 0xff) {
      return false;
    }
    if (prevlen != prev_len) return false;
    if (at >= end) return false;
    const unsigned char b = p[at++];
    PackedItem item;
    size_t len = 0;
    switch (b >> 6) {
      case 0:
        len = b & 0x3f;
        break;
      case 1:
        if (at >= end) return false;
        len = (uint64_t{b & 0x3fu} << 8) | p[at++];
        break;
      case 2:
        if (b != 0x80 || end - at < 4) return false;
        len = (uint64_t{p[at]} << 24) | (uint64_t{p[at + 1]} << 16) | (uint64_t{p[at + 2]} << 8) |
              p[at + 3];
        at += 4;
        break;
      default: {
        item.is_int = true;
        int w = 0;
        if (b == 0xc0) {
          w = 2;
        } else if (b == 0xd0) {
          w = 4;
        } else if (b == 0xe0) {
          w = 8;
        } else if (b == 0xf0) {
          w = 3;
        } else if (b == 0xfe) {
          w = 1;
        } else if (b >= 0xf1 && b <= 0xfd) {
          item.num = (b & 0x0f) - 1;
        } else {
          return false;
        }
        if (static_cast<size_t>(end - at) < static_cast<size_t>(w)) return false;
        if (w > 0) item.num = SignExtend(Little(p + at, w), 8 * w);
        at += w;
      }
    }
    if (!item.is_int) {
      if (len > end - at) return false;
      item.str = blob.substr(at, len);
      at += len;
    }
    out->push_back(item);
    prev_len = at - pos;
    pos = at;
  }
  if (!out->empty() && tail != last) return false;
  if (out->empty() && tail != 10) return false;
  return declared == 65535 || declared == out->size();
}

bool ParseIntset(std::string_view blob, std::vector<int64_t>* out) {
  out->clear();
  const auto* p = reinterpret_cast<const unsigned char*>(blob.data());
  if (blob.size() < 8) return false;
  const uint64_t width = Little(p, 4), count = Little(p + 4, 4);
  if (width != 2 && width != 4 && width != 8) return false;
  if ((blob.size() - 8) / width != count || (blob.size() - 8) % width != 0) return false;
  out->reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    out->push_back(SignExtend(Little(p + 8 + i * width, width), 8 * width));
  }
  return true;
}

bool ParseZipmap(std::string_view blob, std::vector<std::string_view>* out) {
  out->clear();
  const auto* p = reinterpret_cast<const unsigned char*>(blob.data());
  const size_t size = blob.size();
  if (size < 2) return false;
  size_t pos = 1;
  auto read_len = [&](uint64_t* len) {
    if (pos >= size) return false;
    const unsigned char b = p[pos++];
    if (b < 254) {
      *len = b;
      return true;
    }
    if (b != 254 || size - pos < 4) return false;
    *len = Little(p + pos, 4);
    pos += 4;
    return true;
  };
  while (true) {
    if (pos >= size) return false;
    if (p[pos] == 0xff) break;
    uint64_t klen, vlen;
    if (!read_len(&klen) || klen > size - pos) return false;
    out->push_back(blob.substr(pos, klen));
    pos += klen;
    if (!read_len(&vlen) || pos >= size) return false;
    const uint64_t free = p[pos++];
    if (vlen > size - pos || free > size - pos - vlen) return false;
    out->push_back(blob.substr(pos, vlen));
    pos += vlen + free;
  }
  return pos + 1 == size;
}

void ListpackWriter::Reset() {
  buf_.assign(6, '\0');
  count_ = 0;
}

void ListpackWriter::EndEntry(size_t start) {
  const uint64_t len = buf_.size() - start;
  const size_t n = BacklenSize(len);
  for (size_t i = 0; i < n; ++i) {
    const unsigned bits = (len >> (7 * (n - 1 - i))) & 0x7f;
    buf_.push_back(static_cast<char>(i == 0 ? bits : bits | 0x80));
  }
  ++count_;
}

void ListpackWriter::AddInt(int64_t v) {
  const size_t start = buf_.size();
  auto put = [&](uint8_t tag, int w) {
    buf_.push_back(static_cast<char>(tag));
    for (int i = 0; i < w; ++i)
      buf_.push_back(static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xff));
  };
  if (v >= 0 && v <= 127) {
    buf_.push_back(static_cast<char>(v));
  } else if (v >= -4096 && v <= 4095) {
    const uint64_t u = static_cast<uint64_t>(v) & 0x1fff;
    buf_.push_back(static_cast<char>(0xc0 | (u >> 8)));
    buf_.push_back(static_cast<char>(u & 0xff));
  } else if (v >= INT16_MIN && v <= INT16_MAX) {
    put(0xf1, 2);
  } else if (v >= -(1 << 23) && v < (1 << 23)) {
    put(0xf2, 3);
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    put(0xf3, 4);
  } else {
    put(0xf4, 8);
  }
  EndEntry(start);
}

void ListpackWriter::AddString(std::string_view s) {
  const size_t start = buf_.size();
  const uint64_t n = s.size();
  if (n < 64) {
    buf_.push_back(static_cast<char>(0x80 | n));
  } else if (n < 4096) {
    buf_.push_back(static_cast<char>(0xe0 | (n >> 8)));
    buf_.push_back(static_cast<char>(n & 0xff));
  } else {
    buf_.push_back(static_cast<char>(0xf0));
    for (int i = 0; i < 4; ++i) buf_.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  }
  buf_.append(s);
  EndEntry(start);
}

void ListpackWriter::Add(std::string_view s) {
  int64_t v;
  if (s.size() <= kMaxInt64Chars && ParseInt64(s, &v)) {
    AddInt(v);
  } else {
    AddString(s);
  }
}

std::string ListpackWriter::Finish() {
  buf_.push_back(static_cast<char>(0xff));
  const uint64_t total = buf_.size();
  for (int i = 0; i < 4; ++i) buf_[i] = static_cast<char>((total >> (8 * i)) & 0xff);
  const uint64_t count = count_ < 65535 ? count_ : 65535;
  buf_[4] = static_cast<char>(count & 0xff);
  buf_[5] = static_cast<char>(count >> 8);
  std::string out = std::move(buf_);
  Reset();
  return out;
}

std::string EncodeIntset(const std::vector<int64_t>& sorted) {
  uint32_t width = 2;
  for (int64_t v : sorted) {
    if (v < INT32_MIN || v > INT32_MAX) {
      width = 8;
      break;
    }
    if (v < INT16_MIN || v > INT16_MAX) width = 4;
  }
  std::string out;
  out.reserve(8 + sorted.size() * width);
  auto put = [&](uint64_t v, uint32_t w) {
    for (uint32_t i = 0; i < w; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  put(width, 4);
  put(sorted.size(), 4);
  for (int64_t v : sorted) put(static_cast<uint64_t>(v), width);
  return out;
}

}  // namespace lavik::rdb
