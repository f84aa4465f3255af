#include "pubsub/pubsub_client.h"

#include "protocol/reply_writer.h"

namespace lavik {

std::string_view SubscribeReplyName(PubSubKind k) {
  switch (k) {
    case PubSubKind::kChannel:
      return "subscribe";
    case PubSubKind::kPattern:
      return "psubscribe";
    case PubSubKind::kShard:
      return "ssubscribe";
  }
  return "subscribe";
}

std::string_view UnsubscribeReplyName(PubSubKind k) {
  switch (k) {
    case PubSubKind::kChannel:
      return "unsubscribe";
    case PubSubKind::kPattern:
      return "punsubscribe";
    case PubSubKind::kShard:
      return "sunsubscribe";
  }
  return "unsubscribe";
}

bool AllowedWhileSubscribedResp2(std::string_view command) {
  static constexpr std::string_view kAllowed[] = {"subscribe",    "unsubscribe", "psubscribe",
                                                  "punsubscribe", "ssubscribe",  "sunsubscribe",
                                                  "ping",         "quit",        "reset"};
  for (std::string_view a : kAllowed) {
    if (command == a) return true;
  }
  return false;
}

std::string SubscribedContextError(std::string_view command) {
  return "ERR Can't execute '" + std::string(command) +
         "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this "
         "context";
}

void AppendPubSubMessage(std::string* out, int resp, PubSubKind kind, std::string_view pattern,
                         std::string_view channel, std::string_view payload) {
  ReplyWriter w(out, resp);
  switch (kind) {
    case PubSubKind::kChannel:
      w.Push(3);
      w.Bulk("message");
      break;
    case PubSubKind::kPattern:
      w.Push(4);
      w.Bulk("pmessage");
      w.Bulk(pattern);
      break;
    case PubSubKind::kShard:
      w.Push(3);
      w.Bulk("smessage");
      break;
  }
  w.Bulk(channel);
  w.Bulk(payload);
}

}  // namespace lavik
