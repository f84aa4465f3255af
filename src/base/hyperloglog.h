// Redis 7.0's HyperLogLog, byte for byte (doc/hyperloglog.md): the value is a plain string that
// redis-server can read back, and any HLL string copied from redis-server works here.
//
// Layout: a 16-byte header — "HYLL", the encoding (0 dense, 1 sparse), 3 unused bytes, then
// the cached cardinality as 8 bytes little-endian whose top bit (byte 15, bit 7) set means
// "stale, recompute". Dense: 16384 registers of 6 bits packed from the least significant bit
// up (12288 bytes). Sparse: run-length opcodes — ZERO 00xxxxxx (1..64 zero registers), XZERO
// 01xxxxxx yyyyyyyy (1..16384 zero registers), VAL 1vvvvvxx (1..4 registers of value 1..32).
// An element hashes with MurmurHash64A (seed 0xadc83b19): the low 14 bits pick the register,
// the count of trailing zeros of the rest, plus one (at most 51), is its candidate value.
//
// Contract: every function that takes an HLL string expects one that passed IsHll() (header,
// encoding, dense length); a sparse payload may still be corrupt, which the functions detect
// and report (never reading or writing outside the string). Counts use Ertl's estimator as
// Redis 7.0 does, so they equal redis-server's for the same registers.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace lavik::hll {

inline constexpr int kIndexBits = 14;
inline constexpr uint32_t kRegisters = 1u << kIndexBits;  // 16384
inline constexpr int kRegisterBits = 6;
inline constexpr size_t kHeaderSize = 16;
inline constexpr size_t kDenseSize = kHeaderSize + (kRegisters * kRegisterBits + 7) / 8;
inline constexpr uint8_t kEncodingDense = 0;
inline constexpr uint8_t kEncodingSparse = 1;
inline constexpr uint8_t kSparseMaxValue = 32;  // a larger register forces the dense encoding

// MurmurHash2, 64-bit variant, reading 8-byte words little-endian (Redis's endian-neutral one).
uint64_t MurmurHash64A(std::string_view data, uint64_t seed);

// The register `element` maps to (*index) and its value there: trailing zeros + 1, 1..51.
uint8_t PatternLength(std::string_view element, uint32_t* index);

// Redis's isHLLObject: "HYLL", encoding 0 or 1, and a dense one exactly kDenseSize bytes.
bool IsHll(std::string_view value);
inline uint8_t Encoding(std::string_view hll) { return static_cast<uint8_t>(hll[4]); }

// An empty HLL as PFADD creates it: sparse, one XZERO for all registers, cache valid at 0.
std::string NewSparse();

// Outcome of an update: the registers changed, did not change, or the sparse payload is
// corrupt (the string is then unchanged by this call).
enum class SetResult { kUnchanged, kChanged, kCorrupt };

// Raises register `index` to `value` if it is lower. A sparse HLL becomes dense when `value`
// is over kSparseMaxValue or the new sparse string would exceed `sparse_max_bytes` (the
// hll-sparse-max-bytes parameter). An update that stays sparse marks the cached cardinality
// stale, as Redis's does; a dense update or a promotion leaves the header to the caller.
SetResult SetRegister(std::string* hll, uint32_t index, uint8_t value, uint64_t sparse_max_bytes);

// PFADD of one element: SetRegister of its PatternLength.
SetResult Add(std::string* hll, std::string_view element, uint64_t sparse_max_bytes);

// Rewrites a sparse HLL as dense (header kept but the encoding byte); false if corrupt.
bool SparseToDense(std::string* hll);

// max[i] = max(max[i], register i) for all 16384 registers; false if the sparse payload is
// corrupt (max may then be partly updated).
bool MergeInto(std::string_view hll, uint8_t* max);

// Raises every register of `hll` to max[i] (PFMERGE's destination step), promoting as
// SetRegister does.
void ApplyMax(std::string* hll, const uint8_t* max, uint64_t sparse_max_bytes);

// The estimate for the registers of `hll`; false if the sparse payload is corrupt.
bool Count(std::string_view hll, uint64_t* cardinality);
// The estimate for 16384 one-byte registers (PFCOUNT of several keys).
uint64_t CountRegisters(const uint8_t* registers);

// The cached cardinality, if its "stale" bit is clear.
bool CachedCardinality(std::string_view hll, uint64_t* cardinality);
void SetCachedCardinality(std::string* hll, uint64_t cardinality);
void InvalidateCache(std::string* hll);

}  // namespace lavik::hll
