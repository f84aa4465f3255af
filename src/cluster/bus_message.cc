#include "cluster/bus_message.h"

#include <cstring>

namespace lavik::cluster {
namespace {

void Put16(std::string* o, size_t at, uint16_t v) {
  (*o)[at] = char(v >> 8);
  (*o)[at + 1] = char(v);
}
void Put32(std::string* o, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) (*o)[at + i] = char(v >> (24 - 8 * i));
}
void Put64(std::string* o, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) (*o)[at + i] = char(v >> (56 - 8 * i));
}
void PutBytes(std::string* o, size_t at, std::string_view s, size_t max) {
  std::memcpy(o->data() + at, s.data(), s.size() < max ? s.size() : max);
}
uint16_t Get16(std::string_view b, size_t at) {
  return uint16_t((uint8_t(b[at]) << 8) | uint8_t(b[at + 1]));
}
uint32_t Get32(std::string_view b, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | uint8_t(b[at + i]);
  return v;
}
uint64_t Get64(std::string_view b, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | uint8_t(b[at + i]);
  return v;
}
// A fixed-size field as a string: up to the first NUL; empty if all zero.
std::string GetCStr(std::string_view b, size_t at, size_t len) {
  std::string_view f = b.substr(at, len);
  size_t n = f.find('\0');
  return std::string(f.substr(0, n));
}

constexpr size_t kExtHeader = 8;

size_t HostnameExtSize(std::string_view h) { return (kExtHeader + h.size() + 1 + 7) / 8 * 8; }

}  // namespace

void Encode(const Message& m, std::string* out) {
  size_t body = 0;
  const bool ping = m.type == kPing || m.type == kPong || m.type == kMeet;
  if (ping) {
    body = m.gossip.size() * kGossipSize;
    if (!m.hostname.empty()) body += HostnameExtSize(m.hostname);
  } else if (m.type == kFail) {
    body = kNameLen;
  } else if (m.type == kUpdate) {
    body = 8 + kNameLen + kSlotBytes;
  } else if (m.type == kPublish || m.type == kPublishShard) {
    body = 8 + m.channel.size() + m.payload.size();
  }
  const size_t start = out->size();
  const size_t total = kHeaderSize + body;
  out->resize(start + total, '\0');
  std::string msg(total, '\0');
  std::memcpy(msg.data(), "RCmb", 4);
  Put32(&msg, 4, uint32_t(total));
  Put16(&msg, 8, 1);
  Put16(&msg, 10, m.port);
  Put16(&msg, 12, m.type);
  Put16(&msg, 14, ping ? uint16_t(m.gossip.size()) : 0);
  Put64(&msg, 16, m.current_epoch);
  Put64(&msg, 24, m.config_epoch);
  Put64(&msg, 32, m.offset);
  PutBytes(&msg, 40, m.sender, kNameLen);
  std::memcpy(msg.data() + 80, m.slots.data(), kSlotBytes);
  PutBytes(&msg, 2128, m.slaveof, kNameLen);
  PutBytes(&msg, 2168, m.myip, kIpLen - 1);
  const bool ext = ping && !m.hostname.empty();
  Put16(&msg, 2214, ext ? 1 : 0);
  Put16(&msg, 2246, m.pport);
  Put16(&msg, 2248, m.cport);
  Put16(&msg, 2250, m.flags);
  msg[2252] = char(m.state);
  msg[2253] = char(ext ? (m.mflags0 | kFlagExtData) : (m.mflags0 & ~kFlagExtData));
  size_t at = kHeaderSize;
  if (ping) {
    for (const Gossip& g : m.gossip) {
      PutBytes(&msg, at, g.name, kNameLen);
      Put32(&msg, at + 40, g.ping_sent);
      Put32(&msg, at + 44, g.pong_received);
      PutBytes(&msg, at + 48, g.ip, kIpLen - 1);
      Put16(&msg, at + 94, g.port);
      Put16(&msg, at + 96, g.cport);
      Put16(&msg, at + 98, g.flags);
      Put16(&msg, at + 100, g.pport);
      at += kGossipSize;
    }
    if (ext) {
      const size_t len = HostnameExtSize(m.hostname);
      Put32(&msg, at, uint32_t(len));
      Put16(&msg, at + 4, 0);
      PutBytes(&msg, at + kExtHeader, m.hostname, len - kExtHeader - 1);
    }
  } else if (m.type == kFail) {
    PutBytes(&msg, at, m.about, kNameLen);
  } else if (m.type == kUpdate) {
    Put64(&msg, at, m.update_epoch);
    PutBytes(&msg, at + 8, m.about, kNameLen);
    std::memcpy(msg.data() + at + 8 + kNameLen, m.update_slots.data(), kSlotBytes);
  } else if (m.type == kPublish || m.type == kPublishShard) {
    Put32(&msg, at, uint32_t(m.channel.size()));
    Put32(&msg, at + 4, uint32_t(m.payload.size()));
    PutBytes(&msg, at + 8, m.channel, m.channel.size());
    PutBytes(&msg, at + 8 + m.channel.size(), m.payload, m.payload.size());
  }
  std::memcpy(out->data() + start, msg.data(), total);
}

uint32_t PeekLength(std::string_view buf) {
  if (buf.size() < 8) return 0;
  return Get32(buf, 4);
}

bool Decode(std::string_view b, Message* m) {
  if (b.size() < kHeaderSize || std::memcmp(b.data(), "RCmb", 4) != 0) return false;
  if (Get32(b, 4) != b.size() || Get16(b, 8) != 1) return false;
  m->type = Get16(b, 12);
  m->port = Get16(b, 10);
  const uint16_t count = Get16(b, 14);
  m->current_epoch = Get64(b, 16);
  m->config_epoch = Get64(b, 24);
  m->offset = Get64(b, 32);
  m->sender.assign(b.substr(40, kNameLen));
  std::memcpy(m->slots.data(), b.data() + 80, kSlotBytes);
  m->slaveof = GetCStr(b, 2128, kNameLen);
  m->myip = GetCStr(b, 2168, kIpLen);
  const uint16_t extensions = Get16(b, 2214);
  m->pport = Get16(b, 2246);
  m->cport = Get16(b, 2248);
  m->flags = Get16(b, 2250);
  m->state = uint8_t(b[2252]);
  m->mflags0 = uint8_t(b[2253]);
  m->gossip.clear();
  m->hostname.clear();
  size_t at = kHeaderSize;
  if (m->type == kPing || m->type == kPong || m->type == kMeet) {
    if (b.size() < at + size_t(count) * kGossipSize) return false;
    for (uint16_t i = 0; i < count; ++i, at += kGossipSize) {
      Gossip& g = m->gossip.emplace_back();
      g.name.assign(b.substr(at, kNameLen));
      g.ping_sent = Get32(b, at + 40);
      g.pong_received = Get32(b, at + 44);
      g.ip = GetCStr(b, at + 48, kIpLen);
      g.port = Get16(b, at + 94);
      g.cport = Get16(b, at + 96);
      g.flags = Get16(b, at + 98);
      g.pport = Get16(b, at + 100);
    }
    if (m->mflags0 & kFlagExtData) {
      for (uint16_t e = 0; e < extensions; ++e) {
        if (b.size() < at + kExtHeader) return false;
        const uint32_t len = Get32(b, at);
        if (len < kExtHeader || len % 8 != 0 || b.size() < at + len) return false;
        if (Get16(b, at + 4) == 0) m->hostname = GetCStr(b, at + kExtHeader, len - kExtHeader);
        at += len;  // other types (later versions') are skipped, as Redis skips unknown ones
      }
    }
    return at == b.size();
  }
  if (m->type == kFail) {
    if (b.size() != at + kNameLen) return false;
    m->about.assign(b.substr(at, kNameLen));
    return true;
  }
  if (m->type == kUpdate) {
    if (b.size() != at + 8 + kNameLen + kSlotBytes) return false;
    m->update_epoch = Get64(b, at);
    m->about.assign(b.substr(at + 8, kNameLen));
    std::memcpy(m->update_slots.data(), b.data() + at + 8 + kNameLen, kSlotBytes);
    return true;
  }
  if (m->type == kPublish || m->type == kPublishShard) {
    if (b.size() < at + 8) return false;
    const uint64_t clen = Get32(b, at), mlen = Get32(b, at + 4);
    if (b.size() != at + 8 + clen + mlen) return false;
    m->channel.assign(b.substr(at + 8, clen));
    m->payload.assign(b.substr(at + 8 + clen, mlen));
    return true;
  }
  return true;  // failover votes, MODULE: accepted, not acted on
}

}  // namespace lavik::cluster
