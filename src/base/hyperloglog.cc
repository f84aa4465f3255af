#include "base/hyperloglog.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace lavik::hll {
namespace {

constexpr uint64_t kSeed = 0xadc83b19ULL;
constexpr int kQ = 64 - kIndexBits;  // hash bits left for the zero run: values go up to kQ + 1
constexpr uint8_t kRegisterMax = (1u << kRegisterBits) - 1;
constexpr uint32_t kZeroMaxLen = 64;
constexpr uint32_t kValMaxLen = 4;
constexpr uint32_t kXZeroMaxLen = kRegisters;
constexpr double kAlphaInf = 0.721347520444481703680;  // 0.5 / ln(2)

// --- Opcodes of the sparse encoding ---
bool IsZero(uint8_t op) { return (op & 0xc0) == 0; }
bool IsXZero(uint8_t op) { return (op & 0xc0) == 0x40; }
bool IsVal(uint8_t op) { return (op & 0x80) != 0; }
uint32_t ZeroLen(uint8_t op) { return (op & 0x3f) + 1u; }
uint32_t XZeroLen(uint8_t op, uint8_t next) { return ((uint32_t{op} & 0x3f) << 8 | next) + 1; }
uint8_t ValValue(uint8_t op) { return ((op >> 2) & 0x1f) + 1; }
uint32_t ValLen(uint8_t op) { return (op & 0x3) + 1u; }
uint8_t ValOp(uint32_t value, uint32_t len) {
  return static_cast<uint8_t>(0x80 | (value - 1) << 2 | (len - 1));
}
// Appends a run of `len` zero registers: ZERO if it fits, else XZERO.
uint8_t* PutZeros(uint8_t* out, uint32_t len) {
  if (len > kZeroMaxLen) {
    *out++ = static_cast<uint8_t>(0x40 | (len - 1) >> 8);
    *out++ = static_cast<uint8_t>((len - 1) & 0xff);
  } else {
    *out++ = static_cast<uint8_t>(len - 1);
  }
  return out;
}

uint8_t* Bytes(std::string* s) { return reinterpret_cast<uint8_t*>(s->data()); }
const uint8_t* Bytes(std::string_view s) { return reinterpret_cast<const uint8_t*>(s.data()); }

// The byte at `i` of a sparse payload, 0 past its end: Redis reads the string's NUL terminator
// there, and a truncated XZERO must decode the same way.
uint8_t ByteAt(std::string_view s, size_t i) {
  return i < s.size() ? static_cast<uint8_t>(s[i]) : 0;
}

// The length of a sparse opcode at `p` and the registers it covers.
struct Op {
  size_t len;
  uint32_t span;
};
Op DecodeOp(std::string_view s, size_t p) {
  const uint8_t op = static_cast<uint8_t>(s[p]);
  if (IsZero(op)) return {1, ZeroLen(op)};
  if (IsVal(op)) return {1, ValLen(op)};
  return {2, XZeroLen(op, ByteAt(s, p + 1))};
}

// --- Dense registers (6 bits each, from the least significant bit of each byte up) ---
uint8_t DenseGet(const uint8_t* regs, uint32_t i) {
  const uint32_t byte = i * kRegisterBits / 8;
  const uint32_t shift = i * kRegisterBits & 7;
  uint32_t v = regs[byte] >> shift;
  // Only a register that straddles two bytes needs the next one (never the last register).
  if (shift > 8 - kRegisterBits) v |= uint32_t{regs[byte + 1]} << (8 - shift);
  return static_cast<uint8_t>(v & kRegisterMax);
}

void DenseSet(uint8_t* regs, uint32_t i, uint8_t value) {
  const uint32_t byte = i * kRegisterBits / 8;
  const uint32_t shift = i * kRegisterBits & 7;
  regs[byte] = static_cast<uint8_t>((regs[byte] & ~(kRegisterMax << shift)) | value << shift);
  if (shift > 8 - kRegisterBits) {
    const uint32_t rshift = 8 - shift;
    regs[byte + 1] =
        static_cast<uint8_t>((regs[byte + 1] & ~(kRegisterMax >> rshift)) | value >> rshift);
  }
}

bool DenseRaise(uint8_t* regs, uint32_t i, uint8_t value) {
  if (value <= DenseGet(regs, i)) return false;
  DenseSet(regs, i, value);
  return true;
}

// Walks a sparse payload run by run: fn(first_register, run_length, value), value 0 for the
// zero runs. False if the runs do not cover exactly 16384 registers; the walk stops at the
// first run that would pass the last register, as Redis's patched decoders do (the oracle,
// Debian's 7.0.15, carries the fix for CVE-2025-32023).
template <typename Fn>
bool WalkSparse(std::string_view hll, Fn fn) {
  uint32_t idx = 0;
  size_t p = kHeaderSize;
  while (p < hll.size()) {
    const uint8_t op = static_cast<uint8_t>(hll[p]);
    const Op o = DecodeOp(hll, p);
    if (o.span > kRegisters - idx) return false;
    fn(idx, o.span, IsVal(op) ? ValValue(op) : uint8_t{0});
    idx += o.span;
    p += o.len;
  }
  return idx == kRegisters;
}

// Sigma and tau of Ertl, "New cardinality estimation algorithms for HyperLogLog sketches"
// (arXiv:1702.01284), iterated to a fixed point in doubles exactly as Redis does, so the
// estimate rounds to the same integer.
double Sigma(double x) {
  if (x == 1.0) return INFINITY;
  double y = 1.0;
  double z = x;
  double previous;
  do {
    x *= x;
    previous = z;
    z += x * y;
    y += y;
  } while (previous != z);
  return z;
}

double Tau(double x) {
  if (x == 0.0 || x == 1.0) return 0.0;
  double y = 1.0;
  double z = 1 - x;
  double previous;
  do {
    x = std::sqrt(x);
    previous = z;
    y *= 0.5;
    z -= std::pow(1 - x, 2) * y;
  } while (previous != z);
  return z / 3;
}

// histogram[v] = how many registers hold v (v < 64).
uint64_t Estimate(const uint32_t* histogram) {
  const double m = kRegisters;
  double z = m * Tau((m - histogram[kQ + 1]) / m);
  for (int j = kQ; j >= 1; --j) {
    z += histogram[j];
    z *= 0.5;
  }
  z += m * Sigma(histogram[0] / m);
  return static_cast<uint64_t>(std::llround(kAlphaInf * m * m / z));
}

// Sparse → dense, then the register update that did not fit the sparse form.
SetResult Promote(std::string* hll, uint32_t index, uint8_t value) {
  if (!SparseToDense(hll)) return SetResult::kCorrupt;
  return DenseRaise(Bytes(hll) + kHeaderSize, index, value) ? SetResult::kChanged
                                                            : SetResult::kUnchanged;
}

// After an update at the opcode following `from`: joins adjacent VAL opcodes of one value
// while their lengths fit one opcode, looking at most five opcodes ahead (as Redis does).
void MergeAdjacentVals(std::string* hll, size_t from) {
  size_t p = from;
  int scan = 5;
  while (p < hll->size() && scan-- > 0) {
    const uint8_t op = static_cast<uint8_t>((*hll)[p]);
    if (IsXZero(op)) {
      p += 2;
      continue;
    }
    if (IsZero(op)) {
      ++p;
      continue;
    }
    if (p + 1 < hll->size() && IsVal(static_cast<uint8_t>((*hll)[p + 1]))) {
      const uint8_t next = static_cast<uint8_t>((*hll)[p + 1]);
      const uint32_t len = ValLen(op) + ValLen(next);
      if (ValValue(op) == ValValue(next) && len <= kValMaxLen) {
        (*hll)[p + 1] = static_cast<char>(ValOp(ValValue(op), len));
        hll->erase(p, 1);
        continue;  // the merged opcode may join the one after it too
      }
    }
    ++p;
  }
}

SetResult SparseSet(std::string* hll, uint32_t index, uint8_t value, uint64_t sparse_max_bytes) {
  if (value > kSparseMaxValue) return Promote(hll, index, value);
  // Find the opcode that covers register `index`.
  const std::string_view s = *hll;
  size_t p = kHeaderSize;
  size_t prev = std::string::npos;
  uint64_t first = 0;
  Op op{1, 0};
  while (p < s.size()) {
    op = DecodeOp(s, p);
    if (index < first + op.span) break;
    prev = p;
    p += op.len;
    first += op.span;
  }
  if (op.span == 0 || p >= s.size()) return SetResult::kCorrupt;

  const uint8_t code = static_cast<uint8_t>(s[p]);
  const bool is_val = IsVal(code);
  const bool is_xzero = !is_val && IsXZero(code);
  if (is_val) {
    const uint8_t old = ValValue(code);
    if (old >= value) return SetResult::kUnchanged;
  }
  if (op.span == 1 && !is_xzero) {
    // A VAL or ZERO of one register becomes a VAL of one register, in place.
    (*hll)[p] = static_cast<char>(ValOp(value, 1));
  } else {
    // Split the run: [run before] VAL(value) [run after], at most 5 bytes.
    uint8_t seq[5];
    uint8_t* out = seq;
    const uint32_t before = static_cast<uint32_t>(index - first);
    const uint32_t after = static_cast<uint32_t>(first + op.span - 1 - index);
    if (is_val) {
      const uint8_t cur = ValValue(code);
      if (before > 0) *out++ = ValOp(cur, before);
      *out++ = ValOp(value, 1);
      if (after > 0) *out++ = ValOp(cur, after);
    } else {
      if (before > 0) out = PutZeros(out, before);
      *out++ = ValOp(value, 1);
      if (after > 0) out = PutZeros(out, after);
    }
    const size_t seq_len = static_cast<size_t>(out - seq);
    const size_t old_len = is_xzero ? 2 : 1;
    const int64_t delta = static_cast<int64_t>(seq_len) - static_cast<int64_t>(old_len);
    const size_t size = hll->size();
    if (delta > 0 && size + delta > sparse_max_bytes) return Promote(hll, index, value);
    const size_t present = std::min(old_len, size - p);  // a truncated XZERO has one byte
    hll->replace(p, present, reinterpret_cast<const char*>(seq), seq_len);
    // Redis sizes the result by old_len even for a truncated XZERO: its last byte falls off.
    hll->resize(static_cast<size_t>(static_cast<int64_t>(size) + delta));
  }
  MergeAdjacentVals(hll, prev == std::string::npos ? kHeaderSize : prev);
  InvalidateCache(hll);  // Redis's sparse update does; a dense one and a promotion do not
  return SetResult::kChanged;
}

}  // namespace

uint64_t MurmurHash64A(std::string_view data, uint64_t seed) {
  constexpr uint64_t m = 0xc6a4a7935bd1e995ULL;
  constexpr int r = 47;
  const uint8_t* p = Bytes(data);
  const size_t len = data.size();
  // Redis passes the length as an int; the same width keeps huge inputs hashing alike.
  uint64_t h = seed ^ (static_cast<uint64_t>(static_cast<int>(len)) * m);
  const size_t words = len / 8;
  for (size_t i = 0; i < words; ++i, p += 8) {
    uint64_t k = 0;
    for (int b = 7; b >= 0; --b) k = k << 8 | p[b];
    k *= m;
    k ^= k >> r;
    k *= m;
    h ^= k;
    h *= m;
  }
  const size_t rest = len & 7;
  if (rest > 0) {
    for (size_t b = rest; b-- > 0;) h ^= uint64_t{p[b]} << (8 * b);
    h *= m;
  }
  h ^= h >> r;
  h *= m;
  h ^= h >> r;
  return h;
}

uint8_t PatternLength(std::string_view element, uint32_t* index) {
  uint64_t hash = MurmurHash64A(element, kSeed);
  *index = static_cast<uint32_t>(hash & (kRegisters - 1));
  hash >>= kIndexBits;
  hash |= uint64_t{1} << kQ;  // the run ends by bit kQ: values stay within 1..kQ+1
  return static_cast<uint8_t>(std::countr_zero(hash) + 1);
}

bool IsHll(std::string_view v) {
  if (v.size() < kHeaderSize || v.substr(0, 4) != "HYLL") return false;
  const uint8_t enc = Encoding(v);
  if (enc == kEncodingDense) return v.size() == kDenseSize;
  return enc == kEncodingSparse;
}

std::string NewSparse() {
  std::string s(kHeaderSize, '\0');
  std::memcpy(s.data(), "HYLL", 4);
  s[4] = static_cast<char>(kEncodingSparse);
  uint8_t ops[2];
  PutZeros(ops, kXZeroMaxLen);
  s.append(reinterpret_cast<const char*>(ops), 2);
  return s;
}

SetResult SetRegister(std::string* hll, uint32_t index, uint8_t value, uint64_t sparse_max_bytes) {
  if (Encoding(*hll) == kEncodingDense) {
    return DenseRaise(Bytes(hll) + kHeaderSize, index, value) ? SetResult::kChanged
                                                              : SetResult::kUnchanged;
  }
  return SparseSet(hll, index, value, sparse_max_bytes);
}

SetResult Add(std::string* hll, std::string_view element, uint64_t sparse_max_bytes) {
  uint32_t index;
  const uint8_t value = PatternLength(element, &index);
  return SetRegister(hll, index, value, sparse_max_bytes);
}

bool SparseToDense(std::string* hll) {
  if (Encoding(*hll) == kEncodingDense) return true;
  std::string dense(kDenseSize, '\0');
  std::memcpy(dense.data(), hll->data(), kHeaderSize);  // magic, unused bytes and the cache
  dense[4] = static_cast<char>(kEncodingDense);
  uint8_t* regs = Bytes(&dense) + kHeaderSize;
  const bool ok = WalkSparse(*hll, [regs](uint32_t first, uint32_t len, uint8_t value) {
    if (value == 0) return;  // the registers start at zero
    for (uint32_t i = first; i < first + len; ++i) DenseSet(regs, i, value);
  });
  if (!ok) return false;
  *hll = std::move(dense);
  return true;
}

bool MergeInto(std::string_view hll, uint8_t* max) {
  if (Encoding(hll) == kEncodingDense) {
    const uint8_t* regs = Bytes(hll) + kHeaderSize;
    for (uint32_t i = 0; i < kRegisters; ++i) max[i] = std::max(max[i], DenseGet(regs, i));
    return true;
  }
  return WalkSparse(hll, [max](uint32_t first, uint32_t len, uint8_t value) {
    if (value == 0) return;
    for (uint32_t i = first; i < first + len; ++i) max[i] = std::max(max[i], value);
  });
}

void ApplyMax(std::string* hll, const uint8_t* max, uint64_t sparse_max_bytes) {
  for (uint32_t i = 0; i < kRegisters; ++i) {
    if (max[i] != 0) SetRegister(hll, i, max[i], sparse_max_bytes);
  }
}

bool Count(std::string_view hll, uint64_t* cardinality) {
  uint32_t histogram[64] = {};
  if (Encoding(hll) == kEncodingDense) {
    const uint8_t* regs = Bytes(hll) + kHeaderSize;
    for (uint32_t i = 0; i < kRegisters; ++i) ++histogram[DenseGet(regs, i)];
  } else if (!WalkSparse(hll, [&histogram](uint32_t, uint32_t len, uint8_t value) {
               histogram[value] += len;
             })) {
    return false;
  }
  *cardinality = Estimate(histogram);
  return true;
}

uint64_t CountRegisters(const uint8_t* registers) {
  uint32_t histogram[64] = {};
  for (uint32_t i = 0; i < kRegisters; ++i) ++histogram[registers[i] & 63];
  return Estimate(histogram);
}

bool CachedCardinality(std::string_view hll, uint64_t* cardinality) {
  const uint8_t* card = Bytes(hll) + 8;
  if (card[7] & 0x80) return false;
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | card[i];
  *cardinality = v;
  return true;
}

void SetCachedCardinality(std::string* hll, uint64_t cardinality) {
  uint8_t* card = Bytes(hll) + 8;
  for (int i = 0; i < 8; ++i) card[i] = static_cast<uint8_t>(cardinality >> (8 * i));
}

void InvalidateCache(std::string* hll) { Bytes(hll)[15] |= 0x80; }

}  // namespace lavik::hll
