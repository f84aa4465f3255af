#include "cluster/bus_message.h"

#include <gtest/gtest.h>

#include <string>

#include "cluster/redis_packets.h"

namespace lavik::cluster {
namespace {

using cluster_test::kRedisMeet;
using cluster_test::kRedisPing;
using cluster_test::kRedisPublish;

constexpr std::string_view kRedisSender = "dadbb395540ab210d64c9dbd8a36bcf24d500f98";

Message Sample(uint16_t type) {
  Message m;
  m.type = type;
  m.port = 7001;
  m.current_epoch = 0x0102030405060708ull;
  m.config_epoch = 42;
  m.offset = 123456789;
  m.sender = std::string(40, 'a');
  SetSlot(m.slots, 0);
  SetSlot(m.slots, 5460);
  SetSlot(m.slots, 16383);
  m.myip = "10.0.0.7";
  m.pport = 0;
  m.cport = 17001;
  m.flags = kMaster | kMyself;
  m.state = 0;
  return m;
}

void ExpectSameHeader(const Message& a, const Message& b) {
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.port, b.port);
  EXPECT_EQ(a.current_epoch, b.current_epoch);
  EXPECT_EQ(a.config_epoch, b.config_epoch);
  EXPECT_EQ(a.offset, b.offset);
  EXPECT_EQ(a.sender, b.sender);
  EXPECT_EQ(a.slots, b.slots);
  EXPECT_EQ(a.slaveof, b.slaveof);
  EXPECT_EQ(a.myip, b.myip);
  EXPECT_EQ(a.cport, b.cport);
  EXPECT_EQ(a.flags, b.flags);
  EXPECT_EQ(a.state, b.state);
}

std::string Encoded(const Message& m) {
  std::string out;
  Encode(m, &out);
  return out;
}

TEST(BusMessage, PingRoundTripWithGossipAndHostname) {
  Message m = Sample(kPing);
  for (int i = 0; i < 3; ++i) {
    Gossip& g = m.gossip.emplace_back();
    g.name = std::string(40, char('b' + i));
    g.ping_sent = 1000u + i;
    g.pong_received = 2000u + i;
    g.ip = "127.0.0." + std::to_string(i);
    g.port = uint16_t(7002 + i);
    g.cport = uint16_t(17002 + i);
    g.flags = kMaster | (i == 1 ? kPfail : 0);
  }
  m.hostname = "node-1.example";
  const std::string bytes = Encoded(m);
  ASSERT_EQ(bytes.size(), kHeaderSize + 3 * kGossipSize + 24);  // 8 + 15 padded to 24
  EXPECT_EQ(PeekLength(bytes), bytes.size());
  Message d;
  ASSERT_TRUE(Decode(bytes, &d));
  ExpectSameHeader(m, d);
  ASSERT_EQ(d.gossip.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(d.gossip[i].name, m.gossip[i].name);
    EXPECT_EQ(d.gossip[i].ping_sent, m.gossip[i].ping_sent);
    EXPECT_EQ(d.gossip[i].pong_received, m.gossip[i].pong_received);
    EXPECT_EQ(d.gossip[i].ip, m.gossip[i].ip);
    EXPECT_EQ(d.gossip[i].port, m.gossip[i].port);
    EXPECT_EQ(d.gossip[i].cport, m.gossip[i].cport);
    EXPECT_EQ(d.gossip[i].flags, m.gossip[i].flags);
  }
  EXPECT_EQ(d.hostname, "node-1.example");
  EXPECT_TRUE(d.mflags0 & kFlagExtData);
  EXPECT_EQ(Encoded(d), bytes);
}

TEST(BusMessage, FailUpdatePublishRoundTrip) {
  Message fail = Sample(kFail);
  fail.about = std::string(40, 'f');
  std::string bytes = Encoded(fail);
  ASSERT_EQ(bytes.size(), kHeaderSize + kNameLen);
  Message d;
  ASSERT_TRUE(Decode(bytes, &d));
  ExpectSameHeader(fail, d);
  EXPECT_EQ(d.about, fail.about);

  Message update = Sample(kUpdate);
  update.about = std::string(40, 'u');
  update.update_epoch = 77;
  SetSlot(update.update_slots, 1234);
  bytes = Encoded(update);
  ASSERT_EQ(bytes.size(), kHeaderSize + 8 + kNameLen + kSlotBytes);
  ASSERT_TRUE(Decode(bytes, &d));
  EXPECT_EQ(d.update_epoch, 77u);
  EXPECT_EQ(d.about, update.about);
  EXPECT_TRUE(TestSlot(d.update_slots, 1234));
  EXPECT_FALSE(TestSlot(d.update_slots, 1235));

  Message pub = Sample(kPublish);
  pub.channel = "news";
  pub.payload = std::string("a\0b\r\n", 5);
  bytes = Encoded(pub);
  ASSERT_EQ(bytes.size(), kHeaderSize + 8 + 4 + 5);
  ASSERT_TRUE(Decode(bytes, &d));
  ExpectSameHeader(pub, d);
  EXPECT_EQ(d.channel, "news");
  EXPECT_EQ(d.payload, pub.payload);
  EXPECT_EQ(Encoded(d), bytes);
}

// The packets redis-server 7.0.15 wrote decode to what it said, and encode back byte for byte.
TEST(BusMessage, RedisMeetPacket) {
  Message m;
  ASSERT_TRUE(Decode(kRedisMeet, &m));
  EXPECT_EQ(m.type, kMeet);
  EXPECT_EQ(m.port, 7101);
  EXPECT_EQ(m.cport, 17101);
  EXPECT_EQ(m.sender, kRedisSender);
  EXPECT_EQ(m.flags, kMaster | kMyself);
  EXPECT_EQ(m.state, 1);  // the cluster was still down
  EXPECT_TRUE(m.myip.empty());
  EXPECT_TRUE(m.slaveof.empty());
  EXPECT_TRUE(m.gossip.empty());
  EXPECT_EQ(m.hostname, "host-one.example");
  for (int s = 0; s <= 100; ++s) EXPECT_TRUE(TestSlot(m.slots, s)) << s;
  EXPECT_FALSE(TestSlot(m.slots, 101));
  EXPECT_EQ(Encoded(m), kRedisMeet);
}

TEST(BusMessage, RedisPingPacket) {
  Message m;
  ASSERT_TRUE(Decode(kRedisPing, &m));
  EXPECT_EQ(m.type, kPing);
  EXPECT_EQ(m.sender, kRedisSender);
  ASSERT_EQ(m.gossip.size(), 1u);
  EXPECT_EQ(m.gossip[0].name, "9c6c762526de1877541a95c3b8d52df59986fbff");
  EXPECT_EQ(m.gossip[0].ip, "127.0.0.1");
  EXPECT_EQ(m.gossip[0].port, 7102);
  EXPECT_EQ(m.gossip[0].cport, 17102);
  EXPECT_EQ(m.gossip[0].flags, kMaster);
  EXPECT_EQ(m.hostname, "host-one.example");
  EXPECT_EQ(Encoded(m), kRedisPing);
}

TEST(BusMessage, RedisPublishPacket) {
  Message m;
  ASSERT_TRUE(Decode(kRedisPublish, &m));
  EXPECT_EQ(m.type, kPublish);
  EXPECT_EQ(m.sender, kRedisSender);
  EXPECT_EQ(m.current_epoch, 2u);
  EXPECT_EQ(m.channel, "chan1");
  EXPECT_EQ(m.payload, "hello-world");
  EXPECT_EQ(m.mflags0, 0);
  // Lavik's own PUBLISH with the same header fields is the same bytes.
  Message mine;
  mine.type = kPublish;
  mine.port = 7101;
  mine.current_epoch = 2;
  mine.sender = std::string(kRedisSender);
  for (int s = 0; s <= 100; ++s) SetSlot(mine.slots, s);
  mine.cport = 17101;
  mine.flags = kMaster | kMyself;
  mine.state = 1;
  mine.hostname = "host-one.example";  // a PUBLISH carries no extensions
  mine.channel = "chan1";
  mine.payload = "hello-world";
  EXPECT_EQ(Encoded(mine), kRedisPublish);
}

TEST(BusMessage, TruncatedPacketsAreRefused) {
  for (std::string_view packet : {kRedisMeet, kRedisPing, kRedisPublish}) {
    for (size_t cut : {size_t(0), size_t(8), kHeaderSize - 1, kHeaderSize, packet.size() - 1}) {
      if (cut >= packet.size()) continue;
      // As the reader sees it: totlen says more than there is...
      Message m;
      EXPECT_FALSE(Decode(packet.substr(0, cut), &m)) << cut;
      // ...or totlen is patched to the shorter length: the body does not fit its type.
      if (cut >= kHeaderSize) {
        std::string shorter(packet.substr(0, cut));
        shorter[4] = char(cut >> 24);
        shorter[5] = char(cut >> 16);
        shorter[6] = char(cut >> 8);
        shorter[7] = char(cut);
        EXPECT_FALSE(Decode(shorter, &m)) << cut;
      }
    }
  }
  // A MEET cut to its header still claims its hostname extension: refused.
  std::string meet(kRedisMeet.substr(0, kHeaderSize));
  meet[6] = char(kHeaderSize >> 8);
  meet[7] = char(kHeaderSize & 0xff);
  Message m;
  EXPECT_FALSE(Decode(meet, &m));
  EXPECT_EQ(PeekLength(kRedisPing.substr(0, 7)), 0u);  // length not known yet
}

TEST(BusMessage, CorruptPacketsAreRefused) {
  Message m;
  std::string bad(kRedisPing);
  bad[0] = 'X';  // signature
  EXPECT_FALSE(Decode(bad, &m));
  bad = std::string(kRedisPing);
  bad[9] = 2;  // version
  EXPECT_FALSE(Decode(bad, &m));
  bad = std::string(kRedisPing);
  bad[15] = 2;  // two gossip entries announced, one sent
  EXPECT_FALSE(Decode(bad, &m));
  bad = std::string(kRedisPing);
  bad[kHeaderSize + kGossipSize + 3] = 12;  // extension length not a multiple of 8
  EXPECT_FALSE(Decode(bad, &m));
  bad = std::string(kRedisPublish);
  bad[kHeaderSize + 3] = 6;  // channel length one more than there is
  EXPECT_FALSE(Decode(bad, &m));
  bad = std::string(kRedisPing) + "x";  // totlen says one byte less
  EXPECT_FALSE(Decode(bad, &m));
  Message fail = Sample(kFail);
  fail.about = std::string(40, 'f');
  bad = Encoded(fail);
  bad.pop_back();
  bad[7] = char(bad[7] - 1);
  EXPECT_FALSE(Decode(bad, &m));
}

// The failover messages carry a header only (Redis's totlen for them is the header's size);
// a replica's header names its master, and mflags[0] carries PAUSED / FORCEACK.
TEST(BusMessage, FailoverMessagesAreHeaderOnly) {
  for (uint16_t type : {uint16_t(kAuthRequest), uint16_t(kAuthAck), uint16_t(kMfStart)}) {
    Message m = Sample(type);
    m.flags = kSlave | kMyself;
    m.slaveof = std::string(40, 'b');
    m.mflags0 = type == kAuthRequest ? kFlagForceAck : kFlagPaused;
    std::string wire;
    Encode(m, &wire);
    ASSERT_EQ(wire.size(), kHeaderSize);
    EXPECT_EQ(PeekLength(wire), kHeaderSize);
    EXPECT_EQ(uint8_t(wire[2253]), m.mflags0);
    Message back;
    ASSERT_TRUE(Decode(wire, &back));
    ExpectSameHeader(m, back);
    EXPECT_EQ(back.slaveof, m.slaveof);
    EXPECT_EQ(back.mflags0, m.mflags0);
  }
}

}  // namespace
}  // namespace lavik::cluster
