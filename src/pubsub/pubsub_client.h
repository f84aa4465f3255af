// PubSubClient: one client's subscriptions (channels, patterns, shard channels), kept on the
// client's own worker, and the pure rules that depend only on them: the subscription counts the
// confirmations carry, the client class ("pubsub" once subscribed), and which commands a RESP2
// client may run while subscribed. The server-wide registry is PubSub (pubsub/pubsub.h).
//
// Thread safety: owned by its ClientState; touched only on the client's worker.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>

namespace lavik {

// The three namespaces a client can subscribe in (Redis 7.0: SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE).
enum class PubSubKind : uint8_t { kChannel = 0, kPattern = 1, kShard = 2 };

struct PubSubClient {
  std::unordered_set<std::string> names[3];  // indexed by PubSubKind

  // While a (un)subscribe command waits for other workers, messages for this client are held
  // here and appended after its confirmations, so no message overtakes a confirmation.
  bool in_flight = false;
  std::string held;

  std::unordered_set<std::string>& of(PubSubKind k) { return names[static_cast<int>(k)]; }
  const std::unordered_set<std::string>& of(PubSubKind k) const {
    return names[static_cast<int>(k)];
  }
  size_t channels() const { return of(PubSubKind::kChannel).size(); }
  size_t patterns() const { return of(PubSubKind::kPattern).size(); }
  size_t shard_channels() const { return of(PubSubKind::kShard).size(); }
  // The count a (P)SUBSCRIBE/(P)UNSUBSCRIBE confirmation carries: channels + patterns. Shard
  // confirmations carry the shard channel count alone (as Redis 7.0).
  int64_t CountFor(PubSubKind k) const {
    return static_cast<int64_t>(k == PubSubKind::kShard ? shard_channels()
                                                        : channels() + patterns());
  }
  bool subscribed() const { return channels() + patterns() + shard_channels() != 0; }
};

// Command names as they appear in replies and messages, per kind.
std::string_view SubscribeReplyName(PubSubKind k);    // "subscribe" / "psubscribe" / ...
std::string_view UnsubscribeReplyName(PubSubKind k);  // "unsubscribe" / ...

// True if a subscribed RESP2 client may run the command (lowercase name, "container|sub" for
// subcommands): (P|S)SUBSCRIBE, (P|S)UNSUBSCRIBE, PING, QUIT, RESET.
bool AllowedWhileSubscribedResp2(std::string_view command);
// The error such a client gets for any other command, as Redis 7.0 words it.
std::string SubscribedContextError(std::string_view command);

// Appends one delivered message: RESP2 *3/*4 array or RESP3 >3/>4 push of
//   message  <channel> <payload>                (kind kChannel)
//   pmessage <pattern> <channel> <payload>     (kind kPattern)
//   smessage <channel> <payload>                (kind kShard)
void AppendPubSubMessage(std::string* out, int resp, PubSubKind kind, std::string_view pattern,
                         std::string_view channel, std::string_view payload);

}  // namespace lavik
