// The cluster bus's wire format: Redis 7.0's clusterMsg (cluster.h), byte for byte.
//
// Every message is one header of kHeaderSize bytes followed by a type-specific body; all integers
// are big-endian. Header layout (offsets in bytes):
//
//     0 sig "RCmb"        4 totlen u32        8 ver u16 (1)      10 port u16
//    12 type u16         14 count u16        16 currentEpoch u64 24 configEpoch u64
//    32 offset u64       40 sender [40]      80 myslots [2048]  2128 slaveof [40]
//  2168 myip [46]      2214 extensions u16  2216 unused [30]    2246 pport u16
//  2248 cport u16      2250 flags u16       2252 state u8       2253 mflags [3]
//
// PING/PONG/MEET carry `count` gossip entries of 104 bytes (name [40], ping_sent u32 and
// pong_received u32 in seconds, ip [46], port, cport, flags, pport, unused: u16 each) and then,
// when mflags[0] has kFlagExtData, `extensions` extensions: u32 length (header included, a
// multiple of 8), u16 type, u16 unused, data (type 0: the announced hostname, NUL-terminated,
// zero-padded). FAIL carries a node name [40]; UPDATE carries configEpoch u64, a node name [40]
// and a slot bitmap [2048]; PUBLISH and PUBLISHSHARD carry channel_len u32, message_len u32, then
// the channel's and the message's bytes (no padding: totlen is exactly header + 8 + both).
// Slot bitmaps are bit (slot & 7) of byte slot / 8.
//
// Thread safety: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lavik::cluster {

inline constexpr size_t kNameLen = 40;
inline constexpr size_t kIpLen = 46;
inline constexpr size_t kHeaderSize = 2256;
inline constexpr size_t kGossipSize = 104;
inline constexpr size_t kSlotBytes = 16384 / 8;

enum MsgType : uint16_t {
  kPing = 0,
  kPong = 1,
  kMeet = 2,
  kFail = 3,
  kPublish = 4,
  kAuthRequest = 5,
  kAuthAck = 6,
  kUpdate = 7,
  kMfStart = 8,
  kModule = 9,
  kPublishShard = 10,
  kMsgTypeCount = 11,
};

// Node flags as the bus and CLUSTER NODES carry them.
enum NodeFlag : uint16_t {
  kMaster = 1,
  kSlave = 2,
  kPfail = 4,
  kFailFlag = 8,
  kMyself = 16,
  kHandshake = 32,
  kNoAddr = 64,
  kMeetFlag = 128,
  kMigrateTo = 256,
  kNoFailover = 512,
};

inline constexpr uint8_t kFlagPaused = 1 << 0;    // mflags[0]: a master paused for a failover
inline constexpr uint8_t kFlagForceAck = 1 << 1;  // mflags[0]: vote even if my master is up
inline constexpr uint8_t kFlagExtData = 1 << 2;   // mflags[0]: extensions follow the gossip

using SlotBitmap = std::array<uint8_t, kSlotBytes>;

inline bool TestSlot(const SlotBitmap& b, int slot) { return (b[slot >> 3] >> (slot & 7)) & 1; }
inline void SetSlot(SlotBitmap& b, int slot) { b[slot >> 3] |= uint8_t(1u << (slot & 7)); }
inline void ClearSlot(SlotBitmap& b, int slot) { b[slot >> 3] &= uint8_t(~(1u << (slot & 7))); }

struct Gossip {
  std::string name;
  uint32_t ping_sent = 0;  // seconds
  uint32_t pong_received = 0;
  std::string ip;
  uint16_t port = 0, cport = 0, flags = 0, pport = 0;
};

struct Message {
  uint16_t type = kPing;
  uint16_t port = 0;
  uint64_t current_epoch = 0;
  uint64_t config_epoch = 0;
  uint64_t offset = 0;
  std::string sender;  // 40 bytes
  SlotBitmap slots{};
  std::string slaveof;  // empty: none (all zero on the wire)
  std::string myip;     // empty: all zero
  uint16_t pport = 0, cport = 0, flags = 0;
  uint8_t state = 0;  // 0 ok, 1 fail
  uint8_t mflags0 = 0;
  // PING/PONG/MEET
  std::vector<Gossip> gossip;
  std::string hostname;  // extension type 0 (empty: not sent)
  // FAIL: the failing node; UPDATE: the slots' owner
  std::string about;
  uint64_t update_epoch = 0;
  SlotBitmap update_slots{};
  // PUBLISH / PUBLISHSHARD
  std::string channel, payload;
};

// Appends the encoded message to *out.
void Encode(const Message& m, std::string* out);

// The length of the message at the start of `buf` once 8 bytes are there (0: not yet known).
uint32_t PeekLength(std::string_view buf);

// Decodes one whole message (`buf` is exactly totlen bytes). False if it is malformed: a wrong
// signature or version, or a length that does not match its type and count — Redis drops those.
// Types without a body of interest here (failover votes, MODULE) decode their header only.
bool Decode(std::string_view buf, Message* m);

}  // namespace lavik::cluster
