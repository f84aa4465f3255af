// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78): the checksum of every
// superblock, segment header, record and checkpoint in the data file (see
// doc/storage-format.md). Same function as the SSE4.2 `crc32` instruction, iSCSI
// (RFC 3720) and ext4 metadata: initial value 0xFFFFFFFF, final xor 0xFFFFFFFF.
//
// Crc32c() is ISA-L's crc32_iscsi (Debian's libisal: on x86-64 several CRC
// streams folded with carry-less multiplies, ~35 ns per KiB here against ~110 ns
// for one `crc32` instruction chain; it picks its code for the CPU at run time),
// and below 128 bytes the instruction chain, which has no set-up cost.
// Crc32cHardware() is the single-chain CRC-instruction version and
// Crc32cSoftware() the table-driven one; all give identical results, which the
// tests check against each other.
//
// Thread safety: all functions are pure and may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lavik {

// CRC-32C of `n` bytes at `data`, continuing from `crc`, the finished CRC of
// the bytes before them (0 for none). The init/final xor is applied inside, so
// values chain: Crc32c(b, nb, Crc32c(a, na)) == Crc32c(a ++ b, na + nb).
// Crc32c("123456789", 9) == 0xE3069283; Crc32c(anything, 0, c) == c.
uint32_t Crc32c(const void* data, size_t n, uint32_t crc = 0);

// CRC-32C of the 8 bytes of `v` in little-endian order (as EncodeFixed64 writes them),
// continuing from `crc`: Crc32c(bytes, 8, crc) in one `crc32` instruction where there is one.
uint32_t Crc32cFixed64(uint64_t v, uint32_t crc = 0);

// The portable table-driven implementation (slicing by 8). Same contract as
// Crc32c(); exposed so tests can compare it with the hardware path.
uint32_t Crc32cSoftware(const void* data, size_t n, uint32_t crc = 0);

// True when Crc32cHardware() may be called on this CPU.
bool Crc32cHardwareAvailable();

// The CRC-instruction implementation. Same contract as Crc32c(). Safe on any
// CPU: without CRC instructions it is Crc32cSoftware().
uint32_t Crc32cHardware(const void* data, size_t n, uint32_t crc = 0);

}  // namespace lavik
