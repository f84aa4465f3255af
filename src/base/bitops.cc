#include "base/bitops.h"

#include <bit>
#include <cstring>

#include "base/numbers.h"

namespace lavik {
namespace {

inline uint64_t Load64(const unsigned char* p) {
  uint64_t w;
  std::memcpy(&w, p, sizeof(w));
  return w;
}

inline void Store64(unsigned char* p, uint64_t w) { std::memcpy(p, &w, sizeof(w)); }

const unsigned char* Bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

// The bits of byte `b` that fall inside [from, to] (bit numbers within the byte, 0 = MSB).
inline unsigned char ByteMask(unsigned from, unsigned to) {
  return static_cast<unsigned char>((0xFFu >> from) & (0xFFu << (7 - to)));
}

uint64_t PopCountBytes(const unsigned char* p, size_t n) {
  uint64_t count = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) count += std::popcount(Load64(p + i));
  for (; i < n; ++i) count += std::popcount(static_cast<unsigned>(p[i]));
  return count;
}

}  // namespace

BitRange ResolveBitRange(int64_t start, int64_t end, uint64_t len, bool in_bits) {
  // len is at most 512 MiB, so len * 8 and the sums below cannot overflow.
  const int64_t total = static_cast<int64_t>(in_bits ? len * 8 : len);
  if (start < 0) start += total;
  if (end < 0) end += total;
  if (start < 0) start = 0;
  if (end < 0) end = 0;
  if (end >= total) end = total - 1;
  BitRange r;
  if (start > end) return r;
  r.empty = false;
  r.first = static_cast<uint64_t>(start);
  r.last = static_cast<uint64_t>(end);
  if (!in_bits) {
    r.first *= 8;
    r.last = r.last * 8 + 7;
  }
  return r;
}

uint64_t CountBits(std::string_view s, BitRange range) {
  if (range.empty) return 0;
  const unsigned char* p = Bytes(s);
  const uint64_t fb = range.first / 8, lb = range.last / 8;
  const unsigned fo = range.first % 8, lo = range.last % 8;
  if (fb == lb) return std::popcount(static_cast<unsigned>(p[fb] & ByteMask(fo, lo)));
  uint64_t count = std::popcount(static_cast<unsigned>(p[fb] & ByteMask(fo, 7)));
  count += PopCountBytes(p + fb + 1, lb - fb - 1);
  count += std::popcount(static_cast<unsigned>(p[lb] & ByteMask(0, lo)));
  return count;
}

int64_t FindBit(std::string_view s, int bit, BitRange range) {
  if (range.empty) return -1;
  const unsigned char* p = Bytes(s);
  // Looking for a 0 is looking for a 1 in the complement.
  const unsigned char flip = bit ? 0 : 0xFF;
  const uint64_t fb = range.first / 8, lb = range.last / 8;
  auto first_in_byte = [&](uint64_t b, unsigned from, unsigned to) -> int64_t {
    unsigned v = (p[b] ^ flip) & ByteMask(from, to);
    if (v == 0) return -1;
    return static_cast<int64_t>(b * 8 + (std::countl_zero(v) - 24));
  };
  if (fb == lb) return first_in_byte(fb, range.first % 8, range.last % 8);
  int64_t pos = first_in_byte(fb, range.first % 8, 7);
  if (pos >= 0) return pos;
  const uint64_t flip64 = bit ? 0 : ~uint64_t{0};
  uint64_t b = fb + 1;
  for (; b + 8 <= lb; b += 8) {
    if ((Load64(p + b) ^ flip64) != 0) break;  // the set bit is in these 8 bytes
  }
  for (; b < lb; ++b) {
    pos = first_in_byte(b, 0, 7);
    if (pos >= 0) return pos;
  }
  return first_in_byte(lb, 0, range.last % 8);
}

void BitOpFold(BitOpKind op, std::string_view src, bool first, std::string* acc) {
  if (first) {
    acc->assign(src.data(), src.size());
    if (op == BitOpKind::kNot) {
      for (char& c : *acc) c = static_cast<char>(~c);
    }
    return;
  }
  const size_t common = std::min(acc->size(), src.size());
  unsigned char* a = reinterpret_cast<unsigned char*>(acc->data());
  const unsigned char* b = Bytes(src);
  size_t i = 0;
  switch (op) {
    case BitOpKind::kAnd:
      for (; i + 8 <= common; i += 8) Store64(a + i, Load64(a + i) & Load64(b + i));
      for (; i < common; ++i) a[i] &= b[i];
      // A missing byte is zero: AND clears the rest.
      if (acc->size() > common) std::memset(a + common, 0, acc->size() - common);
      if (src.size() > common) acc->resize(src.size(), '\0');
      break;
    case BitOpKind::kOr:
    case BitOpKind::kXor:
      if (op == BitOpKind::kOr) {
        for (; i + 8 <= common; i += 8) Store64(a + i, Load64(a + i) | Load64(b + i));
        for (; i < common; ++i) a[i] |= b[i];
      } else {
        for (; i + 8 <= common; i += 8) Store64(a + i, Load64(a + i) ^ Load64(b + i));
        for (; i < common; ++i) a[i] ^= b[i];
      }
      if (src.size() > common) acc->append(src.substr(common));
      break;
    case BitOpKind::kNot:
      break;  // one source only
  }
}

bool ParseBitfieldType(std::string_view s, BitfieldType* out) {
  // Redis reads the type as a C string: a NUL ends it.
  const size_t nul = s.find('\0');
  if (nul != std::string_view::npos) s = s.substr(0, nul);
  if (s.empty() || (s[0] != 'i' && s[0] != 'u')) return false;
  int64_t bits;
  if (!ParseInt64(s.substr(1), &bits)) return false;
  const bool is_signed = s[0] == 'i';
  if (bits < 1 || bits > (is_signed ? 64 : 63)) return false;
  out->is_signed = is_signed;
  out->bits = static_cast<int>(bits);
  return true;
}

int64_t GetBitfield(std::string_view s, uint64_t offset, BitfieldType type) {
  // A field spans at most 9 bytes (7 bits of lead-in + 64): gather them into 72 bits.
  const uint64_t byte = offset / 8;
  unsigned __int128 window = 0;
  for (uint64_t i = 0; i < 9; ++i) {
    const uint64_t at = byte + i;
    window = (window << 8) | (at < s.size() ? static_cast<unsigned char>(s[at]) : 0u);
  }
  const int shift = 72 - static_cast<int>(offset % 8) - type.bits;
  uint64_t v = static_cast<uint64_t>(window >> shift);
  if (type.bits < 64) {
    const uint64_t mask = (uint64_t{1} << type.bits) - 1;
    v &= mask;
    if (type.is_signed && (v >> (type.bits - 1)) != 0) v |= ~mask;  // sign-extend
  }
  return static_cast<int64_t>(v);
}

void SetBitfield(std::string* s, uint64_t offset, BitfieldType type, uint64_t value) {
  const uint64_t byte = offset / 8;
  const uint64_t avail = s->size() - byte;
  const int n = avail < 9 ? static_cast<int>(avail) : 9;
  unsigned char* p = reinterpret_cast<unsigned char*>(s->data()) + byte;
  unsigned __int128 window = 0;
  for (int i = 0; i < 9; ++i) window = (window << 8) | (i < n ? p[i] : 0u);
  const int shift = 72 - static_cast<int>(offset % 8) - type.bits;
  const unsigned __int128 mask = ((static_cast<unsigned __int128>(1) << type.bits) - 1) << shift;
  window = (window & ~mask) | ((static_cast<unsigned __int128>(value) << shift) & mask);
  for (int i = 0; i < n; ++i) p[i] = static_cast<unsigned char>(window >> (8 * (8 - i)));
}

bool BitfieldAdd(BitfieldType type, int64_t value, int64_t incr, BitfieldOverflow mode,
                 int64_t* result) {
  const int bits = type.bits;
  if (!type.is_signed) {
    // value is the field read as unsigned, or SET's argument reinterpreted (a negative one is
    // then far above the maximum, as in Redis).
    const uint64_t max = (uint64_t{1} << bits) - 1;
    const uint64_t v = static_cast<uint64_t>(value);
    const uint64_t mag = incr < 0 ? 0 - static_cast<uint64_t>(incr) : static_cast<uint64_t>(incr);
    const bool up = v > max || (incr > 0 && mag > max - v);
    const bool down = !up && incr < 0 && mag > v;
    const uint64_t sum = v + static_cast<uint64_t>(incr);
    if (!up && !down) {
      *result = static_cast<int64_t>(sum);
      return false;
    }
    if (mode == BitfieldOverflow::kSat) {
      *result = static_cast<int64_t>(up ? max : 0);
    } else {
      *result = static_cast<int64_t>(sum & max);
    }
    return true;
  }
  const int64_t max = bits == 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1;
  const int64_t min = -max - 1;
  // The room left above and below, in wrapping arithmetic. Redis compares against it before it
  // has checked that `value` is in range (widths below 64), so a SET far below the minimum
  // counts as overflowing upwards and SAT stores the maximum; kept for identical replies.
  const int64_t room_up =
      static_cast<int64_t>(static_cast<uint64_t>(max) - static_cast<uint64_t>(value));
  const int64_t room_down =
      static_cast<int64_t>(static_cast<uint64_t>(min) - static_cast<uint64_t>(value));
  const bool up =
      value > max || (bits != 64 && incr > room_up) || (value >= 0 && incr > 0 && incr > room_up);
  const bool down = !up && (value < min || (bits != 64 && incr < room_down) ||
                            (value < 0 && incr < 0 && incr < room_down));
  if (!up && !down) {
    *result = value + incr;  // in range, so no overflow
    return false;
  }
  if (mode == BitfieldOverflow::kSat) {
    *result = up ? max : min;
  } else {
    uint64_t wrapped = static_cast<uint64_t>(value) + static_cast<uint64_t>(incr);
    if (bits < 64) {
      const uint64_t mask = (uint64_t{1} << bits) - 1;
      wrapped &= mask;
      if ((wrapped >> (bits - 1)) != 0) wrapped |= ~mask;
    }
    *result = static_cast<int64_t>(wrapped);
  }
  return true;
}

}  // namespace lavik
