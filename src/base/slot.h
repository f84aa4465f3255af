// Redis Cluster key-to-slot mapping.
//
// A key belongs to one of kNumSlots hash slots: CRC16 (XMODEM variant) of the
// key, or of its hash tag, modulo 16384. Clients compute the same function to
// route commands, so this must agree bit for bit with the Redis Cluster spec.
//
// Thread safety: all functions are pure and may be called from any thread.
#pragma once

#include <cstdint>
#include <string_view>

namespace lavik {

inline constexpr int kNumSlots = 16384;

// CRC16-CCITT, XMODEM flavour: polynomial 0x1021, initial value 0, no bit
// reflection, no final xor. Crc16("123456789") == 0x31C3.
uint16_t Crc16(std::string_view data);

// The same CRC one byte at a time: the reference the unit tests hold Crc16 to.
uint16_t Crc16Bytewise(std::string_view data);

// The part of `key` that is hashed: the bytes between the first '{' and the
// first '}' after it, when that span is non-empty; otherwise the whole key.
// The returned view points into `key`.
std::string_view HashTagOf(std::string_view key);

// Slot in [0, kNumSlots) that owns `key`; keys sharing a hash tag share a slot.
uint16_t KeyHashSlot(std::string_view key);

// Slots are split into `shards` contiguous ranges; the shard owning `slot`.
inline int SlotShard(uint16_t slot, int shards) { return slot * shards / kNumSlots; }

}  // namespace lavik
