#include "rdb/codec.h"

#include <liblzf/lzf.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>

#include "base/numbers.h"

namespace lavik::rdb {
namespace {

constexpr uint8_t kEncInt8 = 0, kEncInt16 = 1, kEncInt32 = 2, kEncLzf = 3;

std::atomic<bool> g_lzf{true};  // CONFIG rdbcompression (SetCompression)

void PutLittle(uint64_t v, int bytes, std::string* out) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

bool GetLittle(ByteSource& src, int bytes, uint64_t* out) {
  unsigned char b[8];
  if (!src.Read(b, bytes)) return false;
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | b[i];
  *out = v;
  return true;
}

bool GetBig(ByteSource& src, int bytes, uint64_t* out) {
  unsigned char b[8];
  if (!src.Read(b, bytes)) return false;
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | b[i];
  *out = v;
  return true;
}

// The first byte of a length: *special says it is 11xxxxxx (then *out is xxxxxx).
bool GetLengthOrEncoding(ByteSource& src, uint64_t* out, bool* special) {
  uint8_t b;
  if (!GetByte(src, &b)) return false;
  *special = false;
  switch (b >> 6) {
    case 0:
      *out = b & 0x3f;
      return true;
    case 1: {
      uint8_t lo;
      if (!GetByte(src, &lo)) return false;
      *out = (uint64_t{b & 0x3fu} << 8) | lo;
      return true;
    }
    case 2:
      if (b == 0x80) return GetBig(src, 4, out);
      if (b == 0x81) return GetBig(src, 8, out);
      return false;
    default:
      *special = true;
      *out = b & 0x3f;
      return true;
  }
}

}  // namespace

void PutLength(uint64_t len, std::string* out) {
  if (len < (1u << 6)) {
    out->push_back(static_cast<char>(len));
  } else if (len < (1u << 14)) {
    out->push_back(static_cast<char>(0x40 | (len >> 8)));
    out->push_back(static_cast<char>(len & 0xff));
  } else if (len <= UINT32_MAX) {
    out->push_back(static_cast<char>(0x80));
    for (int i = 3; i >= 0; --i) out->push_back(static_cast<char>((len >> (8 * i)) & 0xff));
  } else {
    out->push_back(static_cast<char>(0x81));
    for (int i = 7; i >= 0; --i) out->push_back(static_cast<char>((len >> (8 * i)) & 0xff));
  }
}

void PutString(std::string_view s, std::string* out) {
  int64_t v;
  if (s.size() <= 11 && ParseInt64(s, &v)) {
    if (v >= INT8_MIN && v <= INT8_MAX) {
      out->push_back(static_cast<char>(0xc0 | kEncInt8));
      PutLittle(static_cast<uint64_t>(v), 1, out);
      return;
    }
    if (v >= INT16_MIN && v <= INT16_MAX) {
      out->push_back(static_cast<char>(0xc0 | kEncInt16));
      PutLittle(static_cast<uint64_t>(v), 2, out);
      return;
    }
    if (v >= INT32_MIN && v <= INT32_MAX) {
      out->push_back(static_cast<char>(0xc0 | kEncInt32));
      PutLittle(static_cast<uint64_t>(v), 4, out);
      return;
    }
  }
  // Redis's rdbSaveRawString: LZF above 20 bytes, kept only if it saves at least 4 bytes.
  if (s.size() > 20 && s.size() <= UINT32_MAX && g_lzf.load(std::memory_order_relaxed)) {
    thread_local std::string packed;
    packed.resize(s.size() - 4);
    const unsigned n = lzf_compress(s.data(), static_cast<unsigned>(s.size()), packed.data(),
                                    static_cast<unsigned>(packed.size()));
    if (n > 0) {
      out->push_back(static_cast<char>(0xc0 | kEncLzf));
      PutLength(n, out);
      PutLength(s.size(), out);
      out->append(packed.data(), n);
      return;
    }
  }
  PutLength(s.size(), out);
  out->append(s);
}

void SetCompression(bool on) { g_lzf.store(on, std::memory_order_relaxed); }

void PutBinaryDouble(double v, std::string* out) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  PutLittle(bits, 8, out);
}

void PutMillis(int64_t ms, std::string* out) { PutLittle(static_cast<uint64_t>(ms), 8, out); }

bool GetByte(ByteSource& src, uint8_t* out) { return src.Read(out, 1); }

bool GetLength(ByteSource& src, uint64_t* out) {
  bool special;
  return GetLengthOrEncoding(src, out, &special) && !special;
}

bool GetString(ByteSource& src, std::string* out) {
  out->clear();
  uint64_t len;
  bool special;
  if (!GetLengthOrEncoding(src, &len, &special)) return false;
  if (!special) return src.ReadAppend(len, out);
  uint64_t raw;
  int64_t v;
  switch (len) {
    case kEncInt8:
      if (!GetLittle(src, 1, &raw)) return false;
      v = static_cast<int8_t>(raw);
      break;
    case kEncInt16:
      if (!GetLittle(src, 2, &raw)) return false;
      v = static_cast<int16_t>(raw);
      break;
    case kEncInt32:
      if (!GetLittle(src, 4, &raw)) return false;
      v = static_cast<int32_t>(raw);
      break;
    case kEncLzf: {
      uint64_t clen, ulen;
      if (!GetLength(src, &clen) || !GetLength(src, &ulen)) return false;
      std::string packed;
      if (!src.ReadAppend(clen, &packed)) return false;
      // LZF expands at most ~ 264/2 times per input byte: a larger claim is corrupt, and refusing
      // it keeps a forged length from allocating.
      if (ulen > clen * 132 + 16) return false;
      return LzfDecompress(packed, ulen, out);
    }
    default:
      return false;
  }
  char buf[kMaxInt64Chars];
  out->assign(buf, FormatInt64(v, buf));
  return true;
}

bool GetBinaryDouble(ByteSource& src, double* out) {
  uint64_t bits;
  if (!GetLittle(src, 8, &bits)) return false;
  std::memcpy(out, &bits, 8);
  return true;
}

bool GetTextDouble(ByteSource& src, double* out) {
  uint8_t len;
  if (!GetByte(src, &len)) return false;
  switch (len) {
    case 253:
      *out = std::numeric_limits<double>::quiet_NaN();
      return true;
    case 254:
      *out = std::numeric_limits<double>::infinity();
      return true;
    case 255:
      *out = -std::numeric_limits<double>::infinity();
      return true;
  }
  char buf[256];
  if (!src.Read(buf, len)) return false;
  buf[len] = '\0';
  char* end = nullptr;
  *out = std::strtod(buf, &end);
  return end == buf + len && len > 0;
}

bool GetMillis(ByteSource& src, int64_t* out) {
  uint64_t v;
  if (!GetLittle(src, 8, &v)) return false;
  *out = static_cast<int64_t>(v);
  return true;
}

bool LzfDecompress(std::string_view in, size_t out_len, std::string* out) {
  const size_t base = out->size();
  out->resize(base + out_len);
  unsigned char* op = reinterpret_cast<unsigned char*>(out->data()) + base;
  unsigned char* const op_begin = op;
  unsigned char* const op_end = op + out_len;
  const auto* ip = reinterpret_cast<const unsigned char*>(in.data());
  const auto* const ip_end = ip + in.size();
  auto fail = [&] {
    out->resize(base);
    return false;
  };
  while (ip < ip_end) {
    unsigned ctrl = *ip++;
    if (ctrl < 32) {  // a literal run of ctrl + 1 bytes
      const size_t n = ctrl + 1;
      if (static_cast<size_t>(ip_end - ip) < n || static_cast<size_t>(op_end - op) < n)
        return fail();
      std::memcpy(op, ip, n);
      op += n;
      ip += n;
      continue;
    }
    // A back reference: length (ctrl >> 5) + 2 (7 = an extra length byte follows), offset from
    // the low 5 bits and the next byte.
    size_t n = ctrl >> 5;
    if (n == 7) {
      if (ip >= ip_end) return fail();
      n += *ip++;
    }
    if (ip >= ip_end) return fail();
    const size_t back = ((ctrl & 0x1f) << 8) + *ip++ + 1;
    n += 2;
    if (back > static_cast<size_t>(op - op_begin) || static_cast<size_t>(op_end - op) < n)
      return fail();
    const unsigned char* ref = op - back;
    for (size_t i = 0; i < n; ++i) op[i] = ref[i];  // may overlap: byte by byte
    op += n;
  }
  return op == op_end ? true : fail();
}

}  // namespace lavik::rdb
