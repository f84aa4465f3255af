#include "pubsub/pubsub_client.h"

#include <gtest/gtest.h>

namespace lavik {
namespace {

TEST(PubSubClientTest, CountsAsRedisConfirmationsDo) {
  PubSubClient st;
  EXPECT_FALSE(st.subscribed());
  st.of(PubSubKind::kChannel).insert("a");
  st.of(PubSubKind::kPattern).insert("h?llo");
  st.of(PubSubKind::kShard).insert("x");
  EXPECT_TRUE(st.subscribed());
  EXPECT_EQ(st.CountFor(PubSubKind::kChannel), 2);  // channels + patterns
  EXPECT_EQ(st.CountFor(PubSubKind::kPattern), 2);
  EXPECT_EQ(st.CountFor(PubSubKind::kShard), 1);  // shard channels alone
}

TEST(PubSubClientTest, ReplyNames) {
  EXPECT_EQ(SubscribeReplyName(PubSubKind::kChannel), "subscribe");
  EXPECT_EQ(SubscribeReplyName(PubSubKind::kPattern), "psubscribe");
  EXPECT_EQ(SubscribeReplyName(PubSubKind::kShard), "ssubscribe");
  EXPECT_EQ(UnsubscribeReplyName(PubSubKind::kChannel), "unsubscribe");
  EXPECT_EQ(UnsubscribeReplyName(PubSubKind::kPattern), "punsubscribe");
  EXPECT_EQ(UnsubscribeReplyName(PubSubKind::kShard), "sunsubscribe");
}

TEST(PubSubClientTest, Resp2SubscribedContext) {
  for (const char* ok : {"subscribe", "unsubscribe", "psubscribe", "punsubscribe", "ssubscribe",
                         "sunsubscribe", "ping", "quit", "reset"}) {
    EXPECT_TRUE(AllowedWhileSubscribedResp2(ok)) << ok;
  }
  for (const char* no : {"get", "publish", "client|list", "pubsub|numsub", "echo", "hello"}) {
    EXPECT_FALSE(AllowedWhileSubscribedResp2(no)) << no;
  }
  EXPECT_EQ(SubscribedContextError("client|list"),
            "ERR Can't execute 'client|list': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / "
            "QUIT / RESET are allowed in this context");
}

TEST(PubSubClientTest, MessagesInBothProtocols) {
  std::string out;
  AppendPubSubMessage(&out, 2, PubSubKind::kChannel, "", "a", "m1");
  EXPECT_EQ(out, "*3\r\n$7\r\nmessage\r\n$1\r\na\r\n$2\r\nm1\r\n");
  out.clear();
  AppendPubSubMessage(&out, 3, PubSubKind::kChannel, "", "a", "m1");
  EXPECT_EQ(out, ">3\r\n$7\r\nmessage\r\n$1\r\na\r\n$2\r\nm1\r\n");
  out.clear();
  AppendPubSubMessage(&out, 2, PubSubKind::kPattern, "h?llo", "hello", "m2");
  EXPECT_EQ(out, "*4\r\n$8\r\npmessage\r\n$5\r\nh?llo\r\n$5\r\nhello\r\n$2\r\nm2\r\n");
  out.clear();
  AppendPubSubMessage(&out, 3, PubSubKind::kPattern, "", "c", "");
  EXPECT_EQ(out, ">4\r\n$8\r\npmessage\r\n$0\r\n\r\n$1\r\nc\r\n$0\r\n\r\n");
  out.clear();
  AppendPubSubMessage(&out, 2, PubSubKind::kShard, "", "x", "m3");
  EXPECT_EQ(out, "*3\r\n$8\r\nsmessage\r\n$1\r\nx\r\n$2\r\nm3\r\n");
}

}  // namespace
}  // namespace lavik
