// CRC-64 as Redis computes it for RDB files and DUMP payloads (crc64.c: the "Jones" polynomial
// 0xad93d23594c935a9, reflected input and output, initial value 0, no final xor).
// Crc64(0, "123456789", 9) == 0xe9c6d914c4b8d9ca.
//
// Thread safety: pure; the tables are built once, thread-safely, on first use.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lavik {

// The CRC of `n` bytes at `data` continuing from `crc` (the CRC of the bytes before them, 0 for
// none): Crc64(Crc64(0, a, na), b, nb) == Crc64(0, a ++ b, na + nb).
uint64_t Crc64(uint64_t crc, const void* data, size_t n);

}  // namespace lavik
