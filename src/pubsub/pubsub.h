// PubSub: the server-wide channel registry and message delivery across workers (doc/pubsub.md).
//
// Layout: every worker keeps a full copy of the registry — channels, patterns and shard
// channels — so a PUBLISH runs entirely on the publisher's own worker: no hop, no round trip for
// the receiver count, and one producer per publisher, which keeps its messages in order across
// channels. (Un)subscribing updates every copy before it is confirmed. A subscriber is recorded
// as (client id, home worker), never as a pointer: the publishing worker groups the receivers of
// its messages by home worker into one DeliveryBatch per home per loop turn, however many
// messages, posted at the end of the turn (EndOfTurn); the home looks each id up in its own table
// of subscribed clients (a client that left meanwhile is simply not found).
//
// Thread safety: each worker's part (its registry copy, its open batches, its table of local
// subscribed clients) is touched only on that worker; the *On(worker) functions must run on the
// named worker (the command handlers get there with ShardHop). Everything taking a ClientState
// runs on that client's worker.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "commands/command.h"
#include "pubsub/pubsub_client.h"

namespace lavik {

class ClientState;
struct Services;

class PubSub {
 public:
  // `services` gives the workers (filled in before they start); `on_output` runs on a
  // subscriber's worker after messages were added to its output (the output-limit check).
  using OutputHook = std::function<void(ClientState*)>;
  PubSub(const Services* services, OutputHook on_output);
  ~PubSub();

  // ---- The client's worker ----

  // The client's subscription state, created (and the client made reachable for deliveries)
  // on first use.
  PubSubClient& StateOf(ClientState* cl);
  // The client is gone: forgets it here and posts the removal of all its subscriptions to the
  // workers that hold them. Safe to call for a client that never subscribed.
  void OnClose(ClientState* cl);

  // ---- Registry operations: run on worker `w` ----

  void AddOn(int w, PubSubKind kind, std::string_view name, uint64_t client_id, int home);
  void RemoveOn(int w, PubSubKind kind, std::string_view name, uint64_t client_id);
  // Sends `payload` to every subscriber of `channel` (kChannel: and every matching pattern;
  // kShard: shard subscribers only): inline to w's own clients, through w's batches to the
  // others. Returns the receiver count, a client matching through two patterns counting twice,
  // as Redis.
  int64_t PublishOn(int w, PubSubKind kind, std::string_view channel, std::string_view payload);
  // End of worker w's loop turn (a turn hook): posts the turn's delivery batches, one per home.
  void EndOfTurn(int w);
  // PUBSUB, from w's copy (every copy is complete): the channels (kChannel/kShard) matching
  // `pattern` (all if !has_pattern); the subscriber count of one channel; the number of distinct
  // patterns.
  void ListOn(int w, PubSubKind kind, std::string_view pattern, bool has_pattern,
              std::vector<std::string>* out) const;
  int64_t CountOn(int w, PubSubKind kind, std::string_view name) const;
  int64_t PatternCountOn(int w) const;

 private:
  struct Sub {
    uint64_t id;
    int home;
  };
  using Registry = std::unordered_map<std::string, std::vector<Sub>>;
  struct DeliveryBatch;
  struct PerWorker {
    Registry owned[3];  // indexed by PubSubKind: a full copy on every worker
    std::unordered_map<uint64_t, ClientState*> local;  // this worker's subscribed clients
    // This turn's batches by home worker (null: none open); the own worker's slot is a scratch
    // batch, delivered inline at the end of each PUBLISH and reused.
    std::vector<DeliveryBatch*> open;
    std::vector<int> open_homes;  // homes with an open batch, in opening order
  };

  Registry& RegistryOn(int w, PubSubKind kind) { return workers_[w].owned[static_cast<int>(kind)]; }
  DeliveryBatch* BatchFor(int w, int home);
  void PostBatch(int w, int home);
  void Deliver(const DeliveryBatch& b);

  const Services* const services_;
  const OutputHook on_output_;
  std::unique_ptr<PerWorker[]> workers_;
};

// SUBSCRIBE, PUBLISH, PUBSUB... (pubsub_commands.cc).
std::span<const CommandSpec> PubSubCommands();

}  // namespace lavik
